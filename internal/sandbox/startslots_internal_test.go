package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestStartSlotsQueue: with two slots, a third start waits until one is
// given back, and one whose context ends while it waits fails with the
// context's error and the variable that sets the slots; with 0 slots
// nothing waits. The slots' directory is this test's own (TMPDIR), so
// the machine's other sandboxes do not take part.
func TestStartSlotsQueue(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv(StartSlotsEnv, "2")
	ctx := context.Background()
	r1, err := takeStartSlot(ctx, nil, "first")
	if err != nil {
		t.Fatal(err)
	}
	r2, err := takeStartSlot(ctx, nil, "second")
	if err != nil {
		t.Fatal(err)
	}

	short, cancel := context.WithTimeout(ctx, 600*time.Millisecond)
	defer cancel()
	if _, err := takeStartSlot(short, nil, "third"); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), StartSlotsEnv) {
		t.Fatalf("third start while two hold the slots: got %v, want a deadline error naming %s", err, StartSlotsEnv)
	}

	got := make(chan error, 1)
	go func() {
		r3, err := takeStartSlot(ctx, nil, "third")
		if err == nil {
			r3()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("third start took a slot while two were held (err %v)", err)
	case <-time.After(500 * time.Millisecond):
	}
	r1()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("third start still waiting 10 s after a slot was given back")
	}
	r2()

	t.Setenv(StartSlotsEnv, "0")
	held := make([]func(), 0, 5)
	for range 5 {
		r, err := takeStartSlot(short, nil, "ungated")
		if err != nil {
			t.Fatalf("with 0 slots: %v", err)
		}
		held = append(held, r)
	}
	for _, r := range held {
		r()
	}
}
