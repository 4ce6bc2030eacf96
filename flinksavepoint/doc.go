// Package flinksavepoint reads where a Flink job's KafkaSource stands in a
// savepoint: per split, the topic, the partition and the next offset to read,
// which is the committed offset C a cutover starts MirrorMaker 2 from. The
// group's commits can lag a savepoint (Flink commits its offsets
// asynchronously after the checkpoint completed, and loses that commit when
// the job stops right after it); the savepoint itself is exact.
//
// It is pure apart from reading the savepoint directory: [Open] takes a
// local directory (or its _metadata, or a file: URI as Flink prints
// savepoint paths), [OpenFS] any [io/fs.FS] whose root is the savepoint
// directory. Nothing is written, nothing is sent anywhere, and only the
// metadata and the state files of the source asked for are read.
//
// # The format, as Flink writes it
//
// _metadata starts with the magic number 0x4960672d and a format version:
// 4 from Flink 1.17 to 1.20, 5 for 2.0 and 2.1 (each operator's name and uid
// recorded), 6 for 2.2 (new channel state handles); version 3 (Flink 1.11 to
// 1.16) is read too. Then the checkpoint ID, the master states, and per
// operator its ID, parallelism and per subtask the state handles
// (MetadataV2V3SerializerBase and MetadataV3 to V6Serializer in flink-runtime),
// and, from version 4, the checkpoint properties as a Java-serialized
// CheckpointProperties, read for the snapshot's type ([Properties]). Every
// handle type is decoded to be skipped (keyed, incremental, changelog,
// channel state), so a job with any other operators reads.
//
// A FLIP-27 source keeps its readers' splits in the operator list state
// "SourceReaderState" (SourceOperator), split-distributed: per subtask, the
// offsets of the list's elements in an operator state stream that is either
// inline in _metadata (a savepoint on JobManagerCheckpointStorage, or state
// under execution.checkpointing.data-inline-threshold) or a file beside it,
// named relative to the savepoint directory (or, in old or entropy-injected
// savepoints, by an absolute path, read only when it lies inside the
// directory). Each element is a byte array holding a
// SimpleVersionedSerialization frame (serializer version, length, bytes) of a
// KafkaPartitionSplit; KafkaPartitionSplitSerializer writes version 0 in
// every flink-connector-kafka release up to 5.0 (Flink 2.2): the topic as
// Java's modified UTF-8, the partition, the starting offset and the stopping
// offset. The starting offset is the split's current position: one past the
// last record the reader emitted before the savepoint, which is also what
// KafkaSource commits to its group for that checkpoint. A split that has not
// read a record yet keeps the marker it started with (earliest, latest,
// committed; see [Split.Marker]): it has no position, and [Source.Positions]
// leaves it out.
//
// Operators are named by uid: the operator ID in the savepoint is the 128-bit
// MurmurHash3 of the uid ([OperatorIDFromUID], as Flink's StreamGraphHasherV2
// and the State Processor API's OperatorIdentifier.forUid compute it). With
// a single source, no uid is needed.
//
// Read exactly and compared with Flink's own State Processor API on real
// savepoints of Flink 1.20.3 (flink-connector-kafka 3.4.0-1.20, metadata
// version 4) and Flink 2.2.0 (5.0.0-2.2, version 6), state inline and in
// files, jobs with one and two sources, a source with a partition it has not
// read (TestAgainstFlink; the savepoints are kept in testdata). Version 5
// (Flink 2.0, 2.1) is read from the code of Flink 2.2, which writes 6 and
// reads both, not from a savepoint of those releases. A metadata version above
// 6 (Flink's next format, 7, adds a field to every subtask state) is refused
// with a [*VersionError]: nothing is guessed.
//
// # Strictness
//
// Every count and length is checked against what the file holds before
// anything is allocated, and memory stays near the size of the source's
// state: a savepoint of 10,000 splits (500 kB of state in 8 files) is read
// in a few MB (BenchmarkKafkaSource10000). Errors say what is wrong and
// where: a [*FormatError] (file, byte offset, what was being read) matching
// [ErrNotSavepoint], [ErrTruncated], [ErrMalformed], [ErrMissingFile],
// [ErrUnsupported] (compressed or file-merged state) or [ErrUnplaceable] (a
// state that is not a KafkaSource's, a partition held twice, a source that
// finished); a [*VersionError]; a [*SourceError] matching [ErrNoSource] or
// [ErrAmbiguous]. All of them match [ErrInvalid].
//
// # The cutover's rule
//
// [Compare] holds a group's committed offsets against a source's positions
// on the partitions in scope, as the design asks: a group behind the
// savepoint costs duplicates (a cutover from the group copies S - C records
// again; one from the savepoint none); a group ahead of it, a partition the
// savepoint has and the group lacks, and a commit the savepoint cannot vouch
// for stop the cutover ([Comparison.Consistent]).
package flinksavepoint
