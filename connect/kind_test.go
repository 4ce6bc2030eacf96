package connect_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/errkind"
)

// TestTransportErrorKinds: a request that got no answer is worth a retry,
// unless it is a write that may have reached the worker before the
// connection broke: its outcome is unknown. A connection refused means
// nothing left.
func TestTransportErrorKinds(t *testing.T) {
	ctx := context.Background()
	// A worker that reads each request and closes the connection unanswered.
	hangUp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer hangUp.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String()
	l.Close()

	once := connect.WithRetry(connect.Retry{Attempts: 1})
	broken, err := connect.New(hangUp.URL, once)
	if err != nil {
		t.Fatal(err)
	}
	closed, err := connect.New(refused, once)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		call func() error
		want errkind.Kind
	}{
		{"read, connection closed", func() error { _, err := broken.ServerInfo(ctx); return err }, errkind.Retry},
		{"write, connection closed", func() error { return broken.Stop(ctx, "mm2") }, errkind.OutcomeUnknown},
		{"read, connection refused", func() error { _, err := closed.ServerInfo(ctx); return err }, errkind.Retry},
		{"write, connection refused", func() error { return closed.Stop(ctx, "mm2") }, errkind.Retry},
	} {
		err := tc.call()
		if got := errkind.Of(err); got != tc.want {
			t.Errorf("%s: %v: kind %v, want %v", tc.name, err, got, tc.want)
		}
	}
}

// TestUnreachableBudget: an endpoint that never answered this client ends
// a call after Retry.Unreachable with an *UnreachableError; one that has
// answered before (a worker restarting) keeps the whole Elapsed.
func TestUnreachableBudget(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"version":"4.3.1","commit":"c","kafka_cluster_id":"k"}`))
	}))
	url := srv.URL
	policy := connect.WithRetry(connect.Retry{Initial: 20 * time.Millisecond, Max: 50 * time.Millisecond, Elapsed: 3 * time.Second, Unreachable: 300 * time.Millisecond})
	known, err := connect.New(url, policy)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := known.ServerInfo(ctx); err != nil {
		t.Fatal(err)
	}
	srv.Close() // the worker goes away: connections refused from now on
	fresh, err := connect.New(url, policy)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = fresh.ServerInfo(ctx)
	var ue *connect.UnreachableError
	if !errors.As(err, &ue) || errkind.Of(err) != errkind.Retry || time.Since(start) > 2*time.Second {
		t.Errorf("a client the endpoint never answered: %v after %s, want an *UnreachableError after about 300ms", err, time.Since(start))
	}
	start = time.Now()
	_, err = known.ServerInfo(ctx)
	if errors.As(err, &ue) || time.Since(start) < 2*time.Second {
		t.Errorf("a client the endpoint answered before: %v after %s, want the whole 3s retried, no *UnreachableError", err, time.Since(start))
	}
}
