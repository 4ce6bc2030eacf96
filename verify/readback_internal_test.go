package verify

import (
	"testing"

	"github.com/mm2cutover/mm2cutover/offsets"
)

// offsetSet.equal is the cheap check WaitReadBack makes on every read: it
// must agree with CompareReadBack(want, got).OK() on every shape.
func TestOffsetSetAgreesWithCompareReadBack(t *testing.T) {
	o := func(topic string, p int32, m int64) offsets.ConnectOffset {
		return offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "src", Topic: topic, Partition: p}, Offset: offsets.NewMirrorOffset(m)}
	}
	clear := func(topic string, p int32) offsets.ConnectOffset {
		return offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "src", Topic: topic, Partition: p}}
	}
	a0, a1, b0 := o("a", 0, 9), o("a", 1, 0), o("b", 0, 41)
	alias := offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "other", Topic: "a", Partition: 0}, Offset: offsets.NewMirrorOffset(9)}
	type list = []offsets.ConnectOffset
	for _, tc := range []struct {
		name      string
		want, got list
	}{
		{"both empty", nil, nil},
		{"equal", list{a0, a1, b0}, list{a0, a1, b0}},
		{"equal, other order", list{a0, a1, b0}, list{b0, a0, a1}},
		{"nothing read yet", list{a0, b0}, nil},
		{"one missing", list{a0, b0}, list{a0}},
		{"wrong value", list{a0}, list{o("a", 0, 10)}},
		{"extra partition", list{a0}, list{a0, b0}},
		{"wrong alias", list{a0}, list{alias}},
		{"listed twice, same length as want", list{a0, b0}, list{a0, a0}},
		{"listed twice", list{a0}, list{a0, a0}},
		{"want lists a partition twice", list{a0, a0}, list{a0}},
		{"want lists a partition twice, got too", list{a0, a0}, list{a0, a0}},
		{"want clears, nothing listed", list{clear("a", 0)}, nil},
		{"want clears, offset listed", list{clear("a", 0)}, list{a0}},
		{"want clears, tombstone listed", list{clear("a", 0)}, list{clear("a", 0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := CompareReadBack(tc.want, tc.got).OK()
			if got := newOffsetSet(tc.want).equal(tc.got); got != want {
				t.Errorf("offsetSet.equal = %v, CompareReadBack(...).OK() = %v", got, want)
			}
		})
	}
}
