package connect_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
)

// TestSecurityErrorUnknownCA: an endpoint whose certificate the client
// does not trust is a *SecurityError matching ErrTLS, returned at once:
// a bad CA is no error worth a retry.
func TestSecurityErrorUnknownCA(t *testing.T) {
	var handshakes atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			handshakes.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	c, err := connect.New(srv.URL, connect.WithRetry(connect.Retry{Attempts: 5}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = c.ServerInfo(ctx)
	var se *connect.SecurityError
	if !errors.As(err, &se) || !errors.Is(err, connect.ErrTLS) {
		t.Fatalf("ServerInfo with an unknown CA = %v, want a *SecurityError matching ErrTLS", err)
	}
	if n := handshakes.Load(); n != 1 {
		t.Errorf("%d connections, want 1: a bad CA is not retried", n)
	}
}

func TestOutcomeUnknown(t *testing.T) {
	for _, tc := range []struct {
		err  *connect.APIError
		want bool
	}{
		{&connect.APIError{Method: http.MethodPatch, StatusCode: 500, Message: "Request timed out"}, true},
		{&connect.APIError{Method: http.MethodPut, StatusCode: 500, Message: "Request timed out. The worker is currently ..."}, true},
		{&connect.APIError{Method: http.MethodGet, StatusCode: 500, Message: "Request timed out"}, false},
		{&connect.APIError{Method: http.MethodPatch, StatusCode: 500, Message: "boom"}, false},
		{&connect.APIError{Method: http.MethodPatch, StatusCode: 400, Message: "Request timed out"}, false},
	} {
		if got := errors.Is(tc.err, connect.ErrOutcomeUnknown); got != tc.want {
			t.Errorf("errors.Is(%v, ErrOutcomeUnknown) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestF10HTTPSAtPlainWorker: an https:// URL for a worker whose REST
// listener is plain HTTP (Jetty answers the TLS hello with a 400, which
// Go's client reports as http.ErrSchemeMismatch) is a *SecurityError
// matching ErrTLS, returned at once: a setting to fix, not worth a retry.
func TestF10HTTPSAtPlainWorker(t *testing.T) {
	sb := sandboxtest.Shared(t)
	u := sb.ConnectURL()
	if !strings.HasPrefix(u, "http://") {
		t.Fatalf("the shared sandbox's worker is at %s, want a plain http:// listener", u)
	}
	c, err := connect.New("https://"+strings.TrimPrefix(u, "http://"), connect.WithRetry(connect.Retry{Attempts: 5}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = c.ServerInfo(ctx)
	var se *connect.SecurityError
	if !errors.As(err, &se) || !errors.Is(err, connect.ErrTLS) || !strings.Contains(err.Error(), "does not speak TLS") {
		t.Fatalf("https:// at the worker's http listener: %v, want a *SecurityError matching ErrTLS", err)
	}
	if connect.IsTransient(connect.RepeatSafe, err) {
		t.Error("IsTransient: true, want false")
	}
}
