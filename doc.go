// Package mm2cutover moves Kafka cluster-to-cluster replication from a Flink
// job (or MirrorMaker 1, or any consumer/producer replicator) to MirrorMaker
// 2's MirrorSourceConnector on a distributed Kafka Connect cluster, without
// losing a record.
//
// What moves is the source read position. The old job's consumer group holds,
// per source partition, the committed offset C: the next offset to read.
// MirrorSourceConnector keeps, per source partition, the offset M of the last
// record it replicated, under the Connect source partition
// {"cluster": <source alias>, "topic": <topic>, "partition": <n>}, and on start
// seeks to M+1. So the cutover writes M = C-1 for every partition with C > 0,
// deletes the stored offset where C = 0 (the consumer's auto.offset.reset =
// earliest then reads from 0), and refuses to go on when C is missing, below
// the log start (the data expired) or beyond the log end. Source and target
// offsets are never compared or translated.
//
// A Flink job's group can lag the job's final savepoint by one commit (Flink
// commits asynchronously and loses the last commit when it stops), so for a
// Flink job C is best read from that savepoint: package flinksavepoint reads
// the KafkaSource's positions from it, exactly, and holds the group against
// them (behind: duplicates, counted; ahead: stop). Package flinkrest asks
// Flink's REST API whether the job ended at that savepoint.
//
// The cutover, step by step:
//
//  1. Precheck, read-only: the group has committed offsets for every partition
//     of the topics in scope; log start <= C <= log end; the offsets stay
//     unchanged over a window (a Flink group looks Empty even while Flink
//     runs, so only stability and the operator's word prove it stopped); the
//     target topics exist with equal partition counts; the Connect worker is
//     new enough and has the connector plugin; the connector config passes
//     the lint and Connect's own validation; and every target name, cluster
//     address and topic filter checked is the one that config makes MM2 use,
//     the Connect workers' own cluster (where MM2's producer writes) included.
//  2. Plan: a versioned manifest with a per-partition decision (set M, clear,
//     or block) and its reason, fingerprinted; a plan with a blocked entry
//     cannot be applied.
//  3. Create the connector STOPPED (Kafka 3.7+), so it never runs before its
//     offsets are set.
//  4. Back up whatever offsets the connector name already has (offsets are
//     keyed by name and outlive a deleted connector).
//  5. Guard: offsets that differ from the plan mean the connector ran or
//     another plan was applied: refuse. Offsets equal to the plan: already
//     applied, nothing to do.
//  6. Apply the plan with one PATCH /connectors/{name}/offsets.
//  7. Read the offsets back until they equal the plan (GET is eventually
//     consistent) or a deadline passes.
//  8. Resume only on explicit approval.
//  9. Verify after resume: tasks RUNNING, offsets advancing, the first record
//     replicated per partition is the source record at C, lag converging.
//  10. Rollback: before resume, delete the connector and its offsets; after
//     resume, stop it and turn its offsets M' back into group offsets M'+1.
//
// Before every write to the connector — the create, the PATCH, the resume,
// the stop, the reset and the delete of a rollback — and before a rollback
// commits its offsets to a group, the step proves that the connector of that
// name is the plan's: its live configuration has the plan's alias, topics and
// digest, on the plan's clusters (verify.ConfirmConnector). A connector of
// the same name that is another flow's is refused, never written. The group's
// members are read under both group protocols: the classic one, and the
// consumer protocol of KIP-848 (Kafka 4.0+) where the brokers support it.
//
// Which package to import for what:
//
//   - cutover runs the steps that write — apply, resume, verify after
//     resume, rollback — in their safe order: Open with the clients, the
//     plan and its configuration, then one call per step, with hooks for
//     the record of the change and for approval. Start here.
//   - verify reads and proves: the precheck (the snapshot a plan is built
//     from), the recheck before a write, the proofs the writes of cutover
//     take, the read-back, the boundary, lag and acceptance checks.
//   - plan is the manifest: built from the precheck's snapshot, versioned
//     JSON, fingerprinted, rendered to a PATCH body or Strimzi resources.
//   - offsets holds the pure conversion rules (C to M = C-1) and the
//     offset value types.
//   - connect is the Kafka Connect REST client, its state guards and
//     retries, the MirrorSourceConnector configuration builder and lint;
//     kafkaadmin reads (and, for a rollback, commits) group offsets, group
//     state and log bounds with sarama.
//   - flinksavepoint reads a Flink savepoint's KafkaSource positions;
//     flinkrest asks Flink's REST API whether the job stopped at it.
//   - errkind says what any error of these packages means for the caller
//     (retry, refused, check failed, rejected, outcome unknown, not
//     approved, unclassified), and the exit status a tool gives it; redact
//     says what counts as a secret, and hides it.
//   - connect/connectfake and kafkaadmin/kafkafake are fakes of a Connect
//     worker and a Kafka cluster for a tool's own tests, pinned to the
//     real systems' answers.
//
// Every I/O call takes a context.Context first; the library never prints,
// it logs to the *slog.Logger it is given; secrets never reach a plan, a
// log line, an error or a report.
//
// The text of every sentinel error and every typed error of a package
// starts with the package's name and ": ", once: a sentinel returned as it
// is reads "plan: invalid plan", a typed error with its details "offsets:
// orders-0: committed offset beyond log end offset 12 > 10". A typed error
// writes the words of its own package's sentinel after that prefix; an
// error of another package that it wraps keeps its own ("plan: partition
// orders-0: offsets: ..."). Match errors with errors.Is and errors.As, never
// by their words; errkind.Of sorts any of them into the kinds a tool
// acts on.
package mm2cutover
