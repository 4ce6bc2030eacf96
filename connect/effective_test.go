package connect_test

import (
	"errors"
	"testing"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// TestReplicationPolicyOf: the policy is read from the configuration as MM2
// reads it, defaults included.
func TestReplicationPolicyOf(t *testing.T) {
	def := func(alias, sep string) offsets.ReplicationPolicy {
		return offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: alias, Separator: sep}
	}
	for _, tc := range []struct {
		name   string
		config map[string]string
		want   offsets.ReplicationPolicy
		err    bool
	}{
		{"MM2's default", map[string]string{}, def("source", ""), false},
		{"default with alias and separator", map[string]string{"replication.policy.class": offsets.DefaultPolicyClass, "source.cluster.alias": " dc1 ", "replication.policy.separator": "_"}, def("dc1", "_"), false},
		{"a dot is the default separator", map[string]string{"replication.policy.separator": "."}, def("source", ""), false},
		{"identity ignores the separator", map[string]string{"replication.policy.class": offsets.IdentityPolicyClass, "replication.policy.separator": "_"}, offsets.ReplicationPolicy{Kind: offsets.IdentityPolicy}, false},
		{"a custom class", map[string]string{"replication.policy.class": "com.example.Policy"}, offsets.ReplicationPolicy{}, true},
		{"an empty separator", map[string]string{"replication.policy.separator": ""}, offsets.ReplicationPolicy{}, true},
		{"an alias holding the separator", map[string]string{"source.cluster.alias": "dc.1"}, def("dc.1", ""), true},
	} {
		got, err := connect.ReplicationPolicyOf(tc.config)
		if tc.err {
			if !errors.Is(err, offsets.ErrInvalidPolicy) {
				t.Errorf("%s: %+v, %v; want an error matching offsets.ErrInvalidPolicy", tc.name, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	if !connect.SamePolicy(offsets.ReplicationPolicy{}, offsets.ReplicationPolicy{Kind: offsets.IdentityPolicy, SourceAlias: "x"}) ||
		!connect.SamePolicy(offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: "s", Separator: "."}, offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: "s"}) ||
		connect.SamePolicy(offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: "s"}, offsets.ReplicationPolicy{}) ||
		connect.SamePolicy(offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: "s"}, offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: "s", Separator: "_"}) {
		t.Error("SamePolicy does not compare the names the policies give")
	}
}

// TestTopicFilter: which topics MM2 replicates, and the setting that drops
// the others, on both sides of Kafka 4.0.
func TestTopicFilter(t *testing.T) {
	cfg := map[string]string{"topics": `orders.*, billing\.internal, dc1\.checkpoints\.internal, target\.refunds, __consumer_offsets, \.hidden`, "topics.exclude": "orders-dlq", "replication.policy.class": offsets.DefaultPolicyClass}
	for _, tc := range []struct {
		version, topic, key string
	}{
		{"4.3.1", "orders", ""},
		{"4.3.1", "orders-dlq", "topics.exclude"},
		{"4.3.1", "payments", "topics"},
		{"4.3.1", "billing.internal", ""},
		{"4.3.1", "dc1.checkpoints.internal", "replication.policy.class"},
		{"3.9.1", "billing.internal", "replication.policy.class"},
		{"4.3.1", "target.refunds", "replication.policy.class"},
		{"4.3.1", "__consumer_offsets", "replication.policy.class"},
		{"4.3.1", ".hidden", "replication.policy.class"},
	} {
		f, err := connect.NewTopicFilter(cfg, tc.version)
		if err != nil {
			t.Fatal(err)
		}
		if key, why := f.Drop(tc.topic); key != tc.key || (key != "") != (why != "") {
			t.Errorf("Kafka %s, %s: dropped by %q (%s), want %q", tc.version, tc.topic, key, why, tc.key)
		}
	}
	f, err := connect.NewTopicFilter(map[string]string{"topics": `billing\.internal`}, "3.7.2")
	if err != nil {
		t.Fatal(err)
	}
	if key, _ := f.Drop("billing.internal"); key != "topics.exclude" || f.Covers("billing.internal") {
		t.Errorf("below 4.0 the default topics.exclude drops billing.internal: dropped by %q", key)
	}
	if _, err := connect.NewTopicFilter(map[string]string{"topic.filter.class": "com.example.F"}, "4.3.1"); err == nil {
		t.Error("a custom topic.filter.class gave no error")
	}
}

// TestMirrorSourceRefusesClientBootstrap: bootstrap.servers among the client
// settings would replace the addresses the cutover checks.
func TestMirrorSourceRefusesClientBootstrap(t *testing.T) {
	m := connect.MirrorSource{Name: "n", SourceBootstrap: "src:9092", TargetBootstrap: "dst:9092", Topics: []string{"orders"},
		TargetClient: map[string]string{"security.protocol": "SASL_SSL", "bootstrap.servers": "elsewhere:9092"}}
	if _, err := m.Config(); !errors.Is(err, connect.ErrClientBootstrap) {
		t.Errorf("Config with bootstrap.servers in the target client settings: %v, want ErrClientBootstrap", err)
	}
	m.TargetClient = map[string]string{"security.protocol": "SASL_SSL"}
	if cfg, err := m.Config(); err != nil || cfg["target.cluster.bootstrap.servers"] != "dst:9092" {
		t.Errorf("Config = %v, %v", cfg, err)
	}
}
