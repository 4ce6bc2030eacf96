// Package offsets holds the arithmetic of the cutover: the value types for a
// source partition, a consumer group's committed offset, a partition's log
// bounds and MirrorSourceConnector's Connect source offset, and the pure rules
// that turn one into the other. Nothing here does I/O; callers fetch snapshots
// (package kafkaadmin, package connect) and pass them in. The I/O packages
// return these types as they are: kafkaadmin reads a group's commits as a
// [GroupOffsets] and partitions' bounds as [LogBounds], connect reads
// MirrorSourceConnector's offsets as [ConnectOffset] values.
//
// # Two kinds of offset
//
// A consumer group's committed offset C is the next offset to read. The
// MirrorSourceTask of MirrorMaker 2 instead stores, per source partition, the
// offset M of the last record it replicated, and on start seeks to M+1. The
// two are never the same number, and the types keep them apart: [GroupOffset]
// is a C, [MirrorOffset] is an M. Both are present or absent; there is no -1
// sentinel. The zero value of each is the absent one, so a value nobody set
// never looks like a position.
//
// # The decision per partition
//
// [Decide] applies the table of the design, checked in this order:
//
//   - the partition or the bounds are malformed: block, re-read the source
//   - C is missing: block; never fall back to auto.offset.reset silently
//   - C is negative: block, it is not a Kafka position
//   - C > log end offset: block as an invalid position
//   - C < log start offset: block as expired, unless the operator accepted
//     the loss ([DecideAcceptingLoss]); then MM2 starts at the log start
//     offset (M = logStart-1) and [Decision.Lost] records logStart-C
//   - C = 0: clear the partition's Connect offset (null), so that
//     auto.offset.reset=earliest reads from offset 0
//   - C > 0: set M = C-1, so that MM2 reads from C
//
// A blocked [Decision] carries a non-nil Err (a [*DecisionError] that matches
// one of the sentinel errors with [errors.Is]); Err is nil otherwise. Every
// decision has a [Decision.Reason] a person can act on.
//
// # The reverse, for rollback
//
// After MM2 has run, its Connect offset M' becomes the group offset M'+1 that a
// restarted Flink job (or any consumer) resumes from: [MirrorOffset.GroupOffset].
// A null Connect offset, or no offset at all, means no position.
//
// No function in this package panics, whatever the input: negative numbers,
// math.MaxInt64 and malformed JSON all come back as errors.
package offsets
