package connect_test

import (
	"errors"
	"testing"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/offsets"
)

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
