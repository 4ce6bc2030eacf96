//go:build unix

package flinksavepoint

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestF7NamedPipeNotOpened: a named pipe in place of a savepoint's
// _metadata blocked Open for ever (an open waits for a writer), and no
// signal ended the tool. Only regular files are opened.
func TestF7NamedPipeNotOpened(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, MetadataFile), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := Open(dir); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrMissingFile) {
			t.Errorf("got %v, want an error matching ErrMissingFile", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Open of a savepoint whose _metadata is a named pipe: no answer after a minute")
	}
}
