package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/mm2cutover/mm2cutover/internal/filelock"
)

// The Prometheus JMX exporter Java agent the sandbox's workers load when
// Config.JMXExporter is set: the same artefact docker/mm2/Dockerfile puts in
// the image (JMX_EXPORTER_URL, JMX_EXPORTER_SHA256). Maven Central publishes
// only SHA-1 and MD5 files for it; the SHA-256 is pinned here (and matches
// Maven Central's .sha1 of the same file).
const (
	JMXExporterArtifact = "io.prometheus.jmx:jmx_prometheus_javaagent:" + JMXExporterVersion
	JMXExporterVersion  = "1.0.1"
	JMXExporterSHA256   = "7d61f737fd661610ccc14aea79764faa1ea94a340cbc8f0029b3d2edea3d80c1"
)

// JMXExporterAgent returns the path of the Prometheus JMX exporter agent jar
// in cacheDir ("" means the default cache), fetching it from Maven Central
// with mvn on first use. The jar is checked against JMXExporterSHA256 every
// time; a mismatch is an error, and a fetched jar that does not match never
// enters the cache. Errors wrap ErrNoKafka when Maven is missing or fails.
func JMXExporterAgent(ctx context.Context, cacheDir string, log *slog.Logger) (string, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no cache directory: %w", err)
		}
		cacheDir = filepath.Join(dir, "mm2cutover")
	}
	name := "jmx_prometheus_javaagent-" + JMXExporterVersion + ".jar"
	path := filepath.Join(cacheDir, "jmx-exporter", name)
	if _, err := os.Stat(path); err == nil {
		return path, checkSHA256(path, JMXExporterSHA256)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	unlock, err := filelock.Lock(ctx, filepath.Join(cacheDir, ".lock"))
	if err != nil {
		return "", fmt.Errorf("lock cache: %w", err)
	}
	defer unlock()
	if _, err := os.Stat(path); err == nil { // another process fetched it while we waited
		return path, checkSHA256(path, JMXExporterSHA256)
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return "", fmt.Errorf("%w: Maven (mvn) is not installed, needed to fetch %s", ErrNoKafka, JMXExporterArtifact)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(path), "fetch-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	log.Info("fetching the prometheus jmx exporter agent from maven central", "artifact", JMXExporterArtifact)
	cmd := exec.CommandContext(ctx, mvn, "-B", "-q", "dependency:copy",
		"-Dartifact="+JMXExporterArtifact, "-DoutputDirectory="+tmp)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w: mvn dependency:copy %s: %v\n%s", ErrNoKafka, JMXExporterArtifact, err, lastLines(string(out), 20))
	}
	fetched := filepath.Join(tmp, name)
	if err := checkSHA256(fetched, JMXExporterSHA256); err != nil {
		return "", err
	}
	if err := os.Rename(fetched, path); err != nil {
		return "", err
	}
	return path, nil
}

// checkSHA256 fails unless the file's SHA-256 is want (lowercase hex).
func checkSHA256(path, want string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("%s: SHA-256 %s, want %s: remove the file and fetch it again", path, got, want)
	}
	return nil
}

// jmxExporterEnv returns the environment that makes a worker's entrypoint
// load the agent on a free port (docker-entrypoint.sh: JMX_EXPORTER_PORT,
// JMX_EXPORTER_JAR; the rules are the image's jmx-exporter.yaml), and the
// URL to scrape. The agent listens on every address.
func (s *Sandbox) jmxExporterEnv() (env []string, metricsURL string, err error) {
	ports, err := freePorts("0.0.0.0", 1)
	if err != nil {
		return nil, "", err
	}
	return []string{
		fmt.Sprintf("JMX_EXPORTER_PORT=%d", ports[0]),
		"JMX_EXPORTER_JAR=" + s.jmxAgent,
	}, fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[0]), nil
}

// MetricsURL returns the worker's Prometheus endpoint, or "" when the
// sandbox was started without Config.JMXExporter (or is attached).
func (w *Worker) MetricsURL() string { return w.metricsURL }

// copyFile copies src to a new file dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
