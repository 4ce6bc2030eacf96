package flinksavepoint

import (
	"fmt"
	"strings"

	"github.com/mm2cutover/mm2cutover/errkind"
)

// ErrInvalid matches every error that says a savepoint cannot be read as it
// is, whatever the detail: every sentinel below matches it too. Reading again
// never helps; point at another savepoint or fix the one given.
var ErrInvalid = errkind.New(errkind.Rejected, "flinksavepoint: unreadable flink savepoint")

// invalid is a sentinel that also matches ErrInvalid.
type invalid string

func (e invalid) Error() string { return string(e) }

// Is makes errors.Is(sentinel, ErrInvalid) true.
func (e invalid) Is(target error) bool { return target == ErrInvalid }

// ErrorKind is errkind.Rejected, as ErrInvalid's: the savepoint given
// cannot be used.
func (e invalid) ErrorKind() errkind.Kind { return errkind.Rejected }

// Sentinel errors. The typed errors below wrap them: match with [errors.Is],
// read details with [errors.As]. Every text of this package, a sentinel's or
// a typed error's, starts with "flinksavepoint: ", once: a typed error
// writes the words of its sentinel after its own prefix.
var (
	// ErrNotSavepoint: the file does not start with the magic number of
	// Flink's checkpoint metadata: it is not a _metadata file.
	ErrNotSavepoint error = invalid("flinksavepoint: not a flink savepoint")
	// ErrVersion: the metadata format version is not one this package reads
	// (3 to 6: Flink 1.11 to 2.2). See [VersionError].
	ErrVersion error = invalid("flinksavepoint: unsupported metadata version")
	// ErrTruncated: a file ends in the middle of a value.
	ErrTruncated error = invalid("flinksavepoint: truncated")
	// ErrMalformed: a value is outside its domain (a negative count, an
	// unknown handle type, an offset that points backwards, bytes after the
	// end, a string that is not modified UTF-8, an invalid topic or offset).
	ErrMalformed error = invalid("flinksavepoint: malformed")
	// ErrMissingFile: a state file the metadata references is absent, or lies
	// outside the savepoint directory.
	ErrMissingFile error = invalid("flinksavepoint: missing state file")
	// ErrUnsupported: valid Flink state this package does not read:
	// compressed operator state, file-merged state segments, metadata of
	// Flink before 1.11.
	ErrUnsupported error = invalid("flinksavepoint: unsupported state")
	// ErrUnplaceable: a state it cannot place: a SourceReaderState that is
	// not split-distributed, a split whose serializer version is not
	// KafkaPartitionSplit's, a partition held by two splits, a source that
	// finished.
	ErrUnplaceable error = invalid("flinksavepoint: state cannot be placed")
	// ErrNoSource: no operator of the savepoint is the KafkaSource asked
	// for: the uid matches no operator, or the operator holds no
	// SourceReaderState. See [SourceError].
	ErrNoSource error = invalid("flinksavepoint: no such kafka source")
	// ErrAmbiguous: no uid was given and the savepoint holds several
	// sources. See [SourceError].
	ErrAmbiguous error = invalid("flinksavepoint: several sources")
)

// FormatError is a problem at one place of one file of a savepoint. File is
// the file's path in the savepoint directory ("_metadata" or a state file);
// Offset the byte offset where the value starts; In says what was being read
// ("operator 2 (a1b2...) subtask 1 managed operator state"). Err is one of
// [ErrNotSavepoint], [ErrTruncated], [ErrMalformed], [ErrMissingFile],
// [ErrUnsupported] or [ErrUnplaceable].
type FormatError struct {
	File   string
	Offset int64
	In     string
	Detail string
	Err    error
}

func (e *FormatError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "flinksavepoint: %s", e.File)
	if e.Offset >= 0 {
		fmt.Fprintf(&b, " at byte %d", e.Offset)
	}
	if e.In != "" {
		fmt.Fprintf(&b, " (%s)", e.In)
	}
	fmt.Fprintf(&b, ": %s", words(e.Err))
	if e.Detail != "" {
		fmt.Fprintf(&b, ": %s", e.Detail)
	}
	return b.String()
}

// Unwrap returns the sentinel error.
func (e *FormatError) Unwrap() error { return e.Err }

// VersionError reports a metadata format version this package does not read.
// It matches [ErrVersion].
type VersionError struct {
	Version int32
}

// Lowest and highest metadata format versions read: version 3 came with Flink
// 1.11; 1.20 writes 4 (3 plus the checkpoint properties); 2.0 and 2.1 write 5
// (operator names and uids); 2.2 writes 6 (new channel state handles).
const (
	MinVersion = 3
	MaxVersion = 6
)

func (e *VersionError) Error() string {
	return fmt.Sprintf("flinksavepoint: %s %d: this package reads metadata versions %d to %d (Flink 1.11 to 2.2)", words(ErrVersion), e.Version, MinVersion, MaxVersion)
}

// Unwrap returns [ErrVersion].
func (e *VersionError) Unwrap() error { return ErrVersion }

// SourceError says why no KafkaSource could be chosen: the uid asked for
// (empty when none was given), the operator ID it hashes to, and the
// operators of the savepoint that hold a SourceReaderState. Err is
// [ErrNoSource] or [ErrAmbiguous].
type SourceError struct {
	UID        string
	OperatorID OperatorID
	Sources    []Operator
	Detail     string
	Err        error
}

func (e *SourceError) Error() string {
	var b strings.Builder
	b.WriteString("flinksavepoint: ")
	b.WriteString(words(e.Err))
	if e.UID != "" {
		fmt.Fprintf(&b, ": uid %q (operator %s)", e.UID, e.OperatorID)
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if len(e.Sources) == 0 {
		b.WriteString("; the savepoint holds no source state")
		return b.String()
	}
	b.WriteString("; sources in the savepoint: ")
	for i, o := range e.Sources {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(o.describe())
	}
	return b.String()
}

// Unwrap returns the sentinel error.
func (e *SourceError) Unwrap() error { return e.Err }

// words is the text of err without this package's prefix, for an error
// that writes it after its own "flinksavepoint: ".
func words(err error) string { return strings.TrimPrefix(err.Error(), "flinksavepoint: ") }
