package verify_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// testPlan has a set partition (C = 10), a cleared one (C = 0) and a
// blocked one (no commit).
func testPlan(t *testing.T) *plan.Plan {
	t.Helper()
	a0, a1, a2 := offsets.SourcePartition{Topic: "a", Partition: 0}, offsets.SourcePartition{Topic: "a", Partition: 1}, offsets.SourcePartition{Topic: "a", Partition: 2}
	p, err := plan.Build(plan.Spec{
		CreatedAt: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC), SourceClusterID: "src-id", TargetClusterID: "tgt-id",
		ConnectorName: "mm2", SourceAlias: "src", GroupID: "flink", ConnectorConfig: map[string]string{"source.cluster.alias": "src"},
	}, plan.Snapshot{
		Group:     offsets.GroupOffsets{a0: 10, a1: 0},
		Source:    map[offsets.SourcePartition]offsets.LogBounds{a0: {Start: 0, End: 20}, a1: {Start: 0, End: 8}, a2: {Start: 0, End: 5}},
		TargetEnd: map[offsets.SourcePartition]int64{a0: 10, a1: 0, a2: 5},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLag(t *testing.T) {
	p := testPlan(t)
	a0, a1 := offsets.SourcePartition{Topic: "a", Partition: 0}, offsets.SourcePartition{Topic: "a", Partition: 1}
	ends := map[offsets.SourcePartition]int64{a0: 30, a1: 8}
	for _, tc := range []struct {
		name string
		got  []offsets.ConnectOffset
		want []verify.PartitionLag
	}{
		{"just applied", []offsets.ConnectOffset{set("a", 0, 9)}, []verify.PartitionLag{
			{Partition: a0, Next: 10, End: 30, Lag: 20}, {Partition: a1, Next: 0, End: 8, Lag: 8}}},
		{"caught up", []offsets.ConnectOffset{set("a", 0, 29), set("a", 1, 7)}, []verify.PartitionLag{
			{Partition: a0, Next: 30, End: 30, Lag: 0}, {Partition: a1, Next: 8, End: 8, Lag: 0}}},
		{"offsets of another alias do not count", []offsets.ConnectOffset{{Partition: offsets.ConnectPartition{Cluster: "x", Topic: "a", Partition: 0}, Offset: offsets.NewMirrorOffset(29)}}, []verify.PartitionLag{
			{Partition: a0, Next: 10, End: 30, Lag: 20}, {Partition: a1, Next: 0, End: 8, Lag: 8}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := verify.Lag(p, ends, tc.got)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Lag (-want +got):\n%s", d)
			}
		})
	}
	if got := verify.TotalLag([]verify.PartitionLag{{Lag: 2}, {Lag: 3}}); got != 5 {
		t.Errorf("TotalLag = %d, want 5", got)
	}
}
