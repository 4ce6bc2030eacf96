package cutover_test

import (
	"context"
	"strconv"
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

// TestSequenceOnSandbox runs a Cutover's steps on real Kafka and a real
// worker with the real MirrorSourceConnector: a plan built by the precheck
// from a group at C = 3 of 5 records (the old job copied r0-r2); applied
// twice; resumed, after which MM2 copies r3 and r4 and nothing else;
// verified; rolled back, after which the group holds C' = 5.
func TestSequenceOnSandbox(t *testing.T) {
	sb := sandboxtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	source, err := kafkaadmin.NewClient(kafkaadmin.Config{BootstrapServers: []string{sb.Source().Bootstrap()}})
	if err != nil {
		t.Fatal(err)
	}
	target, err := kafkaadmin.NewClient(kafkaadmin.Config{BootstrapServers: []string{sb.Target().Bootstrap()}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := connect.New(sb.ConnectURL())
	if err != nil {
		t.Fatal(err)
	}
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
