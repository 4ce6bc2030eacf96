package verify

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// Status is what a read-back found for one Connect source partition.
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
	Partition offsets.ConnectPartition
	Want      offsets.MirrorOffset // absent when the plan sets none
	Got       offsets.MirrorOffset // absent when Connect lists none
	Status    Status
}

// ReadBack compares the offsets Connect lists for a connector with those a
// plan expects. The zero value is an empty comparison that passes.
type ReadBack struct {
	// Partitions has one check per partition in either list, sorted.
	Partitions []PartitionCheck
	// Diff is cmp.Diff(want, got) over the sorted lists; empty when equal.
	Diff string
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
// those expected (want, e.g. plan.Plan.ExpectedOffsets). Order does not
// matter: Connect's GET lists entries in arbitrary order. A partition listed
// twice in got counts as unexpected the second time.
func CompareReadBack(want, got []offsets.ConnectOffset) ReadBack {
	w := sorted(want)
	g := sorted(got)
	var r ReadBack
	if d := cmp.Diff(w, g); d != "" {
		r.Diff = d
	}
	wantBy := make(map[offsets.ConnectPartition]offsets.MirrorOffset, len(w))
	for _, o := range w {
		wantBy[o.Partition] = o.Offset
	}
	seen := make(map[offsets.ConnectPartition]bool, len(g))
	for _, o := range g {
		wo, planned := wantBy[o.Partition]
		c := PartitionCheck{Partition: o.Partition, Want: wo, Got: o.Offset}
		switch {
		case !planned || seen[o.Partition]:
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
		if !seen[o.Partition] {
			r.Partitions = append(r.Partitions, PartitionCheck{Partition: o.Partition, Want: o.Offset, Status: Missing})
		}
	}
	slices.SortStableFunc(r.Partitions, func(a, b PartitionCheck) int { return a.Partition.Compare(b.Partition) })
	return r
}

func sorted(list []offsets.ConnectOffset) []offsets.ConnectOffset {
	s := slices.Clone(list)
	slices.SortFunc(s, offsets.CompareConnectOffsets)
	return s
}

// FromConnect converts the offsets the connect client returned into
// MirrorSourceConnector's typed offsets. An entry that is not shaped like a
// MirrorSourceConnector offset gives an error naming it: such an offset was
// not written by MM2 or by a plan.
func FromConnect(list []connect.Offset) ([]offsets.ConnectOffset, error) {
	out := make([]offsets.ConnectOffset, 0, len(list))
	for _, o := range list {
		alias, topic, partition, m, tombstone, ok := o.MirrorSource()
		if !ok {
			return nil, fmt.Errorf("%w: %v -> %v", ErrNotMirrorOffset, o.Partition, o.Offset)
		}
		co := offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: alias, Topic: topic, Partition: partition}}
		if !tombstone {
			co.Offset = offsets.NewMirrorOffset(m)
		}
		out = append(out, co)
	}
	return out, nil
}

// ToConnect converts typed offsets (e.g. plan.Plan.ConnectOffsets) into
// the connect client's form; an absent offset becomes a tombstone, which
// deletes the partition's offset in an alter request.
func ToConnect(list []offsets.ConnectOffset) []connect.Offset {
	out := make([]connect.Offset, 0, len(list))
	for _, o := range list {
		p := o.Partition
		if m, ok := o.Offset.Get(); ok {
			out = append(out, connect.MirrorSourceOffset(p.Cluster, p.Topic, p.Partition, m))
		} else {
			out = append(out, connect.MirrorSourceTombstone(p.Cluster, p.Topic, p.Partition))
		}
	}
	return out
}

// GuardAction is what the guard before an apply decided.
type GuardAction int

const (
	// Apply: the connector holds no offset that the plan does not set to
	// the same value; applying it is safe (a fresh connector, or a plan
	// partly applied before).
	Apply GuardAction = iota + 1
	// AlreadyApplied: the connector holds exactly the plan's offsets; there
	// is nothing to do (a retried Job, a repeated command).
	AlreadyApplied
)

func (a GuardAction) String() string {
	switch a {
	case Apply:
		return "apply"
	case AlreadyApplied:
		return "already-applied"
	}
	return fmt.Sprintf("GuardAction(%d)", int(a))
}

// Guard decides, before a plan is applied, from the offsets the connector
// already holds (existing) and those the plan expects after it is applied
// (want, from plan.Plan.ExpectedOffsets):
//
//   - existing equals want: AlreadyApplied;
//   - every existing offset is one the plan sets, to the same value: Apply;
//   - otherwise the connector ran, or another plan was applied: a
//     *StaleOffsetsError (matching ErrStaleOffsets) with the read-back, and
//     no action. Re-applying the plan would rewind or skip records.
func Guard(want, existing []offsets.ConnectOffset) (GuardAction, error) {
	rb := CompareReadBack(want, existing)
	if rb.OK() {
		return AlreadyApplied, nil
	}
	if rb.Count(WrongValue) == 0 && rb.Count(Unexpected) == 0 {
		return Apply, nil
	}
	return 0, &StaleOffsetsError{ReadBack: rb}
}

// ErrStaleOffsets matches a *StaleOffsetsError.
var ErrStaleOffsets = errors.New("connector holds offsets the plan does not set")

// ErrNotMirrorOffset means Connect listed an offset that is not shaped like
// MirrorSourceConnector's.
var ErrNotMirrorOffset = errors.New("not a MirrorSourceConnector offset")

// StaleOffsetsError is the guard's refusal: the connector's existing
// offsets differ from the plan, so it has run since the plan was made, or
// another plan was applied, or the name was used by an earlier connector
// (Connect keeps offsets after a connector is deleted).
type StaleOffsetsError struct {
	ReadBack ReadBack
}

func (e *StaleOffsetsError) Error() string {
	return "refusing to apply: the connector holds offsets that differ from the plan " +
		"(it has run, another plan was applied, or an earlier connector of this name left them; " +
		"build a new plan, or reset the connector's offsets if they are leftovers): " + e.ReadBack.String()
}

// Is makes errors.Is(err, ErrStaleOffsets) true.
func (e *StaleOffsetsError) Is(target error) bool { return target == ErrStaleOffsets }
