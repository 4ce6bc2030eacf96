package connectfake_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/connect/connectfake"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// mirrorSource is a valid MirrorSourceConnector configuration.
func mirrorSource(tasks string) map[string]string {
	return map[string]string{
		"connector.class":                  "org.apache.kafka.connect.mirror.MirrorSourceConnector",
		"source.cluster.alias":             "source",
		"source.cluster.bootstrap.servers": "s:9092",
		"target.cluster.bootstrap.servers": "t:9092",
		"topics":                           "orders",
		"tasks.max":                        tasks,
	}
}

func withKey(m map[string]string, k, v string) map[string]string {
	m[k] = v
	return m
}

func stored(p int32, m int64) offsets.ConnectOffset {
	return offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: p}, Offset: offsets.NewMirrorOffset(m)}
}

// TestSeedConnector: a seeded connector is what a settled create with that
// initial state leaves, its status shown at once; a configuration or state
// the worker refuses is ErrInvalidSeed.
func TestSeedConnector(t *testing.T) {
	for _, tc := range []struct {
		name      string
		c         connectfake.Connector
		err       error
		state     connectfake.State
		tasks     int
		status    string // GET .../status, the connector's and tasks' states
		errSubstr string
	}{
		{name: "running, tasks.max 2", c: connectfake.Connector{Name: "mm2", Config: mirrorSource("2")},
			state: connectfake.StateRunning, tasks: 2, status: "RUNNING RUNNING RUNNING"},
		{name: "stopped", c: connectfake.Connector{Name: "mm2", Config: mirrorSource("2"), State: connectfake.StateStopped},
			state: connectfake.StateStopped, status: "STOPPED"},
		{name: "paused, as created paused", c: connectfake.Connector{Name: "mm2", Config: mirrorSource("1"), State: connectfake.StatePaused},
			state: connectfake.StatePaused, status: "PAUSED"},
		{name: "by alias, name given", c: connectfake.Connector{Name: "mm2", Config: withKey(withKey(mirrorSource("1"), "connector.class", "MirrorSourceConnector"), "name", "mm2")},
			state: connectfake.StateRunning, tasks: 1, status: "RUNNING RUNNING"},
		{name: "no name", c: connectfake.Connector{Config: mirrorSource("1")}, err: connectfake.ErrInvalidSeed, errSubstr: "needs a name"},
		{name: "another name in the config", c: connectfake.Connector{Name: "mm2", Config: withKey(mirrorSource("1"), "name", "other")},
			err: connectfake.ErrInvalidSeed, errSubstr: "Connector name configuration (other) doesn't match connector name in the URL (mm2)"},
		{name: "no class", c: connectfake.Connector{Name: "mm2", Config: map[string]string{"topics": "orders"}},
			err: connectfake.ErrInvalidSeed, errSubstr: "contains no connector type"},
		{name: "an unknown class", c: connectfake.Connector{Name: "mm2", Config: withKey(mirrorSource("1"), "connector.class", "com.example.Nope")},
			err: connectfake.ErrInvalidSeed, errSubstr: "Failed to find any class that implements Connector and which name matches com.example.Nope"},
		{name: "an invalid tasks.max", c: connectfake.Connector{Name: "mm2", Config: mirrorSource("0")},
			err: connectfake.ErrInvalidSeed, errSubstr: "Connector configuration is invalid"},
		{name: "an unknown state", c: connectfake.Connector{Name: "mm2", Config: mirrorSource("1"), State: "FAILED"},
			err: connectfake.ErrInvalidSeed, errSubstr: `state "FAILED"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := connectfake.New() // the default status lag: a seed shows at once all the same
			defer s.Close()
			err := s.SeedConnector(tc.c)
			if !errors.Is(err, tc.err) || (err != nil && !strings.Contains(err.Error(), tc.errSubstr)) {
				t.Fatalf("SeedConnector = %v, want %v containing %q", err, tc.err, tc.errSubstr)
			}
			if tc.err != nil {
				if names := s.ConnectorNames(); len(names) != 0 {
					t.Errorf("a refused seed created %v", names)
				}
				return
			}
			got, ok := s.Connector("mm2")
			if !ok || got.State != tc.state || got.Tasks != tc.tasks || got.Config["name"] != "mm2" || got.Config["topics"] != "orders" {
				t.Errorf("Connector = %+v, %v; want %s with %d tasks", got, ok, tc.state, tc.tasks)
			}
			var st struct {
				Connector struct{ State string }
				Tasks     []struct{ State string }
			}
			body := mustCall(t, s, "GET", "/connectors/mm2/status", "", 200)
			if err := json.Unmarshal([]byte(body), &st); err != nil {
				t.Fatal(err)
			}
			states := []string{st.Connector.State}
			for _, task := range st.Tasks {
				states = append(states, task.State)
			}
			if got := strings.Join(states, " "); got != tc.status {
				t.Errorf("status %s, want %s", got, tc.status)
			}
		})
	}
}

// TestSeedOffsets: offsets are stored by name, with or without a
// connector; a null removes one; what MirrorSourceConnector refuses is
// ErrInvalidSeed and stores nothing.
func TestSeedOffsets(t *testing.T) {
	for _, tc := range []struct {
		name  string
		seeds [][]offsets.ConnectOffset
		want  []offsets.ConnectOffset
		err   error
	}{
		{"two partitions", [][]offsets.ConnectOffset{{stored(1, 7), stored(0, 4)}}, []offsets.ConnectOffset{stored(0, 4), stored(1, 7)}, nil},
		{"a later offset replaces", [][]offsets.ConnectOffset{{stored(0, 4)}, {stored(0, 9)}}, []offsets.ConnectOffset{stored(0, 9)}, nil},
		{"a null removes", [][]offsets.ConnectOffset{{stored(0, 4), stored(1, 7)}, {{Partition: stored(0, 0).Partition}}}, []offsets.ConnectOffset{stored(1, 7)}, nil},
		{"a negative partition", [][]offsets.ConnectOffset{{stored(-1, 4)}}, []offsets.ConnectOffset{}, connectfake.ErrInvalidSeed},
		{"a negative offset", [][]offsets.ConnectOffset{{stored(0, 4), stored(1, -2)}}, []offsets.ConnectOffset{}, connectfake.ErrInvalidSeed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := connectfake.New()
			defer s.Close()
			var err error
			for _, list := range tc.seeds {
				if err = s.SeedOffsets("mm2", list...); err != nil {
					break
				}
			}
			if !errors.Is(err, tc.err) {
				t.Fatalf("SeedOffsets = %v, want %v", err, tc.err)
			}
			got, err := s.Offsets("mm2")
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Offsets (-want +got):\n%s", d)
			}
		})
	}
}

// TestWithConnectorsAndOffsets: the options build the world before the
// first request; offsets seeded for a name with no connector are inherited
// by the connector created later under that name.
func TestWithConnectorsAndOffsets(t *testing.T) {
	s := connectfake.New(
		connectfake.WithConnectors(
			connectfake.Connector{Name: "mm2", Config: mirrorSource("1"), State: connectfake.StateStopped},
			connectfake.Connector{Name: "other", Config: mirrorSource("1")},
		),
		connectfake.WithOffsets("mm2", stored(0, 41)),
		connectfake.WithOffsets("mm2-next", stored(0, 99)),
	)
	defer s.Close()
	if got := mustCall(t, s, "GET", "/connectors/mm2/offsets", "", 200); got != `{"offsets":[`+offsetOf(0, 41)+`]}` {
		t.Errorf("seeded offsets = %s", got)
	}
	if got := mustCall(t, s, "GET", "/connectors", "", 200); got != `["other","mm2"]` {
		t.Errorf("connectors = %s", got)
	}
	mustCall(t, s, "GET", "/connectors/mm2-next/offsets", "", 404) // no connector yet
	createStopped(t, s, "mm2-next")
	if got := mustCall(t, s, "GET", "/connectors/mm2-next/offsets", "", 200); got != `{"offsets":[`+offsetOf(0, 99)+`]}` {
		t.Errorf("inherited offsets = %s", got)
	}
	// Seeded STOPPED: its offsets can be altered at once.
	mustCall(t, s, "PATCH", "/connectors/mm2/offsets", `{"offsets":[`+offsetOf(0, 45)+`]}`, 200)
}

func TestNewPanicsOnAnInvalidSeed(t *testing.T) {
	for _, opt := range []connectfake.Option{
		connectfake.WithConnectors(connectfake.Connector{Name: "mm2", Config: map[string]string{}}),
		connectfake.WithOffsets("mm2", stored(-1, 0)),
	} {
		func() {
			defer func() {
				err, _ := recover().(error)
				if !errors.Is(err, connectfake.ErrInvalidSeed) {
					t.Errorf("New with an invalid seed panicked with %v, want ErrInvalidSeed", err)
				}
			}()
			connectfake.New(opt).Close()
		}()
	}
}

// TestInspect: a connector's configuration, state, tasks and offsets as
// the requests left them.
func TestInspect(t *testing.T) {
	s := connectfake.New()
	defer s.Close()
	if _, ok := s.Connector("mm2"); ok {
		t.Error("Connector of none: ok")
	}
	createStopped(t, s, "mm2")
	mustCall(t, s, "PATCH", "/connectors/mm2/offsets", `{"offsets":[`+offsetOf(0, 4)+`,`+offsetOf(1, 8)+`]}`, 200)
	mustCall(t, s, "PUT", "/connectors/mm2/config", `{"connector.class":"MirrorSourceConnector","source.cluster.alias":"source",`+
		`"source.cluster.bootstrap.servers":"s:9092","target.cluster.bootstrap.servers":"t:9092","topics":"orders","tasks.max":"3","offset.lag.max":null}`, 200)
	mustCall(t, s, "PUT", "/connectors/mm2/resume", "", 202)
	got, ok := s.Connector("mm2")
	want := connectfake.Connector{Name: "mm2", State: connectfake.StateRunning, Tasks: 3, Config: map[string]string{
		"connector.class": "MirrorSourceConnector", "name": "mm2", "source.cluster.alias": "source", "source.cluster.bootstrap.servers": "s:9092",
		"target.cluster.bootstrap.servers": "t:9092", "topics": "orders", "tasks.max": "3"}}
	if d := cmp.Diff(want, got); !ok || d != "" {
		t.Errorf("Connector (-want +got):\n%s", d)
	}
	list, err := s.Offsets("mm2")
	if d := cmp.Diff([]offsets.ConnectOffset{stored(0, 4), stored(1, 8)}, list); err != nil || d != "" {
		t.Errorf("Offsets: %v (-want +got):\n%s", err, d)
	}
	mustCall(t, s, "PUT", "/connectors/mm2/stop", "", 204)
	if got, _ := s.Connector("mm2"); got.State != connectfake.StateStopped || got.Tasks != 0 {
		t.Errorf("after stop: %+v", got)
	}
	mustCall(t, s, "DELETE", "/connectors/mm2", "", 204)
	if _, ok := s.Connector("mm2"); ok {
		t.Error("a deleted connector is still there")
	}
	if list, err := s.Offsets("mm2"); err != nil || len(list) != 2 {
		t.Errorf("the offsets outlive the connector: %v, %v", list, err)
	}
}

// TestIntercept: an Interceptor sees every request with its body, may
// answer a Fault for one request, answer after the worker carried it out,
// hold it, or only watch; Requests lists them in order with their
// statuses, and says which wrote.
func TestIntercept(t *testing.T) {
	s := connectfake.New(connectfake.WithStatusLag(0))
	defer s.Close()
	var mu sync.Mutex
	var seen []string
	release := make(chan struct{})
	s.Intercept(func(ctx context.Context, w http.ResponseWriter, req connectfake.Request, next func(http.ResponseWriter)) {
		mu.Lock()
		seen = append(seen, req.Method+" "+req.Path)
		mu.Unlock()
		switch {
		case req.Method == "PATCH" && strings.Contains(string(req.Body), `"partition":1`):
			connectfake.Rebalance.Answer(w, req.Path) // this PATCH only
		case req.Method == "PUT" && strings.HasSuffix(req.Path, "/resume"):
			next(httptest.NewRecorder()) // carried out, the answer lost
			connectfake.RequestTimeout.Answer(w, req.Path)
		case req.Method == "DELETE":
			select { // held until the test releases it
			case <-release:
			case <-ctx.Done():
				return
			}
			next(w)
		default:
			next(w)
		}
	})
	createStopped(t, s, "mm2")
	if status, _ := call(t, s, "PATCH", "/connectors/mm2/offsets", `{"offsets":[`+offsetOf(1, 4)+`]}`); status != 409 {
		t.Errorf("the intercepted PATCH: %d, want 409", status)
	}
	mustCall(t, s, "PATCH", "/connectors/mm2/offsets", `{"offsets":[`+offsetOf(0, 4)+`]}`, 200)
	if status, _ := call(t, s, "PUT", "/connectors/mm2/resume", ""); status != 500 {
		t.Errorf("the resume whose answer was lost: %d, want 500", status)
	}
	if got, _ := s.Connector("mm2"); got.State != connectfake.StateRunning {
		t.Errorf("the resume did not take effect: %+v", got)
	}
	mustCall(t, s, "PUT", "/connectors/mm2/stop", "", 204)
	done := make(chan int)
	go func() {
		status, _ := call(t, s, "DELETE", "/connectors/mm2", "")
		done <- status
	}()
	// Held: received, not answered, and not carried out.
	deadline := time.Now().Add(time.Minute)
	for {
		reqs := s.Requests()
		if last := reqs[len(reqs)-1]; last.Method == "DELETE" {
			if last.Status != 0 {
				t.Fatalf("the held DELETE was answered %d", last.Status)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the DELETE never arrived")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, ok := s.Connector("mm2"); !ok {
		t.Fatal("the held DELETE took effect")
	}
	close(release)
	if status := <-done; status != 204 {
		t.Errorf("the released DELETE: %d", status)
	}
	s.Intercept(nil)
	mustCall(t, s, "GET", "/connectors/mm2/offsets?x=1", "", 404)

	var got []string
	for _, r := range s.Requests() {
		got = append(got, fmt.Sprintf("%s %s %d %v", r.Method, r.Path, r.Status, r.Writes()))
	}
	want := []string{
		"POST /connectors 201 true",
		"PATCH /connectors/mm2/offsets 409 true",
		"PATCH /connectors/mm2/offsets 200 true",
		"PUT /connectors/mm2/resume 500 true",
		"PUT /connectors/mm2/stop 204 true",
		"DELETE /connectors/mm2 204 true",
		"GET /connectors/mm2/offsets 404 false",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Requests (-want +got):\n%s", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 6 {
		t.Errorf("the Interceptor saw %d requests, want 6: %v", len(seen), seen)
	}
	reqs := s.Requests()
	if r := reqs[1]; !strings.Contains(string(r.Body), `"partition":1`) || r.Query != "" {
		t.Errorf("the first PATCH as recorded: %+v", r)
	}
	if r := reqs[6]; r.Query != "x=1" || r.Body != nil {
		t.Errorf("the GET as recorded: %+v", r)
	}
}

// TestRequestWrites: which requests may change the worker's state.
func TestRequestWrites(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		writes       bool
	}{
		{"GET", "/connectors/mm2/offsets", false},
		{"HEAD", "/", false},
		{"PUT", "/connector-plugins/MirrorSourceConnector/config/validate", false},
		{"PUT", "/connectors/mm2/config", true},
		{"PUT", "/connectors/mm2/stop", true},
		{"POST", "/connectors", true},
		{"PATCH", "/connectors/mm2/offsets", true},
		{"DELETE", "/connectors/mm2", true},
	} {
		if got := (connectfake.Request{Method: tc.method, Path: tc.path}).Writes(); got != tc.writes {
			t.Errorf("%s %s: Writes() = %v, want %v", tc.method, tc.path, got, tc.writes)
		}
	}
}
