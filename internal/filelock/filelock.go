// Package filelock serialises the processes that fill one cache directory
// (the Kafka and Flink jars, the container base images): a test binary per
// package may start at the same time as another.
package filelock

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// Lock takes an exclusive flock on path, creating the file if needed, and
// polls every 200 ms so that ctx can end the wait. unlock releases it.
func Lock(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}
