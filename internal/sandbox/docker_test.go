package sandbox

import (
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"
)

// TestDockerBackend runs the smoke test through the Docker backend where a
// daemon answers, and otherwise checks that Start says there is none.
func TestDockerBackend(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := exec.CommandContext(ctx, "docker", "info").Run(); err != nil {
		_, err := Start(ctx, Config{Docker: true, WorkDir: t.TempDir()})
		if !errors.Is(err, ErrNoDocker) {
			t.Fatalf("Start with Docker and no daemon: got %v, want ErrNoDocker", err)
		}
		return
	}
	if testing.Short() {
		t.Skip("the Docker backend pulls apache/kafka: runs without -short")
	}
	sb, err := Start(ctx, Config{Docker: true, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if _, err := Smoke(ctx, sb, 20); err != nil {
		t.Fatalf("smoke through Docker: %v\n%s", err, sb.LogTails(30))
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
