package sandbox_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
)

func TestMain(m *testing.M) { sandboxtest.Main(m) }

func TestSmoke(t *testing.T) {
	sb := sandboxtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := sandbox.Smoke(ctx, sb, 50)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kafka %s: %d records replicated byte for byte in %v", rep.KafkaVersion, rep.Records, rep.Replicated)
}

func TestClustersAreIndependent(t *testing.T) {
	sb := sandboxtest.Shared(t)
	if sb.Source().ClusterID() == sb.Target().ClusterID() || sb.Source().Bootstrap() == sb.Target().Bootstrap() {
		t.Fatalf("source and target share an identity: %s/%s and %s/%s",
			sb.Source().ClusterID(), sb.Source().Bootstrap(), sb.Target().ClusterID(), sb.Target().Bootstrap())
	}
	if got, want := len(sb.Workers()), sandboxtest.SharedWorkers; got != want {
		t.Fatalf("got %d workers, want %d", got, want)
	}
	if sb.Workers()[0].URL() == sb.Workers()[1].URL() {
		t.Fatalf("workers share the URL %s", sb.Workers()[0].URL())
	}
}

// TestFaultHandles stops and restarts a broker, and stops, kills and restarts
// a worker, on a sandbox of its own.
func TestFaultHandles(t *testing.T) {
	sb := sandboxtest.Dedicated(t, sandbox.Config{Workers: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	src := sb.Source()
	if err := sandbox.CreateTopic(ctx, src.Bootstrap(), "restart", 1); err != nil {
		t.Fatal(err)
	}
	if err := src.Stop(ctx); err != nil {
		t.Fatalf("stop broker: %v", err)
	}
	if err := sandbox.CreateTopic(ctx, src.Bootstrap(), "while-down", 1); err == nil {
		t.Fatal("created a topic on a stopped broker")
	}
	if err := src.Start(ctx); err != nil {
		t.Fatalf("restart broker: %v", err)
	}
	if err := sandbox.CreateTopic(ctx, src.Bootstrap(), "restart", 1); err == nil {
		t.Fatal("topic created before the restart is gone: data directory not kept")
	}

	w := sb.Workers()[0]
	if err := w.Stop(ctx); errors.Is(err, sandbox.ErrStopHung) {
		t.Logf("Kafka Connect hung on SIGTERM and was killed (a known Connect/Jetty shutdown race): %v", err)
	} else if err != nil {
		t.Fatalf("stop worker: %v", err)
	}
	if _, err := http.Get(w.URL() + "/"); err == nil {
		t.Fatal("stopped worker still answers")
	}
	if err := w.Start(ctx); err != nil {
		t.Fatalf("restart worker: %v", err)
	}
	if err := w.Kill(); err != nil {
		t.Fatalf("kill worker: %v", err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatalf("start killed worker: %v", err)
	}
}

func TestAttach(t *testing.T) {
	sb := sandboxtest.Shared(t)
	path := t.TempDir() + "/state.json"
	if err := sb.WriteState(path); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	at, err := sandbox.Attach(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if at.Source().Bootstrap() != sb.Source().Bootstrap() || at.ConnectURL() != sb.ConnectURL() || at.KafkaVersion() != sb.KafkaVersion() {
		t.Fatalf("attached sandbox differs: %+v", at)
	}
	if err := at.Workers()[0].Kill(); !errors.Is(err, sandbox.ErrNotOwner) {
		t.Fatalf("Kill on an attached sandbox: got %v, want ErrNotOwner", err)
	}
	if err := at.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(sb.ConnectURL() + "/"); err != nil {
		t.Fatalf("closing an attached sandbox stopped the real one: %v", err)
	}
}
