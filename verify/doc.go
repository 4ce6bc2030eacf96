// Package verify proves each step of the cutover: that Connect holds exactly
// the offsets of the plan before the connector resumes, and that MM2, once
// resumed, continues from the first record the old job had not replicated.
//
// As in the other packages, the comparisons are pure functions over values
// already fetched — CompareReadBack, Guard, Lag, CompareRecords — and the I/O
// is thin: WaitReadBack polls Connect's eventually consistent GET
// /connectors/{name}/offsets until it equals the plan or a deadline passes;
// CheckBoundary reads, per partition, the first record MM2 wrote to the
// target and the source record at the group offset C, and compares them;
// WaitCaughtUp follows the lag (ReadLag) until MM2 has replicated what the
// source held when it began; Acceptance checks the shape the design
// insists on (no checkpoint or heartbeat connector, no offset-syncs topic,
// the connector still configured as the plan recorded).
//
// "100% equal" is the only pass: a read-back lists every partition as match,
// wrong value, missing or unexpected, with a go-cmp diff of the two lists.
package verify
