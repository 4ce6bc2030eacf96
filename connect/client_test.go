package connect_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// basePath is where the fake worker is mounted, so that a request built from
// an absolute path instead of the base URL fails.
const basePath = "/kafka-connect"

// fastRetry is six attempts 5 ms apart.
var fastRetry = connect.Retry{Initial: 5 * time.Millisecond, Max: 5 * time.Millisecond, Attempts: 6}

// setup starts an httptest server; handlers are registered on mux with paths
// relative to basePath.
func setup(t *testing.T, opts ...connect.Option) (*connect.Client, *http.ServeMux) {
	t.Helper()
	mux := http.NewServeMux()
	outer := http.NewServeMux()
	outer.Handle(basePath+"/", http.StripPrefix(basePath, mux))
	outer.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request outside the base path: %s %s", r.Method, r.URL)
		http.Error(w, "outside base path", http.StatusBadGateway)
	})
	srv := httptest.NewServer(outer)
	t.Cleanup(srv.Close)
	opts = append([]connect.Option{connect.WithRetry(fastRetry), connect.WithPollInterval(10 * time.Millisecond)}, opts...)
	c, err := connect.New(srv.URL+basePath, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c, mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func connectError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error_code": status, "message": msg})
}

func serverInfo(mux *http.ServeMux, version string) {
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]string{"version": version, "commit": "abc", "kafka_cluster_id": "cid"})
	})
}

func stoppedStatus(mux *http.ServeMux, name string) {
	mux.HandleFunc("GET /connectors/"+name+"/status", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"name": name, "connector": map[string]string{"state": "STOPPED", "worker_id": "w1:8083"}, "tasks": []any{}, "type": "source"})
	})
}

const (
	msgNoLeader    = "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
	msgConflicting = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
)

func TestRetryOnRebalance409(t *testing.T) {
	c, mux := setup(t)
	var calls atomic.Int32
	mux.HandleFunc("GET /connectors/mm2/status", func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) < 3 {
			connectError(w, 409, msgNoLeader)
			return
		}
		writeJSON(w, 200, map[string]any{"name": "mm2", "connector": map[string]string{"state": "RUNNING", "worker_id": "w"}, "tasks": []any{}, "type": "source"})
	})
	st, err := c.Status(context.Background(), "mm2")
	if err != nil {
		t.Fatal(err)
	}
	if st.Connector.State != connect.StateRunning || calls.Load() != 3 {
		t.Errorf("state %s after %d calls, want RUNNING after 3", st.Connector.State, calls.Load())
	}
}

func TestRetryOn500RebalanceForPatch(t *testing.T) {
	c, mux := setup(t)
	serverInfo(mux, "4.3.1")
	stoppedStatus(mux, "mm2")
	var calls atomic.Int32
	var bodies []string
	mux.HandleFunc("PATCH /connectors/mm2/offsets", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		if calls.Add(1) == 1 {
			connectError(w, 500, "Request cannot be completed because a rebalance is expected")
			return
		}
		writeJSON(w, 200, map[string]string{"message": "The offsets for this connector have been altered successfully"})
	})
	msg, err := c.AlterOffsets(context.Background(), "mm2", []connect.Offset{
		mirrorOffset("source", "orders", 0, 41),
		mirrorOffset("source", "orders", 1),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, "altered successfully") {
		t.Errorf("message = %q", msg)
	}
	want := `{"offsets":[{"partition":{"cluster":"source","partition":0,"topic":"orders"},"offset":{"offset":41}},{"partition":{"cluster":"source","partition":1,"topic":"orders"},"offset":null}]}`
	if diff := cmp.Diff([]string{want, want}, bodies); diff != "" {
		t.Errorf("PATCH bodies (-want +got):\n%s", diff)
	}
}

func TestNoRetryOnPermanent500(t *testing.T) {
	c, mux := setup(t)
	var calls atomic.Int32
	mux.HandleFunc("GET /connectors/mm2/config", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		connectError(w, 500, "Request timed out")
	})
	_, err := c.Config(context.Background(), "mm2")
	var apiErr *connect.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 || apiErr.Message != "Request timed out" || apiErr.Path != "/connectors/mm2/config" || apiErr.Method != "GET" {
		t.Fatalf("err = %#v", err)
	}
	if calls.Load() != 1 {
		t.Errorf("calls = %d, want 1", calls.Load())
	}
}

// Kafka Connect 4.3.1 answers the first GET of offsets after a PATCH of
// 10,000 partitions with this 500 while it loads what it just wrote; the
// next GET succeeds. A read is retried on it, a write never.
func TestOffsetsRetriedWhileUnavailable(t *testing.T) {
	const msg = "Failed to retrieve offsets for source connector mm2"
	c, mux := setup(t)
	serverInfo(mux, "4.3.1")
	stoppedStatus(mux, "mm2")
	var gets, patches atomic.Int32
	mux.HandleFunc("GET /connectors/mm2/offsets", func(w http.ResponseWriter, r *http.Request) {
		if gets.Add(1) <= 1 {
			connectError(w, 500, msg)
			return
		}
		_, _ = io.WriteString(w, `{"offsets":[{"partition":{"cluster":"source","partition":0,"topic":"orders"},"offset":{"offset":41}}]}`)
	})
	mux.HandleFunc("PATCH /connectors/mm2/offsets", func(w http.ResponseWriter, r *http.Request) {
		patches.Add(1)
		connectError(w, 500, msg)
	})
	got, err := c.Offsets(context.Background(), "mm2")
	if err != nil || len(got) != 1 || gets.Load() != 2 {
		t.Fatalf("Offsets = %v, %v after %d GETs; want one offset after 2", got, err, gets.Load())
	}
	_, err = c.AlterOffsets(context.Background(), "mm2", []connect.Offset{mirrorOffset("source", "orders", 0, 41)})
	var apiErr *connect.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 || errors.Is(err, connect.ErrOffsetsUnavailable) || patches.Load() != 1 {
		t.Fatalf("AlterOffsets = %v after %d PATCHes; want the 500 after 1, not ErrOffsetsUnavailable", err, patches.Load())
	}

	// WaitMirrorOffsets reads on when the client's own retries are used up.
	want := []offsets.ConnectOffset{{Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders"}, Offset: offsets.NewMirrorOffset(41)}}
	gets.Store(-10)
	if _, err := c.WaitMirrorOffsets(context.Background(), "mm2", want); err != nil {
		t.Fatalf("WaitMirrorOffsets through 11 failed reads: %v", err)
	}
}

func TestCreateRetriedOnRebalanceAdoptsEqualConfig(t *testing.T) {
	c, mux := setup(t)
	serverInfo(mux, "4.3.1")
	cfg := map[string]string{"connector.class": connect.MirrorSourceConnectorClass, "topics": "orders"}
	var posts atomic.Int32
	mux.HandleFunc("POST /connectors", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		if body["initial_state"] != "STOPPED" || body["name"] != "mm2" {
			t.Errorf("create body = %v", body)
		}
		if posts.Add(1) == 1 {
			// The worker may have applied the create before the answer was lost.
			connectError(w, 409, msgConflicting)
			return
		}
		connectError(w, 409, "Connector mm2 already exists")
	})
	mux.HandleFunc("GET /connectors/mm2", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"name": "mm2", "config": map[string]string{"connector.class": connect.MirrorSourceConnectorClass, "topics": "orders", "name": "mm2"}, "tasks": []any{}, "type": "source"})
	})
	info, err := c.Create(context.Background(), "mm2", cfg, connect.InitialStopped)
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "mm2" || posts.Load() != 2 {
		t.Errorf("info %+v after %d posts", info, posts.Load())
	}
}

func TestCreateRetriedMeetsDifferentConfig(t *testing.T) {
	c, mux := setup(t)
	serverInfo(mux, "4.3.1")
	var posts atomic.Int32
	mux.HandleFunc("POST /connectors", func(w http.ResponseWriter, r *http.Request) {
		if posts.Add(1) == 1 {
			connectError(w, 409, msgNoLeader)
			return
		}
		connectError(w, 409, "Connector mm2 already exists")
	})
	mux.HandleFunc("GET /connectors/mm2", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"name": "mm2", "config": map[string]string{"topics": "other", "name": "mm2", "sasl.jaas.config": "old-secret"}})
	})
	_, err := c.Create(context.Background(), "mm2", map[string]string{"topics": "orders", "sasl.jaas.config": "new-secret"}, connect.InitialStopped)
	var conflict *connect.ConfigConflictError
	if !errors.As(err, &conflict) || !errors.Is(err, connect.ErrAlreadyExists) {
		t.Fatalf("err = %v, want *ConfigConflictError matching ErrAlreadyExists", err)
	}
	if diff := cmp.Diff([]string{"sasl.jaas.config", "topics"}, conflict.Keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("error shows a secret: %v", err)
	}
}

func TestCreateFirstAttemptAlreadyExists(t *testing.T) {
	c, mux := setup(t)
	var posts atomic.Int32
	mux.HandleFunc("POST /connectors", func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		connectError(w, 409, "Connector mm2 already exists")
	})
	_, err := c.Create(context.Background(), "mm2", map[string]string{"topics": "orders"}, connect.InitialDefault)
	var apiErr *connect.APIError
	if !errors.As(err, &apiErr) || !errors.Is(err, connect.ErrAlreadyExists) || errors.Is(err, connect.ErrRebalance) {
		t.Fatalf("err = %v", err)
	}
	if posts.Load() != 1 {
		t.Errorf("posts = %d, want 1", posts.Load())
	}
}

func TestCreateNotRetriedOn503(t *testing.T) {
	c, mux := setup(t)
	var posts atomic.Int32
	mux.HandleFunc("POST /connectors", func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	if _, err := c.Create(context.Background(), "mm2", map[string]string{}, connect.InitialDefault); err == nil {
		t.Fatal("want an error")
	}
	if posts.Load() != 1 {
		t.Errorf("posts = %d, want 1", posts.Load())
	}
}

// resetOnce answers the first request by resetting the TCP connection.
func resetOnce(t *testing.T, calls *atomic.Int32, then http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			_ = conn.(*net.TCPConn).SetLinger(0)
			_ = conn.Close()
			return
		}
		then(w, r)
	}
}

func TestConnectionResetRetriedOnlyWhenSafe(t *testing.T) {
	c, mux := setup(t)
	var getCalls, restartCalls atomic.Int32
	mux.HandleFunc("GET /connector-plugins", resetOnce(t, &getCalls, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, []map[string]string{{"class": connect.MirrorSourceConnectorClass, "type": "source", "version": "4.3.1"}})
	}))
	mux.HandleFunc("POST /connectors/mm2/restart", resetOnce(t, &restartCalls, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(204)
	}))
	plugins, err := c.Plugins(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(plugins) != 1 || getCalls.Load() != 2 {
		t.Errorf("plugins %v after %d calls", plugins, getCalls.Load())
	}
	if _, err := c.Restart(context.Background(), "mm2", connect.RestartOptions{}); err == nil {
		t.Error("restart after a reset connection: want an error, it is not retried")
	}
	if restartCalls.Load() != 1 {
		t.Errorf("restart calls = %d, want 1", restartCalls.Load())
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, err := connect.New("http://"+addr, connect.WithRetry(fastRetry))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ServerInfo(context.Background())
	if err == nil || !connect.IsTransient(connect.RepeatSafe, err) {
		t.Errorf("err = %v, want a transient connection refused", err)
	}
}

func TestSlowAnswerPastTimeout(t *testing.T) {
	c, mux := setup(t, connect.WithTimeout(100*time.Millisecond))
	var calls atomic.Int32
	mux.HandleFunc("GET /connectors/mm2/status", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	start := time.Now()
	_, err := c.Status(context.Background(), "mm2")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %s", d)
	}
	if calls.Load() != 1 {
		t.Errorf("calls = %d, want 1 (a timeout is not retried)", calls.Load())
	}
}

func TestRetryStopsAfterAttempts(t *testing.T) {
	for _, attempts := range []int{1, 4} {
		c, mux := setup(t, connect.WithRetry(connect.Retry{Initial: time.Millisecond, Attempts: attempts}))
		var calls atomic.Int32
		mux.HandleFunc("GET /connectors/mm2/status", func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			connectError(w, 409, msgNoLeader)
		})
		_, err := c.Status(context.Background(), "mm2")
		if !connect.IsTransient(connect.RepeatSafe, err) {
			t.Errorf("Attempts %d: err = %v, want the transient 409", attempts, err)
		}
		if int(calls.Load()) != attempts {
			t.Errorf("Attempts %d: %d calls", attempts, calls.Load())
		}
	}
}

func TestRetryRejectsNegativeSettings(t *testing.T) {
	for _, r := range []connect.Retry{{Initial: -1}, {Max: -1}, {Elapsed: -1}, {Attempts: -1}} {
		if _, err := connect.New("http://127.0.0.1:1", connect.WithRetry(r)); err == nil {
			t.Errorf("New with %+v: no error", r)
		}
	}
}

func TestContextCancelledMidRetry(t *testing.T) {
	c, mux := setup(t, connect.WithRetry(connect.Retry{Initial: 50 * time.Millisecond, Max: 50 * time.Millisecond}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int32
	mux.HandleFunc("GET /connectors/mm2/status", func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 2 {
			cancel()
		}
		connectError(w, 409, msgNoLeader)
	})
	start := time.Now()
	_, err := c.Status(ctx, "mm2")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if time.Since(start) > 2*time.Second || calls.Load() > 3 {
		t.Errorf("stopped after %s and %d calls", time.Since(start), calls.Load())
	}
}

func TestGuardRefusesPausedWithoutWriting(t *testing.T) {
	c, mux := setup(t)
	serverInfo(mux, "4.3.1")
	mux.HandleFunc("GET /connectors/mm2/status", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"name": "mm2", "connector": map[string]string{"state": "PAUSED", "worker_id": "w"},
			"tasks": []any{map[string]any{"id": 0, "state": "PAUSED", "worker_id": "w"}}, "type": "source"})
	})
	mux.HandleFunc("/connectors/mm2/offsets", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("guard let %s through", r.Method)
	})
	for name, call := range map[string]func() error{
		"alter": func() error {
			_, err := c.AlterOffsets(context.Background(), "mm2", []connect.Offset{mirrorOffset("source", "t", 0, 1)})
			return err
		},
		"reset": func() error { _, err := c.ResetOffsets(context.Background(), "mm2"); return err },
	} {
		err := call()
		var nse *connect.NotStoppedError
		if !errors.As(err, &nse) || !errors.Is(err, connect.ErrNotStopped) {
			t.Fatalf("%s: err = %v, want *NotStoppedError", name, err)
		}
		if nse.State != "PAUSED" || nse.Tasks != 1 || !strings.Contains(nse.Advice(), "/connectors/mm2/stop") {
			t.Errorf("%s: state %q, %d tasks, advice %q: %v", name, nse.State, nse.Tasks, nse.Advice(), err)
		}
	}
}

func TestServer400MappedToNotStopped(t *testing.T) {
	c, mux := setup(t)
	serverInfo(mux, "4.3.1")
	var statusCalls atomic.Int32
	mux.HandleFunc("GET /connectors/mm2/status", func(w http.ResponseWriter, r *http.Request) {
		state := "STOPPED" // the guard sees STOPPED; a resume races in
		if statusCalls.Add(1) > 1 {
			state = "RUNNING"
		}
		writeJSON(w, 200, map[string]any{"name": "mm2", "connector": map[string]string{"state": state, "worker_id": "w"}, "tasks": []any{}, "type": "source"})
	})
	mux.HandleFunc("DELETE /connectors/mm2/offsets", func(w http.ResponseWriter, r *http.Request) {
		connectError(w, 400, "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/mm2/stop' endpoint")
	})
	_, err := c.ResetOffsets(context.Background(), "mm2")
	var nse *connect.NotStoppedError
	var apiErr *connect.APIError
	if !errors.As(err, &nse) || !errors.As(err, &apiErr) || apiErr.StatusCode != 400 {
		t.Fatalf("err = %v", err)
	}
	if nse.State != "RUNNING" {
		t.Errorf("state = %q, want RUNNING", nse.State)
	}
}

func TestVersionGates(t *testing.T) {
	tests := []struct {
		version string
		call    func(*connect.Client) error
		wantErr bool
	}{
		{"3.4.1", func(c *connect.Client) error { _, err := c.Offsets(context.Background(), "mm2"); return err }, true},
		{"3.5.0", func(c *connect.Client) error { _, err := c.Offsets(context.Background(), "mm2"); return err }, false},
		{"3.5.2", func(c *connect.Client) error { _, err := c.ResetOffsets(context.Background(), "mm2"); return err }, true},
		{"3.6.0", func(c *connect.Client) error { _, err := c.ResetOffsets(context.Background(), "mm2"); return err }, false},
		{"3.6.2", func(c *connect.Client) error {
			_, err := c.Create(context.Background(), "mm2", map[string]string{}, connect.InitialStopped)
			return err
		}, true},
		{"3.6.2", func(c *connect.Client) error {
			_, err := c.Create(context.Background(), "mm2", map[string]string{}, connect.InitialDefault)
			return err
		}, false},
		{"3.7.0", func(c *connect.Client) error {
			_, err := c.Create(context.Background(), "mm2", map[string]string{}, connect.InitialStopped)
			return err
		}, false},
	}
	for _, tt := range tests {
		c, mux := setup(t)
		serverInfo(mux, tt.version)
		stoppedStatus(mux, "mm2")
		mux.HandleFunc("/connectors/mm2/offsets", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, map[string]any{"offsets": []any{}, "message": "ok"})
		})
		mux.HandleFunc("POST /connectors", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 201, map[string]any{"name": "mm2", "config": map[string]string{}})
		})
		err := tt.call(c)
		var ve *connect.VersionError
		if got := errors.As(err, &ve); got != tt.wantErr || (got && !errors.Is(err, connect.ErrUnsupportedVersion)) {
			t.Errorf("worker %s: err = %v, want version error %v", tt.version, err, tt.wantErr)
		}
	}
}

func TestSecretsNeverShown(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, mux := setup(t, connect.WithBasicAuth("admin", "basic-pw-123"), connect.WithLogger(logger))
	jaas := `org.apache.kafka.common.security.plain.PlainLoginModule required username="mm2" password="jaas-pw-456";`
	var auth atomic.Value
	mux.HandleFunc("POST /connectors", func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		// A worker (or a proxy) echoing the configuration it refused.
		connectError(w, 500, "Failed to create: sasl.jaas.config="+jaas+" password=\"jaas-pw-456\"")
	})
	mux.HandleFunc("PUT /connectors/mm2/config", func(w http.ResponseWriter, r *http.Request) {
		connectError(w, 409, msgNoLeader+" jaas-pw-456")
	})
	cfg := map[string]string{"source.cluster.sasl.jaas.config": jaas, "ssl.keystore.password": "ks-pw-789"}
	_, err1 := c.Create(context.Background(), "mm2", cfg, connect.InitialDefault)
	_, _, err2 := c.PutConfig(context.Background(), "mm2", cfg)
	if err1 == nil || err2 == nil {
		t.Fatal("want errors")
	}
	if a, _ := auth.Load().(string); !strings.HasPrefix(a, "Basic ") {
		t.Errorf("Authorization = %q, want basic auth", a)
	}
	all := err1.Error() + "\n" + err2.Error() + "\n" + logs.String() + "\n" + c.String()
	for _, secret := range []string{"basic-pw-123", "jaas-pw-456", "ks-pw-789"} {
		if strings.Contains(all, secret) {
			t.Errorf("secret %q shown:\n%s", secret, all)
		}
	}
	if !strings.Contains(logs.String(), "retrying") {
		t.Errorf("no retry logged:\n%s", logs.String())
	}
}

func TestBaseURLCredentialsNotShown(t *testing.T) {
	c, err := connect.New("http://user:url-pw-1@127.0.0.1:1/x", connect.WithRetry(fastRetry))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ServerInfo(context.Background())
	if err == nil || strings.Contains(err.Error(), "url-pw-1") || strings.Contains(c.String(), "url-pw-1") {
		t.Errorf("err = %v, client %s", err, c)
	}
	if _, err := connect.New("ftp://x:pw-2@host/"); err == nil || strings.Contains(err.Error(), "pw-2") {
		t.Errorf("New(ftp) err = %v", err)
	}
}

func TestNonJSONErrorBodies(t *testing.T) {
	c, mux := setup(t)
	mux.HandleFunc("GET /connectors", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
	})
	mux.HandleFunc("GET /connector-plugins", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write(bytes.Repeat([]byte("x"), 1<<20))
	})
	_, err := c.Connectors(context.Background())
	var apiErr *connect.APIError
	if !errors.Is(err, connect.ErrUnauthorized) || !errors.As(err, &apiErr) || apiErr.Message != "Unauthorized" {
		t.Errorf("err = %v", err)
	}
	_, err = c.Plugins(context.Background())
	if !errors.Is(err, connect.ErrForbidden) || len(err.Error()) > 4096 {
		t.Errorf("err (len %d) does not match ErrForbidden or is unbounded", len(err.Error()))
	}
}

func TestForwardingErrorAdvice(t *testing.T) {
	c, mux := setup(t)
	mux.HandleFunc("PUT /connectors/mm2/stop", func(w http.ResponseWriter, r *http.Request) {
		connectError(w, 500, "IO Error trying to forward REST request: java.net.ConnectException: Connection refused")
	})
	err := c.Stop(context.Background(), "mm2")
	if !errors.Is(err, connect.ErrForwarding) || !strings.Contains(err.Error(), "advertised REST addresses") {
		t.Errorf("err = %v", err)
	}
	if errors.Is(err, connect.ErrUnauthorized) {
		t.Errorf("an unreachable leader matches ErrUnauthorized: %v", err)
	}
}

// TestForwardedUnauthorized: the leader's 401 to a forwarded request, as
// Kafka Connect 4.3.1 reports it (pinned against real workers by
// TestSecureForwardedRequestKeepsTheCallersAuthorization).
func TestForwardedUnauthorized(t *testing.T) {
	c, mux := setup(t)
	mux.HandleFunc("PUT /connectors/mm2/stop", func(w http.ResponseWriter, r *http.Request) {
		connectError(w, 500, "IO Error trying to forward REST request: org.eclipse.jetty.client.HttpResponseException: "+
			"HTTP protocol violation: Authentication challenge without WWW-Authenticate header")
	})
	err := c.Stop(context.Background(), "mm2")
	if !errors.Is(err, connect.ErrUnauthorized) || !errors.Is(err, connect.ErrForwarding) {
		t.Errorf("err = %v, want ErrUnauthorized and ErrForwarding", err)
	}
	if !strings.Contains(err.Error(), "every worker must accept the same REST users") || strings.Contains(err.Error(), "advertised REST addresses") {
		t.Errorf("advice = %v", err)
	}
}

func TestPathEscaping(t *testing.T) {
	c, mux := setup(t)
	var got string
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.EscapedPath()
		writeJSON(w, 200, map[string]string{})
	})
	if _, err := c.Config(context.Background(), "a b/c?d"); err != nil {
		t.Fatal(err)
	}
	if want := "/connectors/a%20b%2Fc%3Fd/config"; got != want {
		t.Errorf("path = %q, want %q", got, want)
	}
}

func TestOffsetsDecodeAsInt64(t *testing.T) {
	c, mux := setup(t)
	serverInfo(mux, "4.3.1")
	mux.HandleFunc("GET /connectors/mm2/offsets", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"offsets":[{"partition":{"cluster":"source","partition":3,"topic":"orders"},"offset":{"offset":9007199254740993}}]}`)
	})
	got, err := c.Offsets(context.Background(), "mm2")
	if err != nil {
		t.Fatal(err)
	}
	want := []connect.Offset{mirrorOffset("source", "orders", 3, 9007199254740993)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("offsets (-want +got):\n%s", diff)
	}
}

// TestMirrorOffsetsBodies: the answer of GET offsets is handed whole to
// the strict decoder (not decoded twice); a body that is not JSON, a fault
// no real worker makes on demand, is a decode error, and one that is JSON
// of another shape matches ErrNotMirrorOffset.
func TestMirrorOffsetsBodies(t *testing.T) {
	c, mux := setup(t)
	serverInfo(mux, "4.3.1")
	for name, body := range map[string]string{
		"good":     `{"offsets":[{"partition":{"cluster":"source","partition":3,"topic":"orders"},"offset":{"offset":9007199254740993}}]}`,
		"not json": `{"offsets":[`,
		"shape":    `{"offsets":[{"partition":{"cluster":"source","partition":3,"topic":"orders"},"offset":{"offset":1},"x":1}]}`,
	} {
		mux.HandleFunc("GET /connectors/"+strings.ReplaceAll(name, " ", "-")+"/offsets", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, body)
		})
	}
	got, err := c.MirrorOffsets(context.Background(), "good")
	want := []offsets.ConnectOffset{{Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: 3}, Offset: offsets.NewMirrorOffset(9007199254740993)}}
	if err != nil || !cmp.Equal(got, want) {
		t.Errorf("MirrorOffsets(good) = %v, %v; want %v", got, err, want)
	}
	if _, err := c.MirrorOffsets(context.Background(), "not-json"); err == nil || !strings.Contains(err.Error(), "decode 200 answer") {
		t.Errorf("MirrorOffsets(not json) error = %v, want a decode error", err)
	}
	if _, err := c.MirrorOffsets(context.Background(), "shape"); !errors.Is(err, connect.ErrNotMirrorOffset) {
		t.Errorf("MirrorOffsets(shape) error = %v, want ErrNotMirrorOffset", err)
	}
}

func TestWaitMirrorOffsetsEventuallyConsistent(t *testing.T) {
	c, mux := setup(t)
	serverInfo(mux, "4.3.1")
	var calls atomic.Int32
	mux.HandleFunc("GET /connectors/mm2/offsets", func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) < 3 {
			_, _ = io.WriteString(w, `{"offsets":[{"partition":{"cluster":"source","partition":1,"topic":"orders"},"offset":{"offset":5}}]}`)
			return
		}
		_, _ = io.WriteString(w, `{"offsets":[{"partition":{"topic":"orders","partition":0,"cluster":"source"},"offset":{"offset":41}}]}`)
	})
	orders := func(p int32, m int64) offsets.ConnectOffset {
		return offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: p}, Offset: offsets.NewMirrorOffset(m)}
	}
	if rb, err := c.WaitMirrorOffsets(context.Background(), "mm2", []offsets.ConnectOffset{orders(0, 41)}); err != nil || !rb.OK() {
		t.Fatal(rb, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	rb, err := c.WaitMirrorOffsets(ctx, "mm2", []offsets.ConnectOffset{orders(0, 40)})
	var rbe *connect.ReadBackError
	if !errors.As(err, &rbe) || !errors.Is(err, connect.ErrReadBack) || !errors.Is(err, context.DeadlineExceeded) ||
		rb.Count(offsets.WrongValue) != 1 || !strings.Contains(rbe.Error(), "want 40, got 41") {
		t.Errorf("err = %v", err)
	}
}

func TestWaitRunningReturnsFailedTask(t *testing.T) {
	c, mux := setup(t)
	mux.HandleFunc("GET /connectors/mm2/status", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"name": "mm2", "connector": map[string]string{"state": "RUNNING", "worker_id": "w1"},
			"tasks": []any{
				map[string]any{"id": 0, "state": "RUNNING", "worker_id": "w1"},
				map[string]any{"id": 1, "state": "FAILED", "worker_id": "w2", "trace": "org.apache.kafka.connect.errors.ConnectException: boom\n\tat x"},
			}, "type": "source"})
	})
	_, err := c.WaitRunning(context.Background(), "mm2")
	var fe *connect.FailedError
	if !errors.As(err, &fe) || !errors.Is(err, connect.ErrFailed) || fe.Task == nil || *fe.Task != 1 || !strings.Contains(fe.Trace, "boom") {
		t.Fatalf("err = %v", err)
	}
}

func TestTLSWithCustomCA(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]string{"version": "4.3.1"})
	}))
	defer srv.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	c, err := connect.New(srv.URL, connect.WithCACertPEM(caPEM))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ServerInfo(context.Background()); err != nil {
		t.Errorf("with the CA: %v", err)
	}
	c, err = connect.New(srv.URL, connect.WithRetry(fastRetry))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ServerInfo(context.Background()); err == nil {
		t.Error("without the CA: want a certificate error")
	}
	if _, err := connect.New(srv.URL, connect.WithCACertPEM([]byte("nope"))); err == nil {
		t.Error("bad PEM: want an error")
	}
	if _, err := connect.New(srv.URL, connect.WithHTTPClient(srv.Client()), connect.WithCACertPEM(caPEM)); err == nil {
		t.Error("http client and TLS options: want an error")
	}
}

func TestTLSClientCertificate(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
			http.Error(w, "no client certificate", http.StatusUnauthorized)
			return
		}
		writeJSON(w, 200, map[string]string{"version": "4.3.1"})
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
	srv.StartTLS()
	defer srv.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	c, err := connect.New(srv.URL, connect.WithCACertPEM(caPEM), connect.WithClientCertificate(srv.TLS.Certificates[0]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ServerInfo(context.Background()); err != nil {
		t.Errorf("with a client certificate: %v", err)
	}
	c, err = connect.New(srv.URL, connect.WithCACertPEM(caPEM), connect.WithRetry(fastRetry))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ServerInfo(context.Background()); err == nil {
		t.Error("without a client certificate: want an error")
	}
}

// TestEchoedAuthorizationRedacted: a server or proxy that echoes the
// request's Authorization header (or the decoded credentials) into its
// error body must not put the basic-auth credentials into our error.
func TestEchoedAuthorizationRedacted(t *testing.T) {
	const user, password = "operator", "pw-marker-8472"
	c, mux := setup(t, connect.WithBasicAuth(user, password))
	mux.HandleFunc("GET /connectors", func(w http.ResponseWriter, r *http.Request) {
		// A proxy's HTML error page quoting the request headers.
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprintf(w, "<html><body>upstream failed; request headers: Authorization: %s</body></html>", r.Header.Get("Authorization"))
	})
	mux.HandleFunc("GET /connector-plugins", func(w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error_code": 401,
			"message": fmt.Sprintf("user %s:%s rejected (header %s)", u, p, r.Header.Get("Authorization"))})
	})
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		// The header cut by the server's own length limit.
		auth := r.Header.Get("Authorization")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, strings.Repeat("x", 2048-len("Basic ")-28)+auth) // cut 4 characters before its end
	})
	encoded := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	_, err1 := c.Connectors(context.Background())
	_, err2 := c.Plugins(context.Background())
	_, err3 := c.ServerInfo(context.Background())
	for i, err := range []error{err1, err2, err3} {
		if err == nil {
			t.Fatalf("call %d: no error", i+1)
		}
		msg := err.Error()
		for _, leak := range []string{password, encoded, encoded[:len(encoded)-4]} {
			if strings.Contains(msg, leak) {
				t.Errorf("call %d: error shows the credentials (%q): %s", i+1, leak, msg)
			}
		}
	}
	if !strings.Contains(err1.Error(), "Authorization: Basic [redacted]") {
		t.Errorf("proxy page not kept around the redaction: %v", err1)
	}
	if !errors.Is(err2, connect.ErrUnauthorized) {
		t.Errorf("err = %v, want ErrUnauthorized", err2)
	}
}

// TestValidatePasswordKeys decodes the definitions of a validate answer
// (shape of Kafka Connect 4.3.1's) and gathers the PASSWORD keys.
func TestValidatePasswordKeys(t *testing.T) {
	c, mux := setup(t)
	mux.HandleFunc("PUT /connector-plugins/{class}/config/validate", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"name":"X","error_count":0,"groups":["Common"],"configs":[
 {"definition":{"name":"ssl.key.password","type":"PASSWORD","required":false,"default_value":null,"importance":"HIGH","documentation":"d","group":"Common","width":"NONE","display_name":"ssl.key.password","dependents":[],"order":1},
  "value":{"name":"ssl.key.password","value":"[hidden]","recommended_values":[],"errors":[],"visible":true}},
 {"definition":{"name":"topics","type":"LIST","required":false,"default_value":".*","importance":"HIGH","documentation":"d","group":"Common","width":"NONE","display_name":"topics","dependents":[],"order":2},
  "value":{"name":"topics","value":"orders","recommended_values":[],"errors":[],"visible":true}},
 {"definition":{"name":"sasl.jaas.config","type":"PASSWORD","required":false,"default_value":null,"importance":"MEDIUM","documentation":"d","group":"Common","width":"NONE","display_name":"sasl.jaas.config","dependents":[],"order":3},
  "value":{"name":"sasl.jaas.config","value":null,"recommended_values":[],"errors":[],"visible":true}}]}`)
	})
	infos, err := c.Validate(context.Background(), "X", map[string]string{"topics": "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"sasl.jaas.config", "ssl.key.password"}, infos.PasswordKeys()); diff != "" {
		t.Errorf("PasswordKeys mismatch (-want +got):\n%s", diff)
	}
	if infos.Configs[1].Definition.Type != "LIST" || *infos.Configs[1].Definition.DefaultValue != ".*" {
		t.Errorf("definition = %+v", infos.Configs[1].Definition)
	}
	var none *connect.ConfigInfos
	if none.PasswordKeys() != nil {
		t.Error("nil ConfigInfos has password keys")
	}
}

// mirrorOffset is a MirrorSourceConnector offset in the generic form, for
// the tests of Offsets and AlterOffsets; tombstone when m is nil.
func mirrorOffset(alias, topic string, partition int32, m ...int64) connect.Offset {
	o := connect.Offset{Partition: map[string]any{connect.MirrorKeyCluster: alias, connect.MirrorKeyTopic: topic, connect.MirrorKeyPartition: int64(partition)}}
	if len(m) > 0 {
		o.Offset = map[string]any{connect.MirrorKeyOffset: m[0]}
	}
	return o
}
