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

	_ verify.LagSource      = (*memCluster)(nil)
	_ verify.BoundarySource = (*memCluster)(nil)
)

// memCluster is an in-memory cluster of a tool's tests: per partition, its
// bounds and its committed data records in offset order. An offset below
// the last stable offset that holds no record is a transaction marker, an
// aborted record or a record removed by compaction, as a read_committed
// reader sees them.
type memCluster struct {
	bounds  map[kafkaadmin.TopicPartition]offsets.LogBounds
	records map[kafkaadmin.TopicPartition][]kafkaadmin.Record
}

func (c *memCluster) LogBounds(_ context.Context, tps []kafkaadmin.TopicPartition) (map[kafkaadmin.TopicPartition]offsets.LogBounds, error) {
	out := make(map[kafkaadmin.TopicPartition]offsets.LogBounds, len(tps))
	errs := make(map[kafkaadmin.TopicPartition]error)
	for _, tp := range tps {
		if b, ok := c.bounds[tp]; ok {
			out[tp] = b
		} else {
			errs[tp] = kafkaadmin.ErrUnknownTopic
		}
	}
	if len(errs) > 0 {
		return out, &kafkaadmin.PartitionErrors{Op: "LogBounds", Total: len(tps), Errs: errs}
	}
	return out, nil
}

// EndOffsets is LogBounds' End.
func (c *memCluster) EndOffsets(ctx context.Context, tps []kafkaadmin.TopicPartition) (map[kafkaadmin.TopicPartition]int64, error) {
	bounds, err := c.LogBounds(ctx, tps)
	out := make(map[kafkaadmin.TopicPartition]int64, len(bounds))
	for tp, b := range bounds {
		out[tp] = b.End
	}
	return out, err
}

// span returns the committed records of tp in [from, until), until capped
// at the last stable offset.
func (c *memCluster) span(tp kafkaadmin.TopicPartition, from, until int64) []kafkaadmin.Record {
	until = min(until, c.bounds[tp].StableEnd)
	var out []kafkaadmin.Record
	for _, r := range c.records[tp] {
		if r.Offset >= from && r.Offset < until {
			out = append(out, r)
		}
	}
	return out
}

func (c *memCluster) FirstRecords(_ context.Context, from map[kafkaadmin.TopicPartition]int64, iso kafkaadmin.Isolation) (map[kafkaadmin.TopicPartition]kafkaadmin.Record, error) {
	if iso != kafkaadmin.ReadCommitted {
		return nil, fmt.Errorf("memCluster reads read_committed only")
	}
	out := make(map[kafkaadmin.TopicPartition]kafkaadmin.Record)
	for tp, off := range from {
		if recs := c.span(tp, off, 1<<62); len(recs) > 0 {
			out[tp] = recs[0]
		}
	}
	return out, nil
}

func (c *memCluster) ReadSpans(_ context.Context, spans map[kafkaadmin.TopicPartition]kafkaadmin.Span, iso kafkaadmin.Isolation) (map[kafkaadmin.TopicPartition][]kafkaadmin.Record, error) {
	if iso != kafkaadmin.ReadCommitted {
		return nil, fmt.Errorf("memCluster reads read_committed only")
	}
	out := make(map[kafkaadmin.TopicPartition][]kafkaadmin.Record)
	for tp, sp := range spans {
		if recs := c.span(tp, sp.From, sp.Until); len(recs) > 0 {
			out[tp] = recs
		}
	}
	return out, nil
}

// produce appends a record per offset of [from, until) to tp, the copies
// of src's records at [srcFrom, ...) when src is not nil, and moves the
// partition's end and last stable offset to until.
func (c *memCluster) produce(tp kafkaadmin.TopicPartition, from, until int64, src []kafkaadmin.Record) {
	for off := from; off < until; off++ {
		r := kafkaadmin.Record{Offset: off, Key: fmt.Appendf(nil, "k%d", off), Value: fmt.Appendf(nil, "v%d", off), Timestamp: time.Unix(1_700_000_000+off, 0)}
		if src != nil {
			r = src[off-from]
			r.Offset = off
		}
		c.records[tp] = append(c.records[tp], r)
	}
	b := c.bounds[tp]
	b.End, b.StableEnd = until, until
	c.bounds[tp] = b
}

func newMemCluster() *memCluster {
	return &memCluster{bounds: map[kafkaadmin.TopicPartition]offsets.LogBounds{}, records: map[kafkaadmin.TopicPartition][]kafkaadmin.Record{}}
}

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
	source := newMemCluster()
	source.produce(a0, 0, 20, nil)
	source.bounds[a0] = offsets.LogBounds{End: 21, StableEnd: 21} // 20 is the marker
	source.produce(a1, 0, 8, nil)
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
	delete(source.bounds, a1)
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
			source, target := newMemCluster(), newMemCluster()
			source.produce(a0, 0, 20, nil)
			source.produce(a1, 0, 8, nil)
			target.produce(a0, 0, 12, source.records[a0][:12]) // the old job, two records past C
			capture, err := verify.CaptureBoundary(ctx, source, p)
			if err != nil {
				t.Fatal(err)
			}
			if len(capture) != 2 || capture[0].Offset != 10 || capture[0].Digest == nil {
				t.Fatalf("CaptureBoundary = %+v, want a-0's record 10 first", capture)
			}
			target.produce(a0, 12, 12+20-tc.mm2From, source.records[a0][tc.mm2From:]) // MM2
			target.produce(a1, 0, 8, source.records[a1])

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
