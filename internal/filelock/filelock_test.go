package filelock

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestLockExcludesAndReleases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	unlock, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	// flock locks belong to the open file: a second open waits.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Lock while held = %v, want the context's deadline", err)
	}
	unlock()
	again, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	again()
}

func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	unlock, err := TryLock(path)
	if err != nil || unlock == nil {
		t.Fatalf("TryLock of a free lock = %v, %v; want it taken", unlock != nil, err)
	}
	if again, err := TryLock(path); err != nil || again != nil {
		t.Fatalf("TryLock while held = %v, %v; want not taken, no error", again != nil, err)
	}
	unlock()
	again, err := TryLock(path)
	if err != nil || again == nil {
		t.Fatalf("TryLock after unlock = %v, %v; want it taken", again != nil, err)
	}
	again()
	if _, err := TryLock(filepath.Join(t.TempDir(), "missing", "lock")); err == nil {
		t.Error("TryLock in a missing directory: no error")
	}
}
