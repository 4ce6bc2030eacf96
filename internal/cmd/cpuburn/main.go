// Command cpuburn keeps CPUs busy for a bounded time: the competing
// process that proves the test suite passes on a saturated machine, as CI
// machines shared with other work are. It spins -procs goroutines (default:
// every CPU) at normal priority until -duration has passed or it is
// interrupted, then prints how long it ran.
//
//	go run ./internal/cmd/cpuburn -duration 45m &
//	CI=true bash .ci/run
//
// scripts/test starts it for the length of the run with MM2CUTOVER_CPU_BURN=N.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"
)

func main() {
	procs := flag.Int("procs", runtime.NumCPU(), "busy goroutines (each takes one CPU when it can)")
	duration := flag.Duration("duration", time.Hour, "stop after this long")
	flag.Parse()
	if *procs < 1 || *duration <= 0 {
		fmt.Fprintln(os.Stderr, "cpuburn: -procs must be at least 1 and -duration positive")
		os.Exit(2)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, *duration)
	defer cancel()
	runtime.GOMAXPROCS(*procs)
	start := time.Now()
	fmt.Fprintf(os.Stderr, "cpuburn: %d busy goroutines for at most %v\n", *procs, *duration)
	var wg sync.WaitGroup
	for range *procs {
		wg.Go(func() { burn(ctx) })
	}
	wg.Wait()
	fmt.Fprintf(os.Stderr, "cpuburn: stopped after %v\n", time.Since(start).Round(time.Second))
}

// burn computes until ctx ends, looking at it every few million steps.
func burn(ctx context.Context) {
	x := uint64(1)
	for ctx.Err() == nil {
		for range 1 << 22 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	if x == 42 { // keep the loop from being optimised away
		fmt.Fprint(os.Stderr, "")
	}
}
