package plan

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mm2cutover/mm2cutover/offsets"
)

// Sentinel errors. The typed errors below wrap them, so callers match with
// [errors.Is] and read details with [errors.As].
var (
	// ErrMalformed: the input is not JSON (or CSV) of the expected shape.
	ErrMalformed = errors.New("malformed input")
	// ErrUnknownField: the plan has a field this schema version does not define.
	ErrUnknownField = errors.New("unknown field")
	// ErrTrailingData: there is data after the plan's JSON object.
	ErrTrailingData = errors.New("trailing data after plan")
	// ErrSchemaVersion: the plan's schema version is not one this package reads.
	ErrSchemaVersion = errors.New("unsupported schema version")
	// ErrMissingField: a required field is absent, null or empty.
	ErrMissingField = errors.New("missing required field")
	// ErrInvalidField: a field has a value outside its domain.
	ErrInvalidField = errors.New("invalid field value")
	// ErrNoPartitions: the plan would cover no source partition.
	ErrNoPartitions = errors.New("no source partitions")
	// ErrDuplicatePartition: a source partition appears twice.
	ErrDuplicatePartition = errors.New("duplicate partition")
	// ErrUnsorted: entries are not in (topic, partition) order.
	ErrUnsorted = errors.New("partitions out of order")
	// ErrUnknownPartition: an input names a partition of a topic in scope that
	// the source cluster does not have, or an acceptance names a partition
	// outside the plan.
	ErrUnknownPartition = errors.New("partition not in scope")
	// ErrMissingTargetEnd: no target end offset was given for a partition.
	ErrMissingTargetEnd = errors.New("no target end offset")
	// ErrInconsistent: an entry's action, Connect offset or loss does not
	// follow from its group offset, bounds and acceptance.
	ErrInconsistent = errors.New("action inconsistent with offsets")
	// ErrFingerprint: the fingerprint does not match the content.
	ErrFingerprint = errors.New("fingerprint mismatch")
	// ErrConfigMismatch: the connector configuration contradicts the spec
	// (another source.cluster.alias or connector name).
	ErrConfigMismatch = errors.New("connector config contradicts plan")
	// ErrBlocked: the plan has blocked entries and cannot be applied.
	ErrBlocked = errors.New("plan has blocked partitions")
)

// FieldError is a problem with one top-level field of a spec or plan. Field
// is the JSON name; Err is [ErrMissingField], [ErrInvalidField],
// [ErrConfigMismatch], [ErrNoPartitions], [ErrMalformed] or [ErrUnknownField].
type FieldError struct {
	Field  string
	Detail string
	Err    error
}

func (e *FieldError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("plan: %s: %v", e.Field, e.Err)
	}
	return fmt.Sprintf("plan: %s: %v: %s", e.Field, e.Err, e.Detail)
}

// Unwrap returns the sentinel error.
func (e *FieldError) Unwrap() error { return e.Err }

// PartitionError is a problem with one source partition of a plan or of an
// input. Err is one of [ErrDuplicatePartition], [ErrUnsorted],
// [ErrUnknownPartition], [ErrMissingTargetEnd], [ErrInconsistent],
// [ErrMissingField], [ErrInvalidField], or an error of package offsets.
type PartitionError struct {
	Partition offsets.SourcePartition
	Detail    string
	Err       error
}

func (e *PartitionError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("plan: partition %s: %v", e.Partition, e.Err)
	}
	return fmt.Sprintf("plan: partition %s: %v: %s", e.Partition, e.Err, e.Detail)
}

// Unwrap returns the underlying error.
func (e *PartitionError) Unwrap() error { return e.Err }

// SchemaVersionError reports a plan written with a schema version this
// package does not read. It matches [ErrSchemaVersion].
type SchemaVersionError struct {
	Got  int64
	Want int
}

func (e *SchemaVersionError) Error() string {
	return fmt.Sprintf("plan: %v %d: this version reads schema version %d; use the tool version that wrote the plan or build a new plan", ErrSchemaVersion, e.Got, e.Want)
}

// Unwrap returns [ErrSchemaVersion].
func (e *SchemaVersionError) Unwrap() error { return ErrSchemaVersion }

// FingerprintError reports that a plan's stored fingerprint is not the
// SHA-256 of its content: the plan was edited or damaged after it was built.
// It matches [ErrFingerprint].
type FingerprintError struct {
	Stored   string
	Computed string
}

func (e *FingerprintError) Error() string {
	return fmt.Sprintf("plan: %v: stored %s, content has %s; do not edit a plan, build a new one", ErrFingerprint, e.Stored, e.Computed)
}

// Unwrap returns [ErrFingerprint].
func (e *FingerprintError) Unwrap() error { return ErrFingerprint }

// BlockedError lists the entries that keep a plan from being applied. It
// matches [ErrBlocked]; each entry's Reason says what to do.
type BlockedError struct {
	Entries []Entry
}

func (e *BlockedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan: %v: %d", ErrBlocked, len(e.Entries))
	for i, en := range e.Entries {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(e.Entries)-i)
			break
		}
		fmt.Fprintf(&b, "; %s: %s", en.Partition, en.Reason)
	}
	return b.String()
}

// Unwrap returns [ErrBlocked].
func (e *BlockedError) Unwrap() error { return ErrBlocked }

// LineError places an input error on a line of a CSV file. It matches
// [ErrMalformed] or [ErrDuplicatePartition] through Err.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("plan: line %d: %v", e.Line, e.Err)
}

// Unwrap returns the underlying error.
func (e *LineError) Unwrap() error { return e.Err }
