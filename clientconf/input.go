package clientconf

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// PipeTimeout bounds the reads of an input file that is not a regular
// file — a pipe such as bash's <(command), a named pipe, a terminal — from
// the moment OpenInput opened it: a writer that never writes, or never
// closes, ends the read with an error (os.ErrDeadlineExceeded) instead of
// stalling the caller.
const PipeTimeout = 30 * time.Second

// OpenInput opens a file the caller will read, such that neither the open
// nor the reads wait for ever: the open does not wait for the writer of a
// named pipe (O_NONBLOCK; one with no writer then reads as empty), and the
// reads of anything but a regular file end after PipeTimeout. A directory
// is an error. Bound what is read as well (ReadLimited): a device such as
// /dev/zero never ends.
func OpenInput(path string) (*os.File, error) { return openInput(path, PipeTimeout) }

func openInput(path string, wait time.Duration) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	switch {
	case fi.IsDir():
		f.Close()
		return nil, fmt.Errorf("%s is a directory", path)
	case !fi.Mode().IsRegular():
		// A pipe or a terminal waits in Go's poller, which ends the read
		// at the deadline. Files the poller cannot wait on (a device such
		// as /dev/zero) never wait: os.ErrNoDeadline.
		_ = f.SetReadDeadline(time.Now().Add(wait))
	}
	return f, nil
}

// readInput reads a file as ReadFileLimited does, waiting at most wait for
// a pipe.
func readInput(path string, limit int64, wait time.Duration) ([]byte, error) {
	f, err := openInput(path, wait)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := ReadLimited(f, limit)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) == 0 {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeNamedPipe != 0 {
			return nil, fmt.Errorf("%s: a pipe with nothing to read (a named pipe with no writer?)", path)
		}
	}
	return b, nil
}
