package verify_test

import (
	"fmt"
	"testing"

	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/verify"
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

// The comparisons Apply makes at 10,000 partitions: the guard on a fresh
// connector (nothing stored), and the final read-back.

func BenchmarkGuardFresh10k(b *testing.B) {
	want := offsets10k()
	b.ReportAllocs()
	for b.Loop() {
		if a, err := verify.Guard(want, nil); err != nil || a != verify.Apply {
			b.Fatal(a, err)
		}
	}
}

func BenchmarkCompareReadBackEqual10k(b *testing.B) {
	want := offsets10k()
	got := offsets10k()
	b.ReportAllocs()
	for b.Loop() {
		if !verify.CompareReadBack(want, got).OK() {
			b.Fatal("not equal")
		}
	}
}

func BenchmarkFromConnect10k(b *testing.B) {
	list := verify.ToConnect(offsets10k())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := verify.FromConnect(list); err != nil {
			b.Fatal(err)
		}
	}
}
