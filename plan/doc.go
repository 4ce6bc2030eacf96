// Package plan is the migration manifest of the cutover: the record, written
// before anything changes, of where MirrorMaker 2 will resume on every source
// partition and why. It is built from data the caller already fetched
// ([Build] takes a [Spec] and a [Snapshot]); this package does no I/O beyond
// the io.Reader and io.Writer it is handed.
//
// # What a plan holds
//
// A [Plan] names the cutover (source and target cluster IDs, connector name,
// source.cluster.alias, the consumer group, an optional Flink savepoint, the
// connector configuration with secrets redacted, its digest and the
// replication policy it names) and holds one
// [Entry] per source partition in scope, sorted by topic and partition: the
// committed group offset C, the log bounds, the target's end offset, and the
// decision of package offsets (set M, clear, or block) with its reason.
// Expired data is only ever skipped through an [ExpiredAcceptance] recorded
// in the plan, naming who accepted it; the entry then states how many records
// are lost.
//
// A plan with a blocked entry is a report, not an instruction: [Plan.Applicable]
// is false and the renderers for Connect ([Plan.PatchBody],
// [Plan.ConnectOffsets], [Plan.WriteStrimziConfigMap], [Plan.WriteStrimzi])
// refuse it with a [*BlockedError].
//
// # Strimzi
//
// A connector Strimzi owns (a KafkaConnector on a KafkaConnect with
// strimzi.io/use-connector-resources, or a KafkaMirrorMaker2's) is never
// written over REST: the operator deletes what no resource defines.
// [Plan.WriteStrimzi] renders the resource (state stopped, alterOffsets and
// listOffsets) and the alter ConfigMap under the key Strimzi reads for that
// kind ([StrimziOffsetsKey]); [ParseStrimziOffsets] reads back the offsets
// Strimzi listed into the other ConfigMap, for offsets.CompareReadBack.
//
// # Encoding
//
// [Plan.Encode] writes JSON in one canonical form: fields in a fixed order,
// entries sorted, integers as plain JSON integers, times in UTC RFC 3339. The
// fingerprint is "sha256:" and the hex SHA-256 of the compact canonical form
// of every field except the fingerprint itself, so it does not depend on
// whitespace. [Decode] is strict: unknown fields, a field given twice,
// trailing data, a missing required field, a number that is not a 64-bit
// integer, a schema version it does not know, unsorted or duplicate
// partitions, an action that does not follow from C and the bounds, and a
// fingerprint that does not match the content are each an error (see the
// sentinel errors). Encode checks the same rules, so a plan changed after
// Build cannot be written.
//
// # Schema versions
//
// [SchemaVersion] is 4. The rule for reading older versions: a reader of
// version N decodes every version from 1 to N, each older version through a
// conversion written in this package that maps it onto version N without
// guessing (a field version N needs that an older file lacks makes the
// conversion fail rather than default); the fingerprint of an older file is
// checked against that version's canonical form before conversion. Fields are
// never renamed or given a new meaning within a version; any change to the
// canonical form is a new version. A file with a version newer than the
// reader, or one it does not know, is refused whole with a
// [*SchemaVersionError], never partly read.
//
// Version 2 added "offsets_from" ([Plan.OffsetsFrom]: whether C came from
// the group, a file or another connector's offsets). A version 1 file does
// not say, and the conversion does not guess: it decodes to the zero
// [OffsetsSource], "not recorded", which the re-checks before each step treat
// like a group plan, the strictest rule. A version 1 plan keeps its version
// when encoded again, so its fingerprint still matches.
//
// Version 3 changed the rule of "config_digest" and added a kind of
// "offsets_from". [ConfigDigest] now redacts the values of secret keys and
// nothing else, so that a password equal to (or inside) an ordinary value no
// longer makes a password rotation change the digest; a version 1 or 2 plan
// keeps its version's rule: [Plan.CheckConfig] compares a configuration with
// it by that rule. And "offsets_from" may be "flink-savepoint" (C from a
// Flink job's final savepoint, [FromFlinkSavepoint]); a version 2 file with
// that kind is refused.
//
// Version 4 added "connector_config" ([Plan.ConnectorConfig]: the
// configuration, redacted, without "name") and "replication_policy"
// ([Plan.ReplicationPolicy]: how the source topics are named on the target,
// as that configuration names them). So the steps after the plan take the
// policy from the plan ([Plan.Policy]), not from their caller, and
// [Plan.CheckConfig] names the keys in which a configuration differs
// ([ConfigChangedError.Differences]) rather than two digests. An older file
// does not record them and the conversion does not guess: [Plan.Policy]
// refuses it ([ErrConfigNotRecorded]) until [Plan.AttachConfig] proved a
// configuration is the one its digest names and recorded it in memory. The
// fingerprint of an older file never covers what was attached, and Encode
// writes the file as it was.
//
// # Secrets
//
// The connector configuration is stored redacted: [Plan.ConnectorConfig]
// holds redact.Config's form, where the values of secret keys, and any
// value equal to or containing a secret, are redact.Redacted (a config
// provider reference such as ${file:...:password} is kept: it names where
// the secret lives). [ConfigDigest] is computed after only the values of
// secret keys were replaced. What counts
// as a secret key is package redact's rule (Kafka's own PASSWORD
// definitions first, key names as the fallback), the one rule for every
// place a configuration is shown or stored.
//
// # Inputs from other tools
//
// Group offsets can come from the CSV that kafka-consumer-groups.sh
// --reset-offsets --export writes ([ParseResetOffsetsCSV]) or from another
// MirrorSourceConnector's GET /connectors/{name}/offsets, where each M becomes
// C = M+1 ([GroupOffsetsFromConnector]). The plan records which input it was
// built from ([Spec.OffsetsFrom]).
package plan
