package containers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// KafkaImage is an image shaped like the registry's apache/kafka for the
// sandbox's Docker backend: the jars of an Apache Kafka distribution at
// /opt/kafka/libs of Base (an image with java and bash, such as JRE17's),
// KAFKA_HOME=/opt/kafka. It stands in for apache/kafka where no registry
// is reachable; the backend needs nothing else of that image (it runs the
// broker with java and the worker through docker/mm2's entrypoint, from the
// mounted work directory).
type KafkaImage struct {
	Name    string // image name, e.g. "mm2cutover-kafka"
	Base    string // base image reference, already in podman's storage
	Libs    string // the distribution's libs directory
	Version string // the Kafka version, e.g. "4.3.1"
}

// Ref is the local image reference: the Kafka version and a digest of the
// base and the jars' names and sizes.
func (k KafkaImage) Ref() (string, error) {
	jars, err := filepath.Glob(filepath.Join(k.Libs, "*.jar"))
	if err != nil {
		return "", err
	}
	if len(jars) == 0 {
		return "", fmt.Errorf("kafka image: no jars in %s", k.Libs)
	}
	sort.Strings(jars)
	h := sha256.New()
	fmt.Fprintln(h, k.Base)
	for _, j := range jars {
		fi, err := os.Stat(j)
		if err != nil {
			return "", err
		}
		fmt.Fprintln(h, filepath.Base(j), fi.Size())
	}
	return "localhost/" + k.Name + ":" + k.Version + "-" + hex.EncodeToString(h.Sum(nil))[:12], nil
}

// Ensure makes sure podman's storage holds the image and returns its
// reference, building it when missing (a copy of the jars onto the base:
// seconds to a minute). Concurrent callers share the build under a file
// lock in cacheDir.
func (k KafkaImage) Ensure(ctx context.Context, p *Podman, cacheDir string, log *slog.Logger) (string, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ref, err := k.Ref()
	if err != nil {
		return "", err
	}
	return p.ensureImage(ctx, ref, cacheDir, func(ref string) error {
		dir, err := os.MkdirTemp(cacheDir, "kafkaimage-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		containerfile := filepath.Join(dir, "Containerfile")
		text := "FROM " + k.Base + "\n" +
			"COPY . /opt/kafka/libs/\n" +
			"ENV KAFKA_HOME=/opt/kafka\n" +
			"WORKDIR /opt/kafka\n"
		if err := os.WriteFile(containerfile, []byte(text), 0o644); err != nil {
			return err
		}
		start := time.Now()
		log.Info("building a Kafka image for the Docker backend", "libs", k.Libs, "base", k.Base, "ref", ref)
		if err := p.Build(ctx, BuildOptions{ContextDir: k.Libs, Dockerfile: containerfile, Tag: ref}); err != nil {
			return err
		}
		log.Info("Kafka image built", "ref", ref, "took", time.Since(start).Round(time.Second))
		return nil
	})
}
