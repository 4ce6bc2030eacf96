package connect

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/redact"
)

// Severity ranks a Finding.
type Severity int

const (
	// SeverityWarning is worth reading before the cutover but does not block it.
	SeverityWarning Severity = iota + 1
	// SeverityError blocks the cutover.
	SeverityError
)

func (s Severity) String() string {
	switch s {
	case SeverityWarning:
		return "warning"
	case SeverityError:
		return "error"
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// Origins of findings.
const (
	OriginLint     = "lint"             // this package's rules
	OriginValidate = "connect validate" // the plugin's own validation on the worker
)

// Finding is one problem with a connector configuration. Key is the
// configuration key concerned; Message says what is wrong and Advice what to
// do. Neither ever contains a secret value.
type Finding struct {
	Severity Severity
	Key      string
	Message  string
	Advice   string
	Origin   string
}

func (f Finding) String() string {
	s := fmt.Sprintf("%s: %s: %s", f.Severity, f.Key, f.Message)
	if f.Advice != "" {
		s += " (" + f.Advice + ")"
	}
	return s
}

// LintExpectations are the facts of the migration plan the configuration
// must agree with.
type LintExpectations struct {
	// SourceAlias is the "cluster" of the plan's source partitions. Empty
	// skips the check.
	SourceAlias string
	// HasClearedPartition is true when the plan deletes the offset of at
	// least one partition (committed offset C = 0), which relies on
	// auto.offset.reset=earliest.
	HasClearedPartition bool
	// Topics are the source topics in scope: each must be one MM2
	// replicates under the configuration's topics, topics.exclude and
	// replication policy ([TopicFilter]). Empty skips the check.
	Topics []string
	// Policy, when set, is the replication policy the caller's checks name
	// the target topics by: the configuration's ([offsets.PolicyOf])
	// must name them alike ([offsets.ReplicationPolicy.Same]). Nil skips the check; a caller
	// that derives its policy from the configuration needs none.
	Policy *offsets.ReplicationPolicy
	// ExactlyOnce is true when the cutover was asked to run the connector
	// exactly-once ([MirrorSource.ExactlyOnce]): the configuration must
	// then require it. Without it, a configuration that requires it is
	// still checked as one.
	ExactlyOnce bool
}

// HasErrors reports whether any finding has SeverityError.
func HasErrors(findings []Finding) bool {
	for _, f := range findings {
		if f.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Lint checks a MirrorSourceConnector configuration for the cutover, for a
// worker running Kafka workerVersion (as GET / reports it). It is pure.
//
// Errors: topics missing or ".*"; a topic in scope (exp.Topics) that MM2
// would not replicate (topics, topics.exclude, topics.blacklist, the
// policy's internal topics; a topic.filter.class other than
// DefaultTopicFilter); a replication policy other than MM2's identity and
// default ones, or not the one the caller's checks use (exp.Policy);
// transforms, predicates or an errors.tolerance other than none, which
// change or drop records; a *.bootstrap.servers key other than
// source.cluster.bootstrap.servers, target.cluster.bootstrap.servers and
// producer.override.bootstrap.servers (consumer.bootstrap.servers,
// source.admin.bootstrap.servers, admin.override.bootstrap.servers, ...),
// which sends one of MM2's clients to addresses the cutover does not check;
// sync.topic.configs.enabled or
// sync.topic.acls.enabled not false; a key, value or header converter that is
// not ByteArrayConverter (or not set, leaving the worker's default);
// emit.offset-syncs.enabled not false, or offset-syncs.* keys set, on a 3.9+
// worker; a worker below 3.9 (which always writes offset syncs) without the
// explicit offset-syncs.topic.location of an [OffsetSyncsTopic]; a source.cluster.alias
// different from the plan's; an effective source consumer auto.offset.reset
// other than earliest while the plan clears a partition.
//
// GSSAPI settings of MM2's source and target clients: see lintKerberos.
//
// Exactly-once (exactly.once.support=required, or exp.ExactlyOnce), errors:
// not required while exp.ExactlyOnce; a worker below Kafka 3.5, whose
// MirrorSourceConnector cannot run exactly-once; an effective source
// consumer isolation level other than read_committed; a
// transaction.boundary of connector (MM2 defines none) or not a boundary.
// Warnings: exactly.once.support=requested (exactly-once only where a
// worker happens to support it, at least once elsewhere, silently);
// transaction.boundary=interval (records reach read_committed readers
// only as each interval's transaction commits); producer.override.
// transactional.id or enable.idempotence, which Connect replaces for
// exactly-once tasks; offsets.storage.topic on a 3.8+ worker, which cannot
// write a null offset for an exactly-once connector with an offsets topic
// of its own (its offsets cannot be deleted: no rollback before resume).
//
// Warnings: producer.override.bootstrap.servers, which writes MM2's records
// elsewhere than the workers' own cluster (verify.Precheck checks which
// cluster it reaches); a secret in plain text where a config provider reference
// (${provider:path:key}) was expected; offset.consistency.enabled, which is
// not a Kafka configuration and has no effect; below 3.9 with the opt-in,
// where the offset-syncs topic will be, and a missing replication factor for
// it; a source consumer isolation level not stated; a worker version that
// does not parse.
//
// Findings are sorted errors first, then by key.
func Lint(config map[string]string, workerVersion string, exp LintExpectations) []Finding {
	var fs []Finding
	add := func(sev Severity, key, msg, advice string) {
		fs = append(fs, Finding{Severity: sev, Key: key, Message: msg, Advice: advice, Origin: OriginLint})
	}

	topics, ok := config["topics"]
	switch {
	case !ok || strings.TrimSpace(topics) == "":
		add(SeverityError, "topics", "not set: MirrorSourceConnector then replicates every topic (default .*)",
			"list the business topics explicitly")
	case hasListEntry(topics, ".*"):
		add(SeverityError, "topics", "contains .*, which replicates every topic",
			"list the business topics explicitly")
	}

	for _, key := range []string{"sync.topic.configs.enabled", "sync.topic.acls.enabled"} {
		if v, ok := config[key]; !ok || !isFalse(v) {
			add(SeverityError, key, fmt.Sprintf("is %s, not false: MM2 would change target topics (default true)", shown(config, key)),
				"set it to false; target topic configs and ACLs are managed by the platform")
		}
	}

	for _, key := range []string{"key.converter", "value.converter", "header.converter"} {
		v, ok := config[key]
		switch {
		case !ok:
			add(SeverityError, key, "not set: the worker's default converter applies and may not copy bytes unchanged",
				"set it to "+ByteArrayConverterClass)
		case strings.TrimSpace(v) != ByteArrayConverterClass:
			add(SeverityError, key, fmt.Sprintf("is %s: records would be converted instead of copied byte for byte", v),
				"set it to "+ByteArrayConverterClass)
		}
	}

	ver, verErr := parseKafkaVersion(workerVersion)
	emit, emitSet := config["emit.offset-syncs.enabled"]
	syncKeys := offsetSyncsKeys(config)
	switch {
	case verErr != nil:
		add(SeverityWarning, "emit.offset-syncs.enabled", fmt.Sprintf("worker version %q unknown: cannot tell whether the setting is honored", workerVersion),
			"lint with the version GET / reports")
	case ver.atLeast(versionEmitSyncs):
		if !emitSet || !isFalse(emit) {
			add(SeverityError, "emit.offset-syncs.enabled", fmt.Sprintf("is %s, not false: the connector writes offset-syncs (default true)", shown(config, "emit.offset-syncs.enabled")),
				"set it to false")
		} else if len(syncKeys) > 0 {
			sort.Strings(syncKeys)
			add(SeverityError, syncKeys[0], fmt.Sprintf("is set while emit.offset-syncs.enabled=false: Kafka %s writes no offset syncs and Connect refuses offset-syncs.* keys then", workerVersion),
				"remove the offset-syncs opt-in: it is only for workers below 3.9")
		}
	default:
		place, _ := OffsetSyncs(config, workerVersion) // the version parsed above
		if _, optedIn := config["offset-syncs.topic.location"]; !optedIn {
			add(SeverityError, "emit.offset-syncs.enabled",
				fmt.Sprintf("is ignored by Kafka %s (it exists from 3.9): the connector always writes offset syncs, to topic %s on the %s cluster (offset-syncs.topic.location defaults to source), created with replication factor %s; without that topic every task blocks 60 s on each sync, and with it the cutover leaves an offset-syncs topic the design forbids",
					workerVersion, place.Topic, place.Location, orDefault(config["offset-syncs.topic.replication.factor"], "3")),
				"run the connector on a Kafka 3.9+ worker, or decide explicitly where the topic goes: set offset-syncs.topic.location (source or target) and offset-syncs.topic.replication.factor")
		} else {
			add(SeverityWarning, "offset-syncs.topic.location",
				fmt.Sprintf("Kafka %s writes offset syncs: to topic %s on the %s cluster, as chosen", workerVersion, place.Topic, place.Location),
				"expect that topic after the cutover (the acceptance check does); it goes away with a 3.9+ worker")
			if _, ok := config["offset-syncs.topic.replication.factor"]; !ok {
				add(SeverityWarning, "offset-syncs.topic.replication.factor", "not set: MM2 creates the offset-syncs topic with replication factor 3, which fails on a cluster of fewer brokers",
					"set it to the replication factor of the cluster that holds the topic")
			}
		}
	}

	lintDiversions(config, workerVersion, exp, add)
	lintKerberos(config, add)
	lintExactlyOnce(config, workerVersion, exp, add)

	alias := offsets.SourceAliasOf(config)
	if exp.SourceAlias != "" && alias != exp.SourceAlias {
		add(SeverityError, "source.cluster.alias", fmt.Sprintf("is %q but the plan's partitions use %q: Connect would accept the offsets and never read them", alias, exp.SourceAlias),
			"use the plan's alias or rebuild the plan")
	}

	if exp.HasClearedPartition {
		if reset, key := effectiveSourceConsumer(config, "auto.offset.reset"); reset != "" && reset != "earliest" {
			add(SeverityError, key, fmt.Sprintf("is %q but the plan clears partitions whose committed offset is 0: they would not start at the beginning", reset),
				"set source.consumer.auto.offset.reset=earliest")
		}
	}

	keys := make([]string, 0, len(config))
	for k := range config {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	shownAs := redact.Config(config) // secrets in plain text become redact.Redacted; provider references stay
	for _, k := range keys {
		if strings.HasSuffix(k, "sasl.jaas.config") && isKerberosJAAS(config[k]) {
			continue // a keytab's path and a principal: shown redacted, but no secret
		}
		if shownAs[k] == redact.Redacted && config[k] != redact.Redacted {
			add(SeverityWarning, k, "holds a secret in plain text: it is stored in the config topic and shown by GET /connectors",
				"use a config provider reference such as ${file:/path/secrets.properties:key}")
		}
	}

	if _, ok := config["offset.consistency.enabled"]; ok {
		add(SeverityWarning, "offset.consistency.enabled", "is not a Kafka configuration: Connect ignores unknown keys, it has no effect",
			"remove it")
	}

	if v, _ := effectiveSourceConsumer(config, "isolation.level"); v == "" {
		add(SeverityWarning, "source.consumer.isolation.level", "not stated: the source consumer reads read_uncommitted, including aborted transactional records",
			"state the isolation level the Flink job used")
	}

	sortFindings(fs)
	return fs
}

// effectiveSourceConsumer returns the value MirrorSourceConnector's source
// consumer uses for a client setting, and the key it came from: like MM2,
// source.consumer.* overrides consumer.*. The MM2 default for
// auto.offset.reset is earliest.
func effectiveSourceConsumer(config map[string]string, name string) (value, key string) {
	for _, k := range []string{"source.consumer." + name, "consumer." + name} {
		if v, ok := config[k]; ok {
			return strings.TrimSpace(v), k
		}
	}
	if name == "auto.offset.reset" {
		return "earliest", "source.consumer.auto.offset.reset"
	}
	return "", "source.consumer." + name
}

// ValidationFindings turns the errors of Connect's validate endpoint into
// findings of SeverityError. Secret values of config, if the worker echoes
// any, are redacted: those of the keys the answer defines as PASSWORD too.
func ValidationFindings(infos *ConfigInfos, config map[string]string) []Finding {
	if infos == nil {
		return nil
	}
	secrets := redact.SecretValues(config, infos.PasswordKeys())
	var fs []Finding
	for _, ci := range infos.Configs {
		for _, e := range ci.Value.Errors {
			fs = append(fs, Finding{Severity: SeverityError, Key: ci.Value.Name, Message: redact.Text(e, secrets...),
				Advice: "fix the value the connector plugin rejected", Origin: OriginValidate})
		}
	}
	sortFindings(fs)
	return fs
}

// LintConfig runs Lint with the worker's version from GET / and Connect's own
// validation of the configuration (against its connector.class, by default
// MirrorSourceConnector) and returns both sets of findings merged, errors
// first. It returns an error only when the worker could not be asked.
func (c *Client) LintConfig(ctx context.Context, config map[string]string, exp LintExpectations) ([]Finding, error) {
	info, err := c.ServerInfo(ctx)
	if err != nil {
		return nil, err
	}
	class := orDefault(config["connector.class"], MirrorSourceConnectorClass)
	infos, err := c.Validate(ctx, class, config)
	if err != nil {
		return nil, err
	}
	fs := append(Lint(config, info.Version, exp), ValidationFindings(infos, config)...)
	sortFindings(fs)
	return fs, nil
}

func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].Severity != fs[j].Severity {
			return fs[i].Severity > fs[j].Severity
		}
		return fs[i].Key < fs[j].Key
	})
}

func hasListEntry(list, entry string) bool {
	for _, e := range strings.Split(list, ",") {
		if strings.TrimSpace(e) == entry {
			return true
		}
	}
	return false
}

func isFalse(v string) bool { return strings.EqualFold(strings.TrimSpace(v), "false") }

func shown(config map[string]string, key string) string {
	v, ok := config[key]
	if !ok {
		return "not set"
	}
	return fmt.Sprintf("%q", v)
}
