package offsets

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error this package returns matches exactly one of
// them, or [ErrInvalidPolicy], with [errors.Is]; the typed errors [*DecisionError], [*OffsetError]
// and [*PartitionError] carry the context.
var (
	// ErrInvalidPartition: the topic name is not a valid Kafka topic name or
	// the partition number is negative.
	ErrInvalidPartition = errors.New("invalid source partition")
	// ErrInvalidBounds: the log start offset is negative or above the log end
	// offset (high watermark).
	ErrInvalidBounds = errors.New("invalid log bounds")
	// ErrMissing: the consumer group has no committed offset for the partition.
	ErrMissing = errors.New("no committed offset")
	// ErrNegative: an offset is negative, which is never a Kafka position.
	ErrNegative = errors.New("negative offset")
	// ErrBeyondEnd: the committed offset is above the log end offset.
	ErrBeyondEnd = errors.New("committed offset beyond log end offset")
	// ErrExpired: the committed offset is below the log start offset, so the
	// records in between were deleted by retention.
	ErrExpired = errors.New("committed offset below log start offset")
	// ErrOverflow: the next offset after a Connect offset does not fit in an int64.
	ErrOverflow = errors.New("offset overflows int64")
	// ErrAliasMismatch: a Connect source partition names a different
	// source.cluster.alias than expected; MirrorSourceConnector would accept it
	// and never read it.
	ErrAliasMismatch = errors.New("source cluster alias mismatch")
	// ErrDuplicate: the same source partition appears twice in one list.
	ErrDuplicate = errors.New("duplicate source partition")
	// ErrMalformed: JSON that is not a MirrorSourceConnector offset list.
	ErrMalformed = errors.New("malformed connect offsets")
	// ErrUnknownAction: an [Action] that is not block, set or clear.
	ErrUnknownAction = errors.New("unknown action")
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
	prefix := ""
	if e.Partition != (SourcePartition{}) {
		prefix = e.Partition.String() + ": "
	}
	c, _ := e.GroupOffset.Get()
	switch e.Err {
	case ErrInvalidPartition:
		return fmt.Sprintf("%v topic %q partition %d", e.Err, e.Partition.Topic, e.Partition.Partition)
	case ErrInvalidBounds:
		return fmt.Sprintf("%s%v [%d, %d]", prefix, e.Err, e.Bounds.Start, e.Bounds.End)
	case ErrNegative:
		return fmt.Sprintf("%s%v %d", prefix, e.Err, c)
	case ErrBeyondEnd:
		return fmt.Sprintf("%s%v %d > %d", prefix, e.Err, c, e.Bounds.End)
	case ErrExpired:
		return fmt.Sprintf("%s%v %d < %d", prefix, e.Err, c, e.Bounds.Start)
	}
	return fmt.Sprintf("%s%v", prefix, e.Err)
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
	return fmt.Sprintf("offset %d: %v", e.Offset, e.Err)
}

// Unwrap returns the sentinel error.
func (e *OffsetError) Unwrap() error { return e.Err }

// PartitionError places an error on a Connect source partition of a list.
// Err is [ErrAliasMismatch], [ErrDuplicate], [ErrInvalidPartition] or an
// [*OffsetError]. The nesting rule: a PartitionError never contains another
// PartitionError.
type PartitionError struct {
	Partition ConnectPartition
	Err       error
}

func (e *PartitionError) Error() string {
	return fmt.Sprintf("connect partition %s: %v", e.Partition, e.Err)
}

// Unwrap returns the underlying error.
func (e *PartitionError) Unwrap() error { return e.Err }
