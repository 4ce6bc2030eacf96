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

// TestLag pins the lag rule: it counts from the first committed record MM2
// has yet to copy to the last stable offset. A transaction's commit marker
// after MM2's last copied record is no lag, although the high watermark is
// past it (the rule the old "end - next" computation got wrong, which kept
// status at lag 1 forever on every transactional partition).
func TestLag(t *testing.T) {
	p := testPlan(t)
	a0, a1 := offsets.SourcePartition{Topic: "a", Partition: 0}, offsets.SourcePartition{Topic: "a", Partition: 1}
	bounds := func(end0, stable0, end1 int64) map[offsets.SourcePartition]offsets.LogBounds {
		return map[offsets.SourcePartition]offsets.LogBounds{a0: {End: end0, StableEnd: stable0}, a1: {End: end1, StableEnd: end1}}
	}
	for _, tc := range []struct {
		name    string
		got     []offsets.ConnectOffset
		bounds  map[offsets.SourcePartition]offsets.LogBounds
		pending map[offsets.SourcePartition]int64
		want    []verify.PartitionLag
	}{
		{"just applied", []offsets.ConnectOffset{set("a", 0, 9)}, bounds(30, 30, 8), map[offsets.SourcePartition]int64{a0: 10, a1: 0}, []verify.PartitionLag{
			{Partition: a0, Next: 10, End: 30, StableEnd: 30, Pending: 10, Lag: 20}, {Partition: a1, Next: 0, End: 8, StableEnd: 8, Pending: 0, Lag: 8}}},
		{"caught up", []offsets.ConnectOffset{set("a", 0, 29), set("a", 1, 7)}, bounds(30, 30, 8), nil, []verify.PartitionLag{
			{Partition: a0, Next: 30, End: 30, StableEnd: 30}, {Partition: a1, Next: 8, End: 8, StableEnd: 8}}},
		{"a commit marker after the last copied record is no lag", []offsets.ConnectOffset{set("a", 0, 28), set("a", 1, 7)}, bounds(30, 30, 8), nil, []verify.PartitionLag{
			{Partition: a0, Next: 29, End: 30, StableEnd: 30}, {Partition: a1, Next: 8, End: 8, StableEnd: 8}}},
		{"records behind a marker are lag", []offsets.ConnectOffset{set("a", 0, 20), set("a", 1, 7)}, bounds(30, 30, 8), map[offsets.SourcePartition]int64{a0: 22}, []verify.PartitionLag{
			{Partition: a0, Next: 21, End: 30, StableEnd: 30, Pending: 22, Lag: 8}, {Partition: a1, Next: 8, End: 8, StableEnd: 8}}},
		{"an open transaction counts to the last stable offset", []offsets.ConnectOffset{set("a", 0, 20), set("a", 1, 7)}, bounds(30, 25, 8), map[offsets.SourcePartition]int64{a0: 21}, []verify.PartitionLag{
			{Partition: a0, Next: 21, End: 30, StableEnd: 25, Pending: 21, Lag: 4}, {Partition: a1, Next: 8, End: 8, StableEnd: 8}}},
		{"offsets of another alias do not count", []offsets.ConnectOffset{{Partition: offsets.ConnectPartition{Cluster: "x", Topic: "a", Partition: 0}, Offset: offsets.NewMirrorOffset(29)}},
			bounds(30, 30, 8), map[offsets.SourcePartition]int64{a0: 10, a1: 0}, []verify.PartitionLag{
				{Partition: a0, Next: 10, End: 30, StableEnd: 30, Pending: 10, Lag: 20}, {Partition: a1, Next: 0, End: 8, StableEnd: 8, Pending: 0, Lag: 8}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := verify.Lag(p, verify.NextOffsets(p, tc.got), tc.bounds, tc.pending)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Lag (-want +got):\n%s", d)
			}
		})
	}
	if got := verify.TotalLag([]verify.PartitionLag{{Lag: 2}, {Lag: 3}}); got != 5 {
		t.Errorf("TotalLag = %d, want 5", got)
	}
}

func set(topic string, p int32, m int64) offsets.ConnectOffset {
	return offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "src", Topic: topic, Partition: p}, Offset: offsets.NewMirrorOffset(m)}
}

func TestProgressOf(t *testing.T) {
	for _, tc := range []struct {
		prevNext, prevLag, next, lag int64
		want                         verify.Progress
		ok                           bool
	}{
		{0, 0, 10, 5, verify.Progress{}, false}, // nothing to compare with
		{10, 5, 15, 0, verify.Progress{Moved: 5, Advancing: true}, true},
		{10, 5, 10, 5, verify.Progress{Stalled: true}, true}, // lag, no move
		{10, 0, 10, 0, verify.Progress{}, true},              // caught up, idle
		{10, 5, 10, 0, verify.Progress{}, true},              // lag gone without a move: not stalled
		{10, 0, 10, 3, verify.Progress{}, true},              // lag just appeared
	} {
		got, ok := verify.ProgressOf(tc.prevNext, tc.prevLag, tc.next, tc.lag)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ProgressOf(%d, %d, %d, %d) = %+v, %v; want %+v, %v", tc.prevNext, tc.prevLag, tc.next, tc.lag, got, ok, tc.want, tc.ok)
		}
	}
}
