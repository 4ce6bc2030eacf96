package verify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

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
	r, w, g := compare(want, got)
	if !r.OK() {
		// The diff is only for a person to read; equal lists have none.
		r.Diff = cmp.Diff(w, g)
	}
	return r
}

// compare is CompareReadBack without the diff; it also returns the two
// lists sorted, for one.
func compare(want, got []offsets.ConnectOffset) (r ReadBack, w, g []offsets.ConnectOffset) {
	w = sorted(want)
	g = sorted(got)
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
	return r, w, g
}

// offsetSet is an expected set of offsets, built once so that each read of
// a wait is compared with one map lookup per partition.
type offsetSet map[offsets.ConnectPartition]offsets.MirrorOffset

func newOffsetSet(want []offsets.ConnectOffset) offsetSet {
	s := make(offsetSet, len(want))
	for _, o := range want {
		s[o.Partition] = o.Offset
	}
	return s
}

// equal reports whether got lists exactly the set's partitions, each once
// and with the set's offset: CompareReadBack(want, got).OK() without
// building the comparison.
func (s offsetSet) equal(got []offsets.ConnectOffset) bool {
	if len(got) != len(s) {
		return false
	}
	seen := make(map[offsets.ConnectPartition]struct{}, len(got))
	for _, o := range got {
		w, ok := s[o.Partition]
		if !ok || w != o.Offset {
			return false
		}
		if _, dup := seen[o.Partition]; dup {
			return false
		}
		seen[o.Partition] = struct{}{}
	}
	return true
}

// Pauses between the reads of WaitReadBack: Connect usually shows a PATCH
// within a few hundred milliseconds, so the first reads come quickly; the
// pause then doubles up to a second, bounding the load a long wait puts on
// the worker.
const (
	readBackFirstPause = 50 * time.Millisecond
	readBackMaxPause   = time.Second
)

// WaitReadBack reads the connector's offsets until they equal want (as a
// set) or ctx ends, and returns the comparison. Connect's GET offsets is
// eventually consistent, so a first read may lag a PATCH. Reads start 50 ms
// apart and back off to one second; each is compared cheaply, and the full
// comparison with its diff is built once, for the result.
//
// A read that fails with an error that is transient for a read
// (connect.IsTransient with connect.RepeatSafe: a rebalance, a 503, a
// refused or reset connection, or connect.ErrOffsetsUnavailable, which
// Connect answers while it loads offsets just written) does not end the
// wait: it reads again until ctx ends. So a PATCH that succeeded is never
// reported as failed when a later read matches. When ctx ends first the
// error is a *ReadBackError carrying the last comparison (empty when no
// read succeeded) and wrapping ctx's error and the last failed read's. Any
// other read error ends the wait at once and is returned as is.
func WaitReadBack(ctx context.Context, c *connect.Client, connector string, want []offsets.ConnectOffset) (ReadBack, error) {
	set := newOffsetSet(want)
	pace := newPoll(readBackFirstPause, readBackMaxPause)
	var (
		last    []offsets.ConnectOffset
		read    bool  // last holds a successful read
		readErr error // the last read's error, when it failed
	)
	for {
		got, err := ReadOffsets(ctx, c, connector)
		switch {
		case err == nil:
			if set.equal(got) {
				return CompareReadBack(want, got), nil
			}
			last, read, readErr = got, true, nil
		case ctx.Err() != nil:
			readErr = err
		case connect.IsTransient(connect.RepeatSafe, err):
			readErr = err
		default:
			return ReadBack{}, err
		}
		if cerr := pace.next(ctx); cerr != nil {
			var rb ReadBack
			if read {
				rb = CompareReadBack(want, last)
			}
			werr := cerr
			if readErr != nil && !errors.Is(readErr, cerr) {
				werr = fmt.Errorf("%w (last read: %w)", cerr, readErr)
			}
			return rb, &ReadBackError{Connector: connector, ReadBack: rb, Err: werr}
		}
	}
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
	// The diff is built only for a refusal: on a fresh connector every
	// partition is missing, and a go-cmp diff of 10,000 of them is work
	// nobody reads.
	rb, w, g := compare(want, existing)
	if rb.OK() {
		return AlreadyApplied, nil
	}
	if rb.Count(WrongValue) == 0 && rb.Count(Unexpected) == 0 {
		return Apply, nil
	}
	rb.Diff = cmp.Diff(w, g)
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
