package app

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// InterruptGrace is how long a step may take to return after SIGINT or
// SIGTERM cancelled its context (InterruptContext): every wait selects on
// the context, so a step returns at once unless something cannot be
// cancelled.
const InterruptGrace = 10 * time.Second

// InterruptContext returns a context that ends at the first SIGINT or
// SIGTERM (a Pod deleted or evicted, an operator's Ctrl-C), and makes sure
// that the signal ends the process: after it, a second signal takes Go's
// default action (the process ends), and if stop has not been called
// within InterruptGrace, onStuck runs (to say so, and to print what the
// binary always prints last) and the process exits with ExitError, worth a
// retry. Call stop when the step returned.
func InterruptContext(onStuck func()) (ctx context.Context, stop func()) {
	ctx, stopNotify := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	finished := make(chan struct{})
	go func() {
		select {
		case <-finished:
			return
		case <-ctx.Done():
		}
		stopNotify() // a second signal: the default action
		t := time.NewTimer(InterruptGrace)
		defer t.Stop()
		select {
		case <-finished:
		case <-t.C:
			onStuck()
			os.Exit(ExitError)
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			close(finished)
			stopNotify()
		})
	}
}
