package kafkaadmin

import (
	"errors"
	"testing"

	"github.com/IBM/sarama"
	"github.com/google/go-cmp/cmp"
	"github.com/mm2cutover/mm2cutover/offsets"
)

func TestDiffCommitted(t *testing.T) {
	tp := func(p int32) TopicPartition { return TopicPartition{Topic: "t", Partition: p} }
	topics := Topics{"t": 7}
	before := Reading{
		Topics: topics,
		Committed: offsets.GroupOffsets{
			tp(0): 10, // unchanged
			tp(1): 10, // advanced
			tp(3): 7,  // disappeared
			tp(4): 0,  // unchanged at zero
			tp(5): 5,  // read error after: skipped
			tp(6): 9,  // read error before: skipped
		},
		Errors: map[TopicPartition]error{tp(6): sarama.ErrRequestTimedOut},
	}
	after := Reading{
		Topics: topics,
		Committed: offsets.GroupOffsets{
			tp(0): 10,
			tp(1): 12,
			tp(2): 0, // appeared
			tp(4): 0,
			tp(6): 11,
		},
		Errors: map[TopicPartition]error{tp(5): sarama.ErrRequestTimedOut},
	}
	want := []OffsetChange{
		{TopicPartition: tp(1), Before: offsets.NewGroupOffset(10), After: offsets.NewGroupOffset(12)},
		{TopicPartition: tp(2), After: offsets.NewGroupOffset(0)},
		{TopicPartition: tp(3), Before: offsets.NewGroupOffset(7)},
	}
	if diff := cmp.Diff(want, DiffCommitted(before, after)); diff != "" {
		t.Errorf("DiffCommitted mismatch (-want +got):\n%s", diff)
	}
	if got := DiffCommitted(before, before); len(got) != 0 {
		t.Errorf("DiffCommitted(x, x) = %v, want none", got)
	}
	if !(CommitWindow{}).Stable() || (CommitWindow{Moved: want}).Stable() {
		t.Error("Stable() disagrees with Moved")
	}
}

func TestReadingMissing(t *testing.T) {
	rd := Reading{
		Topics:    Topics{"b": 1, "a": 3},
		Committed: offsets.GroupOffsets{{Topic: "a", Partition: 1}: 4},
		Errors:    map[TopicPartition]error{{Topic: "b", Partition: 0}: errors.New("x")},
	}
	wantParts := []TopicPartition{{Topic: "a", Partition: 0}, {Topic: "a", Partition: 1}, {Topic: "a", Partition: 2}, {Topic: "b", Partition: 0}}
	if diff := cmp.Diff(wantParts, rd.Topics.Partitions()); diff != "" {
		t.Errorf("Partitions mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]TopicPartition{{Topic: "a", Partition: 0}, {Topic: "a", Partition: 2}}, rd.Missing()); diff != "" {
		t.Errorf("Missing mismatch (-want +got):\n%s", diff)
	}
	if got := (Reading{Topics: Topics{"a": 1}, Committed: offsets.GroupOffsets{{Topic: "a", Partition: 0}: 0}}).Missing(); got != nil {
		t.Errorf("Missing() of a fully committed reading = %v, want none", got)
	}
	if s := (TopicPartition{Topic: "orders", Partition: 7}).String(); s != "orders-7" {
		t.Errorf("String() = %q", s)
	}
}
