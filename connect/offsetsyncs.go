package connect

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mm2cutover/mm2cutover/offsets"
)

// OffsetSyncsTopic is the explicit decision to let MirrorSourceConnector
// write offset syncs, which workers below Kafka 3.9 always do: they have no
// emit.offset-syncs.enabled (KIP-1031) and ignore it. Without the topic each
// task blocks for 60 s on every sync ("Topic mm2-offset-syncs.<alias>.internal
// not present in metadata"); MM2 creates it when the connector starts, with
// offset-syncs.topic.replication.factor (default 3, so a cluster of fewer
// brokers needs it set). Set it only for a worker below 3.9: from 3.9 the
// connector runs without offset syncs, and Connect refuses offset-syncs.*
// keys while emit.offset-syncs.enabled is false.
type OffsetSyncsTopic struct {
	// Location is the cluster that holds the topic: "source" (MM2's
	// default) or "target".
	Location string
	// ReplicationFactor of the topic MM2 creates; 0 leaves MM2's default, 3.
	ReplicationFactor int
}

func (o *OffsetSyncsTopic) validate() error {
	if o.Location != "source" && o.Location != "target" {
		return fmt.Errorf("offset-syncs topic location %q: want source or target", o.Location)
	}
	if o.ReplicationFactor < 0 {
		return fmt.Errorf("offset-syncs topic replication factor %d is negative", o.ReplicationFactor)
	}
	return nil
}

// OffsetSyncsPlacement says whether, and where, a MirrorSourceConnector
// writes offset syncs.
type OffsetSyncsPlacement struct {
	// Emitted is true when the connector writes offset syncs: always below
	// Kafka 3.9, unless emit.offset-syncs.enabled=false from 3.9.
	Emitted bool
	// Topic is the offset-syncs topic, e.g. "mm2-offset-syncs.target.internal".
	Topic string
	// Location is the cluster that holds it: "source" or "target".
	Location string
}

func (p OffsetSyncsPlacement) String() string {
	if !p.Emitted {
		return "no offset syncs"
	}
	return fmt.Sprintf("offset syncs in topic %s on the %s cluster", p.Topic, p.Location)
}

// OffsetSyncs tells where MirrorSourceConnector, configured with config,
// writes offset syncs on a worker running Kafka workerVersion (as GET /
// reports it). It follows MirrorSourceConfig: the topic is on the cluster
// offset-syncs.topic.location names (default source) and is named after the
// other cluster's alias by the replication policy,
// "mm2-offset-syncs.<alias>.internal" with the policy's separator when
// replication.policy.internal.topic.separator.enabled is not false. It is
// pure; it returns an error for a version that does not parse.
func OffsetSyncs(config map[string]string, workerVersion string) (OffsetSyncsPlacement, error) {
	v, err := parseKafkaVersion(workerVersion)
	if err != nil {
		return OffsetSyncsPlacement{}, err
	}
	loc := strings.TrimSpace(orDefault(config["offset-syncs.topic.location"], "source"))
	alias := offsets.TargetAliasOf(config)
	if loc != "source" {
		alias = offsets.SourceAliasOf(config)
	}
	sep := "."
	if s, ok := config["replication.policy.separator"]; ok && !isFalse(config["replication.policy.internal.topic.separator.enabled"]) {
		sep = s
	}
	p := OffsetSyncsPlacement{Emitted: true, Topic: "mm2-offset-syncs" + sep + alias + sep + "internal", Location: loc}
	if v.atLeast(versionEmitSyncs) && isFalse(config["emit.offset-syncs.enabled"]) {
		p.Emitted = false
	}
	return p, nil
}

// offsetSyncsKeys returns the keys of config that configure the
// offset-syncs topic.
func offsetSyncsKeys(config map[string]string) []string {
	var keys []string
	for k := range config {
		if strings.HasPrefix(k, "offset-syncs.") {
			keys = append(keys, k)
		}
	}
	return keys
}

func (o *OffsetSyncsTopic) apply(cfg map[string]string) {
	delete(cfg, "emit.offset-syncs.enabled") // unknown below 3.9; it would only mislead
	cfg["offset-syncs.topic.location"] = o.Location
	if o.ReplicationFactor > 0 {
		cfg["offset-syncs.topic.replication.factor"] = strconv.Itoa(o.ReplicationFactor)
	}
}
