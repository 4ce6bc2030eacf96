package cutover

import (
	"context"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/kafkaadmin/kafkafake"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// TestEarlyCapture: a capture StartBoundaryCapture started records what
// the source held then (b-0 had no record at C), not what it holds by the
// resume; Resume takes it only while it is recent, and once.
func TestEarlyCapture(t *testing.T) {
	ctx := context.Background()
	a0, b0 := offsets.SourcePartition{Topic: "a", Partition: 0}, offsets.SourcePartition{Topic: "b", Partition: 0}
	source := kafkafake.New("src")
	source.Produce(a0, 0, 10, nil)
	source.Produce(b0, 0, 5, nil)
	p, err := plan.Build(plan.Spec{CreatedAt: time.Now(), SourceClusterID: "src", TargetClusterID: "tgt", ConnectorName: "c", SourceAlias: "source", GroupID: "g",
		ConnectorConfig: map[string]string{"topics": "a,b", "replication.policy.class": offsets.IdentityPolicyClass}},
		plan.Snapshot{Group: offsets.GroupOffsets{a0: 4, b0: 5},
			Source:    map[offsets.SourcePartition]offsets.LogBounds{a0: {End: 10, StableEnd: 10}, b0: {End: 5, StableEnd: 5}},
			TargetEnd: map[offsets.SourcePartition]int64{a0: 4, b0: 5}})
	if err != nil {
		t.Fatal(err)
	}
	c := &Cutover{clients: Clients{Source: source}, plan: p}
	c.StartBoundaryCapture(ctx)
	early := c.capture
	records, err := early.wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	source.Produce(b0, 5, 6, nil) // after the read: a record at b-0's C
	if got := c.takeCapture(ctx, early.started.Add(time.Second)); got != early {
		t.Error("a capture a second old was not taken")
	}
	if c.capture != nil {
		t.Error("the Cutover keeps the capture after Resume took it")
	}
	if len(records) != 2 || records[0].Idle || records[0].Offset != 4 || !records[1].Idle {
		t.Errorf("captured %+v; want the early read: a-0 at 4, b-0 idle", records)
	}
	c.capture = early
	if got := c.takeCapture(ctx, early.started.Add(verify.ObservationReuse)); got == early {
		t.Error("a capture as old as verify.ObservationReuse was taken")
	} else if records, err := got.wait(ctx); err != nil || len(records) != 2 || records[1].Idle {
		t.Errorf("the new capture = %+v, %v; want b-0's record at C", records, err)
	}
}

// TestWithoutNoopDeletions: only for an exactly-once connector with an
// offsets topic of its own, the deletions of partitions that hold no
// offset are left out of the PATCH (Connect 3.8 to 4.3 cannot write them
// for such a connector); a deletion of a partition that holds one stays.
func TestWithoutNoopDeletions(t *testing.T) {
	part := func(n int32) offsets.ConnectPartition {
		return offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: n}
	}
	patch := []offsets.ConnectOffset{{Partition: part(0), Offset: offsets.NewMirrorOffset(41)}, {Partition: part(1)}, {Partition: part(2)}}
	held := []offsets.ConnectOffset{{Partition: part(2), Offset: offsets.NewMirrorOffset(7)}}
	eosOwn := map[string]string{"exactly.once.support": "required", "offsets.storage.topic": "orders-offsets"}
	for _, tc := range []struct {
		name   string
		config map[string]string
		want   int
	}{
		{"exactly-once, own offsets topic", eosOwn, 2},
		{"exactly-once, the workers' offsets topic", map[string]string{"exactly.once.support": "required"}, 3},
		{"at least once, own offsets topic", map[string]string{"offsets.storage.topic": "orders-offsets"}, 3},
	} {
		got := withoutNoopDeletions(tc.config, patch, held)
		if len(got) != tc.want {
			t.Errorf("%s: %v, want %d entries", tc.name, got, tc.want)
		}
	}
	if got := withoutNoopDeletions(eosOwn, patch, held); got[0] != patch[0] || got[1] != patch[2] {
		t.Errorf("kept %v, want the set offset and the deletion of a held partition", got)
	}
	if len(patch) != 3 {
		t.Error("the plan's list was changed")
	}
}
