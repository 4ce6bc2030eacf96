package verify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
)

// The checks of which clusters MM2 really reads and writes, taken from the
// connector configuration it will run with: the clusters its
// bootstrap-servers settings reach, the cluster its producer writes to
// (the Connect workers' own, unless producer.override.bootstrap.servers),
// the replication factors of the topics MM2 creates, and the Connect
// cluster's internal topics.

// Writers says which Kafka clusters the Connect cluster writes to for a
// connector: the workers' own cluster (GET /'s kafka_cluster_id: their
// internal topics, the connector's stored offsets among them) and the
// cluster MM2's producer writes the replicated records to — the workers'
// own, unless the connector sets producer.override.bootstrap.servers.
type Writers struct {
	// WorkerClusterID is the Connect workers' own Kafka cluster.
	WorkerClusterID string `json:"worker_cluster_id"`
	// ProducerClusterID is the cluster MM2's records are written to.
	ProducerClusterID string `json:"producer_cluster_id"`
	// ProducerOverride holds producer.override.bootstrap.servers, when the
	// connector sets it.
	ProducerOverride string `json:"producer_override,omitempty"`
	// Strimzi holds the signs that the Strimzi operator manages the Connect
	// cluster (connect.StrimziSigns of its connectors): the operator
	// deletes a connector no custom resource defines, so nothing may be
	// written over REST there. Nil when none was seen.
	Strimzi []string `json:"strimzi,omitempty"`
}

// ObserveWriters reads [Writers] for a connector configuration: GET / of
// the Connect worker c, its connectors (GET /connectors?expand=info) for
// the signs of Strimzi, and, when config sets
// producer.override.bootstrap.servers, the ID of the cluster at those
// addresses, asked with target's settings (the tool's own credentials;
// see kafkaadmin.Client.WithBootstrap). [Recheck] compares the result with
// the plan's target; pass it in Observation.Writers.
//
// Errors: the Connect client's; for an override, the Kafka client's, which
// means the tool cannot tell where MM2's records go.
func ObserveWriters(ctx context.Context, c *connect.Client, target *kafkaadmin.Client, config map[string]string) (Writers, error) {
	info, err := c.ServerInfo(ctx)
	if err != nil {
		return Writers{}, fmt.Errorf("GET / of the Connect worker: %w", err)
	}
	w := Writers{WorkerClusterID: info.KafkaClusterID, ProducerClusterID: info.KafkaClusterID}
	infos, err := c.ConnectorInfos(ctx)
	if err != nil {
		return w, fmt.Errorf("%w: GET /connectors?expand=info of the Connect worker: %w", errConnectorList, err)
	}
	w.Strimzi = connect.StrimziSigns(infos)
	if w.ProducerOverride = strings.TrimSpace(config["producer.override.bootstrap.servers"]); w.ProducerOverride != "" {
		if w.ProducerClusterID, err = clusterAt(ctx, target, "", splitList(w.ProducerOverride)); err != nil {
			return w, fmt.Errorf("producer.override.bootstrap.servers %s: %w", w.ProducerOverride, err)
		}
	}
	return w, nil
}

// errConnectorList marks ObserveWriters' failure to list the connectors,
// after GET / answered.
var errConnectorList = errkind.New(errkind.Retry, "verify: cannot list the connectors")

// clusterAt returns the ID of the cluster at servers, asked with base's
// settings; knownID is base's cluster ID, or "" to ask for it. Addresses
// all among base's own are base's cluster.
func clusterAt(ctx context.Context, base *kafkaadmin.Client, knownID string, servers []string) (string, error) {
	own := base.BootstrapServers()
	if len(servers) > 0 && !slices.ContainsFunc(servers, func(s string) bool {
		return !slices.ContainsFunc(own, func(o string) bool { return strings.EqualFold(o, s) })
	}) {
		if knownID != "" {
			return knownID, nil
		}
		return base.ClusterID(ctx)
	}
	other, err := base.WithBootstrap(servers)
	if err != nil {
		return "", err
	}
	return other.ClusterID(ctx)
}

// precheckWriters checks that MM2 reads the source and writes the target
// that the tool's clients read: the clusters source.cluster.bootstrap.servers
// and target.cluster.bootstrap.servers reach ("connector-clusters"), and the
// cluster MM2's producer writes to ("worker-cluster"). It returns what it
// read, for the observation a plan's re-checks start from; nil when GET /
// failed (connect-reachable says so).
func precheckWriters(ctx context.Context, cs *Checks, c *connect.Client, source, target *kafkaadmin.Client, spec PrecheckSpec, sourceID, targetID string) *Writers {
	var problems []string
	checked := 0
	for _, side := range []struct {
		name, key string
		client    *kafkaadmin.Client
		want      string
	}{{"source", "source.cluster.bootstrap.servers", source, sourceID}, {"target", "target.cluster.bootstrap.servers", target, targetID}} {
		servers := splitList(spec.Config[side.key])
		if len(servers) == 0 {
			continue // Connect's validation reports the missing key
		}
		checked++
		id, err := clusterAt(ctx, side.client, side.want, servers)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s %s: cannot tell which cluster it is with the tool's %s settings (%v): give the tool the addresses MM2 uses", side.key, strings.Join(servers, ","), side.name, err))
		case id != side.want:
			problems = append(problems, fmt.Sprintf("%s %s reaches cluster %s, but the tool's %s client reads cluster %s: MM2 would work on a cluster nothing checked", side.key, strings.Join(servers, ","), id, side.name, side.want))
		}
	}
	if len(problems) > 0 {
		cs.add("connector-clusters", Fail, "%s", strings.Join(problems, "; "))
	} else if checked > 0 {
		cs.add("connector-clusters", Pass, "source.cluster.bootstrap.servers and target.cluster.bootstrap.servers reach the clusters the tool checks")
	}

	const name = "worker-cluster"
	w, err := ObserveWriters(ctx, c, target, spec.Config)
	if errors.Is(err, errConnectorList) {
		cs.add("strimzi-managed", Warn, "%v: whether the Strimzi operator manages this Connect cluster is not checked", err)
		err = nil
	} else if err == nil {
		checkStrimziManaged(cs, w.Strimzi, spec.Strimzi)
	}
	switch {
	case err != nil && w.WorkerClusterID == "" && w.ProducerOverride == "":
		return nil // GET / failed: connect-reachable reports it
	case err != nil:
		cs.add(name, Fail, "%v: the tool cannot tell which cluster MM2's records are written to; remove it (the workers' own cluster is then written), or make it reachable with the tool's target settings", err)
		return &w
	case w.ProducerClusterID == "":
		cs.add(name, Warn, "the Connect worker's GET / names no kafka_cluster_id: which cluster MM2's producer writes to is not checked")
		return &w
	case w.ProducerClusterID != targetID && w.ProducerOverride != "":
		cs.add(name, Fail, "producer.override.bootstrap.servers %s reaches cluster %s, not the target %s: MM2 would write every record there while every check looks at the target", w.ProducerOverride, w.ProducerClusterID, targetID)
	case w.ProducerClusterID != targetID:
		cs.add(name, Fail, "the Connect workers' own Kafka cluster is %s (GET / kafka_cluster_id), not the target %s: their producer would write every record of MM2 there while every check looks at the target; point the workers' bootstrap.servers at the target cluster", w.WorkerClusterID, targetID)
	case w.WorkerClusterID != targetID:
		cs.add(name, Warn, "MM2's records go to the target %s through producer.override.bootstrap.servers, but the workers' own cluster is %s: their internal topics, the connector's offsets among them, are there, not on the target the design runs them on", targetID, w.WorkerClusterID)
	default:
		cs.add(name, Pass, "the Connect workers' producer writes MM2's records to the target %s", targetID)
	}
	return &w
}

// checkStrimziManaged judges the signs of the Strimzi operator on the
// Connect cluster (connect.StrimziSigns): where it manages the workers it
// deletes a connector no custom resource defines, so a cutover over REST
// would lose its connector (and its offsets' owner) at the next reconcile.
// strimzi says the caller writes through Strimzi's resources instead
// (plan.WriteStrimzi). It is pure.
func checkStrimziManaged(cs *Checks, signs []string, strimzi bool) {
	const name = "strimzi-managed"
	switch {
	case strimzi:
		cs.add(name, Pass, "the connector is to be written through Strimzi's resources (plan.WriteStrimzi), nothing over REST (%d signs of the operator seen)", len(signs))
	case len(signs) > 0:
		cs.add(name, Fail, "the Strimzi operator manages this Connect cluster (%s): it deletes a connector no KafkaConnector or KafkaMirrorMaker2 defines, so the cutover must not write over REST; write through its resources (the CLI's strimzi step)", listSome(signs, 3))
	default:
		cs.add(name, Pass, "no sign of the Strimzi operator among the connectors (a KafkaConnect with strimzi.io/use-connector-resources whose connectors reference no Strimzi config provider shows none: if Strimzi runs these workers, take its path)")
	}
}

// The replication factors MirrorSourceConnector creates topics with, and
// their defaults (MirrorSourceConfig, the same from Kafka 3.7 to 4.3).
const (
	offsetSyncsRFKey      = "offset-syncs.topic.replication.factor"
	offsetSyncsRFDefault  = 3
	remoteTopicsRFKey     = "replication.factor"
	remoteTopicsRFDefault = 2
)

// rfFacts is what the replication-factor check compares.
type rfFacts struct {
	config                       map[string]string
	sourceBrokers, targetBrokers int
	// syncs is where the connector writes offset syncs; syncsExists says
	// whether that topic exists already (MM2 then creates nothing).
	syncs       connect.OffsetSyncsPlacement
	syncsExists bool
	// missingTargets are target topics MM2 would have to create.
	missingTargets []string
}

// checkReplicationFactors fails a replication factor MM2 will create a topic
// with that is above the broker count of the cluster that holds it: the
// topic cannot be created (INVALID_REPLICATION_FACTOR) and MM2 stalls —
// below Kafka 3.9 each task waits 60 s on every offset sync. It is pure.
func checkReplicationFactors(cs *Checks, f rfFacts) {
	const name = "replication-factor"
	setting := func(key string, def int) (int, string, bool) {
		v, ok := f.config[key]
		if !ok {
			return def, fmt.Sprintf("%s is not set (default %d)", key, def), true
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			cs.add(name, Warn, "%s %q is not a number: not checked", key, v)
			return 0, "", false
		}
		return n, fmt.Sprintf("%s is %d", key, n), true
	}
	failed := false
	if f.syncs.Emitted && !f.syncsExists {
		brokers := f.sourceBrokers
		if f.syncs.Location == "target" {
			brokers = f.targetBrokers
		}
		if rf, said, ok := setting(offsetSyncsRFKey, offsetSyncsRFDefault); ok && rf > brokers && brokers > 0 {
			failed = true
			cs.add(name, Fail, "%s, but the %s cluster, which holds the offset-syncs topic %s MM2 creates, has %d broker%s: MM2 cannot create it (INVALID_REPLICATION_FACTOR) and each task stalls 60 s on every offset sync; set %s to at most %d",
				said, f.syncs.Location, f.syncs.Topic, brokers, plural(brokers), offsetSyncsRFKey, brokers)
		}
	}
	if rf, said, ok := setting(remoteTopicsRFKey, remoteTopicsRFDefault); ok && len(f.missingTargets) > 0 && rf > f.targetBrokers && f.targetBrokers > 0 {
		failed = true
		cs.add(name, Fail, "%s, but the target cluster has %d broker%s: MM2 cannot create the missing target topics %s; create them, or set %s to at most %d",
			said, f.targetBrokers, plural(f.targetBrokers), listSome(f.missingTargets, 5), remoteTopicsRFKey, f.targetBrokers)
	}
	if !failed {
		cs.add(name, Pass, "every topic MM2 may create fits the brokers of its cluster (%d source, %d target)", f.sourceBrokers, f.targetBrokers)
	}
}

// precheckReplicationFactors reads what checkReplicationFactors needs: the
// brokers of both clusters, whether the offset-syncs topic exists, and the
// target topics missing (from the target-topics check's results).
func precheckReplicationFactors(ctx context.Context, cs *Checks, source, target *kafkaadmin.Client, spec PrecheckSpec, workerVersion string, targets []kafkaadmin.TargetCheck) {
	f := rfFacts{config: spec.Config}
	for _, t := range targets {
		if !t.Exists {
			f.missingTargets = append(f.missingTargets, t.Target)
		}
	}
	if p, err := connect.OffsetSyncs(spec.Config, workerVersion); err == nil {
		f.syncs = p
	}
	var err error
	var ids []int32
	if ids, err = source.Brokers(ctx); err != nil {
		cs.add("replication-factor", Warn, "cannot read the source brokers: %v; replication factors are not checked", err)
		return
	}
	f.sourceBrokers = len(ids)
	if ids, err = target.Brokers(ctx); err != nil {
		cs.add("replication-factor", Warn, "cannot read the target brokers: %v; replication factors are not checked", err)
		return
	}
	f.targetBrokers = len(ids)
	if f.syncs.Emitted {
		holder := source
		if f.syncs.Location == "target" {
			holder = target
		}
		layouts, err := holder.TopicLayouts(ctx, f.syncs.Topic)
		if err != nil {
			cs.add("replication-factor", Warn, "cannot tell whether %s exists on the %s cluster: %v", f.syncs.Topic, f.syncs.Location, err)
		}
		_, f.syncsExists = layouts[f.syncs.Topic]
	}
	checkReplicationFactors(cs, f)
}

// WorkerStorage names the Connect cluster's internal topics — the workers'
// config.storage.topic, offset.storage.topic and status.storage.topic
// (docker/mm2's CONNECT_CONFIG_STORAGE_TOPIC, CONNECT_OFFSET_STORAGE_TOPIC
// and CONNECT_STATUS_STORAGE_TOPIC) — and the replication factor they are
// configured with. REST shows none of them: the caller states them, and
// an empty name is not checked.
type WorkerStorage struct {
	ConfigTopic, OffsetTopic, StatusTopic string
	// ReplicationFactor is the workers' *.storage.replication.factor; 0 or
	// -1 (the brokers' default) leaves it unchecked.
	ReplicationFactor int
}

func (w WorkerStorage) topics() []string {
	var out []string
	for _, t := range []string{w.ConfigTopic, w.OffsetTopic, w.StatusTopic} {
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// storageFacts is what the internal-topics check compares.
type storageFacts struct {
	storage  WorkerStorage
	layouts  map[string]kafkaadmin.TopicLayout // absent: the topic does not exist
	policies map[string]string                 // cleanup.policy by topic
}

// checkWorkerStorage checks the Connect cluster's internal topics as the
// runbook's checklist does: each exists on the workers' cluster, is
// compacted only (Connect loses configurations and offsets a delete
// policy removes), the config topic has one partition (Connect reads its
// records in order), and each has the replication factor the workers are
// configured with. It is pure.
func checkWorkerStorage(cs *Checks, f storageFacts) {
	const name = "connect-internal-topics"
	var problems []string
	for _, t := range []struct{ role, topic string }{
		{"config.storage.topic", f.storage.ConfigTopic}, {"offset.storage.topic", f.storage.OffsetTopic}, {"status.storage.topic", f.storage.StatusTopic},
	} {
		if t.topic == "" {
			continue
		}
		l, ok := f.layouts[t.topic]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s %s does not exist on the workers' cluster: check the name the workers use", t.role, t.topic))
			continue
		}
		if p := strings.ReplaceAll(f.policies[t.topic], " ", ""); p != "compact" {
			problems = append(problems, fmt.Sprintf("%s %s has cleanup.policy %q, not compact: Connect loses what deletion removes", t.role, t.topic, f.policies[t.topic]))
		}
		if t.role == "config.storage.topic" && l.Partitions != 1 {
			problems = append(problems, fmt.Sprintf("%s %s has %d partitions, not 1: Connect needs its records in one order", t.role, t.topic, l.Partitions))
		}
		if rf := f.storage.ReplicationFactor; rf > 0 && l.ReplicationFactor != rf {
			problems = append(problems, fmt.Sprintf("%s %s has replication factor %d, the workers are configured with %d", t.role, t.topic, l.ReplicationFactor, rf))
		}
	}
	if len(problems) > 0 {
		cs.add(name, Fail, "%s", strings.Join(problems, "; "))
		return
	}
	rf := ""
	if f.storage.ReplicationFactor > 0 {
		rf = fmt.Sprintf(", replication factor %d", f.storage.ReplicationFactor)
	}
	cs.add(name, Pass, "%s: compacted, the config topic with one partition%s", strings.Join(f.storage.topics(), ", "), rf)
}

// precheckWorkerStorage reads the internal topics named in spec (on the
// target, which the workers' cluster must be) and checks them
// (checkWorkerStorage). Without names there is nothing to check.
func precheckWorkerStorage(ctx context.Context, cs *Checks, target *kafkaadmin.Client, spec PrecheckSpec, writers *Writers, targetID string) {
	const name = "connect-internal-topics"
	if spec.WorkerStorage == nil || len(spec.WorkerStorage.topics()) == 0 {
		return
	}
	if writers == nil || writers.WorkerClusterID != targetID {
		cs.add(name, Warn, "not checked: the workers' own cluster is not known to be the target, the cluster the tool reads")
		return
	}
	f := storageFacts{storage: *spec.WorkerStorage, policies: map[string]string{}}
	topics := spec.WorkerStorage.topics()
	var err error
	if f.layouts, err = target.TopicLayouts(ctx, topics...); err != nil {
		cs.add(name, Warn, "cannot read the internal topics: %v", err)
		return
	}
	var existing []string
	for _, t := range topics {
		if _, ok := f.layouts[t]; ok {
			existing = append(existing, t)
		}
	}
	if len(existing) > 0 {
		cfgs, err := target.TopicConfigs(ctx, existing, "cleanup.policy")
		if err != nil {
			cs.add(name, Warn, "cannot read the internal topics' cleanup.policy: %v", err)
			return
		}
		for t, c := range cfgs {
			f.policies[t] = c.Values["cleanup.policy"].Value
		}
	}
	checkWorkerStorage(cs, f)
}
