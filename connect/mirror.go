package connect

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/redact"
)

// Class names used in MirrorSourceConnector configurations.
const (
	MirrorSourceConnectorClass = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
	ByteArrayConverterClass    = "org.apache.kafka.connect.converters.ByteArrayConverter"
)

// MirrorSource describes the MirrorSourceConnector the cutover creates. Its
// Config method renders the connector configuration with the defaults of the
// design (seed section 4): no topic config or ACL sync, no offset-syncs,
// topic refresh every 60 seconds, ByteArrayConverter for keys, values and
// headers, source.consumer.auto.offset.reset=earliest (partitions whose
// offset is deleted start at the beginning), the identity replication policy.
//
// The seed's offset.consistency.enabled is deliberately not emitted: it is
// not a Kafka configuration (Lint warns about it).
//
// String never shows secret values.
type MirrorSource struct {
	Name        string // connector name; offsets are keyed by it
	SourceAlias string // source.cluster.alias; default "source". It is the "cluster" of every source partition
	TargetAlias string // target.cluster.alias; default "target"

	SourceBootstrap string // source.cluster.bootstrap.servers
	TargetBootstrap string // target.cluster.bootstrap.servers

	// SourceClient and TargetClient are client settings for each cluster
	// without prefix, e.g. "security.protocol": "SASL_SSL", "sasl.mechanism",
	// "sasl.jaas.config", "ssl.truststore.location". They are written as
	// source.cluster.* and target.cluster.*. Prefer config provider
	// references (${file:/path:key}) for secrets. They may not hold
	// bootstrap.servers: it would replace SourceBootstrap or TargetBootstrap,
	// the addresses a cutover checks.
	SourceClient map[string]string
	TargetClient map[string]string

	// Topics are exact source topic names. MM2 reads "topics" as a list of
	// Java regular expressions that must match a whole topic name; each name
	// is written with its dots escaped so that it matches only itself. MM2's
	// default topics.exclude still drops names like "*.internal",
	// "*-internal", "*.replica" and "__*".
	Topics []string
	// TopicPatterns are Java regular expressions added to "topics" as given.
	TopicPatterns []string

	TasksMax          int                       // tasks.max; default 1 ([TasksFor] chooses one by the partitions)
	ReplicationPolicy offsets.ReplicationPolicy // the zero value is the identity policy; SourceAlias comes from the field above
	IsolationLevel    string                    // source.consumer.isolation.level: "read_committed" or "read_uncommitted"; "" leaves it unset (Lint warns)
	RefreshInterval   time.Duration             // refresh.topics.interval.seconds; default 60s
	Converter         string                    // key/value/header converter class; default ByteArrayConverterClass

	// OffsetSyncs, when set, lets the connector write offset syncs to a
	// topic placed explicitly (see [OffsetSyncsTopic]): the operator's
	// decision for a worker below Kafka 3.9, which writes them anyway.
	// Nil renders emit.offset-syncs.enabled=false.
	OffsetSyncs *OffsetSyncsTopic

	// ExactlyOnce runs the connector with Kafka Connect's exactly-once
	// source support (KIP-618): exactly.once.support=required (Connect
	// then refuses to validate or create it on a worker without
	// exactly.once.source.support=enabled, or in a configuration it cannot
	// run exactly-once), transaction.boundary=poll (one transaction per
	// batch: MirrorSourceConnector defines no boundaries of its own) and
	// source.consumer.isolation.level=read_committed, without which
	// MirrorSourceConnector does not support it (KAFKA-14021, Kafka 3.5+).
	// Each task then writes its records and its source offsets in one
	// transaction: a restart or a lost worker copies nothing twice for a
	// read_committed reader of the target. Every worker of the group must
	// run with exactly.once.source.support=enabled (a worker without it
	// runs the tasks it is given at least once); verify.Precheck asks each.
	ExactlyOnce bool

	// Extra keys are written last. They may add settings, never change
	// one the builder sets (ErrExtraClash).
	Extra map[string]string
}

// PartitionsPerTask is how many source partitions [TasksFor] gives one
// task of a MirrorSourceConnector when the flow is small enough for
// [TaskPartitionBudget]. A task starts copying only once it has read the
// stored offset of each of its partitions, one at a time
// (MirrorSourceTask.loadOffsets; each read of the worker's offset store,
// KafkaOffsetBackingStore.get, first reads the offsets topic to its end, a
// round trip to the Connect cluster's Kafka cluster): on a test worker
// (Kafka 4.3.1), about 3 ms a partition, more on a loaded one. The reads
// of tasks starting at once on a worker share its round trips, so the
// start takes about the partitions of one task times a round trip, and
// more tasks start sooner: at 10,000 partitions the first record was
// copied 4.8 s after the resume with 10 tasks and 2.3 s with 20
// (scalebench, medians of 3, a quiet machine), and on a loaded one 7.8 s
// with 20 and 2.8 s with 40 (medians of 2). 40 tasks of 10,000 partitions
// are 400,000 tasks times partitions, within [TaskPartitionBudget].
const PartitionsPerTask = 250

// TaskPartitionBudget bounds tasks.max times the source partitions for
// [TasksFor]: the heap the tasks of one connector take grows with both.
// MM2 deals the partitions out to its tasks round robin, so each task
// copies from every topic, and its consumer and its producer each hold the
// metadata of every partition of those topics (and metrics per partition):
// 0.4 to 0.8 KB per partition per task. On a test worker (Kafka 4.3.1,
// 50,000 partitions in 10 topics) 50 tasks ran a 768 MB heap out of memory
// (beside the offsets of earlier connectors) and kept a 2 GB heap in full
// collections, its class histogram holding 2.3 million PartitionInfo; with
// 10 tasks, 0.8 million. The budget, 200 to 400 MB, fits the worker image's
// default heap of 1 GB with room for the records in flight.
const TaskPartitionBudget = 500_000

// TasksFor returns the tasks.max for a MirrorSourceConnector copying
// partitions source partitions: one task per [PartitionsPerTask] of them,
// as many as [TaskPartitionBudget] allows, and at least 1: 40 tasks at
// 10,000 partitions. From 11,112 partitions the budget decides (25 tasks at
// 20,000, 10 at 50,000), and each task starts more slowly. tasks.max
// changes neither what is copied nor where it starts: MM2 deals the
// partitions out among its tasks, and Connect keeps one stored offset per
// partition whichever task copies it.
func TasksFor(partitions int) int {
	tasks := (partitions + PartitionsPerTask - 1) / PartitionsPerTask
	if partitions > 0 {
		tasks = min(tasks, TaskPartitionBudget/partitions)
	}
	return max(1, tasks)
}

// ErrClientBootstrap matches the error of [MirrorSource.Config] for client
// settings that hold bootstrap.servers.
var ErrClientBootstrap = errkind.New(errkind.Rejected, "connect: client settings may not set bootstrap.servers")

// ErrKeyMaterialKey matches the error of [MirrorSource.Config] for
// settings whose keys look like key material (redact.IsKeyMaterial): the
// lines of a PEM key pasted into a properties file without continuations,
// which Java's properties reader makes keys. They would reach Connect, the
// plan and every report that shows the configuration.
var ErrKeyMaterialKey = errkind.New(errkind.Rejected, "connect: a setting's key looks like key material")

// configErrors is the error of [MirrorSource.Config]: the problems found,
// one a line, after one "connect: "; it matches the sentinels among them
// ([ErrClientBootstrap]).
type configErrors []error

func (e configErrors) Error() string {
	lines := make([]string, len(e))
	for i, err := range e {
		lines[i] = words(err)
	}
	return "connect: mirror source config: " + strings.Join(lines, "\n")
}

// Unwrap returns the problems.
func (e configErrors) Unwrap() []error { return e }

// ErrorKind is errkind.Rejected: the settings are invalid.
func (e configErrors) ErrorKind() errkind.Kind { return errkind.Rejected }

// Config renders the connector configuration. It returns an error when a
// required field is missing or a value is invalid (a topic name Kafka would
// reject, a comma in a pattern, an unknown isolation level, client settings
// with bootstrap.servers, matching [ErrClientBootstrap]; a key that looks
// like key material, matching [ErrKeyMaterialKey]; Extra settings that
// change what the builder sets, matching [ErrExtraClash]).
func (m MirrorSource) Config() (map[string]string, error) {
	var errs []error
	if m.Name == "" {
		errs = append(errs, errors.New("connector name is empty"))
	}
	if m.SourceBootstrap == "" || m.TargetBootstrap == "" {
		errs = append(errs, errors.New("source and target bootstrap servers are required"))
	}
	var topics []string
	for _, t := range m.Topics {
		if !offsets.ValidTopic(t) {
			errs = append(errs, fmt.Errorf("topic %q is not a valid Kafka topic name", t))
			continue
		}
		topics = append(topics, strings.ReplaceAll(t, ".", `\.`))
	}
	for _, p := range m.TopicPatterns {
		if p == "" || strings.Contains(p, ",") {
			errs = append(errs, fmt.Errorf("topic pattern %q is empty or has a comma (topics is a comma-separated list)", p))
			continue
		}
		topics = append(topics, p)
	}
	if len(topics) == 0 && len(m.Topics) == 0 && len(m.TopicPatterns) == 0 {
		errs = append(errs, errors.New("no topics: list the topics to replicate"))
	}
	switch m.IsolationLevel {
	case "", "read_committed":
	case "read_uncommitted":
		if m.ExactlyOnce {
			errs = append(errs, errors.New("isolation level read_uncommitted with ExactlyOnce: MirrorSourceConnector runs exactly-once only when its source consumer reads read_committed"))
		}
	default:
		errs = append(errs, fmt.Errorf("isolation level %q is not read_committed or read_uncommitted", m.IsolationLevel))
	}
	if m.TasksMax < 0 {
		errs = append(errs, errors.New("tasks.max is negative"))
	}
	if m.RefreshInterval < 0 {
		errs = append(errs, errors.New("refresh interval is negative"))
	}
	if m.OffsetSyncs != nil {
		if err := m.OffsetSyncs.validate(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, c := range []struct {
		name, field string
		settings    map[string]string
	}{{"source", "SourceBootstrap", m.SourceClient}, {"target", "TargetBootstrap", m.TargetClient}} {
		if _, ok := c.settings["bootstrap.servers"]; ok {
			errs = append(errs, fmt.Errorf("%w: the %s client settings hold bootstrap.servers, which would replace %s (%s.cluster.bootstrap.servers)", ErrClientBootstrap, c.name, c.field, c.name))
		}
	}
	for _, c := range []struct {
		name     string
		settings map[string]string
	}{{"source client settings", m.SourceClient}, {"target client settings", m.TargetClient}, {"extra settings", m.Extra}} {
		n := 0
		for k := range c.settings {
			if redact.IsKeyMaterial(k) {
				n++
			}
		}
		if n > 0 {
			errs = append(errs, fmt.Errorf("%w: %d of the %s look like key material (a PEM block pasted without a \\ at the end of each line?); they are not shown", ErrKeyMaterialKey, n, c.name))
		}
	}
	if len(errs) > 0 {
		return nil, configErrors(errs)
	}

	cfg := map[string]string{
		"name":                              m.Name,
		"connector.class":                   MirrorSourceConnectorClass,
		"source.cluster.alias":              orDefault(m.SourceAlias, offsets.DefaultSourceAlias),
		"target.cluster.alias":              orDefault(m.TargetAlias, offsets.DefaultTargetAlias),
		"source.cluster.bootstrap.servers":  m.SourceBootstrap,
		"target.cluster.bootstrap.servers":  m.TargetBootstrap,
		"topics":                            strings.Join(topics, ","),
		"tasks.max":                         strconv.Itoa(max(m.TasksMax, 1)),
		"replication.policy.class":          m.ReplicationPolicy.Class(),
		"emit.offset-syncs.enabled":         "false",
		"sync.topic.configs.enabled":        "false",
		"sync.topic.acls.enabled":           "false",
		"refresh.topics.enabled":            "true",
		"refresh.topics.interval.seconds":   "60",
		"source.consumer.auto.offset.reset": "earliest",
		"key.converter":                     orDefault(m.Converter, ByteArrayConverterClass),
		"value.converter":                   orDefault(m.Converter, ByteArrayConverterClass),
		"header.converter":                  orDefault(m.Converter, ByteArrayConverterClass),
	}
	if m.ReplicationPolicy.Separator != "" {
		cfg["replication.policy.separator"] = m.ReplicationPolicy.Separator
	}
	if m.RefreshInterval > 0 {
		secs := int64((m.RefreshInterval + time.Second - 1) / time.Second)
		cfg["refresh.topics.interval.seconds"] = strconv.FormatInt(secs, 10)
	}
	if m.IsolationLevel != "" {
		cfg["source.consumer.isolation.level"] = m.IsolationLevel
	}
	if m.ExactlyOnce {
		cfg[ExactlyOnceSupportKey] = "required"
		cfg[TransactionBoundaryKey] = "poll"
		cfg["source.consumer.isolation.level"] = "read_committed"
	}
	if m.OffsetSyncs != nil {
		m.OffsetSyncs.apply(cfg)
	}
	for k, v := range m.SourceClient {
		cfg["source.cluster."+k] = v
	}
	for k, v := range m.TargetClient {
		cfg["target.cluster."+k] = v
	}
	var clash []string
	for k, v := range m.Extra {
		switch have, ok := cfg[k]; {
		case strings.HasPrefix(k, "source.cluster.") || strings.HasPrefix(k, "target.cluster."):
			clash = append(clash, k+" (a client setting: SourceClient or TargetClient)")
		case ok && have != v:
			clash = append(clash, k) // names only: a value may be a secret
		case !ok && exactlyOnceOwned[k]:
			clash = append(clash, k+" (exactly-once settings come from ExactlyOnce)")
		}
	}
	if len(clash) > 0 {
		sort.Strings(clash)
		return nil, configErrors{fmt.Errorf("%w: %s", ErrExtraClash, strings.Join(clash, ", "))}
	}
	for k, v := range m.Extra {
		cfg[k] = v
	}
	return cfg, nil
}

// exactlyOnceOwned are the exactly-once keys only [MirrorSource.ExactlyOnce]
// sets: Extra may not set them, whether or not the builder did.
var exactlyOnceOwned = map[string]bool{ExactlyOnceSupportKey: true, TransactionBoundaryKey: true, TransactionBoundaryIntervalKey: true}

// ErrExtraClash matches the error of [MirrorSource.Config] for Extra
// settings that would change a key the builder sets from the fields (the
// connector's name, class, aliases, bootstrap servers, topics, tasks.max,
// replication policy, converters, the offset-syncs decision, the source
// consumer's reset and isolation, the exactly-once settings of
// ExactlyOnce — exactly.once.support, transaction.boundary and
// transaction.boundary.interval.ms, refused in Extra even when the
// builder leaves them unset) or the settings the cutover fixes (no
// topic configuration or ACL sync), or that hold a client setting
// (source.cluster.* or target.cluster.*: SourceClient and TargetClient
// carry those, where bootstrap.servers is refused). A key set to the
// builder's own value is accepted.
var ErrExtraClash = errkind.New(errkind.Rejected, "connect: extra settings change what the builder sets")

// String renders the configuration (or the error) with secret values
// replaced by "[redacted]", keys sorted.
func (m MirrorSource) String() string {
	cfg, err := m.Config()
	if err != nil {
		return fmt.Sprintf("MirrorSource(%s: invalid)", m.Name)
	}
	return ConfigString(cfg)
}

// ConfigString renders a connector configuration as sorted key=value lines
// with secret values (sasl.jaas.config, *.password, ...) replaced by
// "[redacted]", for logs and reports.
func ConfigString(config map[string]string) string {
	r := redact.Config(config)
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(r[k])
		b.WriteByte('\n')
	}
	return b.String()
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
