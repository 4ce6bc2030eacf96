package verify_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/connect/connectfake"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/kafkaadmin/kafkafake"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// stepsWorld is connectorPlan's plan, a fake Connect worker, and the
// clusters the plan was built on.
type stepsWorld struct {
	p        *plan.Plan
	config   func() map[string]string
	fake     *connectfake.Server
	c        *connect.Client
	clusters verify.Clusters
}

func newStepsWorld(t *testing.T) *stepsWorld {
	t.Helper()
	p, config := connectorPlan(t)
	fake := connectfake.New()
	t.Cleanup(fake.Close)
	c, err := connect.New(fake.URL(), connect.WithRetry(connect.Retry{Attempts: 2}))
	if err != nil {
		t.Fatal(err)
	}
	return &stepsWorld{p: p, config: config, fake: fake, c: c, clusters: verify.Clusters{Source: "src-id", Target: "tgt-id"}}
}

func stepsCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// apply runs the apply's steps and returns what the guard said.
func (w *stepsWorld) apply(t *testing.T, ctx context.Context) (created bool, action plan.GuardAction) {
	t.Helper()
	created, err := verify.CreateOrAdopt(ctx, w.c, w.p, w.config(), w.clusters)
	if err != nil {
		t.Fatalf("CreateOrAdopt: %v", err)
	}
	if err := w.c.RequireStopped(ctx, w.p.ConnectorName); err != nil {
		t.Fatalf("RequireStopped: %v", err)
	}
	_, action, err = verify.GuardOffsets(ctx, w.c, w.p)
	if err != nil {
		t.Fatalf("GuardOffsets: %v", err)
	}
	if action == plan.GuardApply {
		if n, err := verify.Patch(ctx, w.c, w.p, w.clusters); err != nil || n != len(w.p.Entries) {
			t.Fatalf("Patch = %d, %v; want %d partitions", n, err, len(w.p.Entries))
		}
	}
	if rb, err := verify.ReadBack(ctx, w.c, w.p); err != nil || !rb.OK() {
		t.Fatalf("ReadBack = %v, %v", rb, err)
	}
	return created, action
}

// TestApplyResumeSteps follows a plan through apply, a retried apply,
// resume, and the guards that refuse afterwards.
func TestApplyResumeSteps(t *testing.T) {
	w, ctx := newStepsWorld(t), stepsCtx(t)
	if err := verify.CheckResumable(ctx, w.c, w.p, w.clusters); !errors.Is(err, connect.ErrNotFound) {
		t.Errorf("CheckResumable before the apply = %v, want ErrNotFound", err)
	}
	if created, action := w.apply(t, ctx); !created || action != plan.GuardApply {
		t.Errorf("first apply: created %v, guard %v; want created, apply", created, action)
	}
	if created, action := w.apply(t, ctx); created || action != plan.GuardAlreadyApplied {
		t.Errorf("second apply: created %v, guard %v; want adopted, already-applied", created, action)
	}
	if err := verify.CheckResumable(ctx, w.c, w.p, w.clusters); err != nil {
		t.Fatalf("CheckResumable after the apply: %v", err)
	}
	if err := verify.Resume(ctx, w.c, w.p, w.clusters); err != nil {
		t.Fatal(err)
	}
	if _, err := w.c.WaitRunning(ctx, w.p.ConnectorName); err != nil {
		t.Fatal(err)
	}
	// Now RUNNING: every step that needs it STOPPED refuses, and writes nothing.
	if created, err := verify.CreateOrAdopt(ctx, w.c, w.p, w.config(), w.clusters); created || err != nil {
		t.Errorf("CreateOrAdopt of the running plan's connector = %v, %v; want it adopted", created, err)
	}
	err := w.c.RequireStopped(ctx, w.p.ConnectorName)
	if !errors.Is(err, connect.ErrNotStopped) || verify.Classify(err) != verify.KindRefused {
		t.Errorf("RequireStopped of the running connector = %v (%v), want a refusal matching ErrNotStopped", err, verify.Classify(err))
	}
	if err := verify.CheckResumable(ctx, w.c, w.p, w.clusters); verify.Classify(err) != verify.KindRefused {
		t.Errorf("CheckResumable of the running connector = %v, want a refusal", err)
	}
	_, err = verify.CheckNeverRan(ctx, w.c, w.p, w.clusters)
	if !errors.Is(err, verify.ErrHasRun) || verify.Classify(err) != verify.KindRefused {
		t.Errorf("CheckNeverRan of the running connector = %v, want ErrHasRun", err)
	}
}

// TestCreateOrAdoptRefuses: a connector of the plan's name that is not
// the plan's is never adopted, and a configuration that is not the plan's
// is never created.
func TestCreateOrAdoptRefuses(t *testing.T) {
	w, ctx := newStepsWorld(t), stepsCtx(t)
	other := w.config()
	other["topics"] = "orders.eu"
	if created, err := verify.CreateOrAdopt(ctx, w.c, w.p, other, w.clusters); created || !errors.Is(err, plan.ErrConfigChanged) || verify.Classify(err) != verify.KindRefused {
		t.Errorf("CreateOrAdopt with another configuration = %v, %v; want a refusal matching plan.ErrConfigChanged", created, err)
	}
	if _, err := w.c.Connector(ctx, w.p.ConnectorName); !errors.Is(err, connect.ErrNotFound) {
		t.Fatalf("the refused create created the connector: %v", err)
	}
	if _, err := w.c.Create(ctx, w.p.ConnectorName, other, connect.InitialStopped); err != nil {
		t.Fatal(err)
	}
	created, err := verify.CreateOrAdopt(ctx, w.c, w.p, w.config(), w.clusters)
	var foreign *verify.ForeignConnectorError
	if created || !errors.As(err, &foreign) || foreign.Check != "topics" || verify.Classify(err) != verify.KindRefused {
		t.Errorf("CreateOrAdopt of another flow's connector = %v, %v; want a *ForeignConnectorError on topics", created, err)
	}
}

// TestRollbackBeforeResumeSteps: a connector that never ran is reset and
// deleted, so a new one of the same name starts from nothing.
func TestRollbackBeforeResumeSteps(t *testing.T) {
	w, ctx := newStepsWorld(t), stepsCtx(t)
	w.apply(t, ctx)
	got, err := verify.CheckNeverRan(ctx, w.c, w.p, w.clusters)
	if err != nil || len(got) != len(w.p.Entries) {
		t.Fatalf("CheckNeverRan = %v, %v; want the plan's %d offsets", got, err, len(w.p.Entries))
	}
	if err := verify.RemoveConnector(ctx, w.c, w.p, w.clusters); err != nil {
		t.Fatal(err)
	}
	if _, err := w.c.Connector(ctx, w.p.ConnectorName); !errors.Is(err, connect.ErrNotFound) {
		t.Errorf("connector after RemoveConnector: %v, want ErrNotFound", err)
	}
	if created, action := w.apply(t, ctx); !created || action != plan.GuardApply {
		t.Errorf("apply after the rollback: created %v, guard %v; want a new connector with no offsets", created, action)
	}
}

// TestRollbackAfterResumeSteps: after MM2 ran, the group the old job
// restarts from receives C' = M'+1, and a group holding other commits, or
// members, is refused before anything is stopped.
func TestRollbackAfterResumeSteps(t *testing.T) {
	w, ctx := newStepsWorld(t), stepsCtx(t)
	w.apply(t, ctx)
	if err := verify.Resume(ctx, w.c, w.p, w.clusters); err != nil {
		t.Fatal(err)
	}
	o, p0 := offsets.SourcePartition{Topic: "orders.eu", Partition: 0}, offsets.SourcePartition{Topic: "payments", Partition: 0}
	kafka := kafkafake.New("")
	for _, tp := range []offsets.SourcePartition{o, p0} {
		kafka.Bounds[tp] = offsets.LogBounds{End: 20}
	}

	kafka.Members["flink"] = 1
	if err := verify.StopForRollback(ctx, w.c, kafka, w.p, "flink", w.clusters); !errors.Is(err, kafkaadmin.ErrGroupActive) || verify.Classify(err) != verify.KindRefused {
		t.Errorf("StopForRollback with a member in the group = %v, want ErrGroupActive", err)
	}
	kafka.Members["flink"] = 0
	kafka.Commits["flink"] = offsets.GroupOffsets{o: 15}
	if err := verify.StopForRollback(ctx, w.c, kafka, w.p, "flink", w.clusters); !errors.Is(err, verify.ErrGroupOffsets) {
		t.Errorf("StopForRollback with another commit in the group = %v, want ErrGroupOffsets", err)
	}
	if st, err := w.c.Status(ctx, w.p.ConnectorName); err != nil || st.Connector.State != connect.StateRunning {
		t.Fatalf("the refused rollbacks stopped the connector: %v, %v", st, err)
	}

	kafka.Commits["flink"] = offsets.GroupOffsets{o: 10} // the old job's own commit
	if err := verify.StopForRollback(ctx, w.c, kafka, w.p, "flink", w.clusters); err != nil {
		t.Fatal(err)
	}
	if _, err := w.c.WaitStopped(ctx, w.p.ConnectorName); err != nil {
		t.Fatal(err)
	}
	got, err := w.c.SettledMirrorOffsets(ctx, w.p.ConnectorName)
	if err != nil {
		t.Fatal(err)
	}
	reverse, err := verify.ReversePlan(ctx, w.c, kafka, kafka, w.p, got, w.clusters, verify.ReverseSpec{CreatedAt: time.Now(), Group: "flink"})
	if err != nil {
		t.Fatal(err)
	}
	n, err := verify.CommitReverse(ctx, w.c, kafka, w.p, reverse, w.clusters)
	if err != nil || n != 2 {
		t.Fatalf("CommitReverse = %d, %v; want 2 partitions", n, err)
	}
	// MM2 copied nothing here (the fake runs no task): C' is C.
	if want := (offsets.GroupOffsets{o: 10, p0: 3}); !equalGroup(kafka.Commits["flink"], want) {
		t.Errorf("group after the rollback = %v, want %v", kafka.Commits["flink"], want)
	}
}

func equalGroup(a, b offsets.GroupOffsets) bool {
	if len(a) != len(b) {
		return false
	}
	for tp, c := range a {
		if b[tp] != c {
			return false
		}
	}
	return true
}

// exampleWorld is what the step examples run against: a fake Connect
// worker, the source and target clusters in memory, as connectorPlan's plan
// saw them (group flink at orders.eu-0 10 and payments-0 3), the plan, and
// the connector configuration it was built with.
func exampleWorld() (*connectfake.Server, *kafkafake.Cluster, *kafkafake.Cluster, *plan.Plan, map[string]string) {
	p, config, err := buildConnectorPlan()
	if err != nil {
		panic(err)
	}
	o, p0 := offsets.SourcePartition{Topic: "orders.eu", Partition: 0}, offsets.SourcePartition{Topic: "payments", Partition: 0}
	source := kafkafake.New("src-id")
	source.Commits["flink"] = offsets.GroupOffsets{o: 10, p0: 3}
	source.Produce(o, 0, 20, nil)
	source.Produce(p0, 0, 3, nil)
	target := kafkafake.New("tgt-id")
	policy, err := offsets.PolicyOf(config())
	if err != nil {
		panic(err)
	}
	for tp, end := range map[offsets.SourcePartition]int64{o: 10, p0: 3} {
		tt, err := policy.TargetTopic(tp.Topic)
		if err != nil {
			panic(err)
		}
		target.Partitions[tt] = 1
		target.Bounds[offsets.SourcePartition{Topic: tt}] = offsets.LogBounds{End: end, StableEnd: end}
	}
	return connectfake.New(), source, target, p, config()
}

// exampleApplied is exampleWorld with the plan applied, and resumed when
// resume is true: where the resume and rollback examples start.
func exampleApplied(resume bool) (*connectfake.Server, *kafkafake.Cluster, *kafkafake.Cluster, *plan.Plan, map[string]string) {
	worker, source, target, p, config := exampleWorld()
	ctx := context.Background()
	c, err := connect.New(worker.URL())
	if err == nil {
		_, err = verify.CreateOrAdopt(ctx, c, p, config, verify.Clusters{Source: "src-id", Target: "tgt-id"})
	}
	if err == nil {
		err = c.RequireStopped(ctx, p.ConnectorName)
	}
	if err == nil {
		_, err = verify.Patch(ctx, c, p, verify.Clusters{Source: "src-id", Target: "tgt-id"})
	}
	if err == nil {
		_, err = verify.ReadBack(ctx, c, p)
	}
	if err == nil && resume {
		if err = c.Resume(ctx, p.ConnectorName); err == nil {
			_, err = c.WaitRunning(ctx, p.ConnectorName)
		}
	}
	if err != nil {
		panic(err)
	}
	return worker, source, target, p, config
}

// TestPatchBodyIsWhatPatchSends pins the one codec of the PATCH body: the
// bytes Patch sends (through AlterMirrorOffsets) are plan.PatchBody's.
func TestPatchBodyIsWhatPatchSends(t *testing.T) {
	p, config := connectorPlan(t)
	fake := connectfake.New()
	defer fake.Close()
	var sent []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch {
			sent, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(sent))
		}
		fake.ServeHTTP(w, r)
	}))
	defer srv.Close()
	c, err := connect.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx, clusters := stepsCtx(t), verify.Clusters{Source: "src-id", Target: "tgt-id"}
	if _, err := verify.CreateOrAdopt(ctx, c, p, config(), clusters); err != nil {
		t.Fatal(err)
	}
	if err := c.RequireStopped(ctx, p.ConnectorName); err != nil {
		t.Fatal(err)
	}
	if _, err := verify.Patch(ctx, c, p, clusters); err != nil {
		t.Fatal(err)
	}
	want, err := p.PatchBody()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sent, want) {
		t.Errorf("PATCH sent\n%s\nplan.PatchBody renders\n%s", sent, want)
	}
}

// TestRecheckRecent: an observation moments old serves again with the
// group's members read anew; an older one is not used.
func TestRecheckRecent(t *testing.T) {
	worker, source, target, p, _ := exampleWorld()
	defer worker.Close()
	ctx := stepsCtx(t)
	obs, err := verify.Observe(ctx, source, target, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if reused, err := verify.RecheckRecent(ctx, source, p, nil, time.Now()); reused || err != nil {
		t.Errorf("RecheckRecent without an observation = %v, %v; want not reused", reused, err)
	}
	if reused, err := verify.RecheckRecent(ctx, source, p, &obs, obs.At.Add(verify.ObservationReuse)); reused || err != nil {
		t.Errorf("RecheckRecent of an old observation = %v, %v; want not reused", reused, err)
	}
	if reused, err := verify.RecheckRecent(ctx, source, p, &obs, obs.At.Add(time.Second)); !reused || err != nil {
		t.Errorf("RecheckRecent a second later = %v, %v; want reused, nil", reused, err)
	}
	source.Members["flink"] = 1 // the old job came back
	if reused, err := verify.RecheckRecent(ctx, source, p, &obs, obs.At.Add(time.Second)); !reused || !errors.Is(err, verify.ErrStalePlan) {
		t.Errorf("RecheckRecent with a member in the group = %v, %v; want reused, ErrStalePlan", reused, err)
	}
}
