package plan_test

import (
	"bytes"
	"strconv"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// snapshot100k is a snapshot of 100,000 partitions (100 topics of 1,000
// partitions), the size the cutover must handle comfortably.
func snapshot100k() plan.Snapshot {
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
	return snap
}

// loop runs op under b.Loop and reports, beside sec/op, the CPU time per
// op (all threads: the garbage collector's too).
func loop(b *testing.B, op func()) {
	b.ReportAllocs()
	var start time.Duration
	n := 0
	for b.Loop() {
		if n == 0 {
			start = cpuTime(b)
		}
		op()
		n++
	}
	b.ReportMetric(float64((cpuTime(b)-start).Nanoseconds())/float64(n), "cpu-ns/op")
}

// BenchmarkBuildEncodeDecode100k builds, encodes and decodes a plan of
// 100,000 partitions. Target: under 300 ms and 100 MB allocated
// per op. The plan is encoded into one buffer reused from op to op, as a
// file would take it: a bytes.Buffer growing to the plan's 22 MB would add
// about 70 MB of the buffer's own reallocations to every op.
func BenchmarkBuildEncodeDecode100k(b *testing.B) {
	snap := snapshot100k()
	var buf bytes.Buffer
	p, err := plan.Build(spec(), snap)
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Encode(&buf); err != nil { // sizes buf
		b.Fatal(err)
	}
	size := buf.Len()
	loop(b, func() {
		buf.Reset()
		p, err := plan.Build(spec(), snap)
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Encode(&buf); err != nil {
			b.Fatal(err)
		}
		back, err := plan.Decode(&buf)
		if err != nil {
			b.Fatal(err)
		}
		if len(back.Entries) != 100_000 {
			b.Fatalf("decoded %d entries", len(back.Entries))
		}
	})
	b.ReportMetric(float64(size), "plan-bytes")
}

// The three steps apart, to see where the time goes.

func BenchmarkBuild100k(b *testing.B) {
	snap := snapshot100k()
	loop(b, func() {
		if _, err := plan.Build(spec(), snap); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkEncode100k(b *testing.B) {
	p, err := plan.Build(spec(), snapshot100k())
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Encode(&buf); err != nil { // sizes buf
		b.Fatal(err)
	}
	loop(b, func() {
		buf.Reset()
		if err := p.Encode(&buf); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkDecode100k(b *testing.B) {
	p, err := plan.Build(spec(), snapshot100k())
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Encode(&buf); err != nil {
		b.Fatal(err)
	}
	loop(b, func() {
		if _, err := plan.Decode(bytes.NewReader(buf.Bytes())); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkConnectOffsets100k is the price of deriving the PATCH from a
// plan: the Validate it starts with (every entry's decision and the
// fingerprint) and the list itself.
func BenchmarkConnectOffsets100k(b *testing.B) {
	p, err := plan.Build(spec(), snapshot100k())
	if err != nil {
		b.Fatal(err)
	}
	loop(b, func() {
		if _, err := p.ConnectOffsets(); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkWriteSummary100k is the human table `cutover plan` prints: a
// line per partition.
func BenchmarkWriteSummary100k(b *testing.B) {
	p, err := plan.Build(spec(), snapshot100k())
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	loop(b, func() {
		buf.Reset()
		if err := p.WriteSummary(&buf); err != nil {
			b.Fatal(err)
		}
	})
}
