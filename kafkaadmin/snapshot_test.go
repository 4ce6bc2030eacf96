package kafkaadmin

import (
	"errors"
	"testing"

	"github.com/IBM/sarama"
	"github.com/google/go-cmp/cmp"
)

func TestDiffCommitted(t *testing.T) {
	tp := func(p int32) TopicPartition { return TopicPartition{Topic: "t", Partition: p} }
	parts := []TopicPartition{tp(0), tp(1), tp(2), tp(3), tp(4), tp(5), tp(6)}
	before := GroupOffsets{
		Group: "g", Partitions: parts,
		Committed: map[TopicPartition]Commit{
			tp(0): {Offset: 10},               // unchanged
			tp(1): {Offset: 10},               // advanced
			tp(3): {Offset: 7},                // disappeared
			tp(4): {Offset: 0},                // unchanged at zero
			tp(5): {Offset: 5},                // read error after: skipped
			tp(6): {Offset: 9, Metadata: "a"}, // metadata changed only
		},
	}
	after := GroupOffsets{
		Group: "g", Partitions: parts,
		Committed: map[TopicPartition]Commit{
			tp(0): {Offset: 10},
			tp(1): {Offset: 12},
			tp(2): {Offset: 0}, // appeared
			tp(4): {Offset: 0},
			tp(6): {Offset: 9, Metadata: "b"},
		},
		Errors: map[TopicPartition]error{tp(5): sarama.ErrRequestTimedOut},
	}
	want := []OffsetChange{
		{TopicPartition: tp(1), Before: 10, HadBefore: true, After: 12, HasAfter: true},
		{TopicPartition: tp(2), After: 0, HasAfter: true},
		{TopicPartition: tp(3), Before: 7, HadBefore: true},
	}
	if diff := cmp.Diff(want, DiffCommitted(before, after)); diff != "" {
		t.Errorf("DiffCommitted mismatch (-want +got):\n%s", diff)
	}
	if got := DiffCommitted(before, before); len(got) != 0 {
		t.Errorf("DiffCommitted(x, x) = %v, want none", got)
	}
	if !(Snapshot{}).Stable() || (Snapshot{Moved: want}).Stable() {
		t.Error("Stable() disagrees with Moved")
	}
}

func TestGroupOffsetsHelpers(t *testing.T) {
	g := GroupOffsets{
		Partitions: Topics{"b": 1, "a": 3}.Partitions(),
		Committed:  map[TopicPartition]Commit{{Topic: "a", Partition: 1}: {Offset: 4}},
		Errors:     map[TopicPartition]error{{Topic: "b", Partition: 0}: errors.New("x")},
	}
	wantParts := []TopicPartition{{Topic: "a", Partition: 0}, {Topic: "a", Partition: 1}, {Topic: "a", Partition: 2}, {Topic: "b", Partition: 0}}
	if diff := cmp.Diff(wantParts, g.Partitions); diff != "" {
		t.Errorf("Partitions mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]TopicPartition{{Topic: "a", Partition: 0}, {Topic: "a", Partition: 2}}, g.Missing()); diff != "" {
		t.Errorf("Missing mismatch (-want +got):\n%s", diff)
	}
	if off, ok := g.Lookup("a", 1); !ok || off != 4 {
		t.Errorf("Lookup(a, 1) = %d, %v; want 4, true", off, ok)
	}
	if _, ok := g.Lookup("a", 0); ok {
		t.Error("Lookup(a, 0) found a commit that does not exist")
	}
	if diff := cmp.Diff(map[TopicPartition]int64{{Topic: "a", Partition: 1}: 4}, g.Offsets()); diff != "" {
		t.Errorf("Offsets mismatch (-want +got):\n%s", diff)
	}
	if s := (TopicPartition{Topic: "orders", Partition: 7}).String(); s != "orders-7" {
		t.Errorf("String() = %q", s)
	}
}
