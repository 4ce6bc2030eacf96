package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/connect/connectfake"
	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/kafkaadmin/kafkafake"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// The steps' tests run the CLI's apply, resume and rollback (the order of
// the library's calls, the audit, the wording and exit statuses of their
// refusals) against connect/connectfake and two clusters in memory: no
// JVM. The sandbox tests of examples/cutover run the same steps against
// real Kafka and Connect.

var (
	orders0 = kafkaadmin.TopicPartition{Topic: "orders", Partition: 0}
	orders1 = kafkaadmin.TopicPartition{Topic: "orders", Partition: 1}
)

// stepsWorld is a cutover in memory: the old job's group "flink" committed
// C = 10 on orders-0 (of 20 records) and C = 5 on orders-1 (of 5), and
// copied what it read to the target; the worker writes to the target.
type stepsWorld struct {
	worker         *connectfake.Server
	source, target *kafkafake.Cluster
	env            *Env
	s              settings.Settings
	audit          bytes.Buffer
}

func newStepsWorld(t *testing.T) *stepsWorld {
	t.Helper()
	w := &stepsWorld{worker: connectfake.New(connectfake.WithKafkaClusterID("tgt-id")),
		source: kafkafake.New("src-id"), target: kafkafake.New("tgt-id")}
	t.Cleanup(func() { w.worker.Close() })
	w.source.Produce(orders0, 0, 20, nil)
	w.source.Produce(orders1, 0, 5, nil)
	w.source.Commits["flink"] = offsets.GroupOffsets{orders0: 10, orders1: 5}
	w.target.Produce(orders0, 0, 10, w.source.Records[orders0][:10])
	w.target.Produce(orders1, 0, 5, w.source.Records[orders1])
	w.s = settings.Settings{
		Source:     kafkaadmin.Config{BootstrapServers: []string{"source-1:9092"}},
		Target:     kafkaadmin.Config{BootstrapServers: []string{"target-1:9092"}},
		ConnectURL: w.worker.URL(), Connector: "mm2-orders", Group: "flink", Topics: []string{"orders"},
		StabilityWindow: time.Second, ReadBackTimeout: 10 * time.Second, RunningTimeout: 10 * time.Second,
	}.WithDefaults()
	c, err := OpenConnect(w.s)
	if err != nil {
		t.Fatal(err)
	}
	w.env = &Env{Source: w.source, Target: w.target, Connect: c}
	return w
}

// plan builds the plan of the world as it is now, as the CLI's plan step
// does from a precheck's snapshot.
func (w *stepsWorld) plan(t *testing.T) *plan.Plan {
	t.Helper()
	ctx := context.Background()
	r, err := w.source.ReadGroup(ctx, "flink", w.s.Topics)
	if err != nil {
		t.Fatal(err)
	}
	ends, err := w.target.EndOffsets(ctx, []kafkaadmin.TopicPartition{orders0, orders1})
	if err != nil {
		t.Fatal(err)
	}
	p, err := BuildPlan(w.s, &Precheck{SourceClusterID: "src-id", TargetClusterID: "tgt-id", Group: r.Committed, Bounds: r.Bounds, TargetEnds: ends}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// steps returns the audit's steps, in order.
func (w *stepsWorld) steps(t *testing.T) []string {
	t.Helper()
	var out []string
	dec := json.NewDecoder(bytes.NewReader(w.audit.Bytes()))
	for dec.More() {
		var e struct{ Step string }
		if err := dec.Decode(&e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e.Step)
	}
	w.audit.Reset()
	return out
}

// TestApplyStep: the first apply creates the connector STOPPED, patches
// M = C-1 and reads it back; the second finds the plan applied and writes
// nothing; each records its steps.
func TestApplyStep(t *testing.T) {
	w, ctx := newStepsWorld(t), context.Background()
	p := w.plan(t)
	res, err := Apply(ctx, w.env, w.s, p, NewAudit(&w.audit))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Created || !res.Patched || res.Matched != 2 || res.Guard != plan.GuardApply.String() {
		t.Errorf("first apply = %+v, want created, patched, 2 read back", res)
	}
	if got, want := w.steps(t), []string{"intent", "create", "backup", "intent", "patch", "read-back"}; !slices.Equal(got, want) {
		t.Errorf("first apply's audit = %v, want %v", got, want)
	}
	got, err := w.env.Connect.MirrorOffsets(ctx, "mm2-orders")
	if err != nil {
		t.Fatal(err)
	}
	want := map[kafkaadmin.TopicPartition]int64{orders0: 9, orders1: 4} // M = C-1
	if len(got) != len(want) {
		t.Errorf("the connector holds %d offsets, want %d", len(got), len(want))
	}
	for _, o := range got {
		tp := kafkaadmin.TopicPartition{Topic: o.Partition.Topic, Partition: o.Partition.Partition}
		if m, ok := o.Offset.Get(); !ok || m != want[tp] {
			t.Errorf("%v holds %v, want M = C-1 = %d", o.Partition, o.Offset, want[tp])
		}
	}

	res, err = Apply(ctx, w.env, w.s, p, NewAudit(&w.audit))
	if err != nil {
		t.Fatal(err)
	}
	if res.Created || res.Patched || res.Matched != 2 || res.Guard != plan.GuardAlreadyApplied.String() {
		t.Errorf("second apply = %+v, want the plan found applied, nothing written", res)
	}
	if got, want := w.steps(t), []string{"backup", "read-back"}; !slices.Equal(got, want) {
		t.Errorf("second apply's audit = %v, want %v", got, want)
	}
}

// TestApplyStepRefuses: a plan the clusters or the connector no longer
// match is refused (exit status 4) before anything is written, and the
// refusal is recorded.
func TestApplyStepRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*stepsWorld)
		want   error
	}{
		{"the group moved since the plan", func(w *stepsWorld) { w.source.Commits["flink"][orders0] = 12 }, verify.ErrStalePlan},
		{"the old job is back in the group", func(w *stepsWorld) { w.source.Members["flink"] = 1 }, verify.ErrStalePlan},
		{"the target is another cluster", func(w *stepsWorld) { w.target.ID = "other-id" }, verify.ErrForeignConnector},
		{"the worker writes to another cluster", func(w *stepsWorld) {
			other := connectfake.New(connectfake.WithKafkaClusterID("other-id"))
			w.worker.Close()
			w.worker = other
			c, err := connect.New(other.URL())
			if err != nil {
				panic(err)
			}
			w.env.Connect = c
		}, verify.ErrStalePlan},
		{"another flow's connector has the name", func(w *stepsWorld) {
			cfg, _ := w.s.ConnectorConfig()
			cfg["topics"] = "payments"
			if _, err := w.env.Connect.Create(context.Background(), "mm2-orders", cfg, connect.InitialStopped); err != nil {
				panic(err)
			}
		}, verify.ErrForeignConnector},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, ctx := newStepsWorld(t), context.Background()
			p := w.plan(t)
			tc.change(w)
			_, err := Apply(ctx, w.env, w.s, p, NewAudit(&w.audit))
			if !errors.Is(err, tc.want) || ExitStatus(err) != ExitRefused {
				t.Fatalf("Apply = %v (exit %d), want %v, exit %d", err, ExitStatus(err), tc.want, ExitRefused)
			}
			t.Log(err)
			if got := w.steps(t); !slices.Equal(got, []string{"refuse"}) {
				t.Errorf("audit = %v, want only the refusal", got)
			}
			got, err := w.env.Connect.MirrorOffsets(ctx, "mm2-orders")
			if err == nil && len(got) > 0 {
				t.Errorf("the refused apply wrote offsets: %v", got)
			}
		})
	}
}

// TestResumeAndRollbackSteps: a rollback before resume removes the
// applied connector, after which apply starts over; resume says what it
// would do until approved, then resumes, and apply and the rollback before
// resume refuse the running connector; the rollback after resume hands
// the group C' = M'+1, and refuses a group holding other commits.
func TestResumeAndRollbackSteps(t *testing.T) {
	w, ctx := newStepsWorld(t), context.Background()
	p := w.plan(t)
	if _, err := Apply(ctx, w.env, w.s, p, NewAudit(nil)); err != nil {
		t.Fatal(err)
	}

	// Rollback before resume, approved: the connector and its offsets go.
	if _, err := Rollback(ctx, w.env, w.s, p, "", false, NewAudit(nil)); ExitStatus(err) != ExitNotApproved {
		t.Fatalf("rollback without approval = %v, want not approved", err)
	}
	if _, err := Rollback(ctx, w.env, w.s, p, "", true, NewAudit(&w.audit)); err != nil {
		t.Fatal(err)
	}
	if got, want := w.steps(t), []string{"rollback-backup", "intent", "delete", "rollback"}; !slices.Equal(got, want) {
		t.Errorf("rollback's audit = %v, want %v", got, want)
	}
	if _, err := w.env.Connect.Status(ctx, "mm2-orders"); !errors.Is(err, connect.ErrNotFound) {
		t.Fatalf("after the rollback the connector is still there: %v", err)
	}
	if res, err := Apply(ctx, w.env, w.s, p, NewAudit(nil)); err != nil || !res.Created || !res.Patched {
		t.Fatalf("apply after the rollback = %+v, %v; want it created and patched again", res, err)
	}

	// Resume: only the intent without approval, then RUNNING.
	in, err := Resume(ctx, w.env, w.s, p, false, NewAudit(nil))
	if ExitStatus(err) != ExitNotApproved || in.State != connect.StateStopped || in.Intent.Partitions != 2 {
		t.Fatalf("resume without approval = %+v, %v; want the intent and not approved", in, err)
	}
	if in, err = Resume(ctx, w.env, w.s, p, true, NewAudit(&w.audit)); err != nil || in.State != connect.StateRunning {
		t.Fatalf("resume = %+v, %v; want RUNNING", in, err)
	}
	if got, want := w.steps(t), []string{BoundaryCaptureStep, "intent", "resume"}; !slices.Equal(got, want) {
		t.Errorf("resume's audit = %v, want %v", got, want)
	}
	_, err = Apply(ctx, w.env, w.s, p, NewAudit(nil))
	if !errors.Is(err, connect.ErrNotStopped) || ExitStatus(err) != ExitRefused {
		t.Errorf("apply after resume = %v (exit %d), want a refusal of the running connector", err, ExitStatus(err))
	}
	if _, err := Rollback(ctx, w.env, w.s, p, "", true, NewAudit(nil)); ExitStatus(err) != ExitRefused {
		t.Errorf("rollback of a running connector without a group = %v (exit %d), want refused", err, ExitStatus(err))
	}

	// Rollback after resume: a group with another commit is refused before
	// anything is stopped; the old job's own commit is taken over by C'.
	if _, err := Rollback(ctx, w.env, w.s, p, "flink", false, NewAudit(nil)); ExitStatus(err) != ExitNotApproved {
		t.Fatalf("rollback after resume without approval = %v, want not approved", err)
	}
	w.source.Commits["flink"][orders0] = 15
	_, err = Rollback(ctx, w.env, w.s, p, "flink", true, NewAudit(nil))
	if !errors.Is(err, verify.ErrGroupOffsets) || ExitStatus(err) != ExitRefused {
		t.Fatalf("rollback after resume onto a group with another commit = %v (exit %d), want refused", err, ExitStatus(err))
	}
	if st, err := w.env.Connect.Status(ctx, "mm2-orders"); err != nil || st.Connector.State != connect.StateRunning {
		t.Fatalf("the refused rollback stopped the connector: %v, %v", st, err)
	}
	w.source.Commits["flink"][orders0] = 10
	res, err := Rollback(ctx, w.env, w.s, p, "flink", true, NewAudit(&w.audit))
	if err != nil || res.Committed != 2 {
		t.Fatalf("rollback after resume = %+v, %v; want 2 partitions committed", res, err)
	}
	if got, want := w.steps(t), []string{"intent", "stop", "rollback-backup", "rollback-plan", "intent", "commit", "rollback"}; !slices.Equal(got, want) {
		t.Errorf("rollback after resume's audit = %v, want %v", got, want)
	}
	// The fake runs no task, so MM2 copied nothing: C' = M'+1 is C.
	if got := w.source.Commits["flink"]; got[orders0] != 10 || got[orders1] != 5 {
		t.Errorf("group after the rollback = %v, want orders-0 10, orders-1 5", got)
	}
}
