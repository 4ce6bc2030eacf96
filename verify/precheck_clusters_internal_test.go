package verify

import (
	"testing"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
)

// TestCheckReplicationFactors: a replication factor MM2 creates a topic
// with above the brokers of the cluster that holds it fails, naming the
// setting; a topic that exists, or one MM2 has no need to create, passes.
func TestCheckReplicationFactors(t *testing.T) {
	syncsOnTarget := connect.OffsetSyncsPlacement{Emitted: true, Topic: "mm2-offset-syncs.source.internal", Location: "target"}
	for _, tc := range []struct {
		what string
		f    rfFacts
		want []string
	}{
		{"3.7 with the offset-syncs topic on a one-broker target, default factor 3",
			rfFacts{config: map[string]string{"offset-syncs.topic.location": "target"}, sourceBrokers: 3, targetBrokers: 1, syncs: syncsOnTarget},
			[]string{"fail: offset-syncs.topic.replication.factor is not set (default 3), but the target cluster, which holds the offset-syncs topic mm2-offset-syncs.source.internal MM2 creates, has 1 broker"}},
		{"the factor set to what the target holds",
			rfFacts{config: map[string]string{"offset-syncs.topic.replication.factor": "1"}, sourceBrokers: 3, targetBrokers: 1, syncs: syncsOnTarget},
			[]string{"ok: every topic MM2 may create fits"}},
		{"the offset-syncs topic exists already",
			rfFacts{config: map[string]string{}, sourceBrokers: 1, targetBrokers: 1, syncs: syncsOnTarget, syncsExists: true},
			[]string{"ok: "}},
		{"on the source of three brokers the default fits",
			rfFacts{config: map[string]string{}, sourceBrokers: 3, targetBrokers: 1, syncs: connect.OffsetSyncsPlacement{Emitted: true, Topic: "mm2-offset-syncs.target.internal", Location: "source"}},
			[]string{"ok: "}},
		{"no offset syncs, every target topic exists",
			rfFacts{config: map[string]string{}, sourceBrokers: 1, targetBrokers: 1},
			[]string{"ok: "}},
		{"a target topic MM2 would create with the default factor 2",
			rfFacts{config: map[string]string{}, sourceBrokers: 1, targetBrokers: 1, missingTargets: []string{"orders"}},
			[]string{"fail: replication.factor is not set (default 2), but the target cluster has 1 broker: MM2 cannot create the missing target topics orders"}},
		{"a factor that is not a number",
			rfFacts{config: map[string]string{"replication.factor": "two"}, sourceBrokers: 1, targetBrokers: 1, missingTargets: []string{"orders"}},
			[]string{`warn: replication.factor "two" is not a number`, "ok: "}},
	} {
		var cs Checks
		checkReplicationFactors(&cs, tc.f)
		expect(t, tc.what, cs, "replication-factor", tc.want...)
	}
}

// TestCheckWorkerStorage: the runbook's checklist of Connect's internal
// topics.
func TestCheckWorkerStorage(t *testing.T) {
	storage := WorkerStorage{ConfigTopic: "c-configs", OffsetTopic: "c-offsets", StatusTopic: "c-status", ReplicationFactor: 3}
	good := func() storageFacts {
		return storageFacts{storage: storage,
			layouts:  map[string]kafkaadmin.TopicLayout{"c-configs": {Partitions: 1, ReplicationFactor: 3}, "c-offsets": {Partitions: 25, ReplicationFactor: 3}, "c-status": {Partitions: 5, ReplicationFactor: 3}},
			policies: map[string]string{"c-configs": "compact", "c-offsets": "compact", "c-status": "compact"}}
	}
	for _, tc := range []struct {
		what string
		edit func(*storageFacts)
		want string
	}{
		{"as configured", func(*storageFacts) {}, "ok: c-configs, c-offsets, c-status: compacted, the config topic with one partition, replication factor 3"},
		{"a deleted status topic", func(f *storageFacts) { f.policies["c-status"] = "compact,delete" }, `fail: status.storage.topic c-status has cleanup.policy "compact,delete", not compact`},
		{"a config topic of two partitions", func(f *storageFacts) {
			f.layouts["c-configs"] = kafkaadmin.TopicLayout{Partitions: 2, ReplicationFactor: 3}
		}, "fail: config.storage.topic c-configs has 2 partitions, not 1"},
		{"an offsets topic of one replica", func(f *storageFacts) {
			f.layouts["c-offsets"] = kafkaadmin.TopicLayout{Partitions: 25, ReplicationFactor: 1}
		}, "fail: offset.storage.topic c-offsets has replication factor 1, the workers are configured with 3"},
		{"a name that is not the workers'", func(f *storageFacts) { delete(f.layouts, "c-offsets") }, "fail: offset.storage.topic c-offsets does not exist on the workers' cluster"},
		{"the brokers' default factor is not checked", func(f *storageFacts) {
			f.storage.ReplicationFactor = -1
			f.layouts["c-offsets"] = kafkaadmin.TopicLayout{Partitions: 25, ReplicationFactor: 1}
		}, "ok: c-configs, c-offsets, c-status: compacted, the config topic with one partition"},
	} {
		f := good()
		tc.edit(&f)
		var cs Checks
		checkWorkerStorage(&cs, f)
		expect(t, tc.what, cs, "connect-internal-topics", tc.want)
	}
}
