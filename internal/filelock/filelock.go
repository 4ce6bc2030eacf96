// Package filelock serialises the processes that fill one cache directory
// (the Kafka and Flink jars, the container base images): a test binary per
// package may start at the same time as another. The sandbox's JVM start
// slots are locks of this package too.
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
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		unlock, err := TryLock(path)
		if err != nil || unlock != nil {
			return unlock, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// TryLock takes an exclusive flock on path, creating the file if needed,
// without waiting: unlock is nil, and err nil, when another open file
// holds the lock (another process, or another goroutine of this one). The
// kernel releases a lock whose process dies.
func TryLock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, err
	}
	switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); {
	case err == nil:
		return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		f.Close()
		return nil, nil
	default:
		f.Close()
		return nil, err
	}
}
