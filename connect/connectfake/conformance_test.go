package connectfake_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/connect/connectfake"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/offsets"
)

var update = flag.Bool("update", false, "rewrite plugins-4.3.1.json from the real worker")

func TestMain(m *testing.M) { sandboxtest.Main(m) }

// worker is one side of the comparison: the real sandbox worker or the fake.
type worker struct {
	name string
	url  string
	ids  []string // worker IDs and cluster IDs this side shows, normalised away
}

type answer struct {
	status   int
	ctype    string
	location string // relative to the worker's URL
	body     []byte
}

func send(t *testing.T, ctx context.Context, w worker, method, path, body string) answer {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, w.url+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %s %s: %v", w.name, method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	return answer{resp.StatusCode, ct, strings.TrimPrefix(resp.Header.Get("Location"), w.url), b}
}

var jacksonLocation = regexp.MustCompile(`line: \d+, column: \d+`)

// normalise replaces what legitimately differs between two workers: worker
// and cluster IDs, and the column Jackson reports in a parse error.
func (w worker) normalise(b []byte) []byte {
	for _, id := range w.ids {
		b = bytes.ReplaceAll(b, []byte(id), []byte("<id>"))
	}
	return jacksonLocation.ReplaceAll(b, []byte("line: L, column: C"))
}

// comparable decodes a normalised body for comparison as values: offsets
// lists sorted (their order is arbitrary on a real worker), connector lists
// restricted to this test's connectors (a shared sandbox has others), and
// documentation text dropped from validate answers (the fake has none).
func comparable(b []byte, prefix string) any {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return string(b)
	}
	if m, ok := v.(map[string]any); ok && prefix != "" { // GET /connectors?expand=...
		for name := range m {
			if !strings.HasPrefix(name, prefix) {
				delete(m, name)
			}
		}
	}
	return clean(v, prefix)
}

func clean(v any, prefix string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k == "documentation" {
				continue
			}
			out[k] = clean(e, prefix)
		}
		if list, ok := out["offsets"].([]any); ok {
			slices.SortFunc(list, func(a, b any) int { return strings.Compare(jsonText(a), jsonText(b)) })
		}
		return out
	case []any:
		out := make([]any, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok && prefix != "" && !strings.HasPrefix(s, prefix) {
				continue
			}
			out = append(out, clean(e, prefix))
		}
		return out
	}
	return v
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// step is one request of the script, sent to both workers.
type step struct {
	what         string
	method, path string
	body         string
	// exact compares the bodies byte for byte (after normalise): the fake
	// reproduces the worker's key order there.
	exact bool
	// eventually polls the real worker until its answer equals the fake's:
	// the real one acts asynchronously (status, offsets read back).
	eventually bool
	// onlyPrefix restricts lists and maps of connector names to this run's.
	onlyPrefix bool
}

// TestConformance runs one script of requests against the real Kafka
// Connect 4.3.1 worker of the sandbox and against the fake, and compares
// every answer: status code, Content-Type and body. It is what the fake's
// claim to behave like the real worker rests on.
func TestConformance(t *testing.T) {
	sb := sandboxtest.Shared(t)
	if sb.KafkaVersion() != connectfake.Version {
		t.Fatalf("the fake reproduces Kafka Connect %s; the sandbox runs %s", connectfake.Version, sb.KafkaVersion())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	if *update {
		capturePlugins(t, ctx, sb.ConnectURL())
	}

	fake := connectfake.New(connectfake.WithStatusLag(0))
	defer fake.Close()
	realW := worker{name: "real", url: sb.ConnectURL(), ids: []string{sb.Target().ClusterID()}}
	for _, wk := range sb.Workers() {
		realW.ids = append(realW.ids, strings.TrimPrefix(wk.URL(), "http://"))
	}
	fakeW := worker{name: "fake", url: fake.URL(), ids: []string{connectfake.DefaultKafkaClusterID, strings.TrimPrefix(fake.URL(), "http://")}}

	// Offsets outlive connectors: names are unique across runs.
	prefix := fmt.Sprintf("conf%d-", time.Now().UnixNano()%1e9)
	c := prefix + "mm2"
	topic := prefix + "t"
	if err := sandbox.CreateTopic(ctx, sb.Source().Bootstrap(), topic, 2); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, n := range []string{c, c + "-put"} {
			_ = send(t, ctx, realW, http.MethodPut, "/connectors/"+n+"/stop", "")
			_ = send(t, ctx, realW, http.MethodDelete, "/connectors/"+n+"/offsets", "")
			_ = send(t, ctx, realW, http.MethodDelete, "/connectors/"+n, "")
		}
	})

	cfg := mirrorConfig(sb, topic, "1")
	for _, st := range script(c, topic, cfg, mirrorConfig(sb, topic, "2")) {
		compare(t, ctx, realW, fakeW, st, prefix)
	}
}

// mirrorConfig is a MirrorSourceConnector configuration as the connect
// package's builder writes it, in a fixed key order.
func mirrorConfig(sb *sandbox.Sandbox, topic, tasks string) string {
	pairs := [][2]string{
		{"connector.class", "org.apache.kafka.connect.mirror.MirrorSourceConnector"},
		{"source.cluster.alias", "source"},
		{"target.cluster.alias", "target"},
		{"source.cluster.bootstrap.servers", sb.Source().Bootstrap()},
		{"target.cluster.bootstrap.servers", sb.Target().Bootstrap()},
		{"topics", topic},
		{"tasks.max", tasks},
		{"replication.policy.class", "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"},
		{"emit.offset-syncs.enabled", "false"},
		{"sync.topic.configs.enabled", "false"},
		{"sync.topic.acls.enabled", "false"},
		{"refresh.topics.enabled", "true"},
		{"source.consumer.auto.offset.reset", "earliest"},
		{"source.consumer.isolation.level", "read_committed"},
		{"replication.factor", "1"},
		{"key.converter", "org.apache.kafka.connect.converters.ByteArrayConverter"},
		{"value.converter", "org.apache.kafka.connect.converters.ByteArrayConverter"},
		{"header.converter", "org.apache.kafka.connect.converters.ByteArrayConverter"},
	}
	return object(pairs...)
}

// object writes a JSON object with its keys in the given order.
func object(pairs ...[2]string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p[0])
		v, _ := json.Marshal(p[1])
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.String()
}

// with returns a configuration object with extra keys appended (or, for an
// empty value, the key removed).
func with(cfg string, pairs ...[2]string) string {
	m := []byte(strings.TrimSuffix(cfg, "}"))
	for _, p := range pairs {
		k, _ := json.Marshal(p[0])
		v, _ := json.Marshal(p[1])
		m = append(m, ',')
		m = append(m, k...)
		m = append(m, ':')
		m = append(m, v...)
	}
	return string(m) + "}"
}

func without(cfg, key string) string {
	re := regexp.MustCompile(`,?"` + regexp.QuoteMeta(key) + `":"[^"]*"`)
	out := re.ReplaceAllString(cfg, "")
	return strings.Replace(out, "{,", "{", 1)
}

func partition(topic string, p int) string {
	return fmt.Sprintf(`{"cluster":"source","topic":%q,"partition":%d}`, topic, p)
}

func patch(entries ...string) string {
	return `{"offsets":[` + strings.Join(entries, ",") + `]}`
}

func script(c, topic, cfg, cfg2 string) []step {
	const msc = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
	validate := "/connector-plugins/" + msc + "/config/validate"
	named := with(cfg, [2]string{"name", c})
	create := func(state string) string {
		return fmt.Sprintf(`{"name":%q,"config":%s,"initial_state":%q}`, c, cfg, state)
	}
	p0, p1 := partition(topic, 0), partition(topic, 1)
	missing := c + "-missing"
	unknown := "nope." + strings.ReplaceAll(c, "-", "")
	return []step{
		{what: "server info", method: "GET", path: "/", exact: true},
		{what: "plugins", method: "GET", path: "/connector-plugins", exact: true},

		// A connector that does not exist: 404 everywhere, worded per endpoint.
		{what: "info of a missing connector", method: "GET", path: "/connectors/" + missing, exact: true},
		{what: "config of a missing connector", method: "GET", path: "/connectors/" + missing + "/config", exact: true},
		{what: "status of a missing connector", method: "GET", path: "/connectors/" + missing + "/status", exact: true},
		{what: "offsets of a missing connector", method: "GET", path: "/connectors/" + missing + "/offsets", exact: true},
		{what: "stop a missing connector", method: "PUT", path: "/connectors/" + missing + "/stop", exact: true},
		{what: "pause a missing connector", method: "PUT", path: "/connectors/" + missing + "/pause", exact: true},
		{what: "resume a missing connector", method: "PUT", path: "/connectors/" + missing + "/resume", exact: true},
		{what: "delete a missing connector", method: "DELETE", path: "/connectors/" + missing, exact: true},
		{what: "reset offsets of a missing connector", method: "DELETE", path: "/connectors/" + missing + "/offsets", exact: true},
		{what: "alter offsets of a missing connector", method: "PATCH", path: "/connectors/" + missing + "/offsets", body: patch(`{"partition":` + p0 + `,"offset":{"offset":1}}`), exact: true},
		{what: "alter with no offsets", method: "PATCH", path: "/connectors/" + missing + "/offsets", body: `{"offsets":[]}`, exact: true},
		{what: "unknown path", method: "GET", path: "/nothing", exact: true},
		{what: "unknown method", method: "DELETE", path: "/connectors", exact: true},

		// Validation.
		{what: "validate without name", method: "PUT", path: validate, body: cfg},
		{what: "validate", method: "PUT", path: validate, body: named},
		{what: "validate with secrets and bad values", method: "PUT", path: validate, body: with(named,
			[2]string{"sasl.jaas.config", "secret-1"}, [2]string{"ssl.truststore.password", "secret-2"},
			[2]string{"source.cluster.sasl.jaas.config", "secret-3"}, [2]string{"tasks.max", "x"},
			[2]string{"replication.factor", "q"}, [2]string{"enabled", "maybe"}, [2]string{"offset.lag.max", "1.5"})},
		{what: "validate with tasks.max 0", method: "PUT", path: validate, body: with(named, [2]string{"tasks.max", "0"})},
		{what: "validate by alias", method: "PUT", path: "/connector-plugins/MirrorSource/config/validate",
			body: with(without(named, "connector.class"), [2]string{"connector.class", "MirrorSourceConnector"})},
		{what: "validate another class", method: "PUT", path: validate, body: `{"connector.class":"org.apache.kafka.connect.mirror.MirrorCheckpointConnector","name":"x"}`, exact: true},
		{what: "validate without class", method: "PUT", path: validate, body: `{"zz":"1","a":"2","b":"3","cluster":"x"}`, exact: true},
		// A worker caches a failed class lookup: the second one is worded differently.
		{what: "validate an unknown class", method: "PUT", path: "/connector-plugins/" + unknown + "/config/validate", body: `{"connector.class":"` + unknown + `"}`, exact: true},

		// Create: refusals first.
		{what: "create with an invalid config", method: "POST", path: "/connectors", body: fmt.Sprintf(`{"name":%q,"config":%s}`, c, with(cfg, [2]string{"tasks.max", "x"})), exact: true},
		{what: "create without a class", method: "POST", path: "/connectors", body: fmt.Sprintf(`{"name":%q,"config":{"zz":"1","a":"2","b":"3","cluster":"x"}}`, c), exact: true},
		{what: "create with an unknown class", method: "POST", path: "/connectors", body: fmt.Sprintf(`{"name":%q,"config":{"connector.class":%q}}`, c, unknown), exact: true},
		{what: "create with another unknown class", method: "POST", path: "/connectors", body: fmt.Sprintf(`{"name":%q,"config":{"connector.class":%q}}`, c, unknown+"2"), exact: true},
		{what: "validate that class", method: "PUT", path: "/connector-plugins/" + unknown + "2/config/validate", body: `{"connector.class":"` + unknown + `2"}`, exact: true},
		{what: "create with another name", method: "POST", path: "/connectors", body: fmt.Sprintf(`{"name":%q,"config":%s}`, c, with(cfg, [2]string{"name", "other"})), exact: true},
		{what: "create without a name", method: "POST", path: "/connectors", body: fmt.Sprintf(`{"config":%s}`, cfg), exact: true},
		{what: "create without a config", method: "POST", path: "/connectors", body: fmt.Sprintf(`{"name":%q}`, c), exact: true},
		{what: "create with an unknown field", method: "POST", path: "/connectors", body: fmt.Sprintf(`{"name":%q,"config":%s,"bogus":1}`, c, cfg), exact: true},
		{what: "create with an unknown initial state", method: "POST", path: "/connectors", body: create("BOGUS"), exact: true},

		// Create STOPPED.
		{what: "create stopped", method: "POST", path: "/connectors", body: fmt.Sprintf(`{"name":%q,"config":%s,"initial_state":"stopped"}`, c, cfg), exact: true},
		{what: "status after create", method: "GET", path: "/connectors/" + c + "/status", exact: true, eventually: true},
		{what: "create again", method: "POST", path: "/connectors", body: create("STOPPED"), exact: true},
		{what: "info", method: "GET", path: "/connectors/" + c, exact: true},
		{what: "config", method: "GET", path: "/connectors/" + c + "/config", exact: true},
		{what: "list", method: "GET", path: "/connectors", onlyPrefix: true},
		{what: "list with status", method: "GET", path: "/connectors?expand=status", onlyPrefix: true, eventually: true},
		{what: "list with info", method: "GET", path: "/connectors?expand=info", onlyPrefix: true},
		{what: "list with status and info", method: "GET", path: "/connectors?expand=status&expand=info", onlyPrefix: true},
		{what: "offsets of a new connector", method: "GET", path: "/connectors/" + c + "/offsets", exact: true},

		// Alter offsets: what MirrorSourceConnector accepts and refuses.
		{what: "alter: set one, clear one", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(`{"partition":`+p0+`,"offset":{"offset":4}}`, `{"partition":`+p1+`,"offset":null}`), exact: true},
		{what: "read back", method: "GET", path: "/connectors/" + c + "/offsets", exact: true, eventually: true},
		{what: "alter: negative offset", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(`{"partition":` + p0 + `,"offset":{"offset":-1}}`), exact: true},
		{what: "alter: partition as a string", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(fmt.Sprintf(`{"partition":{"cluster":"source","topic":%q,"partition":"0"},"offset":{"offset":1}}`, topic)), exact: true},
		{what: "alter: fractional partition", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(fmt.Sprintf(`{"partition":{"cluster":"source","topic":%q,"partition":1.5},"offset":{"offset":1}}`, topic)), exact: true},
		{what: "alter: negative partition", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(fmt.Sprintf(`{"partition":{"cluster":"source","topic":%q,"partition":-1},"offset":{"offset":1}}`, topic)), exact: true},
		{what: "alter: partition beyond an int", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(fmt.Sprintf(`{"partition":{"cluster":"source","topic":%q,"partition":2147483648},"offset":{"offset":1}}`, topic)), exact: true},
		{what: "alter: cluster not a string", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(fmt.Sprintf(`{"partition":{"cluster":1,"topic":%q,"partition":0},"offset":{"offset":1}}`, topic)), exact: true},
		{what: "alter: no cluster", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(fmt.Sprintf(`{"partition":{"topic":%q,"partition":0},"offset":{"offset":1}}`, topic)), exact: true},
		{what: "alter: no offset key", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(`{"partition":` + p0 + `,"offset":{}}`), exact: true},
		{what: "alter: offset as a string", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(`{"partition":` + p0 + `,"offset":{"offset":"5"}}`), exact: true},
		{what: "alter: fractional offset", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(`{"partition":` + p0 + `,"offset":{"offset":5.5}}`), exact: true},
		{what: "alter: offset beyond a long", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(`{"partition":` + p0 + `,"offset":{"offset":99999999999999999999}}`), exact: true},
		{what: "alter: nested offset", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(`{"partition":` + p0 + `,"offset":{"offset":{"a":1}}}`), exact: true},
		{what: "alter: partition list", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(fmt.Sprintf(`{"partition":{"cluster":"source","topic":%q,"partition":[0]},"offset":{"offset":1}}`, topic)), exact: true},
		{what: "alter: null partition", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(`{"partition":null,"offset":{"offset":5}}`), exact: true},
		{what: "alter: no partition", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(`{"offset":{"offset":5}}`), exact: true},
		{what: "alter: extra keys, printed in HashMap order", method: "PATCH", path: "/connectors/" + c + "/offsets",
			body: patch(fmt.Sprintf(`{"partition":{"cluster":"source","topic":%q,"partition":0,"zz":"q","a":true,"b":null},"offset":{"offset":-3,"zz":1.0,"b":2e20}}`, topic)), exact: true},
		{what: "alter: unknown field", method: "PATCH", path: "/connectors/" + c + "/offsets", body: `{"offsets":[{"partition":` + p0 + `,"offset":{"offset":1}}],"extra":1}`, exact: true},
		{what: "alter: unknown entry field", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(`{"partition":` + p0 + `,"offset":{"offset":1},"x":2}`), exact: true},
		{what: "alter: null offsets", method: "PATCH", path: "/connectors/" + c + "/offsets", body: `{"offsets":null}`, exact: true},
		{what: "alter: empty object", method: "PATCH", path: "/connectors/" + c + "/offsets", body: `{}`, exact: true},
		{what: "alter: no body", method: "PATCH", path: "/connectors/" + c + "/offsets", exact: true},
		{what: "offsets unchanged by refusals", method: "GET", path: "/connectors/" + c + "/offsets", exact: true},
		{what: "alter: a wrong alias is accepted", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(fmt.Sprintf(`{"partition":{"cluster":"not-the-alias","topic":%q,"partition":0},"offset":{"offset":1}}`, topic)), exact: true},
		{what: "alter: null and null is accepted", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(`{"partition":null,"offset":null}`), exact: true},
		{what: "alter: a partition twice, the last wins; extra offset keys kept", method: "PATCH", path: "/connectors/" + c + "/offsets",
			body: patch(`{"partition":`+p1+`,"offset":{"offset":9}}`, `{"partition":`+p1+`,"offset":{"offset":10,"x":1.0}}`), exact: true},
		{what: "read back all", method: "GET", path: "/connectors/" + c + "/offsets", eventually: true},

		// Configuration updates.
		{what: "update the config", method: "PUT", path: "/connectors/" + c + "/config", body: cfg2, exact: true},
		{what: "update with another name", method: "PUT", path: "/connectors/" + c + "/config", body: with(cfg2, [2]string{"name", "other"}), exact: true},
		{what: "update with an invalid config", method: "PUT", path: "/connectors/" + c + "/config", body: with(cfg2, [2]string{"tasks.max", "0"}), exact: true},
		{what: "config after update", method: "GET", path: "/connectors/" + c + "/config", exact: true},

		// STOPPED -> PAUSED: no tasks, and offsets cannot change.
		{what: "pause a stopped connector", method: "PUT", path: "/connectors/" + c + "/pause", exact: true},
		{what: "paused without tasks", method: "GET", path: "/connectors/" + c + "/status", exact: true, eventually: true},
		{what: "alter while paused", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(`{"partition":` + p0 + `,"offset":{"offset":1}}`), exact: true},
		{what: "reset while paused", method: "DELETE", path: "/connectors/" + c + "/offsets", exact: true},
		{what: "stop", method: "PUT", path: "/connectors/" + c + "/stop", exact: true},
		{what: "stopped", method: "GET", path: "/connectors/" + c + "/status", exact: true, eventually: true},
		{what: "stop again", method: "PUT", path: "/connectors/" + c + "/stop", exact: true},

		// RUNNING: tasks.max is 2 and the topic has 2 partitions, so both workers give 2 tasks.
		{what: "resume", method: "PUT", path: "/connectors/" + c + "/resume", exact: true},
		{what: "running", method: "GET", path: "/connectors/" + c + "/status", eventually: true},
		{what: "info while running", method: "GET", path: "/connectors/" + c, exact: true, eventually: true},
		{what: "alter while running", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(`{"partition":` + p0 + `,"offset":{"offset":1}}`), exact: true},
		{what: "reset while running", method: "DELETE", path: "/connectors/" + c + "/offsets", exact: true},
		{what: "resume again", method: "PUT", path: "/connectors/" + c + "/resume", exact: true},
		{what: "pause", method: "PUT", path: "/connectors/" + c + "/pause", exact: true},
		{what: "paused", method: "GET", path: "/connectors/" + c + "/status", eventually: true},
		{what: "alter while paused with tasks", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(`{"partition":` + p0 + `,"offset":{"offset":1}}`), exact: true},
		{what: "stop from paused", method: "PUT", path: "/connectors/" + c + "/stop", exact: true},
		// The stop is answered once the target state and the empty task list are written.
		{what: "info right after stop", method: "GET", path: "/connectors/" + c, exact: true},
		{what: "alter right after stop", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(`{"partition":` + p0 + `,"offset":{"offset":2}}`), exact: true},
		{what: "stopped again", method: "GET", path: "/connectors/" + c + "/status", exact: true, eventually: true},

		// Reset, then set one offset for the successor to inherit.
		{what: "reset", method: "DELETE", path: "/connectors/" + c + "/offsets", exact: true},
		{what: "read back after reset", method: "GET", path: "/connectors/" + c + "/offsets", exact: true, eventually: true},
		{what: "reset again", method: "DELETE", path: "/connectors/" + c + "/offsets", exact: true},
		{what: "alter before delete", method: "PATCH", path: "/connectors/" + c + "/offsets", body: patch(`{"partition":` + p0 + `,"offset":{"offset":7}}`), exact: true},
		{what: "read back before delete", method: "GET", path: "/connectors/" + c + "/offsets", exact: true, eventually: true},
		{what: "delete", method: "DELETE", path: "/connectors/" + c, exact: true},
		{what: "info after delete", method: "GET", path: "/connectors/" + c, exact: true},
		{what: "offsets after delete", method: "GET", path: "/connectors/" + c + "/offsets", exact: true},
		{what: "status after delete", method: "GET", path: "/connectors/" + c + "/status", exact: true, eventually: true},
		{what: "create the successor", method: "POST", path: "/connectors", body: create("STOPPED"), exact: true},
		{what: "the successor inherits the offsets", method: "GET", path: "/connectors/" + c + "/offsets", exact: true, eventually: true},

		// PUT config of a new connector creates it RUNNING.
		{what: "create by PUT config", method: "PUT", path: "/connectors/" + c + "-put/config", body: with(cfg, [2]string{"name", c + "-put"}), exact: true},
		{what: "created running", method: "GET", path: "/connectors/" + c + "-put/status", eventually: true},
		{what: "delete it", method: "DELETE", path: "/connectors/" + c + "-put", exact: true},
	}
}

// TestConformanceSeeded compares a fake seeded with WithConnectors and
// WithOffsets with a real worker that got to the same state by requests
// (a create STOPPED and a PATCH of its offsets; a create RUNNING): the
// seeded connectors must answer as the created ones.
func TestConformanceSeeded(t *testing.T) {
	sb := sandboxtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	prefix := fmt.Sprintf("seed%d-", time.Now().UnixNano()%1e9)
	topic := prefix + "t"
	if err := sandbox.CreateTopic(ctx, sb.Source().Bootstrap(), topic, 2); err != nil {
		t.Fatal(err)
	}
	stopped, running := prefix+"stopped", prefix+"running"
	cfg, cfg2 := mirrorConfig(sb, topic, "1"), mirrorConfig(sb, topic, "2")
	var seedCfg, seedCfg2 map[string]string
	if err := json.Unmarshal([]byte(cfg), &seedCfg); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(cfg2), &seedCfg2); err != nil {
		t.Fatal(err)
	}
	fake := connectfake.New(
		connectfake.WithConnectors(
			connectfake.Connector{Name: stopped, Config: seedCfg, State: connectfake.StateStopped},
			connectfake.Connector{Name: running, Config: seedCfg2},
		),
		connectfake.WithOffsets(stopped, offsets.ConnectOffset{
			Partition: offsets.ConnectPartition{Cluster: "source", Topic: topic, Partition: 0}, Offset: offsets.NewMirrorOffset(4)}),
	)
	defer fake.Close()
	realW := worker{name: "real", url: sb.ConnectURL(), ids: []string{sb.Target().ClusterID()}}
	for _, wk := range sb.Workers() {
		realW.ids = append(realW.ids, strings.TrimPrefix(wk.URL(), "http://"))
	}
	fakeW := worker{name: "fake", url: fake.URL(), ids: []string{connectfake.DefaultKafkaClusterID, strings.TrimPrefix(fake.URL(), "http://")}}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, n := range []string{stopped, running} {
			_ = send(t, ctx, realW, http.MethodPut, "/connectors/"+n+"/stop", "")
			_ = send(t, ctx, realW, http.MethodDelete, "/connectors/"+n+"/offsets", "")
			_ = send(t, ctx, realW, http.MethodDelete, "/connectors/"+n, "")
		}
	})

	// The real worker gets there by requests, each configuration's keys
	// sorted as encoding/json writes a map (and so connect.Client sends
	// it): a worker's HashMap keeps colliding keys in the order submitted.
	sorted, _ := json.Marshal(seedCfg)
	sorted2, _ := json.Marshal(seedCfg2)
	cfg, cfg2 = string(sorted), string(sorted2)
	for _, req := range []struct{ method, path, body string }{
		{http.MethodPost, "/connectors", fmt.Sprintf(`{"name":%q,"config":%s,"initial_state":"STOPPED"}`, stopped, cfg)},
		{http.MethodPatch, "/connectors/" + stopped + "/offsets", patch(`{"partition":` + partition(topic, 0) + `,"offset":{"offset":4}}`)},
		{http.MethodPost, "/connectors", fmt.Sprintf(`{"name":%q,"config":%s}`, running, cfg2)},
	} {
		if a := send(t, ctx, realW, req.method, req.path, req.body); a.status >= 300 {
			t.Fatalf("%s %s: %d %s", req.method, req.path, a.status, a.body)
		}
	}
	for _, st := range []step{
		{what: "seeded STOPPED: info", method: "GET", path: "/connectors/" + stopped, exact: true, eventually: true},
		{what: "seeded STOPPED: config", method: "GET", path: "/connectors/" + stopped + "/config", exact: true},
		{what: "seeded STOPPED: status", method: "GET", path: "/connectors/" + stopped + "/status", exact: true, eventually: true},
		{what: "seeded STOPPED: offsets", method: "GET", path: "/connectors/" + stopped + "/offsets", exact: true, eventually: true},
		{what: "seeded RUNNING: info", method: "GET", path: "/connectors/" + running, exact: true, eventually: true},
		{what: "seeded RUNNING: status", method: "GET", path: "/connectors/" + running + "/status", eventually: true},
		{what: "seeded RUNNING: offsets", method: "GET", path: "/connectors/" + running + "/offsets", exact: true},
		{what: "seeded, listed with status and info", method: "GET", path: "/connectors?expand=status&expand=info", onlyPrefix: true, eventually: true},
	} {
		compare(t, ctx, realW, fakeW, st, prefix)
	}
}

// compare sends one step to both workers and reports any difference.
func compare(t *testing.T, ctx context.Context, realW, fakeW worker, st step, prefix string) {
	t.Helper()
	if !st.onlyPrefix {
		prefix = ""
	}
	want := send(t, ctx, fakeW, st.method, st.path, st.body)
	var got answer
	diff := func() string {
		if got.status != want.status {
			return fmt.Sprintf("status: real %d, fake %d\nreal: %s\nfake: %s", got.status, want.status, got.body, want.body)
		}
		if got.ctype != want.ctype || got.location != want.location {
			return fmt.Sprintf("Content-Type: real %q, fake %q; Location: real %q, fake %q", got.ctype, want.ctype, got.location, want.location)
		}
		r, f := realW.normalise(got.body), fakeW.normalise(want.body)
		if st.exact && !bytes.Equal(r, f) {
			return fmt.Sprintf("body:\nreal: %s\nfake: %s", r, f)
		}
		return cmp.Diff(comparable(r, prefix), comparable(f, prefix))
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		got = send(t, ctx, realW, st.method, st.path, st.body)
		d := diff()
		if d == "" {
			return
		}
		if !st.eventually || time.Now().After(deadline) {
			t.Errorf("%s (%s %s): the fake differs from the real worker (-real +fake):\n%s", st.what, st.method, st.path, d)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// capturePlugins writes plugins-4.3.1.json: each MirrorMaker 2 connector's
// groups and key definitions as the real worker's validate answer lists
// them, without documentation, one definition a line. The three converters
// are set so that their converter.type keys are listed too.
func capturePlugins(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	// definition is ConfigKeyInfo in the worker's field order, less its documentation.
	type definition struct {
		Name         string   `json:"name"`
		Type         string   `json:"type"`
		Required     bool     `json:"required"`
		DefaultValue *string  `json:"default_value"`
		Importance   string   `json:"importance"`
		Group        *string  `json:"group"`
		OrderInGroup int      `json:"order_in_group"`
		Width        string   `json:"width"`
		DisplayName  string   `json:"display_name"`
		Dependents   []string `json:"dependents"`
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\"kafka_version\":%q,\"plugins\":[\n", connectfake.Version)
	w := worker{name: "real", url: url}
	for i, class := range []string{"MirrorCheckpointConnector", "MirrorHeartbeatConnector", "MirrorSourceConnector"} {
		full := "org.apache.kafka.connect.mirror." + class
		body := object([2]string{"connector.class", full}, [2]string{"name", "capture"},
			[2]string{"key.converter", "org.apache.kafka.connect.converters.ByteArrayConverter"},
			[2]string{"value.converter", "org.apache.kafka.connect.converters.ByteArrayConverter"},
			[2]string{"header.converter", "org.apache.kafka.connect.converters.ByteArrayConverter"})
		a := send(t, ctx, w, http.MethodPut, "/connector-plugins/"+full+"/config/validate", body)
		if a.status != http.StatusOK {
			t.Fatalf("validate %s: %d %s", class, a.status, a.body)
		}
		var infos struct {
			Groups  []string `json:"groups"`
			Configs []struct {
				Definition definition `json:"definition"`
			} `json:"configs"`
		}
		if err := json.Unmarshal(a.body, &infos); err != nil {
			t.Fatal(err)
		}
		groups, _ := json.Marshal(infos.Groups)
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "{\"class\":%q,\"groups\":%s,\"definitions\":[\n", full, groups)
		for j, c := range infos.Configs {
			line, err := json.Marshal(c.Definition)
			if err != nil {
				t.Fatal(err)
			}
			if j > 0 {
				b.WriteString(",\n")
			}
			b.Write(line)
		}
		b.WriteString("\n]}")
	}
	b.WriteString("\n]}\n")
	if err := os.WriteFile("plugins-4.3.1.json", b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log("wrote plugins-4.3.1.json: run again without -update to compare")
}

// TestConformanceTransient pins the status a fake with the default status
// lag shows right after a change: each must be one the real worker shows
// while it acts on the change. What a real worker shows depends on timing,
// so a scenario is tried up to three times before it counts as a
// difference.
func TestConformanceTransient(t *testing.T) {
	sb := sandboxtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	fake := connectfake.New()
	defer fake.Close()
	realW := worker{name: "real", url: sb.ConnectURL(), ids: []string{sb.Target().ClusterID()}}
	for _, wk := range sb.Workers() {
		realW.ids = append(realW.ids, strings.TrimPrefix(wk.URL(), "http://"))
	}
	fakeW := worker{name: "fake", url: fake.URL(), ids: []string{strings.TrimPrefix(fake.URL(), "http://")}}
	prefix := fmt.Sprintf("trans%d-", time.Now().UnixNano()%1e9)
	topic := prefix + "t"
	if err := sandbox.CreateTopic(ctx, sb.Source().Bootstrap(), topic, 2); err != nil {
		t.Fatal(err)
	}
	cfg := mirrorConfig(sb, topic, "1")
	var names []string
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, n := range names {
			_ = send(t, ctx, realW, http.MethodDelete, "/connectors/"+n, "")
		}
	})

	// A new connector: its first status read, and the list with status.
	t.Run("status after create", func(t *testing.T) {
		var seen []string
		for attempt := 1; attempt <= 3; attempt++ {
			name := fmt.Sprintf("%snew%d", prefix, attempt)
			names = append(names, name)
			body := fmt.Sprintf(`{"name":%q,"config":%s,"initial_state":"STOPPED"}`, name, cfg)
			_ = send(t, ctx, fakeW, http.MethodPost, "/connectors", body)
			first := show(fakeW, send(t, ctx, fakeW, http.MethodGet, "/connectors/"+name+"/status", ""))
			if a := send(t, ctx, realW, http.MethodPost, "/connectors", body); a.status != http.StatusCreated {
				t.Fatalf("create: %d %s", a.status, a.body)
			}
			seen = watch(t, ctx, realW, name, stateStopped)
			if slices.Contains(seen, first) {
				return
			}
		}
		t.Errorf("the fake's first status after create is not among the real worker's:\nreal: %s", strings.Join(seen, "\nreal: "))
	})
	t.Run("list with status after create", func(t *testing.T) {
		listed := func(w worker, name string) bool {
			a := send(t, ctx, w, http.MethodGet, "/connectors?expand=status", "")
			return strings.Contains(string(a.body), fmt.Sprintf("%q:", name))
		}
		// Each worker of the group answers the list from what it has read
		// itself, so a client behind a load balancer may ask one that has
		// not read the new connector's status yet. The worker that took
		// the create may already have it (on a loaded machine it often
		// does, when the create waited for a rebalance): every worker is
		// asked, the others first.
		var each []worker
		for _, wk := range slices.Backward(sb.Workers()) {
			each = append(each, worker{name: "real " + wk.URL(), url: strings.TrimSuffix(wk.URL(), "/"), ids: realW.ids})
		}
		const attempts = 10
		for attempt := 1; attempt <= attempts; attempt++ {
			name := fmt.Sprintf("%slist%d", prefix, attempt)
			names = append(names, name)
			body := fmt.Sprintf(`{"name":%q,"config":%s,"initial_state":"STOPPED"}`, name, cfg)
			_ = send(t, ctx, fakeW, http.MethodPost, "/connectors", body)
			if listed(fakeW, name) {
				t.Fatal("the fake lists a connector with status right after its create")
			}
			_ = send(t, ctx, realW, http.MethodPost, "/connectors", body)
			for _, w := range each {
				if !listed(w, name) {
					t.Logf("attempt %d: %s did not list it yet", attempt, w.name)
					return
				}
			}
		}
		t.Errorf("every worker listed every new connector with its status at once, %d times", attempts)
	})

	name := prefix + "mm2"
	names = append(names, name)
	body := fmt.Sprintf(`{"name":%q,"config":%s}`, name, cfg)
	for _, w := range []worker{realW, fakeW} {
		if a := send(t, ctx, w, http.MethodPost, "/connectors", body); a.status != http.StatusCreated {
			t.Fatalf("%s: create: %d %s", w.name, a.status, a.body)
		}
	}
	for _, sc := range []struct {
		name  string
		setup []string // ops, each waited for
		op    string
	}{
		{"pause from RUNNING", []string{"resume"}, "pause"},
		{"stop from PAUSED", []string{"resume", "pause"}, "stop"},
		{"resume from STOPPED", []string{"stop"}, "resume"},
		{"stop from RUNNING", []string{"resume"}, "stop"},
	} {
		t.Run(sc.name, func(t *testing.T) {
			var fakeFirst string
			var seen []string
			for attempt := 1; attempt <= 3; attempt++ {
				for _, op := range sc.setup {
					for _, w := range []worker{realW, fakeW} {
						_ = send(t, ctx, w, http.MethodPut, "/connectors/"+name+"/"+op, "")
						watch(t, ctx, w, name, target[op])
					}
				}
				_ = send(t, ctx, fakeW, http.MethodPut, "/connectors/"+name+"/"+sc.op, "")
				fakeFirst = show(fakeW, send(t, ctx, fakeW, http.MethodGet, "/connectors/"+name+"/status", ""))
				watch(t, ctx, fakeW, name, target[sc.op])
				_ = send(t, ctx, realW, http.MethodPut, "/connectors/"+name+"/"+sc.op, "")
				seen = watch(t, ctx, realW, name, target[sc.op])
				if slices.Contains(seen, fakeFirst) {
					t.Logf("real worker showed: %s", strings.Join(seen, " -> "))
					return
				}
			}
			t.Errorf("the fake's first status after %s is not among the real worker's:\nfake: %s\nreal: %s", sc.op, fakeFirst, strings.Join(seen, "\nreal: "))
		})
	}
}

const (
	stateRunning = "RUNNING"
	statePaused  = "PAUSED"
	stateStopped = "STOPPED"
)

var target = map[string]string{"resume": stateRunning, "pause": statePaused, "stop": stateStopped}

// show is an answer as compared: status code and normalised body.
func show(w worker, a answer) string {
	return fmt.Sprintf("%d %s", a.status, w.normalise(a.body))
}

// watch reads a connector's status as fast as it can until the connector
// and all its tasks are in state (with no tasks when STOPPED, some
// otherwise), and returns the distinct answers seen, in order.
func watch(t *testing.T, ctx context.Context, w worker, name, state string) []string {
	t.Helper()
	var seen []string
	deadline := time.Now().Add(90 * time.Second)
	for {
		a := send(t, ctx, w, http.MethodGet, "/connectors/"+name+"/status", "")
		if s := show(w, a); len(seen) == 0 || seen[len(seen)-1] != s {
			seen = append(seen, s)
		}
		var st struct {
			Connector struct {
				State string `json:"state"`
			} `json:"connector"`
			Tasks []struct {
				State string `json:"state"`
			} `json:"tasks"`
		}
		if a.status == http.StatusOK && json.Unmarshal(a.body, &st) == nil && st.Connector.State == state &&
			(len(st.Tasks) == 0) == (state == stateStopped) {
			done := true
			for _, task := range st.Tasks {
				done = done && task.State == state
			}
			if done {
				return seen
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s never reached %s: %s", w.name, name, state, strings.Join(seen, " -> "))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
