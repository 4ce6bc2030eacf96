package connect_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/offsets"
)

func TestMain(m *testing.M) { sandboxtest.Main(m) }

// realWorker is a shared sandbox with a client for its first worker and a
// topic of two partitions on both clusters, named after the test.
type realWorker struct {
	sb    *sandbox.Sandbox
	c     *connect.Client
	name  string // unique connector name
	topic string
	ctx   context.Context
}

var unsafeChars = regexp.MustCompile(`[^a-z0-9-]+`)

func newRealWorker(t *testing.T) *realWorker {
	t.Helper()
	sb := sandboxtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	// Offsets outlive connectors, so names are unique across runs too.
	base := strings.Trim(unsafeChars.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	name := fmt.Sprintf("%s-%d", base, time.Now().UnixNano()%1e9)
	c := newClient(t, sb.ConnectURL())
	w := &realWorker{sb: sb, c: c, name: name, topic: name + "-t", ctx: ctx}
	for _, b := range []*sandbox.Broker{sb.Source(), sb.Target()} {
		if err := sandbox.CreateTopic(ctx, b.Bootstrap(), w.topic, 2); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func newClient(t *testing.T, url string) *connect.Client {
	t.Helper()
	c, err := connect.New(url, connect.WithPollInterval(500*time.Millisecond), connect.WithRetry(connect.Retry{Elapsed: time.Minute}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// config is the MirrorSourceConnector configuration for the test's topic.
func (w *realWorker) config(t *testing.T) map[string]string {
	t.Helper()
	cfg, err := connect.MirrorSource{
		Name:            w.name,
		SourceBootstrap: w.sb.Source().Bootstrap(),
		TargetBootstrap: w.sb.Target().Bootstrap(),
		Topics:          []string{w.topic},
		TasksMax:        1,
		IsolationLevel:  "read_committed",
		Extra:           map[string]string{"replication.factor": "1"},
	}.Config()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func (w *realWorker) createStopped(t *testing.T) {
	t.Helper()
	if _, err := w.c.Create(w.ctx, w.name, w.config(t), connect.InitialStopped); err != nil {
		t.Fatal(err)
	}
	if _, err := w.c.WaitStopped(w.ctx, w.name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := w.c.Delete(ctx, w.name); err != nil && !errors.Is(err, connect.ErrNotFound) {
			t.Errorf("delete %s: %v", w.name, err)
		}
	})
}

// expected turns offsets written with the generic form into what GET
// offsets lists afterwards: MirrorSourceConnector offsets, tombstones left
// out (Connect drops a partition whose offset was deleted).
func expected(t *testing.T, list []connect.Offset) []offsets.ConnectOffset {
	t.Helper()
	var out []offsets.ConnectOffset
	for _, o := range list {
		if o.Offset == nil {
			continue
		}
		out = append(out, offsets.ConnectOffset{
			Partition: offsets.ConnectPartition{Cluster: o.Partition[connect.MirrorKeyCluster].(string), Topic: o.Partition[connect.MirrorKeyTopic].(string), Partition: int32(o.Partition[connect.MirrorKeyPartition].(int64))},
			Offset:    offsets.NewMirrorOffset(o.Offset[connect.MirrorKeyOffset].(int64)),
		})
	}
	return out
}

// raw sends a request without the client, to see what the worker itself
// answers where the client's guard would refuse first.
func raw(t *testing.T, ctx context.Context, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func produce(t *testing.T, ctx context.Context, bootstrap, topic string, partition int32, n int) {
	t.Helper()
	msgs := make([]*sarama.ProducerMessage, n)
	for i := range msgs {
		msgs[i] = &sarama.ProducerMessage{Topic: topic, Partition: partition,
			Key: sarama.StringEncoder(fmt.Sprintf("k%d", i)), Value: sarama.StringEncoder(fmt.Sprintf("p%d-v%d", partition, i))}
	}
	// sandbox.Produce hashes keys to partitions; this test needs its own.
	if err := sandbox.ProduceToPartitions(ctx, bootstrap, msgs); err != nil {
		t.Fatal(err)
	}
}

func TestRealServerInfoAndPlugins(t *testing.T) {
	w := newRealWorker(t)
	info, err := w.c.ServerInfo(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Version != w.sb.KafkaVersion() || info.Commit == "" || info.KafkaClusterID != w.sb.Target().ClusterID() {
		t.Errorf("ServerInfo = %+v, want version %s and the target (management) cluster ID %s", info, w.sb.KafkaVersion(), w.sb.Target().ClusterID())
	}
	plugins, err := w.c.Plugins(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range plugins {
		if p.Class == connect.MirrorSourceConnectorClass {
			found = p.Type == "source" && p.Version != ""
		}
	}
	if !found {
		t.Errorf("MirrorSourceConnector not among %+v", plugins)
	}
}

// TestRealCutoverFlow is the cutover on a real worker: create STOPPED, alter
// offsets (one partition set, one cleared), read them back, resume, and check
// that MirrorMaker 2 copies from M+1 and from the beginning respectively.
func TestRealCutoverFlow(t *testing.T) {
	w := newRealWorker(t)
	src, dst := w.sb.Source().Bootstrap(), w.sb.Target().Bootstrap()
	produce(t, w.ctx, src, w.topic, 0, 10)
	produce(t, w.ctx, src, w.topic, 1, 3)

	w.createStopped(t)
	st, err := w.c.Status(w.ctx, w.name)
	if err != nil {
		t.Fatal(err)
	}
	if st.Connector.State != connect.StateStopped || len(st.Tasks) != 0 || st.Type != "source" {
		t.Errorf("status after create STOPPED = %+v", st)
	}
	all, err := w.c.Connectors(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := all[w.name].Connector.State; got != connect.StateStopped {
		t.Errorf("Connectors()[%s] state = %q, want STOPPED", w.name, got)
	}
	info, err := w.c.Connector(w.ctx, w.name)
	if err != nil {
		t.Fatal(err)
	}
	want := w.config(t)
	if diff := cmp.Diff(want, info.Config); diff != "" || info.Name != w.name || len(info.Tasks) != 0 {
		t.Errorf("Connector() = %+v; config (-want +got):\n%s", info, diff)
	}
	cfg, err := w.c.Config(w.ctx, w.name)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("Config() (-want +got):\n%s", diff)
	}
	before, err := w.c.Offsets(w.ctx, w.name)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 0 {
		t.Errorf("offsets of a new connector = %v, want none", before)
	}

	// Group offsets C = 5 on partition 0 and C = 0 on partition 1.
	plan := []connect.Offset{
		mirrorOffset("source", w.topic, 0, 4),
		mirrorOffset("source", w.topic, 1),
	}
	msg, err := w.c.AlterOffsets(w.ctx, w.name, plan)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("PATCH offsets: %q", msg)
	rb, err := w.c.WaitMirrorOffsets(w.ctx, w.name, expected(t, plan))
	if err != nil {
		t.Fatal(err)
	}
	if rb.Count(offsets.Match) != 1 || len(rb.Partitions) != 1 {
		t.Errorf("offsets read back: %s; want partition 0 only, the tombstoned partition 1 absent", rb)
	}
	got, err := w.c.Offsets(w.ctx, w.name)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]connect.Offset{plan[0]}, got); diff != "" {
		t.Errorf("offsets read back in the generic form (-want +got):\n%s", diff)
	}

	if err := w.c.Resume(w.ctx, w.name); err != nil {
		t.Fatal(err)
	}
	running, err := w.c.WaitRunning(w.ctx, w.name)
	if err != nil {
		t.Fatal(err)
	}
	if len(running.Tasks) != 1 {
		t.Errorf("tasks = %+v, want 1", running.Tasks)
	}
	p0, err := sandbox.Consume(w.ctx, dst, w.topic, 0, 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	if first := string(p0[0].Value); first != "p0-v5" {
		t.Errorf("first record replicated to partition 0 = %q, want p0-v5 (M+1)", first)
	}
	p1, err := sandbox.Consume(w.ctx, dst, w.topic, 1, 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	if first := string(p1[0].Value); first != "p1-v0" {
		t.Errorf("first record replicated to partition 1 = %q, want p1-v0 (earliest)", first)
	}

	// Stop again: STOPPED with no tasks, and the offsets have advanced.
	if err := w.c.Stop(w.ctx, w.name); err != nil {
		t.Fatal(err)
	}
	if _, err := w.c.WaitStopped(w.ctx, w.name); err != nil {
		t.Fatal(err)
	}
	advanced := []connect.Offset{
		mirrorOffset("source", w.topic, 0, 9),
		mirrorOffset("source", w.topic, 1, 2),
	}
	if _, err := w.c.WaitMirrorOffsets(w.ctx, w.name, expected(t, advanced)); err != nil {
		t.Fatal(err)
	}

	// Reset deletes them all.
	if msg, err := w.c.ResetOffsets(w.ctx, w.name); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("DELETE offsets: %q", msg)
	}
	if _, err := w.c.WaitMirrorOffsets(w.ctx, w.name, expected(t, nil)); err != nil {
		t.Fatal(err)
	}
}

func TestRealOffsetsOutliveConnector(t *testing.T) {
	w := newRealWorker(t)
	w.createStopped(t)
	plan := []connect.Offset{mirrorOffset("source", w.topic, 0, 7)}
	if _, err := w.c.AlterOffsets(w.ctx, w.name, plan); err != nil {
		t.Fatal(err)
	}
	if _, err := w.c.WaitMirrorOffsets(w.ctx, w.name, expected(t, plan)); err != nil {
		t.Fatal(err)
	}
	if err := w.c.Delete(w.ctx, w.name); err != nil {
		t.Fatal(err)
	}
	// The configuration is gone at once (GET /connectors/{n} is answered
	// from the config topic); the status topic lags behind.
	_, err := w.c.Connector(w.ctx, w.name)
	if !errors.Is(err, connect.ErrNotFound) {
		t.Fatalf("info of a deleted connector: %v, want 404", err)
	}
	if _, err = w.c.Offsets(w.ctx, w.name); !errors.Is(err, connect.ErrNotFound) {
		t.Fatalf("offsets of a deleted connector: %v, want 404", err)
	}
	if st, err := w.c.Status(w.ctx, w.name); err == nil {
		t.Logf("status right after delete still answers: %+v", st.Connector)
	}

	w.createStopped(t)
	if _, err := w.c.WaitMirrorOffsets(w.ctx, w.name, expected(t, plan)); err != nil {
		t.Errorf("a new connector of the same name does not inherit the offsets: %v", err)
	}
}

func TestRealErrors(t *testing.T) {
	w := newRealWorker(t)
	missing := w.name + "-missing"
	// What Kafka 4.3.1 answers for a connector that does not exist: always
	// 404, with messages that differ by endpoint.
	notFound := "Connector " + missing + " not found"
	unknown := "Unknown connector " + missing
	for _, tt := range []struct {
		what string
		call func() error
		msg  string
	}{
		{"status", func() error { _, err := w.c.Status(w.ctx, missing); return err }, "No status found for connector " + missing},
		{"info", func() error { _, err := w.c.Connector(w.ctx, missing); return err }, notFound},
		{"config", func() error { _, err := w.c.Config(w.ctx, missing); return err }, notFound},
		{"delete", func() error { return w.c.Delete(w.ctx, missing) }, notFound},
		{"offsets", func() error { _, err := w.c.Offsets(w.ctx, missing); return err }, notFound},
		{"stop", func() error { return w.c.Stop(w.ctx, missing) }, unknown},
		{"pause", func() error { return w.c.Pause(w.ctx, missing) }, unknown},
		{"resume", func() error { return w.c.Resume(w.ctx, missing) }, unknown},
		{"restart", func() error { _, err := w.c.Restart(w.ctx, missing, connect.RestartOptions{}); return err }, "Unknown connector: " + missing},
		// The guard reads the status (404), then the connector (404).
		{"alter", func() error {
			_, err := w.c.AlterOffsets(w.ctx, missing, []connect.Offset{mirrorOffset("source", w.topic, 0, 1)})
			return err
		}, notFound},
	} {
		err := tt.call()
		var apiErr *connect.APIError
		if !errors.As(err, &apiErr) || !errors.Is(err, connect.ErrNotFound) {
			t.Errorf("%s of a missing connector: %v, want a 404 *APIError", tt.what, err)
			continue
		}
		if apiErr.StatusCode != 404 || apiErr.ErrorCode != 404 || apiErr.Message != tt.msg {
			t.Errorf("%s of a missing connector: %d error_code=%d %q, want 404 %q", tt.what, apiErr.StatusCode, apiErr.ErrorCode, apiErr.Message, tt.msg)
		}
	}

	w.createStopped(t)
	_, err := w.c.Create(w.ctx, w.name, w.config(t), connect.InitialStopped)
	var apiErr *connect.APIError
	if !errors.Is(err, connect.ErrAlreadyExists) || !errors.As(err, &apiErr) || apiErr.StatusCode != 409 {
		t.Fatalf("second create: %v, want 409 already exists", err)
	}
	if want := "Connector " + w.name + " already exists"; apiErr.ErrorCode != 409 || apiErr.Message != want {
		t.Errorf("409: error_code=%d %q, want %q", apiErr.ErrorCode, apiErr.Message, want)
	}

	// A negative offset: MirrorSourceConnector.alterOffsets refuses it.
	_, err = w.c.AlterOffsets(w.ctx, w.name, []connect.Offset{mirrorOffset("source", w.topic, 0, -1)})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 {
		t.Fatalf("negative offset: %v, want 500", err)
	}
	if want := "has an invalid value -1 for the 'offset' key, which cannot be negative"; apiErr.ErrorCode != 500 || !strings.Contains(apiErr.Message, want) {
		t.Errorf("negative offset: error_code=%d %q, want it to contain %q", apiErr.ErrorCode, apiErr.Message, want)
	}
	if errors.Is(err, connect.ErrRebalance) || connect.IsTransient(connect.RepeatSafe, err) {
		t.Errorf("negative offset classified transient: %v", err)
	}

	// A wrong alias is accepted silently (DESIGN.md): pin it.
	if _, err := w.c.AlterOffsets(w.ctx, w.name, []connect.Offset{mirrorOffset("not-the-alias", w.topic, 0, 1)}); err != nil {
		t.Errorf("wrong alias: %v, Connect was expected to accept it", err)
	}

	// PATCH while RUNNING and while PAUSED: the worker's own 400 (sent raw,
	// the client's guard refuses earlier) and the client's guard.
	body := `{"offsets":[{"partition":{"cluster":"source","topic":"` + w.topic + `","partition":0},"offset":{"offset":1}}]}`
	if err := w.c.Resume(w.ctx, w.name); err != nil {
		t.Fatal(err)
	}
	if _, err := w.c.WaitRunning(w.ctx, w.name); err != nil {
		t.Fatal(err)
	}
	for _, state := range []string{connect.StateRunning, connect.StatePaused} {
		if state == connect.StatePaused {
			if err := w.c.Pause(w.ctx, w.name); err != nil {
				t.Fatal(err)
			}
			waitState(t, w, connect.StatePaused)
		}
		status, answer := raw(t, w.ctx, http.MethodPatch, w.sb.ConnectURL()+"/connectors/"+w.name+"/offsets", body)
		wantMsg := "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/" + w.name + "/stop' endpoint"
		var e struct {
			ErrorCode int    `json:"error_code"`
			Message   string `json:"message"`
		}
		_ = json.Unmarshal([]byte(answer), &e)
		serverErr := &connect.APIError{Method: "PATCH", StatusCode: status, ErrorCode: e.ErrorCode, Message: e.Message}
		if status != 400 || e.ErrorCode != 400 || e.Message != wantMsg || !errors.Is(serverErr, connect.ErrNotStopped) {
			t.Errorf("PATCH while %s: %d %s, want 400 %q matching ErrNotStopped", state, status, answer, wantMsg)
		}
		status, answer = raw(t, w.ctx, http.MethodDelete, w.sb.ConnectURL()+"/connectors/"+w.name+"/offsets", "")
		if status != 400 {
			t.Errorf("DELETE offsets while %s: %d %s, want 400", state, status, answer)
		}
		_, err := w.c.AlterOffsets(w.ctx, w.name, []connect.Offset{mirrorOffset("source", w.topic, 0, 1)})
		var nse *connect.NotStoppedError
		if !errors.As(err, &nse) || nse.State != state || nse.Tasks != 1 {
			t.Errorf("AlterOffsets while %s: %v", state, err)
		}
	}
}

func waitState(t *testing.T, w *realWorker, state string) {
	t.Helper()
	for {
		st, err := w.c.Status(w.ctx, w.name)
		if err != nil {
			t.Fatal(err)
		}
		done := st.Connector.State == state
		for _, task := range st.Tasks {
			done = done && task.State.State == state
		}
		if done {
			return
		}
		select {
		case <-w.ctx.Done():
			t.Fatalf("connector never reached %s: %+v", state, st)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestRealForwardedWrites sends every write through each of the two
// workers: whichever is not the leader forwards it to the leader's
// advertised address.
func TestRealForwardedWrites(t *testing.T) {
	w := newRealWorker(t)
	workers := w.sb.Workers()
	if len(workers) < 2 {
		t.Fatalf("sandbox has %d workers, want 2", len(workers))
	}
	for i, wk := range workers {
		c := newClient(t, wk.URL())
		name := fmt.Sprintf("%s-w%d", w.name, i)
		cfg := w.config(t)
		cfg["name"] = name
		if _, err := c.Create(w.ctx, name, cfg, connect.InitialStopped); err != nil {
			t.Fatalf("create via worker %d: %v", i, err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), name) })
		if _, err := c.WaitStopped(w.ctx, name); err != nil {
			t.Fatal(err)
		}
		plan := []connect.Offset{mirrorOffset("source", w.topic, 0, int64(10+i))}
		if _, err := c.AlterOffsets(w.ctx, name, plan); err != nil {
			t.Fatalf("alter via worker %d: %v", i, err)
		}
		// Read back through the other worker: GET offsets is not forwarded.
		other := newClient(t, workers[1-i].URL())
		if _, err := other.WaitMirrorOffsets(w.ctx, name, expected(t, plan)); err != nil {
			t.Errorf("offsets written via worker %d, read via the other: %v", i, err)
		}
		cfg["tasks.max"] = "2"
		newCfg, created, err := c.PutConfig(w.ctx, name, cfg)
		if err != nil || created || newCfg.Name != name {
			t.Errorf("PutConfig via worker %d: created=%v err=%v", i, created, err)
		}
		// A config update restarts the connector: its status passes through
		// UNASSIGNED, and it stays STOPPED.
		if _, err := c.WaitStopped(w.ctx, name); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ResetOffsets(w.ctx, name); err != nil {
			t.Errorf("reset via worker %d: %v", i, err)
		}
		if err := c.Delete(w.ctx, name); err != nil {
			t.Errorf("delete via worker %d: %v", i, err)
		}
	}
}

func TestRealRestartPutConfigAndValidate(t *testing.T) {
	w := newRealWorker(t)
	cfg := w.config(t)
	info, created, err := w.c.PutConfig(w.ctx, w.name, cfg)
	if err != nil || !created || info.Name != w.name {
		t.Fatalf("PutConfig of a new connector: %+v created=%v err=%v", info, created, err)
	}
	t.Cleanup(func() { _ = w.c.Delete(context.Background(), w.name) })
	if _, err := w.c.WaitRunning(w.ctx, w.name); err != nil {
		t.Fatal(err)
	}
	st, err := w.c.Restart(w.ctx, w.name, connect.RestartOptions{})
	if err != nil || st != nil {
		t.Errorf("plain restart: %+v, %v", st, err)
	}
	st, err = w.c.Restart(w.ctx, w.name, connect.RestartOptions{IncludeTasks: true})
	if err != nil || st == nil || st.Name != w.name {
		t.Errorf("restart with tasks: %+v, %v", st, err)
	}
	if _, err := w.c.WaitRunning(w.ctx, w.name); err != nil {
		t.Fatal(err)
	}
	cfg["tasks.max"] = "2"
	if _, created, err := w.c.PutConfig(w.ctx, w.name, cfg); err != nil || created {
		t.Errorf("PutConfig update: created=%v err=%v", created, err)
	}

	findings, err := w.c.LintConfig(w.ctx, cfg, connect.LintExpectations{SourceAlias: "source", HasClearedPartition: true})
	if err != nil {
		t.Fatal(err)
	}
	if connect.HasErrors(findings) {
		t.Errorf("builder config has errors: %v", findings)
	}
	for _, f := range findings {
		t.Logf("finding: %s", f)
	}

	bad := w.config(t)
	bad["tasks.max"] = "many"
	bad["topics"] = ".*"
	findings, err = w.c.LintConfig(w.ctx, bad, connect.LintExpectations{})
	if err != nil {
		t.Fatal(err)
	}
	var origins []string
	for _, f := range findings {
		if f.Severity == connect.SeverityError {
			origins = append(origins, f.Origin+" "+f.Key)
		}
		t.Logf("finding: %s [%s]", f, f.Origin)
	}
	// "many" gives two errors: not an INT, and then null is not allowed.
	if diff := cmp.Diff([]string{"connect validate tasks.max", "connect validate tasks.max", "lint topics"}, origins); diff != "" {
		t.Errorf("error findings (-want +got):\n%s", diff)
	}
}

func TestRealSecretsNotShown(t *testing.T) {
	w := newRealWorker(t)
	cfg := w.config(t)
	cfg["tasks.max"] = "not-a-number"
	cfg["source.cluster.security.protocol"] = "SASL_PLAINTEXT"
	cfg["source.cluster.sasl.mechanism"] = "PLAIN"
	cfg["source.cluster.sasl.jaas.config"] = `org.apache.kafka.common.security.plain.PlainLoginModule required username="mm2" password="real-secret-314";`
	cfg["source.cluster.ssl.truststore.password"] = "real-secret-271"
	_, err := w.c.Create(w.ctx, w.name, cfg, connect.InitialStopped)
	var apiErr *connect.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 {
		t.Fatalf("create with an invalid tasks.max: %v, want 400", err)
	}
	if !strings.HasPrefix(apiErr.Message, "Connector configuration is invalid and contains the following 2 error(s):") {
		t.Errorf("invalid config message = %q", apiErr.Message)
	}
	infos, err := w.c.Validate(w.ctx, connect.MirrorSourceConnectorClass, cfg)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(infos)
	for _, secret := range []string{"real-secret-314", "real-secret-271"} {
		if strings.Contains(err2s(err)+apiErr.Error()+fmt.Sprint(connect.ValidationFindings(infos, cfg)), secret) {
			t.Errorf("secret %s shown", secret)
		}
		if strings.Contains(string(raw), secret) {
			t.Logf("note: the validate answer itself echoes %s", secret)
		}
	}
}

func err2s(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestRealWaitMirrorOffsetsReportsTheDiff waits for offsets a STOPPED
// connector does not hold: it gives up at the deadline with a
// *ReadBackError listing the missing partition and the diff; after the
// PATCH the same wait matches.
func TestRealWaitMirrorOffsetsReportsTheDiff(t *testing.T) {
	w := newRealWorker(t)
	w.createStopped(t)
	want := []offsets.ConnectOffset{{Partition: offsets.ConnectPartition{Cluster: "source", Topic: w.topic}, Offset: offsets.NewMirrorOffset(9)}}
	short, cancel := context.WithTimeout(w.ctx, 3*time.Second)
	defer cancel()
	rb, err := w.c.WaitMirrorOffsets(short, w.name, want)
	var rbe *connect.ReadBackError
	if !errors.As(err, &rbe) || !errors.Is(err, connect.ErrReadBack) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want a *ReadBackError after the deadline", err)
	}
	if rb.Count(offsets.Missing) != 1 || rb.Diff() == "" {
		t.Fatalf("read-back %s, diff %q: want 1 missing and a diff", rb, rb.Diff())
	}
	if _, err := w.c.AlterMirrorOffsets(w.ctx, w.name, want); err != nil {
		t.Fatal(err)
	}
	if rb, err := w.c.WaitMirrorOffsets(w.ctx, w.name, want); err != nil || !rb.OK() {
		t.Fatalf("after the PATCH: %s, %v", rb, err)
	}
}
