package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/filelock"
)

// A JVM's start is its costly part: a Connect worker loads and scans its
// plugins and a broker formats, loads and elects, for 5 to 30 CPU-seconds.
// The test lanes of scripts/test start sandboxes in several processes at
// once; on a 2-core machine a dozen JVMs starting together share the CPU
// so thinly that each misses its readiness deadline (CI saw workers not
// ready after 5 minutes, and a worker exit on its own admin client's
// 60-second timeout while its broker starved). So every start of a JVM
// first takes one of a few machine-wide start slots, as a file lock that
// the kernel releases when its process dies, and its readiness deadline
// counts from then: the starts queue instead of starving each other, and
// the machine's total work is the same.
//
// StartSlotsEnv sets the number of slots (default: the number of CPUs;
// 0 turns the queue off).
const StartSlotsEnv = "MM2CUTOVER_START_SLOTS"

// startSlotsDir holds the slots' lock files, machine-wide as the port
// reservations are.
func startSlotsDir() string { return filepath.Join(os.TempDir(), "mm2cutover-start-slots") }

// startSlots is the number of slots: StartSlotsEnv, or the CPU count.
func startSlots() int {
	if v, err := strconv.Atoi(os.Getenv(StartSlotsEnv)); err == nil {
		return max(v, 0)
	}
	return max(runtime.NumCPU(), 1)
}

// inStartSlot runs start while it holds one of the machine's start slots.
func inStartSlot(ctx context.Context, what string, start func(context.Context) error) error {
	release, err := takeStartSlot(ctx, nil, what)
	if err != nil {
		return err
	}
	defer release()
	return start(ctx)
}

// takeStartSlot waits until one of the machine's start slots is free and
// takes it for what (a log word); release gives it back. It logs once
// when the wait passes 5 s, and returns ctx's error, wrapped, when ctx
// ends first. With no slots configured it takes nothing.
func takeStartSlot(ctx context.Context, log *slog.Logger, what string) (release func(), err error) {
	n := startSlots()
	if n == 0 {
		return func() {}, nil
	}
	dir := startSlotsDir()
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("start slots: %w", err)
	}
	start, logged := time.Now(), false
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		for i := range n {
			unlock, err := filelock.TryLock(filepath.Join(dir, "slot-"+strconv.Itoa(i)))
			if err != nil {
				return nil, fmt.Errorf("start slots: %w", err)
			}
			if unlock != nil {
				if logged && log != nil {
					log.Info("sandbox: start slot taken", "what", what, "waited", time.Since(start).Round(time.Second))
				}
				return unlock, nil
			}
		}
		if !logged && time.Since(start) > 5*time.Second && log != nil {
			log.Info("sandbox: waiting for a start slot (other JVMs of this machine are starting)", "what", what, "slots", n)
			logged = true
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting %s for a JVM start slot (%d machine-wide, %s): %w",
				time.Since(start).Round(time.Second), n, StartSlotsEnv, ctx.Err())
		case <-t.C:
		}
	}
}
