package connectfake_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mm2cutover/mm2cutover/connect/connectfake"
)

// These tests run the fake alone (no JVM): the behaviour a consumer's test
// relies on beyond what the conformance test compares with a real worker.

const testConfig = `{"connector.class":"org.apache.kafka.connect.mirror.MirrorSourceConnector",` +
	`"source.cluster.alias":"source","source.cluster.bootstrap.servers":"s:9092",` +
	`"target.cluster.bootstrap.servers":"t:9092","topics":"orders","tasks.max":"2"}`

// call sends one request to the fake and returns status and body.
func call(t *testing.T, s *connectfake.Server, method, path, body string) (int, string) {
	t.Helper()
	a := send(t, context.Background(), worker{name: "fake", url: s.URL()}, method, path, body)
	return a.status, string(a.body)
}

func mustCall(t *testing.T, s *connectfake.Server, method, path, body string, want int) string {
	t.Helper()
	status, got := call(t, s, method, path, body)
	if status != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, status, got, want)
	}
	return got
}

func createStopped(t *testing.T, s *connectfake.Server, name string) {
	t.Helper()
	mustCall(t, s, "POST", "/connectors", fmt.Sprintf(`{"name":%q,"config":%s,"initial_state":"STOPPED"}`, name, testConfig), 201)
}

func offsetOf(p, m int) string {
	return fmt.Sprintf(`{"partition":{"cluster":"source","partition":%d,"topic":"orders"},"offset":{"offset":%d}}`, p, m)
}

func TestStatusLag(t *testing.T) {
	for _, tt := range []struct {
		lag      int
		want404s int
	}{{0, 0}, {1, 1}, {3, 3}} {
		t.Run(fmt.Sprint(tt.lag), func(t *testing.T) {
			s := connectfake.New(connectfake.WithStatusLag(tt.lag))
			defer s.Close()
			createStopped(t, s, "mm2")
			// The configuration never lags, nor does the list without status.
			mustCall(t, s, "GET", "/connectors/mm2", "", 200)
			if got := mustCall(t, s, "GET", "/connectors", "", 200); got != `["mm2"]` {
				t.Errorf("list = %s", got)
			}
			for i := range tt.want404s {
				if got := mustCall(t, s, "GET", "/connectors/mm2/status", "", 404); got != `{"error_code":404,"message":"No status found for connector mm2"}` {
					t.Errorf("read %d: %s", i, got)
				}
			}
			mustCall(t, s, "GET", "/connectors/mm2/status", "", 200)

			// After a resume the status shows STOPPED for lag reads, then RUNNING with tasks.
			mustCall(t, s, "PUT", "/connectors/mm2/resume", "", 202)
			for range tt.lag {
				if got := mustCall(t, s, "GET", "/connectors/mm2/status", "", 200); !strings.Contains(got, `"state":"STOPPED"`) {
					t.Errorf("status during lag = %s", got)
				}
			}
			got := mustCall(t, s, "GET", "/connectors/mm2/status", "", 200)
			if !strings.Contains(got, `"connector":{"state":"RUNNING"`) || strings.Count(got, `"id":`) != 2 {
				t.Errorf("status after lag = %s, want RUNNING with 2 tasks", got)
			}

			// A stop shows STOPPED with no tasks at once.
			mustCall(t, s, "PUT", "/connectors/mm2/stop", "", 204)
			if got := mustCall(t, s, "GET", "/connectors/mm2/status", "", 200); !strings.Contains(got, `"state":"STOPPED"`) || !strings.Contains(got, `"tasks":[]`) {
				t.Errorf("status right after stop = %s", got)
			}
			// A pause of a STOPPED connector: STOPPED during the lag, then PAUSED without tasks.
			mustCall(t, s, "PUT", "/connectors/mm2/pause", "", 202)
			for range tt.lag {
				if got := mustCall(t, s, "GET", "/connectors/mm2/status", "", 200); !strings.Contains(got, `"state":"STOPPED"`) {
					t.Errorf("status during lag = %s", got)
				}
			}
			if got := mustCall(t, s, "GET", "/connectors/mm2/status", "", 200); !strings.Contains(got, `"state":"PAUSED"`) || !strings.Contains(got, `"tasks":[]`) {
				t.Errorf("status after pause = %s, want PAUSED without tasks", got)
			}
		})
	}
}

func TestListWithStatusLeavesOutNewConnectors(t *testing.T) {
	s := connectfake.New()
	defer s.Close()
	createStopped(t, s, "mm2")
	if got := mustCall(t, s, "GET", "/connectors?expand=status", "", 200); got != `{}` {
		t.Errorf("expand=status right after create = %s, want {}", got)
	}
	if got := mustCall(t, s, "GET", "/connectors?expand=status", "", 200); !strings.Contains(got, `"mm2":{"status":`) {
		t.Errorf("expand=status later = %s", got)
	}
}

func TestFailNext(t *testing.T) {
	s := connectfake.New(connectfake.WithStatusLag(0))
	defer s.Close()
	createStopped(t, s, "mm2")
	body := `{"offsets":[` + offsetOf(0, 4) + `]}`
	s.FailNext("PATCH", "/connectors/mm2/offsets", 2, connectfake.Rebalance)
	s.FailNext("PATCH", "/connectors/mm2/offsets", 1, connectfake.ForwardingFailed)
	for _, want := range []string{
		`{"error_code":409,"message":"Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"}`,
		`{"error_code":409,"message":"Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"}`,
		`{"error_code":500,"message":"IO Error trying to forward REST request: java.net.ConnectException: Connection refused"}`,
	} {
		status, got := call(t, s, "PATCH", "/connectors/mm2/offsets", body)
		if got != want || status == 200 {
			t.Errorf("faulty PATCH: %d %s, want %s", status, got, want)
		}
	}
	// Faults match method and path only; they had no effect.
	if got := mustCall(t, s, "GET", "/connectors/mm2/offsets", "", 200); got != `{"offsets":[]}` {
		t.Errorf("offsets after refused writes = %s", got)
	}
	mustCall(t, s, "PATCH", "/connectors/mm2/offsets", body, 200)

	// A timeout is answered after the worker carried the request out.
	s.FailNext("POST", "/connectors", 1, connectfake.RequestTimeout)
	if status, got := call(t, s, "POST", "/connectors", `{"name":"other","config":`+testConfig+`}`); status != 500 || got != `{"error_code":500,"message":"Request timed out"}` {
		t.Errorf("create with a timeout: %d %s", status, got)
	}
	mustCall(t, s, "GET", "/connectors/other", "", 200)

	s.FailNext("GET", "/connectors/mm2/offsets", 1, connectfake.OffsetsReadFailed)
	if _, got := call(t, s, "GET", "/connectors/mm2/offsets", ""); got != `{"error_code":500,"message":"Failed to retrieve offsets for source connector mm2"}` {
		t.Errorf("offsets read fault: %s", got)
	}
	mustCall(t, s, "GET", "/connectors/mm2/offsets", "", 200)

	for f, want := range map[connectfake.Fault]string{
		connectfake.NoLeader:             `{"error_code":409,"message":"Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."}`,
		connectfake.ConflictingOperation: `{"error_code":409,"message":"Cannot complete request because of a conflicting operation (e.g. worker rebalance)"}`,
	} {
		s.FailNext("PUT", "/connectors/mm2/resume", 1, f)
		if _, got := call(t, s, "PUT", "/connectors/mm2/resume", ""); got != want {
			t.Errorf("%v: %s, want %s", f, got, want)
		}
	}
	if got := mustCall(t, s, "GET", "/connectors/mm2/status", "", 200); !strings.Contains(got, `"state":"STOPPED"`) {
		t.Errorf("a refused resume resumed: %s", got)
	}
}

func TestStaleOffsetReads(t *testing.T) {
	s := connectfake.New(connectfake.WithStatusLag(0))
	defer s.Close()
	createStopped(t, s, "mm2")
	mustCall(t, s, "PATCH", "/connectors/mm2/offsets", `{"offsets":[`+offsetOf(0, 4)+`]}`, 200)
	s.SetStaleOffsetReads(2)
	mustCall(t, s, "PATCH", "/connectors/mm2/offsets", `{"offsets":[`+offsetOf(0, 9)+`,`+offsetOf(1, 3)+`]}`, 200)
	before := `{"offsets":[` + offsetOf(0, 4) + `]}`
	after := `{"offsets":[` + offsetOf(0, 9) + `,` + offsetOf(1, 3) + `]}`
	for i, want := range []string{before, before, after, after} {
		if got := mustCall(t, s, "GET", "/connectors/mm2/offsets", "", 200); got != want {
			t.Errorf("read %d = %s, want %s", i, got, want)
		}
	}
	mustCall(t, s, "DELETE", "/connectors/mm2/offsets", "", 200)
	for i, want := range []string{after, after, `{"offsets":[]}`} {
		if got := mustCall(t, s, "GET", "/connectors/mm2/offsets", "", 200); got != want {
			t.Errorf("read %d after reset = %s, want %s", i, got, want)
		}
	}
}

func TestAdvance(t *testing.T) {
	s := connectfake.New(connectfake.WithStatusLag(0))
	defer s.Close()
	if err := s.Advance("mm2", "source", "orders", 0, 5); !errors.Is(err, connectfake.ErrNoConnector) {
		t.Errorf("Advance of a missing connector: %v", err)
	}
	createStopped(t, s, "mm2")
	if err := s.Advance("mm2", "source", "orders", 0, 5); !errors.Is(err, connectfake.ErrNotRunning) {
		t.Errorf("Advance of a STOPPED connector: %v", err)
	}
	mustCall(t, s, "PATCH", "/connectors/mm2/offsets", `{"offsets":[`+offsetOf(0, 4)+`]}`, 200)
	mustCall(t, s, "PUT", "/connectors/mm2/resume", "", 202)
	for _, m := range []int64{9, 9, 12} {
		if err := s.Advance("mm2", "source", "orders", 0, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Advance("mm2", "source", "orders", 1, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Advance("mm2", "source", "orders", 0, 11); !errors.Is(err, connectfake.ErrOffsetBackwards) {
		t.Errorf("Advance backwards: %v", err)
	}
	want := `{"offsets":[` + offsetOf(0, 12) + `,` + offsetOf(1, 0) + `]}`
	if got := mustCall(t, s, "GET", "/connectors/mm2/offsets", "", 200); got != want {
		t.Errorf("offsets = %s, want %s", got, want)
	}
	mustCall(t, s, "PUT", "/connectors/mm2/pause", "", 202)
	if err := s.Advance("mm2", "source", "orders", 0, 13); !errors.Is(err, connectfake.ErrNotRunning) {
		t.Errorf("Advance of a PAUSED connector: %v", err)
	}
}

func TestOffsetsOutliveTheConnector(t *testing.T) {
	s := connectfake.New(connectfake.WithStatusLag(0))
	defer s.Close()
	createStopped(t, s, "mm2")
	mustCall(t, s, "PATCH", "/connectors/mm2/offsets", `{"offsets":[`+offsetOf(0, 4)+`]}`, 200)
	mustCall(t, s, "DELETE", "/connectors/mm2", "", 204)
	mustCall(t, s, "GET", "/connectors/mm2/offsets", "", 404)
	createStopped(t, s, "mm2")
	if got := mustCall(t, s, "GET", "/connectors/mm2/offsets", "", 200); got != `{"offsets":[`+offsetOf(0, 4)+`]}` {
		t.Errorf("inherited offsets = %s", got)
	}
}

func TestNotImplemented(t *testing.T) {
	s := connectfake.New()
	defer s.Close()
	status, got := call(t, s, "POST", "/connectors/mm2/restart", "")
	if status != 501 || !strings.Contains(got, "not implemented by the fake") {
		t.Errorf("restart: %d %s, want 501", status, got)
	}
}

// The fake is an http.Handler: a test can mount it under a base path.
func TestMountedUnderAPrefix(t *testing.T) {
	s := connectfake.New()
	defer s.Close()
	srv := httptest.NewServer(http.StripPrefix("/connect", s))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/connect/connector-plugins")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /connect/connector-plugins: %d", resp.StatusCode)
	}
}

// Run with -race: every request and helper may be used concurrently.
func TestConcurrentUse(t *testing.T) {
	s := connectfake.New()
	defer s.Close()
	do := func(method, path, body string) error {
		req, err := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8*16)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("mm2-%d", i)
			errs <- do("POST", "/connectors", fmt.Sprintf(`{"name":%q,"config":%s,"initial_state":"STOPPED"}`, name, testConfig))
			for j := range 5 {
				errs <- do("PATCH", "/connectors/"+name+"/offsets", `{"offsets":[`+offsetOf(j, j)+`]}`)
				errs <- do("GET", "/connectors?expand=status&expand=info", "")
			}
			s.FailNext("GET", "/connectors/"+name, 1, connectfake.Rebalance)
			errs <- do("GET", "/connectors/"+name, "")
			errs <- do("PUT", "/connectors/"+name+"/resume", "")
			errs <- s.Advance(name, "source", "orders", 0, 1)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestValidate(t *testing.T) {
	s := connectfake.New()
	defer s.Close()
	path := "/connector-plugins/org.apache.kafka.connect.mirror.MirrorSourceConnector/config/validate"
	var infos struct {
		ErrorCount int `json:"error_count"`
		Configs    []struct {
			Definition struct {
				Name string `json:"name"`
				Type string `json:"type"`
			} `json:"definition"`
			Value struct {
				Value  *string  `json:"value"`
				Errors []string `json:"errors"`
			} `json:"value"`
		} `json:"configs"`
	}
	for _, tt := range []struct {
		config string
		errors []string
	}{
		{strings.Replace(testConfig, "{", `{"name":"mm2","sasl.jaas.config":"s3cret",`, 1), nil},
		{testConfig, []string{`Missing required configuration "name" which has no default value.`}},
		{strings.Replace(testConfig, `"tasks.max":"2"`, `"name":"mm2","tasks.max":"0"`, 1), []string{"Invalid value 0 for configuration tasks.max: Value must be at least 1"}},
	} {
		body := mustCall(t, s, "PUT", path, tt.config, 200)
		if err := json.Unmarshal([]byte(body), &infos); err != nil {
			t.Fatal(err)
		}
		var errs []string
		types := map[string]string{}
		for _, c := range infos.Configs {
			errs = append(errs, c.Value.Errors...)
			types[c.Definition.Name] = c.Definition.Type
			if c.Definition.Name == "sasl.jaas.config" && c.Value.Value != nil && *c.Value.Value != "[hidden]" {
				t.Errorf("sasl.jaas.config shown as %q", *c.Value.Value)
			}
		}
		if infos.ErrorCount != len(tt.errors) || !slices.Equal(errs, tt.errors) {
			t.Errorf("validate %s: %d errors %q, want %q", tt.config, infos.ErrorCount, errs, tt.errors)
		}
		if types["sasl.jaas.config"] != "PASSWORD" || types["ssl.keystore.key"] != "PASSWORD" || types["tasks.max"] != "INT" {
			t.Errorf("types: sasl.jaas.config %s, ssl.keystore.key %s, tasks.max %s", types["sasl.jaas.config"], types["ssl.keystore.key"], types["tasks.max"])
		}
	}
}
