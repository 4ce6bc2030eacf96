package offsets

import (
	"errors"
	"fmt"
	"strconv"
)

// Action is what the cutover does to one partition's Connect offset. The zero
// value is [ActionBlock], so a decision nobody filled in is never applied.
type Action uint8

const (
	// ActionBlock: write nothing; the plan cannot be applied until the cause is
	// fixed (or, for expired data, the loss is accepted).
	ActionBlock Action = iota
	// ActionSet: write {"offset": M}; MM2 resumes at M+1.
	ActionSet
	// ActionClear: write null, deleting the partition's Connect offset; the
	// source consumer's auto.offset.reset=earliest then reads from offset 0.
	ActionClear
)

// String returns "block", "set" or "clear", the names used in plans.
func (a Action) String() string {
	switch a {
	case ActionBlock:
		return "block"
	case ActionSet:
		return "set"
	case ActionClear:
		return "clear"
	}
	return fmt.Sprintf("Action(%d)", uint8(a))
}

// MarshalText returns the name of a; it fails for a value that is not one of
// the three actions.
func (a Action) MarshalText() ([]byte, error) {
	if a > ActionClear {
		return nil, fmt.Errorf("%w %d", ErrUnknownAction, uint8(a))
	}
	return []byte(a.String()), nil
}

// UnmarshalText parses "block", "set" or "clear".
func (a *Action) UnmarshalText(b []byte) error {
	switch string(b) {
	case "block":
		*a = ActionBlock
	case "set":
		*a = ActionSet
	case "clear":
		*a = ActionClear
	default:
		return fmt.Errorf("%w %q", ErrUnknownAction, b)
	}
	return nil
}

// Decision is the outcome of [Decide] for one source partition: the inputs,
// the action, the Connect offset to write and, when blocked, why.
type Decision struct {
	Partition   SourcePartition
	GroupOffset GroupOffset // C, as read from the group
	Bounds      LogBounds   // the source partition's log start and end offsets
	Action      Action
	// Offset is M when Action is ActionSet, null otherwise.
	Offset MirrorOffset
	// Lost is the number of records deleted by retention between C and the
	// log start offset that the operator accepted to lose; 0 unless the
	// decision came from DecideAcceptingLoss on an expired partition.
	Lost int64
	// Err is nil unless Action is ActionBlock; then it is a *DecisionError.
	Err error
}

// Decide converts a consumer group's committed offset C for partition p into
// the Connect offset MirrorSourceConnector needs to resume at C, following the
// table in the package documentation. Expired data (C below the log start
// offset) blocks; use [DecideAcceptingLoss] for a partition whose loss the
// operator accepted on record. Decide never panics; a blocked decision's Err
// is a [*DecisionError].
func Decide(p SourcePartition, c GroupOffset, b LogBounds) Decision {
	return decide(p, c, b, false)
}

// DecideAcceptingLoss is [Decide] for a partition whose operator has accepted,
// on record, that the records between C and the log start offset are lost.
// For an expired partition it sets M = logStart-1, so that MM2 starts at the
// first record still in the log, and records the loss in [Decision.Lost]. For
// any other partition it decides exactly as Decide: the acceptance does not
// relax any other rule.
func DecideAcceptingLoss(p SourcePartition, c GroupOffset, b LogBounds) Decision {
	return decide(p, c, b, true)
}

func decide(p SourcePartition, c GroupOffset, b LogBounds, acceptLoss bool) Decision {
	d := Decision{Partition: p, GroupOffset: c, Bounds: b}
	block := func(err error) Decision {
		d.Err = &DecisionError{Partition: p, GroupOffset: c, Bounds: b, Err: err}
		return d
	}
	if p.Validate() != nil {
		return block(ErrInvalidPartition)
	}
	if b.Validate() != nil {
		return block(ErrInvalidBounds)
	}
	v, ok := c.Get()
	switch {
	case !ok:
		return block(ErrMissing)
	case v < 0:
		return block(ErrNegative)
	case v > b.End:
		return block(ErrBeyondEnd)
	case v < b.Start:
		if !acceptLoss {
			return block(ErrExpired)
		}
		// v >= 0 and v < b.Start, so b.Start >= 1: no underflow, and the loss
		// b.Start-v is positive and fits.
		d.Action = ActionSet
		d.Offset = NewMirrorOffset(b.Start - 1)
		d.Lost = b.Start - v
		return d
	case v == 0:
		d.Action = ActionClear
		return d
	}
	d.Action = ActionSet
	d.Offset = NewMirrorOffset(v - 1)
	return d
}

// Reason explains the decision in words an operator can act on: what MM2 will
// do, or why nothing will be written and what to do about it.
func (d Decision) Reason() string {
	c, _ := d.GroupOffset.Get()
	switch d.Action {
	case ActionSet:
		if d.Lost > 0 {
			return fmt.Sprintf("committed offset %d is below log start offset %d; loss of %d records accepted on record; MM2 starts at %d",
				c, d.Bounds.Start, d.Lost, d.Bounds.Start)
		}
		// The reason of nearly every entry of a plan: built without fmt.
		const prefix = "MM2 resumes at committed offset "
		b := make([]byte, 0, len(prefix)+20)
		return string(strconv.AppendInt(append(b, prefix...), c, 10))
	case ActionClear:
		return "committed offset 0: no connect offset; auto.offset.reset=earliest reads from 0"
	}
	var de *DecisionError
	if !errors.As(d.Err, &de) {
		return "blocked: no decision was made"
	}
	switch de.Err {
	case ErrInvalidPartition:
		return fmt.Sprintf("invalid partition %q %d: check the topic list", d.Partition.Topic, d.Partition.Partition)
	case ErrInvalidBounds:
		return fmt.Sprintf("invalid log bounds [%d, %d]: re-read the source partition's start and end offsets", d.Bounds.Start, d.Bounds.End)
	case ErrMissing:
		return "group has no committed offset: let the old job commit one, or supply it from its final checkpoint; never start from latest"
	case ErrNegative:
		return fmt.Sprintf("committed offset %d is negative: re-read the group offsets", c)
	case ErrBeyondEnd:
		return fmt.Sprintf("committed offset %d is beyond log end offset %d: wrong cluster or recreated topic? recheck the group and source", c, d.Bounds.End)
	case ErrExpired:
		return fmt.Sprintf("committed offset %d is below log start offset %d: %d records were deleted by retention; backfill them or record an acceptance of the loss",
			c, d.Bounds.Start, d.Bounds.Start-c)
	}
	return "blocked: " + d.Err.Error()
}

// ConnectOffset returns the Connect offset entry to write for this decision
// under source.cluster.alias = alias, and false when the decision is blocked
// (nothing may be written).
func (d Decision) ConnectOffset(alias string) (ConnectOffset, bool) {
	if d.Action != ActionSet && d.Action != ActionClear {
		return ConnectOffset{}, false
	}
	if d.Err != nil {
		return ConnectOffset{}, false
	}
	return ConnectOffset{Partition: d.Partition.Connect(alias), Offset: d.Offset}, true
}
