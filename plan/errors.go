package plan

import (
	"fmt"
	"strings"

	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// ErrInvalid matches every error that says a plan or an input cannot be
// used as it is, whatever the detail: malformed, unknown or missing fields,
// an unsupported schema version, unsorted or duplicate partitions, an
// inconsistent entry, a fingerprint that does not match, a configuration
// that contradicts the spec. Retrying never helps; build a new plan. Every
// sentinel below except ErrBlocked matches it too.
var ErrInvalid = errkind.New(errkind.Refused, "plan: invalid plan")

// invalid is a sentinel that also matches ErrInvalid.
type invalid string

func (e invalid) Error() string { return string(e) }

// Is makes errors.Is(sentinel, ErrInvalid) true.
func (e invalid) Is(target error) bool { return target == ErrInvalid }

// ErrorKind is errkind.Refused, as ErrInvalid's.
func (e invalid) ErrorKind() errkind.Kind { return errkind.Refused }

// Sentinel errors. The typed errors below wrap them, so callers match with
// [errors.Is] and read details with [errors.As]. Every text of this package,
// a sentinel's or a typed error's, starts with "plan: ", once: a typed error
// writes the words of its sentinel after its own prefix; an error of another
// package that it wraps keeps that package's prefix.
var (
	// ErrMalformed: the input is not JSON (or CSV) of the expected shape.
	ErrMalformed error = invalid("plan: malformed input")
	// ErrUnknownField: the plan has a field this schema version does not define.
	ErrUnknownField error = invalid("plan: unknown field")
	// ErrTrailingData: there is data after the plan's JSON object.
	ErrTrailingData error = invalid("plan: trailing data after plan")
	// ErrSchemaVersion: the plan's schema version is not one this package reads.
	ErrSchemaVersion error = invalid("plan: unsupported schema version")
	// ErrMissingField: a required field is absent, null or empty.
	ErrMissingField error = invalid("plan: missing required field")
	// ErrInvalidField: a field has a value outside its domain.
	ErrInvalidField error = invalid("plan: invalid field value")
	// ErrNoPartitions: the plan would cover no source partition.
	ErrNoPartitions error = invalid("plan: no source partitions")
	// ErrDuplicatePartition: a source partition appears twice.
	ErrDuplicatePartition error = invalid("plan: duplicate partition")
	// ErrUnsorted: entries are not in (topic, partition) order.
	ErrUnsorted error = invalid("plan: partitions out of order")
	// ErrUnknownPartition: an input names a partition of a topic in scope that
	// the source cluster does not have, or an acceptance names a partition
	// outside the plan.
	ErrUnknownPartition error = invalid("plan: partition not in scope")
	// ErrMissingTargetEnd: no target end offset was given for a partition.
	ErrMissingTargetEnd error = invalid("plan: no target end offset")
	// ErrInconsistent: an entry's action, Connect offset or loss does not
	// follow from its group offset, bounds and acceptance.
	ErrInconsistent error = invalid("plan: action inconsistent with offsets")
	// ErrFingerprint: the fingerprint does not match the content. The plan
	// was edited or damaged after it was built: never edit a plan; build a
	// new one.
	ErrFingerprint error = invalid("plan: fingerprint mismatch")
	// ErrConfigMismatch: the connector configuration contradicts the spec
	// (another source.cluster.alias or connector name).
	ErrConfigMismatch error = invalid("plan: connector config contradicts plan")
	// ErrBlocked: the plan has blocked entries and cannot be applied. It is
	// a valid plan (a report of what blocks the cutover), so it does not
	// match ErrInvalid: fix the causes its entries name and build a new plan.
	ErrBlocked = errkind.New(errkind.CheckFailed, "plan: blocked partitions")
)

// FieldError is a problem with one top-level field of a spec or plan. Field
// is the JSON name; Err is [ErrMissingField], [ErrInvalidField],
// [ErrConfigMismatch], [ErrNoPartitions], [ErrMalformed] or [ErrUnknownField].
type FieldError struct {
	Field  string
	Detail string
	Err    error
	cause  error // another package's error behind Err, matched too
}

func (e *FieldError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("plan: %s: %s", e.Field, words(e.Err))
	}
	return fmt.Sprintf("plan: %s: %s: %s", e.Field, words(e.Err), e.Detail)
}

// Unwrap returns the sentinel error and, where another package's error
// caused it (offsets.ErrInvalidPolicy for "replication_policy"), that one.
func (e *FieldError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.cause}
}

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
		return fmt.Sprintf("plan: partition %s: %s", e.Partition, words(e.Err))
	}
	return fmt.Sprintf("plan: partition %s: %s: %s", e.Partition, words(e.Err), e.Detail)
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
	return fmt.Sprintf("plan: %s %d: this version reads schema versions 1 to %d", words(ErrSchemaVersion), e.Got, e.Want)
}

// Advice says what to do: use the tool version that wrote the plan, or
// build a new plan with this one.
func (e *SchemaVersionError) Advice() string {
	return "use the tool version that wrote the plan, or build a new plan"
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
	return fmt.Sprintf("plan: %s: stored %s, content has %s", words(ErrFingerprint), e.Stored, e.Computed)
}

// Advice says what to do: never edit a plan; build a new one.
func (e *FingerprintError) Advice() string { return "do not edit a plan: build a new one" }

// Unwrap returns [ErrFingerprint].
func (e *FingerprintError) Unwrap() error { return ErrFingerprint }

// BlockedError lists the entries that keep a plan from being applied. It
// matches [ErrBlocked]; each entry's Reason says what to do.
type BlockedError struct {
	Entries []Entry
}

func (e *BlockedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan: %s: %d", words(ErrBlocked), len(e.Entries))
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
	return fmt.Sprintf("plan: line %d: %s", e.Line, words(e.Err))
}

// Unwrap returns the underlying error.
func (e *LineError) Unwrap() error { return e.Err }

// words is the text of err without this package's prefix, for an error
// that writes it after its own "plan: ".
func words(err error) string { return strings.TrimPrefix(err.Error(), "plan: ") }
