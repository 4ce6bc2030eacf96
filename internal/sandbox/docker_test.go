package sandbox

import (
	"context"
	"errors"
	"os/exec"
	"testing"
)

func TestDockerBackendNeedsADaemon(t *testing.T) {
	if err := exec.Command("docker", "info").Run(); err == nil {
		t.Skip("a Docker daemon answers here; this test is for machines without one")
	}
	_, err := Start(context.Background(), Config{Docker: true, WorkDir: t.TempDir()})
	if !errors.Is(err, ErrNoDocker) {
		t.Fatalf("Start with Docker and no daemon: got %v, want ErrNoDocker", err)
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
