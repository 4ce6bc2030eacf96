package flinksavepoint

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/mm2cutover/mm2cutover/offsets"
)

// The special starting offsets of a KafkaPartitionSplit (flink-connector-kafka
// KafkaPartitionSplit): a split whose reader has not read a record yet keeps
// the marker its OffsetsInitializer gave it, and the reader resolves it when
// it starts.
const (
	// LatestOffset: start at the partition's end (deprecated, kept for old
	// state).
	LatestOffset int64 = -1
	// EarliestOffset: start at the partition's log start.
	EarliestOffset int64 = -2
	// CommittedOffset: start at the group's committed offset (then at the
	// reset strategy's choice).
	CommittedOffset int64 = -3
	// NoStoppingOffset is the stopping offset of an unbounded split; as a
	// starting offset (MIGRATED, connector 4.0+) it means the enumerator's
	// state was migrated and the offset is resolved on recovery.
	NoStoppingOffset int64 = math.MinInt64
)

// kafkaSplitVersion is the version of KafkaPartitionSplitSerializer: 0 in
// every flink-connector-kafka release from the first FLIP-27 source to 5.0.
const kafkaSplitVersion = 0

// Split is one KafkaPartitionSplit of a source reader: the partition, the
// offset the reader starts at when the job is restored from the savepoint,
// and its stopping offset.
type Split struct {
	Partition offsets.SourcePartition
	// StartingOffset is the next offset to read: one past the last record
	// the reader emitted before the savepoint, which is also what
	// KafkaSource commits to its group for that checkpoint. Negative for a
	// split that has not read a record yet: one of LatestOffset,
	// EarliestOffset, CommittedOffset or NoStoppingOffset (MIGRATED).
	StartingOffset int64
	// StoppingOffset is NoStoppingOffset for an unbounded source; a bounded
	// one stops before it (or at LatestOffset or CommittedOffset as resolved
	// when the job started).
	StoppingOffset int64
	// Subtask is the index of the reader that held the split.
	Subtask int
}

// Position returns the next offset to read and true, or false when the
// split has not read a record (StartingOffset is a marker).
func (s Split) Position() (int64, bool) {
	return s.StartingOffset, s.StartingOffset >= 0
}

// Marker names the marker of a split that has not read a record:
// "earliest", "latest", "committed" or "migrated"; "" for a split with a
// position.
func (s Split) Marker() string {
	switch s.StartingOffset {
	case EarliestOffset:
		return "earliest"
	case LatestOffset:
		return "latest"
	case CommittedOffset:
		return "committed"
	case NoStoppingOffset:
		return "migrated"
	}
	return ""
}

// Source is the state of one KafkaSource operator in a savepoint: every
// split its readers held, sorted by partition.
type Source struct {
	Operator Operator
	Splits   []Split
}

// Positions returns the next offset to read, C, of every split with a
// position: what plan.Build takes as the group offsets. Splits that have not
// read a record are left out ([Source.Unread]).
func (s *Source) Positions() offsets.GroupOffsets {
	g := make(offsets.GroupOffsets, len(s.Splits))
	for _, sp := range s.Splits {
		if c, ok := sp.Position(); ok {
			g[sp.Partition] = c
		}
	}
	return g
}

// Unread returns the splits that have not read a record: their position is
// a marker the reader resolves only when it starts.
func (s *Source) Unread() []Split {
	var out []Split
	for _, sp := range s.Splits {
		if _, ok := sp.Position(); !ok {
			out = append(out, sp)
		}
	}
	return out
}

// Split returns the split of partition p.
func (s *Source) Split(p offsets.SourcePartition) (Split, bool) {
	i, ok := slices.BinarySearchFunc(s.Splits, p, func(sp Split, p offsets.SourcePartition) int { return sp.Partition.Compare(p) })
	if !ok {
		return Split{}, false
	}
	return s.Splits[i], true
}

// Sources returns the operators that keep a SourceReaderState: every FLIP-27
// source of the job (KafkaSource or another).
func (sp *Savepoint) Sources() []Operator {
	var out []Operator
	for _, o := range sp.Operators {
		if o.hasSource() {
			out = append(out, o)
		}
	}
	return out
}

// KafkaSource reads the splits of the KafkaSource whose operator uid is uid
// (DataStream#uid; the operator ID is its hash, [OperatorIDFromUID]). An
// empty uid picks the savepoint's only source. The splits are read from the
// operator's SourceReaderState, inline in the metadata or in the state files
// of the savepoint directory.
//
// Errors: a [*SourceError] matching [ErrNoSource] (no operator has the uid's
// ID, or it keeps no SourceReaderState) or [ErrAmbiguous] (no uid, several
// sources); a [*FormatError] matching [ErrUnplaceable] (a source that
// finished, a state not split-distributed, a split that is not a
// KafkaPartitionSplit or a partition held twice), [ErrUnsupported]
// (compressed or file-merged state), [ErrMissingFile], [ErrTruncated] or
// [ErrMalformed].
func (sp *Savepoint) KafkaSource(uid string) (*Source, error) {
	if uid == "" {
		srcs := sp.Sources()
		switch len(srcs) {
		case 0:
			return nil, &SourceError{Err: ErrNoSource, Detail: "no operator keeps a " + SourceReaderState}
		case 1:
			return sp.readSource(srcs[0])
		default:
			return nil, &SourceError{Err: ErrAmbiguous, Sources: srcs, Detail: "name the KafkaSource by its uid"}
		}
	}
	return sp.KafkaSourceByID(OperatorIDFromUID(uid), uid)
}

// KafkaSourceByID is [Savepoint.KafkaSource] for an operator named by its
// ID (an operator given an explicit uidHash); uid, when not empty, is only
// named in errors. Errors as for KafkaSource.
func (sp *Savepoint) KafkaSourceByID(id OperatorID, uid string) (*Source, error) {
	for _, o := range sp.Operators {
		if o.ID != id {
			continue
		}
		if o.FullyFinished {
			return nil, &FormatError{File: MetadataFile, Offset: -1, In: "operator " + o.describe(), Detail: "the source finished: its state holds no positions", Err: ErrUnplaceable}
		}
		if !o.hasSource() {
			return nil, &SourceError{UID: uid, OperatorID: id, Sources: sp.Sources(), Err: ErrNoSource,
				Detail: fmt.Sprintf("operator %s keeps no %s (its states: %v): it is not a source", o.describe(), SourceReaderState, o.States)}
		}
		return sp.readSource(o)
	}
	detail := "no operator has this id"
	for _, o := range sp.Operators {
		if uid != "" && o.UID == uid {
			detail = fmt.Sprintf("operator %s records this uid under another id (an explicit uidHash?): name it by its id", o.ID)
		}
	}
	return nil, &SourceError{UID: uid, OperatorID: id, Sources: sp.Sources(), Err: ErrNoSource, Detail: detail}
}

func (sp *Savepoint) readSource(o Operator) (*Source, error) {
	src := &Source{Operator: o}
	if o.FinishedSubtasks > 0 {
		return nil, &FormatError{File: MetadataFile, Offset: -1, In: "operator " + o.describe(),
			Detail: fmt.Sprintf("%d of its %d subtasks finished: their splits' positions are not in the savepoint", o.FinishedSubtasks, o.Subtasks), Err: ErrUnplaceable}
	}
	held := make(map[offsets.SourcePartition]int, 1024)
	for _, st := range o.sources {
		if st.mode != modeSplitDistribute {
			return nil, &FormatError{File: MetadataFile, Offset: -1, In: st.in, Detail: fmt.Sprintf("%s has distribution mode %d, want split-distribute (0)", SourceReaderState, st.mode), Err: ErrUnplaceable}
		}
		splits, err := sp.readSplits(st)
		if err != nil {
			return nil, err
		}
		for _, s := range splits {
			if other, dup := held[s.Partition]; dup {
				return nil, &FormatError{File: MetadataFile, Offset: -1, In: st.in, Detail: fmt.Sprintf("partition %s is held by subtasks %d and %d", s.Partition, other, s.Subtask), Err: ErrUnplaceable}
			}
			held[s.Partition] = s.Subtask
			src.Splits = append(src.Splits, s)
		}
	}
	slices.SortFunc(src.Splits, func(a, b Split) int { return a.Partition.Compare(b.Partition) })
	return src, nil
}

// readSplits reads one subtask's SourceReaderState: the operator state
// stream's header (OperatorBackendSerializationProxy: version, then from
// version 6 whether the states are compressed), then at each offset one
// element of the list (BytePrimitiveArraySerializer: a length and the bytes),
// each a SimpleVersionedSerialization frame (serializer version, length,
// bytes) of a KafkaPartitionSplit.
func (sp *Savepoint) readSplits(st subtaskSource) ([]Split, error) {
	var d *decoder
	switch st.stream.kind {
	case handleNull:
		if len(st.offsets) > 0 {
			return nil, &FormatError{File: MetadataFile, Offset: -1, In: st.in, Detail: "offsets into no state", Err: ErrMalformed}
		}
		return nil, nil
	case handleByteStream:
		d = newDecoder(bytes.NewReader(st.stream.data), int64(len(st.stream.data)), MetadataFile+" (inline state)")
	case handleFile, handleRelativeFile:
		f, name, err := sp.openStateFile(st.stream, st.in)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return nil, &FormatError{File: name, Offset: -1, In: st.in, Detail: pathErr(err), Err: ErrMissingFile}
		}
		if fi.Size() != st.stream.size {
			return nil, &FormatError{File: name, Offset: -1, In: st.in, Detail: fmt.Sprintf("the file has %d bytes, the metadata says %d", fi.Size(), st.stream.size), Err: ErrTruncated}
		}
		d = newDecoder(f, fi.Size(), name)
	case handleSegmentFile, handleEmptySegmentFile:
		return nil, &FormatError{File: MetadataFile, Offset: -1, In: st.in, Detail: "the state is in a merged segment file (execution.checkpointing.file-merging): take a savepoint without it", Err: ErrUnsupported}
	default:
		return nil, &FormatError{File: MetadataFile, Offset: -1, In: st.in, Detail: fmt.Sprintf("state in a handle of type %d", st.stream.kind), Err: ErrUnplaceable}
	}
	d.in = st.in + " " + SourceReaderState
	at := d.off
	version := d.i32("operator state header version")
	if d.err == nil && (version < 1 || version > 6) {
		d.fail(at, ErrMalformed, "operator state header version %d, want 1 to 6", version)
	}
	if version == 6 {
		at = d.off
		if d.boolean("compression flag") {
			d.fail(at, ErrUnsupported, "the operator state is compressed (execution.checkpointing.snapshot-compression): take a savepoint without compression")
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	splits := make([]Split, 0, len(st.offsets))
	for i, off := range st.offsets {
		if off < d.off {
			d.fail(d.off, ErrMalformed, "element %d at offset %d, before the end of the previous at %d", i, off, d.off)
			return nil, d.err
		}
		d.skip(off-d.off, "state up to an element")
		s := readSplit(d)
		if d.err != nil {
			if fe, ok := d.err.(*FormatError); ok {
				fe.Detail = "element " + strconv.Itoa(i) + ": " + fe.Detail
			}
			return nil, d.err
		}
		s.Subtask = st.subtask
		splits = append(splits, s)
	}
	return splits, nil
}

// readSplit reads one element of a SourceReaderState as a
// KafkaPartitionSplit of serializer version 0: the topic (writeUTF), the
// partition (int), the starting and the stopping offset (long), and nothing
// after. Errors name the element (see readSplits).
func readSplit(d *decoder) Split {
	at := d.off
	n := d.i32("element length")
	if d.err == nil && n < 8 {
		d.fail(at, ErrMalformed, "%d bytes: shorter than a versioned frame", n)
	}
	if d.err != nil {
		return Split{}
	}
	end := d.off + int64(n)
	frameAt := d.off
	version := d.i32("serializer version")
	length := d.i32("serialized length")
	if d.err != nil {
		return Split{}
	}
	if int64(length) != int64(n)-8 {
		d.fail(frameAt, ErrMalformed, "a frame of %d bytes says %d", n-8, length)
		return Split{}
	}
	if version != kafkaSplitVersion {
		d.fail(frameAt, ErrUnplaceable, "split serializer version %d: not a KafkaPartitionSplit (version %d); is this source a KafkaSource?", version, kafkaSplitVersion)
		return Split{}
	}
	topic := d.internedUTF("topic")
	s := Split{Partition: offsets.SourcePartition{Topic: topic}}
	s.Partition.Partition = d.i32("partition")
	s.StartingOffset = d.i64("starting offset")
	s.StoppingOffset = d.i64("stopping offset")
	if d.err != nil {
		return Split{}
	}
	if d.off != end {
		d.fail(d.off, ErrMalformed, "%d bytes after the split", end-d.off)
		return Split{}
	}
	if err := s.Partition.Validate(); err != nil {
		d.fail(at, ErrMalformed, "partition %q-%d is not a Kafka partition", topic, s.Partition.Partition)
		return Split{}
	}
	switch {
	case s.StartingOffset >= 0, s.Marker() != "":
	default:
		d.fail(at, ErrMalformed, "%s: starting offset %d", s.Partition, s.StartingOffset)
		return Split{}
	}
	switch s.StoppingOffset {
	case NoStoppingOffset, LatestOffset, CommittedOffset:
	default:
		if s.StoppingOffset < 0 {
			d.fail(at, ErrMalformed, "%s: stopping offset %d", s.Partition, s.StoppingOffset)
			return Split{}
		}
	}
	return s
}
