//go:build unix

package clientconf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// within runs f and fails the test if it has not returned after a minute:
// a read that waits for ever.
func within(t *testing.T, what string, f func() ([]byte, error)) ([]byte, error) {
	t.Helper()
	type res struct {
		b   []byte
		err error
	}
	done := make(chan res, 1)
	go func() { b, err := f(); done <- res{b, err} }()
	select {
	case r := <-done:
		return r.b, r.err
	case <-time.After(time.Minute):
		t.Fatalf("%s: no answer after a minute", what)
		return nil, nil
	}
}

func fifo(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fifo.properties")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return path
}

// TestF7FIFONeverBlocks: a named pipe given as an input file (a properties
// file, a CA, -config) blocked the open for ever when nobody wrote to it,
// and a signal could not end the tool. Now the open does not wait, a pipe
// with no writer is an error, and a writer that never writes ends the
// read at the deadline; what a writer writes is read.
func TestF7FIFONeverBlocks(t *testing.T) {
	noWriter := fifo(t)
	if _, err := within(t, "no writer", func() ([]byte, error) { return ReadFile(noWriter) }); err == nil {
		t.Error("a named pipe with no writer read as a file")
	}

	silent := fifo(t)
	w, err := os.OpenFile(silent, os.O_RDWR, 0) // a writer that never writes (O_RDWR does not wait on Linux)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := within(t, "silent writer", func() ([]byte, error) { return readInput(silent, MaxFileSize, 100*time.Millisecond) }); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("a writer that never writes: %v, want os.ErrDeadlineExceeded", err)
	}

	// bash's <(command): a pipe whose writer wrote and closed.
	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := pw.Write([]byte("a=b\n")); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	path := fmt.Sprintf("/dev/fd/%d", r.Fd())
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no %s: %v", path, err)
	}
	props, err := within(t, "a pipe written", func() ([]byte, error) { return ReadFile(path) })
	if err != nil || string(props) != "a=b\n" {
		t.Errorf("a pipe written: %q, %v", props, err)
	}
}
