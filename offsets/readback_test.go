package offsets_test

import (
	"fmt"
	"testing"

	"github.com/mm2cutover/mm2cutover/offsets"
)

func stored(topic string, p int32, m int64) offsets.ConnectOffset {
	return offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "src", Topic: topic, Partition: p}, Offset: offsets.NewMirrorOffset(m)}
}

func TestCompareReadBack(t *testing.T) {
	a0, a1, b0 := stored("a", 0, 9), stored("a", 1, 0), stored("b", 0, 41)
	other := stored("a", 0, 10)
	alias := offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "other", Topic: "a", Partition: 0}, Offset: offsets.NewMirrorOffset(9)}
	cleared := offsets.ConnectOffset{Partition: a1.Partition}
	for _, tc := range []struct {
		name      string
		want, got []offsets.ConnectOffset
		ok        bool
		counts    map[offsets.Status]int
	}{
		{"both empty", nil, nil, true, map[offsets.Status]int{}},
		{"equal, other order", []offsets.ConnectOffset{a0, a1, b0}, []offsets.ConnectOffset{b0, a0, a1}, true, map[offsets.Status]int{offsets.Match: 3}},
		{"nothing read back yet", []offsets.ConnectOffset{a0, b0}, nil, false, map[offsets.Status]int{offsets.Missing: 2}},
		{"one missing", []offsets.ConnectOffset{a0, b0}, []offsets.ConnectOffset{a0}, false, map[offsets.Status]int{offsets.Match: 1, offsets.Missing: 1}},
		{"wrong value", []offsets.ConnectOffset{a0}, []offsets.ConnectOffset{other}, false, map[offsets.Status]int{offsets.WrongValue: 1}},
		{"extra partition", []offsets.ConnectOffset{a0}, []offsets.ConnectOffset{a0, b0}, false, map[offsets.Status]int{offsets.Match: 1, offsets.Unexpected: 1}},
		{"wrong alias is not a match", []offsets.ConnectOffset{a0}, []offsets.ConnectOffset{alias}, false, map[offsets.Status]int{offsets.Missing: 1, offsets.Unexpected: 1}},
		{"listed twice", []offsets.ConnectOffset{a0}, []offsets.ConnectOffset{a0, a0}, false, map[offsets.Status]int{offsets.Match: 1, offsets.Unexpected: 1}},
		// A PATCH's null clears a partition; Connect then lists none.
		{"cleared, none listed", []offsets.ConnectOffset{a0, cleared}, []offsets.ConnectOffset{a0}, true, map[offsets.Status]int{offsets.Match: 2}},
		{"cleared, still listed", []offsets.ConnectOffset{cleared}, []offsets.ConnectOffset{a1}, false, map[offsets.Status]int{offsets.Unexpected: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rb := offsets.CompareReadBack(tc.want, tc.got)
			if rb.OK() != tc.ok {
				t.Errorf("OK() = %v, want %v: %s", rb.OK(), tc.ok, rb)
			}
			if (rb.Diff() == "") != tc.ok {
				t.Errorf("Diff() = %q, want it empty exactly when OK", rb.Diff())
			}
			for _, s := range []offsets.Status{offsets.Match, offsets.WrongValue, offsets.Missing, offsets.Unexpected} {
				if got, want := rb.Count(s), tc.counts[s]; got != want {
					t.Errorf("Count(%s) = %d, want %d", s, got, want)
				}
			}
		})
	}
}

// OffsetSet.Equal is the cheap check a wait makes on every read: it
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
			want := offsets.CompareReadBack(tc.want, tc.got).OK()
			if got := offsets.NewOffsetSet(tc.want).Equal(tc.got); got != want {
				t.Errorf("OffsetSet.Equal = %v, CompareReadBack(...).OK() = %v", got, want)
			}
		})
	}
}

func offset(topic string, partition int32, m int64) offsets.ConnectOffset {
	return offsets.ConnectOffset{
		Partition: offsets.ConnectPartition{Cluster: "source", Topic: topic, Partition: partition},
		Offset:    offsets.NewMirrorOffset(m),
	}
}

// Connect's GET /connectors/{name}/offsets lists entries in any order and
// is eventually consistent: compare as sets, and only 100% equal passes.
func ExampleCompareReadBack() {
	want := []offsets.ConnectOffset{offset("orders", 0, 41), offset("orders", 1, 9)}
	got := []offsets.ConnectOffset{offset("orders", 1, 9)}
	rb := offsets.CompareReadBack(want, got)
	fmt.Println(rb.OK())
	fmt.Println(rb)
	// Output:
	// false
	// 1 match, 0 wrong value, 1 missing, 0 unexpected
	//   source/orders-0: missing (want 41, got null)
}
