package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestDockerBackend runs the sandbox through the Docker backend where an
// engine answers at DOCKER_HOST (CI: podman's Docker API, with the image
// of MM2CUTOVER_DOCKER_IMAGE): the smoke test, a worker stopped and started
// again (a container stopped and started), the source broker killed and
// started on the same data, and Close removing every container. Without an
// engine it checks that Start says there is none, unless
// MM2CUTOVER_SANDBOX_BACKEND=docker asks for the backend, which then must
// run.
func TestDockerBackend(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cfg := ConfigFromEnv()
	wanted := cfg.Docker
	cfg.Docker, cfg.Workers, cfg.JMXExporter = true, 1, true
	d, err := newDockerBackend(ctx, "apache/kafka:"+DefaultKafkaVersion, t.TempDir())
	if errors.Is(err, ErrNoDocker) {
		if wanted {
			t.Fatalf("MM2CUTOVER_SANDBOX_BACKEND=docker and no engine at DOCKER_HOST=%q: %v", os.Getenv("DOCKER_HOST"), err)
		}
		cfg.WorkDir = t.TempDir()
		if _, err := Start(ctx, cfg); !errors.Is(err, ErrNoDocker) {
			t.Fatalf("Start with Docker and no daemon: got %v, want ErrNoDocker", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if testing.Short() {
		t.Skip("the Docker backend starts containers: runs without -short")
	}
	sb, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			sb.Close()
		}
	}()
	var ids []string
	for _, p := range sb.processes() {
		c, ok := p.(*container)
		if !ok {
			t.Fatalf("%s runs as %T, want a container", p.label(), p)
		}
		ids = append(ids, c.id)
	}
	t.Logf("%d containers of %s", len(ids), sb.docker.image)
	rep, err := Smoke(ctx, sb, 20)
	if err != nil {
		t.Fatalf("smoke through Docker: %v\n%s", err, sb.LogTails(30))
	}
	t.Logf("smoke: %d records replicated in %v", rep.Records, rep.Replicated.Round(time.Millisecond))
	if err := waitMetric(ctx, sb.Workers()[0].MetricsURL(), "kafka_connect_worker_connector_count", 3*time.Minute); err != nil {
		t.Errorf("the worker container's JMX exporter: %v", err)
	}

	// A stopped worker container starts again and serves.
	w := sb.Workers()[0]
	if err := w.Stop(ctx); err != nil && !errors.Is(err, ErrStopHung) {
		t.Fatalf("stop worker: %v", err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatalf("start the stopped worker: %v", err)
	}
	// The source broker, killed, comes back on its data.
	if err := sb.Source().Nodes()[0].proc.kill(); err != nil {
		t.Fatal(err)
	}
	if err := sb.Source().Start(ctx); err != nil {
		t.Fatalf("start the killed broker: %v", err)
	}
	if _, err := Smoke(ctx, sb, 5); err != nil {
		t.Fatalf("smoke after the restarts: %v\n%s", err, sb.LogTails(30))
	}

	closed = true
	if err := sb.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	for _, id := range ids {
		state, err := d.run(ctx, nil, "inspect", id)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitNoContainer {
			t.Errorf("container %s after Close: %q, %v; want no such container", id[:12], strings.TrimSpace(state), err)
		}
	}
}

func TestBrokerArgvInContainer(t *testing.T) {
	format := []string{"java", "-cp", "/opt/kafka/libs/*", "kafka.tools.StorageTool", "format", "-t", "id", "-c", "/w/server.properties"}
	broker := []string{"java", "-cp", "/opt/kafka/libs/*", "kafka.Kafka", "/w/it's.properties"}
	got := brokerArgv(format, broker)
	want := `'java' '-cp' '/opt/kafka/libs/*' 'kafka.tools.StorageTool' 'format' '-t' 'id' '-c' '/w/server.properties' '--ignore-formatted' && exec 'java' '-cp' '/opt/kafka/libs/*' 'kafka.Kafka' '/w/it'\''s.properties'`
	if len(got) != 3 || got[0] != "bash" || got[1] != "-c" || got[2] != want {
		t.Fatalf("got %q, want bash -c %q", got, want)
	}
	out, err := exec.Command("bash", "-c", "printf '%s|' "+shellJoin([]string{"a b", "it's", "*"})).Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "a b|it's|*|" {
		t.Fatalf("shellJoin does not round-trip through bash: %q", out)
	}
}

// TestClusterIDNeverLooksLikeAnOption pins the cause of a flaky start: one
// random ID in 64 started with '-', which kafka-storage format read as an
// option.
func TestClusterIDNeverLooksLikeAnOption(t *testing.T) {
	for range 10000 {
		if id := newClusterID(); id[0] == '-' || len(id) != 22 {
			t.Fatalf("cluster ID %q", id)
		}
	}
}

// waitMetric scrapes url until its answer names metric or within has
// passed. The exporter's first scrape walks every MBean of the worker's
// JVM: on a loaded machine one scrape took longer than getJSON's 5 s (CI,
// three test runs on two cores), so each scrape may take 30 s here.
func waitMetric(ctx context.Context, url, metric string, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var last error
	for {
		sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
		req, err := http.NewRequestWithContext(sctx, http.MethodGet, url, nil)
		if err != nil {
			scancel()
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			body, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch {
			case rerr != nil:
				err = rerr
			case resp.StatusCode != http.StatusOK:
				err = fmt.Errorf("GET %s: %s", url, resp.Status)
			case strings.Contains(string(body), metric):
				scancel()
				return nil
			default:
				err = fmt.Errorf("GET %s: %d bytes without %s", url, len(body), metric)
			}
		}
		scancel()
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (after %v; last: %v)", ctx.Err(), within, last)
		case <-time.After(time.Second):
		}
	}
}
