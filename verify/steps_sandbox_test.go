package verify_test

import (
	"context"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// TestExampleStepsOnSandbox runs the examples' apply, resume and rollback
// (applyPlan, resumePlan, rollbackPlan) as they are, on real Kafka and a
// real worker with the real MirrorSourceConnector: a plan built by the
// precheck from a group at C = 3 of 5 records (the old job copied r0-r2);
// applied twice; resumed, after which MM2 copies r3 and r4 and nothing
// else; rolled back, after which the group holds C' = 5.
func TestExampleStepsOnSandbox(t *testing.T) {
	sb := sandboxtest.Shared(t)
	source, target := clients(t, sb)
	c, err := connect.New(sb.ConnectURL())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	topic, group, name := unique("steps"), unique("steps-flink"), unique("steps")
	for _, b := range []string{sb.Source().Bootstrap(), sb.Target().Bootstrap()} {
		if err := sandbox.CreateTopic(ctx, b, topic, 1); err != nil {
			t.Fatal(err)
		}
	}
	tp := kafkaadmin.TopicPartition{Topic: topic, Partition: 0}
	produce(ctx, t, sb.Source().Bootstrap(), topic, "r0", "r1", "r2", "r3", "r4")
	produce(ctx, t, sb.Target().Bootstrap(), topic, "r0", "r1", "r2")
	if err := source.CommitOffsets(ctx, group, map[kafkaadmin.TopicPartition]int64{tp: 3}); err != nil {
		t.Fatal(err)
	}
	config := mirrorConfig(sb, name, topic)
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

	for i := range 2 {
		if err := applyPlan(ctx, c, source, target, p, config); err != nil {
			t.Fatalf("apply %d: %v (%s)", i+1, err, errkind.Of(err))
		}
	}
	got, err := c.MirrorOffsets(ctx, name)
	if want := (offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "source", Topic: topic}, Offset: offsets.NewMirrorOffset(2)}); err != nil || len(got) != 1 || got[0] != want {
		t.Fatalf("after the apply Connect holds %+v (%v), want %+v", got, err, want)
	}
	if err := resumePlan(ctx, c, source, target, p, config); err != nil {
		t.Fatalf("resume: %v (%s)", err, errkind.Of(err))
	}
	for {
		ends, err := target.EndOffsets(ctx, []kafkaadmin.TopicPartition{tp})
		if err != nil {
			t.Fatal(err)
		}
		if ends[tp] >= 5 {
			if ends[tp] != 5 {
				t.Errorf("target end %d after the resume, want 5: MM2 copied a record twice", ends[tp])
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("MM2 copied up to end offset %d of 5", ends[tp])
		}
		time.Sleep(500 * time.Millisecond)
	}
	// MM2 commits its offsets every offset.flush.interval.ms: roll back
	// once it stored M' = 4, so that C' is 5 (before, C' would be 3 again
	// and r3, r4 copied twice by the old job).
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
	if err := rollbackPlan(ctx, c, source, target, p); err != nil {
		t.Fatalf("rollback: %v (%s)", err, errkind.Of(err))
	}
	g, err := source.GroupOffsets(ctx, group, []string{topic})
	if err != nil || g[offsets.SourcePartition{Topic: topic, Partition: 0}] != 5 {
		t.Fatalf("the group after the rollback: %v, %v; want C' = 5", g, err)
	}
}
