package sandbox

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mm2cutover/mm2cutover/internal/filelock"
)

// pom lists the Apache Kafka artifacts the sandbox runs; Maven copies them and
// their dependencies into the cache.
//
//go:embed pom.xml
var pom []byte

// ErrNoKafka means no Kafka distribution could be found or fetched: neither
// KAFKA_HOME, nor the cache, nor Maven could provide the jars.
var ErrNoKafka = errors.New("no kafka distribution")

// distribution finds the directory whose libs/ holds the Kafka jars, in order:
// cfg.KafkaHome (or KAFKA_HOME), then the cache, filled from Maven Central on
// first use. The cache is shared by concurrent test binaries under a file lock.
func distribution(ctx context.Context, cfg Config, log *slog.Logger) (string, error) {
	if cfg.KafkaHome != "" {
		if !hasKafkaLibs(cfg.KafkaHome) {
			return "", fmt.Errorf("%w: %s/libs lacks one of the kafka_2.13, connect-runtime, connect-mirror and connect-basic-auth-extension jars", ErrNoKafka, cfg.KafkaHome)
		}
		return cfg.KafkaHome, nil
	}
	dir := filepath.Join(cfg.CacheDir, "kafka-"+cfg.KafkaVersion)
	if hasKafkaLibs(dir) {
		return dir, nil
	}
	if err := os.MkdirAll(cfg.CacheDir, 0o755); err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoKafka, err)
	}
	unlock, err := filelock.Lock(ctx, filepath.Join(cfg.CacheDir, ".lock"))
	if err != nil {
		return "", fmt.Errorf("%w: lock cache: %v", ErrNoKafka, err)
	}
	defer unlock()
	if hasKafkaLibs(dir) { // another process filled it while we waited
		return dir, nil
	}
	log.Info("fetching kafka jars from maven central", "version", cfg.KafkaVersion, "cache", dir)
	if err := fetchWithMaven(ctx, cfg, dir); err != nil {
		return "", err
	}
	return dir, nil
}

// fetchWithMaven runs mvn dependency:copy-dependencies into a temporary
// directory and renames it into place, so a half-filled cache is never used.
func fetchWithMaven(ctx context.Context, cfg Config, dir string) error {
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return fmt.Errorf("%w: Maven (mvn) is not installed; install it, or set KAFKA_HOME to an Apache Kafka %s distribution", ErrNoKafka, cfg.KafkaVersion)
	}
	tmp, err := os.MkdirTemp(cfg.CacheDir, "fetch-")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoKafka, err)
	}
	defer os.RemoveAll(tmp)
	pomPath := filepath.Join(tmp, "pom.xml")
	if err := os.WriteFile(pomPath, pom, 0o644); err != nil {
		return fmt.Errorf("%w: %v", ErrNoKafka, err)
	}
	profile := "log4j2"
	if major(cfg.KafkaVersion) < 4 {
		profile = "log4j1" // Kafka 3.x logs through log4j 1 (reload4j)
	}
	libs := filepath.Join(tmp, "dist", "libs")
	cmd := exec.CommandContext(ctx, mvn, "-B", "-q", "-f", pomPath,
		"-P", profile, "-Dkafka.version="+cfg.KafkaVersion,
		"dependency:copy-dependencies", "-DoutputDirectory="+libs)
	cmd.Dir = tmp
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: mvn dependency:copy-dependencies for kafka %s: %v\n%s",
			ErrNoKafka, cfg.KafkaVersion, err, lastLines(string(out), 20))
	}
	if !hasKafkaLibs(filepath.Join(tmp, "dist")) {
		return fmt.Errorf("%w: maven copied no kafka jars for %s", ErrNoKafka, cfg.KafkaVersion)
	}
	if _, err := os.Stat(dir); err == nil {
		return addMissingJars(filepath.Join(tmp, "dist", "libs"), filepath.Join(dir, "libs"))
	}
	if err := os.Rename(filepath.Join(tmp, "dist"), dir); err != nil {
		return fmt.Errorf("%w: %v", ErrNoKafka, err)
	}
	return nil
}

// addMissingJars moves the jars of from that to lacks into to: a cache
// filled before pom.xml listed an artefact gains it without replacing the
// jars that running JVMs of other test binaries have open.
func addMissingJars(from, to string) error {
	jars, err := filepath.Glob(filepath.Join(from, "*.jar"))
	if err != nil {
		return err
	}
	for _, jar := range jars {
		dst := filepath.Join(to, filepath.Base(jar))
		if _, err := os.Stat(dst); err == nil {
			continue
		}
		// Rename within to, so that the jar appears whole.
		tmp := dst + ".part"
		os.Remove(tmp) // left by an interrupted fetch
		if err := copyFile(jar, tmp); err != nil {
			return fmt.Errorf("%w: %v", ErrNoKafka, err)
		}
		if err := os.Rename(tmp, dst); err != nil {
			return fmt.Errorf("%w: %v", ErrNoKafka, err)
		}
	}
	return nil
}

func hasKafkaLibs(dir string) bool {
	for _, pattern := range []string{"kafka_2.13-*.jar", "connect-mirror-[0-9]*.jar", "connect-runtime-*.jar", "connect-basic-auth-extension-*.jar"} {
		m, _ := filepath.Glob(filepath.Join(dir, "libs", pattern))
		if len(m) == 0 {
			return false
		}
	}
	return true
}

// major returns the major version number of a Kafka version such as "3.9.1".
func major(version string) int {
	var m int
	fmt.Sscanf(version, "%d", &m)
	return m
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
