package connect_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
)

// A worker that forwarded a create to the leader answers 201, then 404 on
// the new connector until its own configuration store has read it (CI of
// dcdb5f2, Kafka 4.3.1). A real worker cannot be made to lag on demand, so
// this serves that shape: WaitKnown reads until the worker knows it.
func TestWaitKnownAfterForwardedCreate(t *testing.T) {
	var calls atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("GET /connectors/mm2/config", func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			connectError(w, http.StatusNotFound, "Connector mm2 not found")
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"name": "mm2", "tasks.max": "1"})
	})
	mux.HandleFunc("GET /connectors/other/config", func(w http.ResponseWriter, r *http.Request) {
		connectError(w, http.StatusInternalServerError, "boom")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c, err := connect.New(srv.URL, connect.WithRetry(connect.Retry{Attempts: 1}), connect.WithPollInterval(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg, err := c.WaitKnown(ctx, "mm2")
	if err != nil || cfg["tasks.max"] != "1" {
		t.Fatalf("WaitKnown = %v, %v; want the configuration after two 404s", cfg, err)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("WaitKnown read %d times, want 3", n)
	}
	// Any other error is not "not yet": it ends the wait.
	if _, err := c.WaitKnown(ctx, "other"); err == nil {
		t.Error("WaitKnown of a connector the worker answers 500 for succeeded")
	}
}

// A loaded worker may read a forwarded create back only with the rebalance
// the create causes (apply failed on a loaded CI machine, 66bceba, as the
// worker asked rejoined its group). The create was answered, so WaitKnown
// goes on as long as the client retries a rebalance (2 minutes by
// default); the old 15 s bound fails here.
func TestWaitKnownPastTheOldGrace(t *testing.T) {
	t.Parallel()
	start := time.Now()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /connectors/mm2/config", func(w http.ResponseWriter, r *http.Request) {
		if time.Since(start) < 17*time.Second {
			connectError(w, http.StatusNotFound, "Connector mm2 not found")
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"name": "mm2", "tasks.max": "1"})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c, err := connect.New(srv.URL, connect.WithPollInterval(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if cfg, err := c.WaitKnown(ctx, "mm2"); err != nil || cfg["tasks.max"] != "1" {
		t.Fatalf("WaitKnown = %v, %v; want the configuration once the worker knows it, 17 s on", cfg, err)
	}
}
