package connect

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/mm2cutover/mm2cutover/offsets"
)

// What a MirrorSourceConnector configuration makes MM2 do, read the way
// MM2 reads it: the replication policy that names the target topics, and
// the topics it replicates. The checks of a cutover take both from the
// configuration the connector is created with (after every file and
// override was merged), never from settings restated beside it.

// defaultTopicFilterClass is MM2's topic.filter.class default.
const defaultTopicFilterClass = "org.apache.kafka.connect.mirror.DefaultTopicFilter"

// versionNewInternal is the release whose DefaultTopicFilter and
// ReplicationPolicy treat only MM2's own ".internal" topics as internal
// (KIP-1074) and that dropped the topics.blacklist alias.
var versionNewInternal = kafkaVersion{4, 0}

// TopicFilter tells which source topics a MirrorSourceConnector
// configuration replicates on a worker of a given Kafka version, as
// MirrorSourceConnector decides it: DefaultTopicFilter's "topics" (Java
// regular expressions, each matching a whole name; default .*) and
// "topics.exclude" (below Kafka 4.0 also its alias topics.blacklist; by
// default .*[\-\.]internal, .*\.replica and __.* below 4.0, mm2.*\.internal,
// .*\.replica and __.* from 4.0), then the replication policy's internal
// topics (names starting with "__" or "."; below 4.0 also those ending in
// ".internal" or "-internal", from 4.0 those starting with "mm2" and ending
// in ".internal", and checkpoints topics) and, under DefaultReplicationPolicy, topics that came
// from the target cluster (a cycle: "<target alias>.orders"). Heartbeats
// topics, which MM2 replicates whatever the filter says, are not modelled.
type TopicFilter struct {
	include, exclude *regexp.Regexp
	excludeKey       string
	policy           offsets.ReplicationPolicy
	targetAlias      string
	newInternal      bool
}

// NewTopicFilter reads the topic filter of a MirrorSourceConnector
// configuration for a worker running Kafka workerVersion (as GET / reports
// it; a version that does not parse is taken as below 4.0).
//
// A replication policy offsets.PolicyOf refuses is taken as the identity
// policy here (no cycles); offsets.PolicyOf reports it.
//
// Errors: a topic.filter.class other than DefaultTopicFilter (what another
// filter selects cannot be evaluated here), or a pattern Go's regexp
// package cannot read (Java's and Go's syntaxes differ in look-arounds and
// possessive quantifiers).
func NewTopicFilter(config map[string]string, workerVersion string) (TopicFilter, error) {
	if class := strings.TrimSpace(config["topic.filter.class"]); class != "" && class != defaultTopicFilterClass {
		return TopicFilter{}, fmt.Errorf("topic.filter.class %s: only %s can be evaluated", class, defaultTopicFilterClass)
	}
	v, err := parseKafkaVersion(workerVersion)
	f := TopicFilter{newInternal: err == nil && v.atLeast(versionNewInternal), targetAlias: offsets.TargetAliasOf(config)}
	f.policy, _ = offsets.PolicyOf(config) // the zero value, identity, on error
	if f.include, err = compileTopicList(config, "topics", ".*"); err != nil {
		return TopicFilter{}, err
	}
	excludeDefault := `.*[\-\.]internal, .*\.replica, __.*`
	f.excludeKey = "topics.exclude"
	if f.newInternal {
		excludeDefault = `mm2.*\.internal, .*\.replica, __.*`
	} else if _, set := config["topics.exclude"]; !set {
		if _, alias := config["topics.blacklist"]; alias {
			f.excludeKey = "topics.blacklist"
		}
	}
	if f.exclude, err = compileTopicList(config, f.excludeKey, excludeDefault); err != nil {
		return TopicFilter{}, err
	}
	return f, nil
}

// compileTopicList compiles a comma-separated list of Java regular
// expressions as MM2 does: joined with "|", matching a whole topic name.
// An empty list compiles to nil, which matches nothing (MM2 compiles it to
// the empty pattern).
func compileTopicList(config map[string]string, key, def string) (*regexp.Regexp, error) {
	v, ok := config[key]
	if !ok {
		v = def
	}
	var parts []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return nil, nil
	}
	re, err := regexp.Compile(`^(?:` + strings.Join(parts, "|") + `)$`)
	if err != nil {
		return nil, fmt.Errorf("%s %q is not a pattern Go can evaluate: %w", key, v, err)
	}
	return re, nil
}

// Covers reports whether "topics" matches topic and "topics.exclude" does
// not: DefaultTopicFilter's decision alone.
func (f TopicFilter) Covers(topic string) bool {
	return f.include != nil && f.include.MatchString(topic) && (f.exclude == nil || !f.exclude.MatchString(topic))
}

// Drop returns "", "" when MM2 replicates topic; otherwise the setting that
// keeps it from being replicated ("topics", "topics.exclude",
// "topics.blacklist" or "replication.policy.class") and why, in words.
func (f TopicFilter) Drop(topic string) (key, why string) {
	switch {
	case f.include == nil || !f.include.MatchString(topic):
		return "topics", "no pattern of topics matches it"
	case f.exclude != nil && f.exclude.MatchString(topic):
		return f.excludeKey, "a pattern of " + f.excludeKey + " matches it"
	case f.internal(topic):
		return "replication.policy.class", "the replication policy treats it as an internal topic"
	case f.cycle(topic):
		return "replication.policy.class", fmt.Sprintf("its name says it came from the target cluster %q (a replication cycle)", f.targetAlias)
	}
	return "", ""
}

func (f TopicFilter) internal(topic string) bool {
	if strings.HasPrefix(topic, "__") || strings.HasPrefix(topic, ".") {
		return true
	}
	if f.newInternal {
		return strings.HasPrefix(topic, "mm2") && strings.HasSuffix(topic, ".internal") || strings.HasSuffix(topic, ".checkpoints.internal")
	}
	return strings.HasSuffix(topic, ".internal") || strings.HasSuffix(topic, "-internal")
}

// cycle is MirrorSourceConnector.isCycle: under DefaultReplicationPolicy,
// a topic whose name, read as "<alias><separator><upstream topic>" as many
// times as it can be, names the target cluster's alias.
func (f TopicFilter) cycle(topic string) bool {
	if f.policy.Kind != offsets.DefaultPolicy {
		return false
	}
	sep := orDefault(f.policy.Separator, ".")
	for {
		source, rest, ok := strings.Cut(topic, sep)
		if !ok {
			return false
		}
		if source == f.targetAlias {
			return true
		}
		topic = rest
	}
}
