package offsets_test

import (
	"fmt"
	"testing"

	"github.com/mm2cutover/mm2cutover/offsets"
)

func offsets10k() []offsets.ConnectOffset {
	out := make([]offsets.ConnectOffset, 0, 10_000)
	for t := range 10 {
		for p := range int32(1000) {
			out = append(out, offsets.ConnectOffset{
				Partition: offsets.ConnectPartition{Cluster: "source", Topic: fmt.Sprintf("events.region-%d", t), Partition: p},
				Offset:    offsets.NewMirrorOffset(int64(p) * 7),
			})
		}
	}
	return out
}

// The comparisons an apply makes at 10,000 partitions: the guard on a
// fresh connector (nothing stored, every partition missing; no diff is
// built), and the final read-back.

func BenchmarkCompareReadBackFresh10k(b *testing.B) {
	want := offsets10k()
	b.ReportAllocs()
	for b.Loop() {
		if offsets.CompareReadBack(want, nil).Count(offsets.Missing) != 10_000 {
			b.Fatal("not all missing")
		}
	}
}

func BenchmarkCompareReadBackEqual10k(b *testing.B) {
	want := offsets10k()
	got := offsets10k()
	b.ReportAllocs()
	for b.Loop() {
		if !offsets.CompareReadBack(want, got).OK() {
			b.Fatal("not equal")
		}
	}
}

func BenchmarkOffsetSetEqual10k(b *testing.B) {
	set := offsets.NewOffsetSet(offsets10k())
	got := offsets10k()
	b.ReportAllocs()
	for b.Loop() {
		if !set.Equal(got) {
			b.Fatal("not equal")
		}
	}
}
