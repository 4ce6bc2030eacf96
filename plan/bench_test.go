package plan_test

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// BenchmarkBuildEncodeDecode100k builds, encodes and decodes a plan of
// 100,000 partitions (100 topics of 1,000 partitions), the size the cutover
// must handle comfortably. Target: under 1 s and 200 MB allocated per op.
func BenchmarkBuildEncodeDecode100k(b *testing.B) {
	snap := plan.Snapshot{
		Group:     make(offsets.GroupOffsets, 100_000),
		Source:    make(map[offsets.SourcePartition]offsets.LogBounds, 100_000),
		TargetEnd: make(map[offsets.SourcePartition]int64, 100_000),
	}
	for t := 0; t < 100; t++ {
		topic := "events.region-" + strconv.Itoa(t)
		for n := int32(0); n < 1000; n++ {
			p := offsets.SourcePartition{Topic: topic, Partition: n}
			start := int64(n) * 1_000
			snap.Source[p] = offsets.LogBounds{Start: start, End: start + 5_000_000}
			snap.Group[p] = start + int64(n)*997%5_000_000
			snap.TargetEnd[p] = int64(n) * 31
		}
	}
	var size int
	b.ReportAllocs()
	for b.Loop() {
		p, err := plan.Build(spec(), snap)
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		if err := p.Encode(&buf); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
		back, err := plan.Decode(&buf)
		if err != nil {
			b.Fatal(err)
		}
		if len(back.Entries) != 100_000 {
			b.Fatalf("decoded %d entries", len(back.Entries))
		}
	}
	b.ReportMetric(float64(size), "plan-bytes")
}
