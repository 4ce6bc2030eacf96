// Package verify proves each step of the cutover against the clusters, and
// writes nothing:
// that nothing blocks it before a plan is built, that a plan still
// describes the clusters before anything is written, and that MM2, once
// resumed, continues from the first record the old job had not replicated.
//
// As in the other packages, the rules are pure functions over values
// already read — Recheck, CheckConnector, CheckRollbackGroup, NextOffsets
// and Lag, CompareRecords, RecordDigest.Differences — and the I/O is thin:
//
//   - Precheck runs the read-only checks of the first step and returns the
//     snapshot a plan is built from (plan.Build); its inputs other than the
//     group are OffsetsInput values (FileOffsets, ConnectorOffsets). Every
//     target name, cluster address and topic filter it uses is read from
//     the connector configuration it is given (offsets.PolicyOf,
//     connect.TopicFilter). Beyond the group and offsets it checks that MM2's
//     clients and producer reach the clusters it reads (the Connect workers'
//     own cluster included), the replication factors of the topics MM2
//     creates, Connect's internal topics, record size limits along the
//     path, the tool's permissions, other writers of the topics and the
//     Connect REST API's exposure.
//   - Observe reads what a plan depends on (cluster IDs, the group's members
//     and commits, source partitions and bounds, target topics and ends),
//     each fact once, and ObserveWriters where MM2's records go, for Recheck
//     before every step that writes.
//   - ConfirmConnector reads a connector's live configuration and proves,
//     with CheckConnector, that it is the plan's (name, clusters, alias,
//     topics, configuration digest), before every write to it: a connector
//     of the plan's name that is another flow's is never written.
//   - CaptureBoundary records, just before resume, the first record MM2 will
//     copy on each partition; CheckBoundary compares the first record MM2
//     wrote to the target with it and counts the duplicates the old job left.
//   - Prepare comes first in every step that writes: the plan valid and not
//     blocked, the configuration the plan's and passing the worker's lint,
//     the replication policy taken from that configuration, the clusters
//     re-read (or a recent Observation reused) and compared with the plan.
//   - The proofs: the writes of package cutover take values only the reads
//     of this package make — Reached (ReadClusters, Prepare: the clusters'
//     IDs, read), Guarded (GuardOffsets), Resumable (CheckResumable),
//     NeverRan (CheckNeverRan) and *Reverse (ReversePlan) — so a write
//     cannot be called before the read that proves it safe; ReadBack and
//     GuardRollbackGroup are the reads between them. Package cutover runs
//     them all in order.
//   - ReadLag and WaitCaughtUp follow MM2's progress.
//   - Acceptance checks the shape the design insists on.
//
// The thin I/O helpers take small interfaces that *kafkaadmin.Client and
// *connect.Client implement — [BoundsReader], [EndsReader], [FirstRecordReader],
// [RecordReader], [BoundarySource], [LagSource], [ClusterReader],
// [MirrorOffsetsReader], [ConnectOffsetsReader] — so a tool's tests can
// drive them with fakes.
// Precheck and Acceptance read many kinds of facts and take the clients
// themselves.
//
// Every error of the package says its kind for package errkind (a
// refusal, a failed check, ...); errkind.Of classifies any error of the
// module's packages.
//
// What Connect holds is compared elsewhere, without Kafka: the comparison is
// offsets.CompareReadBack, the guard before an apply is plan.Guard, and
// connect.Client.WaitMirrorOffsets reads back until they match — so a tool
// that only talks to Connect imports neither this package nor sarama.
//
// Every read of records that MM2 copies is read_committed, as MM2 reads: a
// record of an aborted transaction is never the record at C, and a
// transaction marker is never lag. "Caught up" means no committed data
// record lies between MM2's next offset and the last stable offset. The one
// read_uncommitted read is the precheck's of the target offsets moved
// during its window: a live transactional writer's records count there,
// transaction markers alone do not.
package verify
