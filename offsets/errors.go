package offsets

import (
	"fmt"
	"strings"

	"github.com/mm2cutover/mm2cutover/errkind"
)

// Sentinel errors. Every error this package returns matches exactly one of
// them, or [ErrInvalidPolicy], with [errors.Is]; the typed errors
// [*DecisionError], [*OffsetError] and [*ConnectPartitionError] carry the context.
// Every text starts with "offsets: ", once: a sentinel's own, and a typed
// error's, which writes the words of its sentinel after that prefix.
var (
	// ErrInvalidPartition: the topic name is not a valid Kafka topic name or
	// the partition number is negative.
	ErrInvalidPartition = errkind.New(errkind.CheckFailed, "offsets: invalid source partition")
	// ErrInvalidBounds: the log start offset is negative or above the log end
	// offset (high watermark).
	ErrInvalidBounds = errkind.New(errkind.CheckFailed, "offsets: invalid log bounds")
	// ErrMissing: the consumer group has no committed offset for the partition.
	ErrMissing = errkind.New(errkind.CheckFailed, "offsets: no committed offset")
	// ErrNegative: an offset is negative, which is never a Kafka position.
	ErrNegative = errkind.New(errkind.CheckFailed, "offsets: negative offset")
	// ErrBeyondEnd: the committed offset is above the log end offset.
	ErrBeyondEnd = errkind.New(errkind.CheckFailed, "offsets: committed offset beyond log end offset")
	// ErrExpired: the committed offset is below the log start offset, so the
	// records in between were deleted by retention.
	ErrExpired = errkind.New(errkind.CheckFailed, "offsets: committed offset below log start offset")
	// ErrOverflow: the next offset after a Connect offset does not fit in an int64.
	ErrOverflow = errkind.New(errkind.CheckFailed, "offsets: offset overflows int64")
	// ErrAliasMismatch: a Connect source partition names a different
	// source.cluster.alias than expected; MirrorSourceConnector would accept it
	// and never read it.
	ErrAliasMismatch = errkind.New(errkind.Rejected, "offsets: source cluster alias mismatch")
	// ErrDuplicate: the same source partition appears twice in one list.
	ErrDuplicate = errkind.New(errkind.CheckFailed, "offsets: duplicate source partition")
	// ErrMalformed: JSON that is not a MirrorSourceConnector offset list.
	ErrMalformed = errkind.New(errkind.CheckFailed, "offsets: malformed connect offsets")
	// ErrUnknownAction: an [Action] that is not block, set or clear.
	ErrUnknownAction = errkind.New(errkind.Rejected, "offsets: unknown action")
)

// DecisionError is why [Decide] blocked a partition. Err is one of
// [ErrInvalidPartition], [ErrInvalidBounds], [ErrMissing], [ErrNegative],
// [ErrBeyondEnd] or [ErrExpired]; the other fields are the inputs of the
// decision.
type DecisionError struct {
	Partition   SourcePartition
	GroupOffset GroupOffset
	Bounds      LogBounds
	Err         error
}

func (e *DecisionError) Error() string {
	prefix := "offsets: "
	if e.Partition != (SourcePartition{}) {
		prefix += e.Partition.String() + ": "
	}
	c, _ := e.GroupOffset.Get()
	w := words(e.Err)
	switch e.Err {
	case ErrInvalidPartition:
		return fmt.Sprintf("offsets: %s topic %q partition %d", w, e.Partition.Topic, e.Partition.Partition)
	case ErrInvalidBounds:
		return fmt.Sprintf("%s%s [%d, %d]", prefix, w, e.Bounds.Start, e.Bounds.End)
	case ErrNegative:
		return fmt.Sprintf("%s%s %d", prefix, w, c)
	case ErrBeyondEnd:
		return fmt.Sprintf("%s%s %d > %d", prefix, w, c, e.Bounds.End)
	case ErrExpired:
		return fmt.Sprintf("%s%s %d < %d", prefix, w, c, e.Bounds.Start)
	}
	return prefix + w
}

// Unwrap returns the sentinel error.
func (e *DecisionError) Unwrap() error { return e.Err }

// Equal reports whether e and o block the same partition for the same
// reason on the same inputs: two decisions of the same inputs are equal
// (go-cmp uses it, so plans built and decoded compare equal).
func (e *DecisionError) Equal(o *DecisionError) bool {
	if e == nil || o == nil {
		return e == o
	}
	return *e == *o
}

// OffsetError is an offset value that cannot be used: Err is [ErrNegative]
// or [ErrOverflow].
type OffsetError struct {
	Offset int64
	Err    error
}

func (e *OffsetError) Error() string {
	return fmt.Sprintf("offsets: offset %d: %s", e.Offset, words(e.Err))
}

// Unwrap returns the sentinel error.
func (e *OffsetError) Unwrap() error { return e.Err }

// ConnectPartitionError places an error on a Connect source partition (a
// [ConnectPartition]: alias, topic, partition) of a list. Err is
// [ErrAliasMismatch], [ErrDuplicate], [ErrInvalidPartition] or an
// [*OffsetError]. The nesting rule: a ConnectPartitionError never contains
// another. (plan.PartitionError places a plan's errors on a SourcePartition.)
type ConnectPartitionError struct {
	Partition ConnectPartition
	Err       error
}

func (e *ConnectPartitionError) Error() string {
	return fmt.Sprintf("offsets: connect partition %s: %s", e.Partition, words(e.Err))
}

// Unwrap returns the underlying error.
func (e *ConnectPartitionError) Unwrap() error { return e.Err }

// words is the text of err without this package's prefix, for a typed error
// that writes it after its own "offsets: ".
func words(err error) string { return strings.TrimPrefix(err.Error(), "offsets: ") }
