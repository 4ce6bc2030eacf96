// Command strimzi builds the Strimzi cluster operator from its source into
// the cache, as the tests that run it do (internal/strimzi; the first build
// takes minutes: Maven fetches Strimzi's dependencies and compiles), so that
// scripts/test can start the build early, beside the other tests:
//
//	MM2CUTOVER_STRIMZI_SOURCE=<a clone of strimzi-kafka-operator> go run ./internal/cmd/strimzi
//
// The source is needed the first time only: the build keeps it in the cache.
// Progress goes to stderr, the result to stdout.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/kube"
	"github.com/mm2cutover/mm2cutover/internal/strimzi"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	a, err := strimzi.Build(ctx, kube.DefaultCacheDir(), log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "strimzi:", err)
		os.Exit(1)
	}
	fmt.Printf("Strimzi %s built in %s: %s\n", strimzi.Version, time.Since(start).Round(time.Second), a.Dir)
}
