package connect

import (
	"fmt"
	"strings"
)

// Exactly-once source support (KIP-618, Kafka 3.3+, distributed mode
// only), as Kafka Connect's runtime implements it (SourceConnectorConfig,
// DistributedConfig, DistributedHerder, Worker):
//
//   - Every worker of the group needs exactly.once.source.support=enabled
//     (DistributedConfig). A worker with disabled or preparing runs the
//     tasks it is given as ordinary, at-least-once source tasks,
//     whatever the connector asks (DistributedHerder.startTask): one such
//     worker in the group is enough to lose the guarantee for the tasks
//     it holds.
//   - The connector's exactly.once.support=required makes Connect refuse,
//     on validate and on create, a configuration the connector cannot run
//     exactly-once (Connector.exactlyOnceSupport) and a worker without
//     support (DistributedHerder.validateSourceConnectorExactlyOnceSupport:
//     "This worker does not have exactly-once source support enabled.").
//     Validation is answered by the worker that receives the request, not
//     forwarded: to learn whether every worker is enabled, ask each one.
//   - MirrorSourceConnector answers SUPPORTED only when its source
//     consumer reads read_committed (KAFKA-14021, first released in 3.5.0;
//     MirrorSourceConnector.exactlyOnceSupport reads
//     source.consumer.isolation.level over consumer.isolation.level), and
//     cannot define transaction boundaries itself: transaction.boundary
//     poll (the default: one transaction per batch the task returns) or
//     interval, never connector.
//   - Each task writes its records and its source offsets with one
//     transactional producer whose transactional.id is
//     <worker group.id>-<connector>-<task> (Worker.taskTransactionalId), to
//     the connector's offsets topic: offsets.storage.topic in the
//     connector's configuration, or the worker's offset.storage.topic.
//     Before a new generation of tasks starts, and before an offsets
//     PATCH or DELETE, the leader fences the previous producers
//     (Admin.fenceProducers with the connector's admin client).
//   - The principal of the connector's producer (and of its admin client,
//     which fences) needs WRITE and DESCRIBE on those transactional IDs,
//     and READ, WRITE and DESCRIBE on the offsets topic (CREATE if it does
//     not exist); IDEMPOTENT_WRITE on the cluster only on brokers before
//     2.8. The workers' own principal needs WRITE and DESCRIBE on the
//     transactional ID connect-cluster-<group.id> (the leader writes the
//     config topic in transactions).

// Connector configuration keys of exactly-once source support.
const (
	ExactlyOnceSupportKey  = "exactly.once.support"
	TransactionBoundaryKey = "transaction.boundary"
	// TransactionBoundaryIntervalKey applies only with the interval boundary.
	TransactionBoundaryIntervalKey = "transaction.boundary.interval.ms"
	// OffsetsStorageTopicKey names a connector's own offsets topic; empty
	// or absent, the connector uses the workers' offset.storage.topic.
	OffsetsStorageTopicKey = "offsets.storage.topic"
	// WorkerExactlyOnceKey is the worker setting (not a connector one)
	// every worker of the group needs set to "enabled".
	WorkerExactlyOnceKey = "exactly.once.source.support"
)

// workerExactlyOnceDisabled is the message a worker without exactly-once
// source support gives, under exactly.once.support, when it validates a
// configuration that requires it (DistributedHerder, Kafka 3.3 to 4.3).
const workerExactlyOnceDisabled = "does not have exactly-once source support enabled"

// versionExactlyOnceMirror is the first Kafka release whose
// MirrorSourceConnector implements exactlyOnceSupport (KAFKA-14021). Before
// it, validate of exactly.once.support=required answers that the connector
// does not implement the API (KIP-618 itself is from 3.3).
var (
	versionExactlyOnce       = kafkaVersion{3, 3}
	versionExactlyOnceMirror = kafkaVersion{3, 5}
	// versionChainedTombstones is the first release whose
	// ConnectorOffsetBackingStore writes null offsets of a connector with
	// an offsets topic of its own to the workers' topic first and to its
	// own in the callback (KAFKA-15018): with exactly-once, Worker has
	// committed the offsets write's transaction by then, and the write
	// never completes (4.3.1 included).
	versionChainedTombstones = kafkaVersion{3, 8}
)

// ExactlyOnceOf reports whether a connector configuration asks Connect to
// run it exactly-once and to refuse it otherwise: exactly.once.support is
// required (in any case). "requested", the default, runs it exactly-once
// only where the workers happen to support it, and is not counted.
func ExactlyOnceOf(config map[string]string) bool {
	return strings.EqualFold(strings.TrimSpace(config[ExactlyOnceSupportKey]), "required")
}

// OffsetsTopicOf returns the offsets topic a source connector of config
// reads and writes its offsets in: its own offsets.storage.topic when set,
// else workerTopic, the workers' offset.storage.topic (REST does not show
// it; "" when unknown). Connect reads a connector with a topic of its own
// from both, its own winning, and writes both (ConnectorOffsetBackingStore).
func OffsetsTopicOf(config map[string]string, workerTopic string) string {
	if t := strings.TrimSpace(config[OffsetsStorageTopicKey]); t != "" {
		return t
	}
	return workerTopic
}

// TransactionalIDs returns the transactional IDs the tasks of a connector
// named connector write with when it runs exactly-once on the Connect
// group workerGroup (the workers' group.id), one per task, for tasks.max
// tasks: "<group>-<connector>-<task>" (Worker.taskTransactionalId).
func TransactionalIDs(workerGroup, connector string, tasks int) []string {
	ids := make([]string, 0, max(tasks, 1))
	for i := range max(tasks, 1) {
		ids = append(ids, fmt.Sprintf("%s-%s-%d", workerGroup, connector, i))
	}
	return ids
}

// WorkerTransactionalID returns the transactional ID the leader of an
// exactly-once Connect group writes its config topic with (the workers'
// own principal needs WRITE on it): "connect-cluster-<group.id>"
// (DistributedConfig.transactionalProducerId).
func WorkerTransactionalID(workerGroup string) string { return "connect-cluster-" + workerGroup }

// RequireExactlyOnceVersion returns nil when a worker that reports
// version in GET / can run MirrorSourceConnector exactly-once: Kafka 3.5
// or newer (KIP-618 is from 3.3, MirrorSourceConnector's support from
// 3.5, KAFKA-14021). Otherwise it returns a *VersionError (matching
// ErrUnsupportedVersion), or the error of a version that does not parse.
// Every version the cutover admits (RequireCutoverVersion, 3.7+) passes.
func RequireExactlyOnceVersion(version string) error {
	v, err := parseKafkaVersion(version)
	if err != nil {
		return err
	}
	if !v.atLeast(versionExactlyOnce) {
		return &VersionError{Feature: "exactly-once source support (KIP-618)", Need: versionExactlyOnce.String(), Have: version}
	}
	if !v.atLeast(versionExactlyOnceMirror) {
		return &VersionError{Feature: "exactly-once MirrorSourceConnector (KAFKA-14021)", Need: versionExactlyOnceMirror.String(), Have: version}
	}
	return nil
}

// WorkerLacksExactlyOnce reports whether Connect's validation of a
// configuration with exactly.once.support=required says that the worker
// which answered has no exactly-once source support
// (exactly.once.source.support is not enabled on it). A worker answers
// for itself only: ask each worker of the group.
func WorkerLacksExactlyOnce(infos *ConfigInfos) bool {
	if infos == nil {
		return false
	}
	for _, ci := range infos.Configs {
		if ci.Value.Name != ExactlyOnceSupportKey {
			continue
		}
		for _, e := range ci.Value.Errors {
			if strings.Contains(e, workerExactlyOnceDisabled) {
				return true
			}
		}
	}
	return false
}

// lintExactlyOnce is Lint's part for exactly-once source support; see Lint.
func lintExactlyOnce(config map[string]string, workerVersion string, exp LintExpectations, add func(sev Severity, key, msg, advice string)) {
	support := strings.ToLower(strings.TrimSpace(config[ExactlyOnceSupportKey]))
	required := support == "required"
	if exp.ExactlyOnce && !required {
		add(SeverityError, ExactlyOnceSupportKey, fmt.Sprintf("is %s, not required: the cutover was asked to run MM2 exactly-once, and Connect would run it at least once wherever a worker lacks the support", shown(config, ExactlyOnceSupportKey)),
			"set exactly.once.support=required (connect.MirrorSource.ExactlyOnce)")
	}
	if support == "requested" {
		add(SeverityWarning, ExactlyOnceSupportKey, "is requested: Connect runs the connector exactly-once only on workers with exactly.once.source.support=enabled, and at least once on any other, without a word",
			"set it to required, so that Connect refuses a worker or a configuration that cannot run it exactly-once")
	}
	if !required {
		return
	}
	if _, err := parseKafkaVersion(workerVersion); err == nil {
		if err := RequireExactlyOnceVersion(workerVersion); err != nil {
			add(SeverityError, ExactlyOnceSupportKey, fmt.Sprintf("is required, but Kafka %s cannot run MirrorSourceConnector exactly-once: %v", workerVersion, err),
				"run the connector on Kafka 3.5 or newer")
		}
	}
	if v, key := effectiveSourceConsumer(config, "isolation.level"); !strings.EqualFold(v, "read_committed") {
		add(SeverityError, key, fmt.Sprintf("is %q: MirrorSourceConnector runs exactly-once only when its source consumer reads read_committed (Connect refuses the configuration)", v),
			"set source.consumer.isolation.level=read_committed")
	}
	switch b := strings.ToLower(strings.TrimSpace(config[TransactionBoundaryKey])); b {
	case "", "poll":
	case "connector":
		add(SeverityError, TransactionBoundaryKey, "is connector: MirrorSourceConnector does not define transactions itself (Connect refuses the configuration)",
			"set transaction.boundary=poll")
	case "interval":
		add(SeverityWarning, TransactionBoundaryKey, "is interval: MM2's records become visible to read_committed readers of the target only when a transaction commits, every transaction.boundary.interval.ms (by default the workers' offset.flush.interval.ms), and the pause of the cutover grows by as much",
			"use transaction.boundary=poll, one transaction per batch")
	default:
		add(SeverityError, TransactionBoundaryKey, fmt.Sprintf("is %q, not poll, interval or connector", b), "set transaction.boundary=poll")
	}
	if v, err := parseKafkaVersion(workerVersion); err == nil && v.atLeast(versionChainedTombstones) && strings.TrimSpace(config[OffsetsStorageTopicKey]) != "" {
		add(SeverityWarning, OffsetsStorageTopicKey, fmt.Sprintf("is set on an exactly-once connector: Kafka Connect %s cannot write a null offset for it (the write never completes: the PATCH or DELETE of its offsets gets no answer), so a rollback before resume cannot delete its offsets (DELETE /connectors/{name}/offsets); the cutover's PATCH leaves out the deletions that change nothing", workerVersion),
			"leave offsets.storage.topic unset (the workers' offsets topic) to keep the rollback before resume")
	}
	for _, k := range []string{"producer.override.transactional.id", "producer.override.enable.idempotence"} {
		if _, ok := config[k]; ok {
			add(SeverityWarning, k, "is set, but Connect replaces it for the tasks of an exactly-once connector (Worker.exactlyOnceSourceTaskProducerConfigs): it has no effect",
				"remove it")
		}
	}
}
