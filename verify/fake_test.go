package verify_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/kafkaadmin/kafkafake"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// The clients implement the interfaces the I/O helpers take.
var (
	_ verify.BoundsReader         = (*kafkaadmin.Client)(nil)
	_ verify.EndsReader           = (*kafkaadmin.Client)(nil)
	_ verify.FirstRecordReader    = (*kafkaadmin.Client)(nil)
	_ verify.RecordReader         = (*kafkaadmin.Client)(nil)
	_ verify.BoundarySource       = (*kafkaadmin.Client)(nil)
	_ verify.LagSource            = (*kafkaadmin.Client)(nil)
	_ verify.ClusterReader        = (*kafkaadmin.Client)(nil)
	_ verify.ConnectOffsetsReader = (*kafkaadmin.Client)(nil)
	_ verify.MirrorOffsetsReader  = (*connect.Client)(nil)

	_ verify.LagSource      = (*kafkafake.Cluster)(nil)
	_ verify.BoundarySource = (*kafkafake.Cluster)(nil)
)

// memConnect answers MirrorOffsets with the next of its readings, then
// the last one again: MM2 making progress.
type memConnect struct {
	mu       sync.Mutex
	readings [][]offsets.ConnectOffset
	calls    int
}

func (c *memConnect) MirrorOffsets(_ context.Context, connector string) ([]offsets.ConnectOffset, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if connector != "mm2" {
		return nil, fmt.Errorf("no connector %s", connector)
	}
	r := c.readings[min(c.calls, len(c.readings)-1)]
	c.calls++
	return r, nil
}

// TestLagWithFakes drives ReadLag and WaitCaughtUp with in-memory fakes:
// a source whose a-0 ends with a transaction's commit marker, and a Connect
// whose stored offsets advance at each read.
func TestLagWithFakes(t *testing.T) {
	p := testPlan(t) // a-0 set (C = 10), a-1 cleared, a-2 blocked
	a0, a1 := offsets.SourcePartition{Topic: "a", Partition: 0}, offsets.SourcePartition{Topic: "a", Partition: 1}
	source := kafkafake.New("")
	source.Produce(a0, 0, 20, nil)
	source.Bounds[a0] = offsets.LogBounds{End: 21, StableEnd: 21} // 20 is the marker
	source.Produce(a1, 0, 8, nil)
	mm2 := &memConnect{readings: [][]offsets.ConnectOffset{
		{set("a", 0, 9)},
		{set("a", 0, 15), set("a", 1, 3)},
		{set("a", 0, 19), set("a", 1, 7)},
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	got, err := verify.ReadLag(ctx, mm2, source, p, "mm2")
	if err != nil {
		t.Fatal(err)
	}
	want := []verify.PartitionLag{
		{Partition: a0, Next: 10, End: 21, StableEnd: 21, Pending: 10, Lag: 11},
		{Partition: a1, Next: 0, End: 8, StableEnd: 8, Pending: 0, Lag: 8},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ReadLag (-want +got):\n%s", d)
	}

	res, err := verify.WaitCaughtUp(ctx, mm2, source, p, "mm2", nil)
	if err != nil || !res.Reached {
		t.Fatalf("WaitCaughtUp = %+v, %v; want reached", res, err)
	}
	var totals []int64
	for _, s := range res.Samples {
		totals = append(totals, s.Total)
	}
	// The marker at 20 is no lag: MM2 stored 19, the last data record.
	if d := cmp.Diff([]int64{9, 0}, totals); d != "" {
		t.Errorf("lag samples (-want +got):\n%s", d)
	}

	// A source that cannot read a partition fails the lag.
	delete(source.Bounds, a1)
	if _, err := verify.LagOf(ctx, source, p, nil); err == nil {
		t.Error("LagOf with an unreadable partition: no error")
	}
}

// TestBoundaryWithFakes drives CaptureBoundary and CheckBoundary with
// in-memory source and target clusters: the old job copied two records
// past its commit (duplicates, not a loss), and MM2 either starts at C or,
// in the failing case, one record late.
func TestBoundaryWithFakes(t *testing.T) {
	a0, a1 := offsets.SourcePartition{Topic: "a", Partition: 0}, offsets.SourcePartition{Topic: "a", Partition: 1}
	p, err := plan.Build(plan.Spec{
		CreatedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), SourceClusterID: "src-id", TargetClusterID: "tgt-id",
		ConnectorName: "mm2", SourceAlias: "src", GroupID: "flink", ConnectorConfig: map[string]string{"source.cluster.alias": "src", "replication.policy.class": offsets.IdentityPolicyClass},
	}, plan.Snapshot{
		Group:     offsets.GroupOffsets{a0: 10, a1: 0},
		Source:    map[offsets.SourcePartition]offsets.LogBounds{a0: {End: 20}, a1: {End: 8}},
		TargetEnd: map[offsets.SourcePartition]int64{a0: 12, a1: 0},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range []struct {
		name    string
		mm2From int64 // the first source offset MM2 copies on a-0
		ok      bool
	}{
		{"MM2 starts at C", 10, true},
		{"MM2 starts one record late", 11, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			source, target := kafkafake.New(""), kafkafake.New("")
			source.Produce(a0, 0, 20, nil)
			source.Produce(a1, 0, 8, nil)
			target.Produce(a0, 0, 12, source.Records[a0][:12]) // the old job, two records past C
			capture, err := verify.CaptureBoundary(ctx, source, p)
			if err != nil {
				t.Fatal(err)
			}
			if len(capture) != 2 || capture[0].Offset != 10 || capture[0].Digest == nil {
				t.Fatalf("CaptureBoundary = %+v, want a-0's record 10 first", capture)
			}
			target.Produce(a0, 12, 12+20-tc.mm2From, source.Records[a0][tc.mm2From:]) // MM2
			target.Produce(a1, 0, 8, source.Records[a1])

			got, err := verify.CheckBoundary(ctx, source, target, p, capture, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].OK() != tc.ok || !got[1].OK() {
				t.Fatalf("CheckBoundary = %+v; want a-0 OK %v, a-1 OK", got, tc.ok)
			}
			if tc.ok && (got[0].Duplicates != 2 || got[0].RecordOffset != 10 || !got[0].Captured) {
				t.Errorf("a-0 = %+v; want record 10, captured, 2 duplicates", got[0])
			}
			if !tc.ok && len(got[0].Differences) == 0 {
				t.Errorf("a-0 = %+v; want the differences named", got[0])
			}
		})
	}
}
