// Command strimzi builds the Strimzi cluster operator from its source into
// the cache, as the tests that run it do (internal/strimzi; the first build
// takes minutes: Maven fetches Strimzi's dependencies and compiles), so that
// scripts/test can start the build early, beside the other tests:
//
//	MM2CUTOVER_STRIMZI_SOURCE=<a clone of strimzi-kafka-operator> go run ./internal/cmd/strimzi
//
// The source is needed the first time only: the build keeps it in the cache.
// -images also builds the operator and Kafka images into podman's storage
// (root, podman and runc; the Kafka jars of the sandbox's cache). Progress
// goes to stderr, the result to stdout.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/containers"
	"github.com/mm2cutover/mm2cutover/internal/kube"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/strimzi"
)

func main() {
	images := flag.Bool("images", false, "also build the operator and Kafka images (podman)")
	flag.Parse()
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
	if !*images {
		return
	}
	start = time.Now()
	imgs, err := buildImages(ctx, a, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "strimzi:", err)
		os.Exit(1)
	}
	fmt.Printf("images ready in %s: %s, %s\n", time.Since(start).Round(time.Second), imgs.Operator, imgs.Kafka)
}

func buildImages(ctx context.Context, a strimzi.Artifacts, log *slog.Logger) (strimzi.Images, error) {
	cache := kube.DefaultCacheDir()
	dist, _, err := sandbox.KafkaDistribution(ctx, sandbox.Config{KafkaVersion: strimzi.KafkaVersion, CacheDir: cache, Logger: log})
	if err != nil {
		return strimzi.Images{}, err
	}
	p, err := containers.New(filepath.Join(cache, "containers"))
	if err != nil {
		return strimzi.Images{}, err
	}
	return strimzi.EnsureImages(ctx, p, a, filepath.Join(dist, "libs"), cache, log)
}
