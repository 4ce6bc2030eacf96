package cutover_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/cutover"
	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

func TestMain(m *testing.M) { sandboxtest.Main(m) }

// sandboxClients returns clients of the sandbox's two clusters and its
// Connect cluster.
func sandboxClients(t *testing.T, sb *sandbox.Sandbox) (source, target *kafkaadmin.Client, c *connect.Client) {
	t.Helper()
	var err error
	if source, err = kafkaadmin.NewClient(kafkaadmin.Config{BootstrapServers: []string{sb.Source().Bootstrap()}}); err != nil {
		t.Fatal(err)
	}
	if target, err = kafkaadmin.NewClient(kafkaadmin.Config{BootstrapServers: []string{sb.Target().Bootstrap()}}); err != nil {
		t.Fatal(err)
	}
	if c, err = connect.New(sb.ConnectURL()); err != nil {
		t.Fatal(err)
	}
	return source, target, c
}

// TestSequenceOnSandbox runs a Cutover's steps on real Kafka and a real
// worker with the real MirrorSourceConnector: a plan built by the precheck
// from a group at C = 3 of 5 records (the old job copied r0-r2); applied
// twice; resumed, after which MM2 copies r3 and r4 and nothing else;
// verified; rolled back, after which the group holds C' = 5.
func TestSequenceOnSandbox(t *testing.T) {
	sb := sandboxtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	source, target, c := sandboxClients(t, sb)
	suffix := strconv.FormatInt(time.Now().UnixNano()%1_000_000_000, 36)
	topic, group, name := "seq-"+suffix, "seq-flink-"+suffix, "seq-"+suffix
	for _, b := range []string{sb.Source().Bootstrap(), sb.Target().Bootstrap()} {
		if err := sandbox.CreateTopic(ctx, b, topic, 1); err != nil {
			t.Fatal(err)
		}
	}
	tp := kafkaadmin.TopicPartition{Topic: topic, Partition: 0}
	produce := func(bootstrap string, values ...string) {
		var msgs []*sarama.ProducerMessage
		for _, v := range values {
			msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder("k-" + v), Value: sarama.StringEncoder(v)})
		}
		if err := sandbox.Produce(ctx, bootstrap, msgs); err != nil {
			t.Fatal(err)
		}
	}
	produce(sb.Source().Bootstrap(), "r0", "r1", "r2", "r3", "r4")
	produce(sb.Target().Bootstrap(), "r0", "r1", "r2")
	if err := source.CommitOffsets(ctx, group, map[kafkaadmin.TopicPartition]int64{tp: 3}); err != nil {
		t.Fatal(err)
	}
	config, err := connect.MirrorSource{Name: name, SourceBootstrap: sb.Source().Bootstrap(), TargetBootstrap: sb.Target().Bootstrap(),
		Topics: []string{topic}}.Config()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), name) })

	r, err := verify.Precheck(ctx, c, source, target, verify.PrecheckSpec{
		Group: group, Topics: []string{topic}, StabilityWindow: 2 * time.Second, Config: config, Connector: name,
	})
	if err == nil {
		err = r.Blocking()
	}
	if err != nil {
		t.Fatalf("precheck: %v", err)
	}
	snap, err := r.PlanSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(plan.Spec{CreatedAt: time.Now(), ToolVersion: "test", SourceClusterID: r.SourceClusterID,
		TargetClusterID: r.TargetClusterID, ConnectorName: name, SourceAlias: "source", ConnectorConfig: config, GroupID: group}, snap)
	if err != nil {
		t.Fatal(err)
	}

	rec := &recorder{}
	ct, err := cutover.Open(ctx, cutover.Clients{Connect: c, Source: source, Target: target}, p, config, cutover.Options{
		Record:  rec.record,
		Approve: func(context.Context, cutover.Intent) (bool, error) { return true, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	ct.WithObservation(r.Observation())
	for i := range 2 {
		if _, err := ct.Apply(ctx); err != nil {
			t.Fatalf("apply %d: %v (%s)", i+1, err, errkind.Of(err))
		}
	}
	got, err := c.MirrorOffsets(ctx, name)
	if want := (offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "source", Topic: topic}, Offset: offsets.NewMirrorOffset(2)}); err != nil || len(got) != 1 || got[0] != want {
		t.Fatalf("after the apply Connect holds %+v (%v), want %+v", got, err, want)
	}
	if _, err := ct.Resume(ctx); err != nil {
		t.Fatalf("resume: %v (%s)", err, errkind.Of(err))
	}
	rep, err := ct.Verify(ctx, nil)
	if err != nil || !rep.OK || !rep.Captured {
		t.Fatalf("verify: %+v, %v", rep, err)
	}
	ends, err := target.EndOffsets(ctx, []kafkaadmin.TopicPartition{tp})
	if err != nil || ends[tp] != 5 {
		t.Errorf("target end %v (%v) after MM2 caught up, want 5: nothing lost, nothing copied twice", ends[tp], err)
	}
	// MM2 commits its offsets every offset.flush.interval.ms: roll back
	// once it stored M' = 4, so that C' is 5.
	for {
		got, err := c.MirrorOffsets(ctx, name)
		if err == nil && len(got) == 1 && got[0].Offset == offsets.NewMirrorOffset(4) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("MM2 stored %+v (%v), want offset 4", got, err)
		}
		time.Sleep(time.Second)
	}
	if _, err := ct.Rollback(ctx, group); err != nil {
		t.Fatalf("rollback: %v (%s)", err, errkind.Of(err))
	}
	g, err := source.GroupOffsets(ctx, group, []string{topic})
	if err != nil || g[offsets.SourcePartition{Topic: topic, Partition: 0}] != 5 {
		t.Fatalf("the group after the rollback: %v, %v; want C' = 5", g, err)
	}
	t.Logf("record: %v", rec.entries)
}

// TestT41RacingAppliesOfDifferentPlans: two plans for one connector (the
// old job's group at C = 3, then at C = 4) applied at once both reported
// success, and the connector held whichever PATCH came last. Creating the
// connector is the one write Connect makes atomic: the apply that creates
// it records its plan's claim in the configuration, and the other plan's
// adopt, PATCH and resume are refused, on a real worker, in the
// interleaving that let both through (both create-or-adopt, both guard,
// then both PATCH), and when the two applies race. Rolled back before
// resume with the plan that created it, the connector takes the other.
func TestT41RacingAppliesOfDifferentPlans(t *testing.T) {
	sb := sandboxtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	source, target, c := sandboxClients(t, sb)
	suffix := strconv.FormatInt(time.Now().UnixNano()%1_000_000_000, 36)
	topic, group := "race-"+suffix, "race-flink-"+suffix
	for _, b := range []string{sb.Source().Bootstrap(), sb.Target().Bootstrap()} {
		if err := sandbox.CreateTopic(ctx, b, topic, 1); err != nil {
			t.Fatal(err)
		}
	}
	var msgs []*sarama.ProducerMessage
	for i := range 5 {
		msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder("r" + strconv.Itoa(i))})
	}
	if err := sandbox.Produce(ctx, sb.Source().Bootstrap(), msgs); err != nil {
		t.Fatal(err)
	}
	tp := kafkaadmin.TopicPartition{Topic: topic, Partition: 0}
	// planAt builds, for connector name, the plan of the group at C.
	planAt := func(name string, committed int64) (*plan.Plan, map[string]string, verify.Observation) {
		t.Helper()
		if err := source.CommitOffsets(ctx, group, map[kafkaadmin.TopicPartition]int64{tp: committed}); err != nil {
			t.Fatal(err)
		}
		config, err := connect.MirrorSource{Name: name, SourceBootstrap: sb.Source().Bootstrap(), TargetBootstrap: sb.Target().Bootstrap(),
			Topics: []string{topic}}.Config()
		if err != nil {
			t.Fatal(err)
		}
		r, err := verify.Precheck(ctx, c, source, target, verify.PrecheckSpec{
			Group: group, Topics: []string{topic}, StabilityWindow: time.Second, Config: config, Connector: name,
		})
		if err == nil {
			err = r.Blocking()
		}
		if err != nil {
			t.Fatalf("precheck at C = %d: %v", committed, err)
		}
		snap, err := r.PlanSnapshot()
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Build(plan.Spec{CreatedAt: time.Now(), ToolVersion: "test", SourceClusterID: r.SourceClusterID,
			TargetClusterID: r.TargetClusterID, ConnectorName: name, SourceAlias: "source", ConnectorConfig: config, GroupID: group}, snap)
		if err != nil {
			t.Fatal(err)
		}
		return p, config, r.Observation()
	}
	holds := func(name string, m int64) {
		t.Helper()
		got, err := c.MirrorOffsets(ctx, name)
		want := offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "source", Topic: topic}, Offset: offsets.NewMirrorOffset(m)}
		if err != nil || len(got) != 1 || got[0] != want {
			t.Errorf("connector %s holds %+v (%v), want %+v", name, got, err, want)
		}
	}
	otherPlan := func(err error) bool {
		var fe *verify.ForeignConnectorError
		return errors.As(err, &fe) && fe.Check == "plan" && errkind.Of(err) == errkind.Refused
	}

	// The interleaving, piece by piece: A creates, B adopts, both guard,
	// both PATCH.
	name := "race-" + suffix
	t.Cleanup(func() { _ = c.Delete(context.Background(), name) })
	pa, config, _ := planAt(name, 3)
	pb, _, _ := planAt(name, 4)
	if pa.Claim() == pb.Claim() {
		t.Fatal("two plans with different offsets have one claim")
	}
	reached, err := verify.ReadClusters(ctx, source, target)
	if err != nil {
		t.Fatal(err)
	}
	if created, err := cutover.CreateOrAdopt(ctx, c, pa, config, reached); !created || err != nil {
		t.Fatalf("A: CreateOrAdopt = %v, %v; want created", created, err)
	}
	if _, err := cutover.CreateOrAdopt(ctx, c, pb, config, reached); !otherPlan(err) {
		t.Errorf("B: CreateOrAdopt of A's connector = %v; want a refusal naming another plan", err)
	}
	ga, err := verify.GuardOffsets(ctx, c, pa)
	if err != nil {
		t.Fatal(err)
	}
	gb, err := verify.GuardOffsets(ctx, c, pb)
	if err != nil || gb.Action() != plan.GuardApply {
		t.Fatalf("B's guard before any PATCH = %v, %v; want apply (it sees no offset)", gb.Action(), err)
	}
	if _, err := cutover.Patch(ctx, c, ga, reached); err != nil {
		t.Fatalf("A's PATCH: %v", err)
	}
	if _, err := cutover.Patch(ctx, c, gb, reached); !otherPlan(err) {
		t.Errorf("B's PATCH of A's connector = %v; want a refusal naming another plan", err)
	}
	holds(name, 2)

	// The two applies at once, on a connector of their own: at most one
	// reports success, and the connector holds its plan's offsets.
	raced := name + "-b"
	t.Cleanup(func() { _ = c.Delete(context.Background(), raced) })
	qa, qconfig, obsA := planAt(raced, 3)
	qb, _, obsB := planAt(raced, 4)
	cuts := make([]*cutover.Cutover, 2)
	for i, x := range []struct {
		p   *plan.Plan
		obs verify.Observation
	}{{qa, obsA}, {qb, obsB}} {
		cuts[i], err = cutover.Open(ctx, cutover.Clients{Connect: c, Source: source, Target: target}, x.p, qconfig, cutover.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cuts[i].WithObservation(x.obs)
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range cuts {
		wg.Go(func() { _, errs[i] = cuts[i].Apply(ctx) })
	}
	wg.Wait()
	t.Logf("racing applies: A %v; B %v", errs[0], errs[1])
	switch {
	case errs[0] == nil && errs[1] == nil:
		t.Errorf("both racing applies reported success")
	case errs[0] == nil:
		holds(raced, 2)
	case errs[1] == nil:
		holds(raced, 3)
	}

	// Rolled back before resume with A's plan, the connector is B's to
	// apply.
	approve := cutover.Options{Approve: func(context.Context, cutover.Intent) (bool, error) { return true, nil }}
	ca, err := cutover.Open(ctx, cutover.Clients{Connect: c, Source: source, Target: target}, pa, config, approve)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Rollback(ctx, ""); err != nil {
		t.Fatalf("A's rollback before resume: %v", err)
	}
	cb, err := cutover.Open(ctx, cutover.Clients{Connect: c, Source: source, Target: target}, pb, config, approve)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cb.Apply(ctx); err != nil {
		t.Fatalf("B's apply after A's rollback: %v", err)
	}
	holds(name, 3)
}
