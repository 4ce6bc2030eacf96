package offsets

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-cmp/cmp"
)

// Status is what a read-back found for one Connect source partition: the
// offsets Connect lists for a connector, compared as a set with those
// expected (GET /connectors/{name}/offsets lists them in arbitrary order).
type Status string

const (
	// Match: Connect holds the offset the plan set.
	Match Status = "match"
	// WrongValue: Connect holds a different offset.
	WrongValue Status = "wrong-value"
	// Missing: the plan set an offset and Connect lists none.
	Missing Status = "missing"
	// Unexpected: Connect lists an offset the plan does not set (a
	// partition it clears, another alias or topic, or a leftover).
	Unexpected Status = "unexpected"
)

// PartitionCheck is the read-back of one Connect source partition.
type PartitionCheck struct {
	Partition ConnectPartition `json:"partition"`
	Want      MirrorOffset     `json:"want"` // absent when the plan sets none
	Got       MirrorOffset     `json:"got"`  // absent when Connect lists none
	Status    Status           `json:"status"`
}

// ReadBack compares the offsets Connect lists for a connector with those a
// plan expects. The zero value is an empty comparison that passes.
type ReadBack struct {
	// Partitions has one check per partition in either list, sorted.
	Partitions []PartitionCheck `json:"partitions"`
	// want and got are the compared lists, sorted, for Diff.
	want, got []ConnectOffset
}

// Diff returns cmp.Diff(want, got) over the two sorted lists, for a person
// to read; "" when Connect holds exactly the expected offsets. It is built
// on demand: on a fresh connector of 10,000 partitions a diff is work
// nobody reads unless the comparison is reported.
func (r ReadBack) Diff() string {
	if r.OK() {
		return ""
	}
	return cmp.Diff(r.want, r.got)
}

// OK reports whether Connect holds exactly the plan's offsets: 100% equal is
// the only pass.
func (r ReadBack) OK() bool {
	for _, p := range r.Partitions {
		if p.Status != Match {
			return false
		}
	}
	return true
}

// Count returns how many partitions have status s.
func (r ReadBack) Count(s Status) int {
	n := 0
	for _, p := range r.Partitions {
		if p.Status == s {
			n++
		}
	}
	return n
}

// String summarises the read-back in one line, then lists every partition
// that is not a match.
func (r ReadBack) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d match, %d wrong value, %d missing, %d unexpected",
		r.Count(Match), r.Count(WrongValue), r.Count(Missing), r.Count(Unexpected))
	for _, p := range r.Partitions {
		if p.Status != Match {
			fmt.Fprintf(&b, "\n  %s: %s (want %s, got %s)", p.Partition, p.Status, p.Want, p.Got)
		}
	}
	return b.String()
}

// CompareReadBack compares, as sets, the offsets Connect returned (got) with
// those expected (want, e.g. the plan's expected offsets). Order does not
// matter: Connect's GET lists entries in arbitrary order. A partition listed
// twice in got counts as unexpected the second time. An entry of want whose
// offset is absent — the null of a PATCH, which clears the partition —
// expects Connect to list none (it never lists a cleared partition): a
// match when it lists none, unexpected when it lists one.
func CompareReadBack(want, got []ConnectOffset) ReadBack {
	w := sorted(want)
	g := sorted(got)
	r := ReadBack{want: w, got: g}
	wantBy := make(map[ConnectPartition]MirrorOffset, len(w))
	for _, o := range w {
		wantBy[o.Partition] = o.Offset
	}
	seen := make(map[ConnectPartition]bool, len(g))
	for _, o := range g {
		wo, planned := wantBy[o.Partition]
		c := PartitionCheck{Partition: o.Partition, Want: wo, Got: o.Offset}
		switch {
		case !planned || seen[o.Partition] || !wo.Present():
			c.Status = Unexpected
		case wo == o.Offset:
			c.Status = Match
		default:
			c.Status = WrongValue
		}
		seen[o.Partition] = true
		r.Partitions = append(r.Partitions, c)
	}
	for _, o := range w {
		switch {
		case seen[o.Partition]:
		case o.Offset.Present():
			r.Partitions = append(r.Partitions, PartitionCheck{Partition: o.Partition, Want: o.Offset, Status: Missing})
		default: // cleared, and Connect lists none: as expected
			r.Partitions = append(r.Partitions, PartitionCheck{Partition: o.Partition, Status: Match})
		}
	}
	slices.SortStableFunc(r.Partitions, func(a, b PartitionCheck) int { return a.Partition.Compare(b.Partition) })
	return r
}

// OffsetSet is an expected set of Connect offsets, built once so that each
// read of a wait is compared with one map lookup per partition.
type OffsetSet map[ConnectPartition]MirrorOffset

// NewOffsetSet returns want as a set.
func NewOffsetSet(want []ConnectOffset) OffsetSet {
	s := make(OffsetSet, len(want))
	for _, o := range want {
		s[o.Partition] = o.Offset
	}
	return s
}

// Equal reports whether got lists exactly the set's partitions with a
// present offset, each once and with the set's offset, and none of those
// whose offset is absent (cleared): CompareReadBack(want, got).OK()
// without building the comparison.
func (s OffsetSet) Equal(got []ConnectOffset) bool {
	seen := make(map[ConnectPartition]struct{}, len(got))
	for _, o := range got {
		w, ok := s[o.Partition]
		if !ok || !w.Present() || w != o.Offset {
			return false
		}
		if _, dup := seen[o.Partition]; dup {
			return false
		}
		seen[o.Partition] = struct{}{}
	}
	return len(seen) == s.present()
}

func (s OffsetSet) present() int {
	n := 0
	for _, w := range s {
		if w.Present() {
			n++
		}
	}
	return n
}

func sorted(list []ConnectOffset) []ConnectOffset {
	s := slices.Clone(list)
	slices.SortFunc(s, CompareConnectOffsets)
	return s
}
