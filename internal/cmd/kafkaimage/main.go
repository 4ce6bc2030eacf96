// Command kafkaimage builds, with podman, the image the sandbox's Docker
// backend runs where no registry is reachable: the Kafka jars of the cache
// (fetched on first use, as the process sandbox does) on the Debian Java 17
// base of internal/containers, shaped like apache/kafka (internal/containers
// KafkaImage). It prints the image reference for MM2CUTOVER_DOCKER_IMAGE:
//
//	image=$(go run ./internal/cmd/kafkaimage)
//	DOCKER_HOST=unix:///run/podman.sock MM2CUTOVER_SANDBOX_BACKEND=docker MM2CUTOVER_DOCKER_IMAGE=$image go test ./internal/sandbox
//
// The Kafka version and cache come from the environment
// (MM2CUTOVER_KAFKA_VERSION, MM2CUTOVER_CACHE). Progress goes to stderr.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/mm2cutover/mm2cutover/internal/containers"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
)

func main() {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ref, err := build(ctx, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kafkaimage:", err)
		os.Exit(1)
	}
	fmt.Println(ref)
}

func build(ctx context.Context, log *slog.Logger) (string, error) {
	cfg := sandbox.ConfigFromEnv()
	cfg.Logger = log
	dist, version, err := sandbox.KafkaDistribution(ctx, cfg)
	if err != nil {
		return "", err
	}
	cache := cfg.CacheDir
	if cache == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(d, "mm2cutover")
	}
	cache = filepath.Join(cache, "containers")
	p, err := containers.New(cache)
	if err != nil {
		return "", err
	}
	base, err := containers.JRE17.Ensure(ctx, p, cache, log)
	if err != nil {
		return "", err
	}
	return containers.KafkaImage{Name: "mm2cutover-kafka", Base: base, Libs: filepath.Join(dist, "libs"), Version: version}.Ensure(ctx, p, cache, log)
}
