// Package verify proves each step of the cutover: that a plan still
// describes the clusters before anything is written, that Connect holds
// exactly the offsets of the plan before the connector resumes, and that
// MM2, once resumed, continues from the first record the old job had not
// replicated.
//
// As in the other packages, the rules are pure functions over values
// already fetched — Recheck, CompareReadBack, Guard, NextOffsets and Lag,
// CompareRecords, RecordDigest.Differences — and the I/O is thin:
//
//   - Observe reads what a plan depends on (cluster IDs, the group's members
//     and commits, source partitions and bounds, target topics and ends),
//     each fact once, for Recheck before every step that writes.
//   - WaitReadBack polls Connect's eventually consistent GET
//     /connectors/{name}/offsets until it equals the plan or a deadline
//     passes.
//   - CaptureBoundary records, just before resume, the first record MM2 will
//     copy on each partition; CheckBoundary compares the first record MM2
//     wrote to the target with it and counts the duplicates the old job left.
//   - ReadLag and WaitCaughtUp follow MM2's progress.
//   - Acceptance checks the shape the design insists on.
//
// Every read of records is read_committed, as MM2 reads: a record of an
// aborted transaction is never the record at C, and a transaction marker
// is never lag. "Caught up" means no committed data record lies between
// MM2's next offset and the last stable offset.
//
// "100% equal" is the only pass: a read-back lists every partition as match,
// wrong value, missing or unexpected, with a go-cmp diff of the two lists.
package verify
