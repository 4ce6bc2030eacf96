package offsets_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/offsets"
)

func TestTargetTopic(t *testing.T) {
	tests := []struct {
		policy  offsets.ReplicationPolicy
		source  string
		want    string
		wantErr bool
	}{
		{offsets.ReplicationPolicy{Kind: offsets.IdentityPolicy}, "orders", "orders", false},
		{offsets.ReplicationPolicy{Kind: offsets.IdentityPolicy, SourceAlias: "src"}, "orders", "orders", false},
		{offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: "src"}, "orders", "src.orders", false},
		{offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: "src", Separator: "_"}, "orders", "src_orders", false},
		{offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy}, "orders", "", true},
		{offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: "a.b"}, "orders", "", true},
		{offsets.ReplicationPolicy{}, "orders", "orders", false}, // the zero value is the identity policy
		{offsets.ReplicationPolicy{Kind: "custom"}, "orders", "", true},
	}
	for _, tt := range tests {
		got, err := tt.policy.TargetTopic(tt.source)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%+v.TargetTopic(%q) = %q, %v; want %q, error %v", tt.policy, tt.source, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !errors.Is(err, offsets.ErrInvalidPolicy) {
			t.Errorf("error %v does not match ErrInvalidPolicy", err)
		}
	}
}

func TestPolicyClass(t *testing.T) {
	if c := (offsets.ReplicationPolicy{}).Class(); c != offsets.IdentityPolicyClass {
		t.Errorf("zero policy class %s", c)
	}
	if c := (offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: "s"}).Class(); c != offsets.DefaultPolicyClass {
		t.Errorf("default policy class %s", c)
	}
}

// TestAliasOf: the aliases MirrorMaker 2 runs with, by Kafka's rule for a
// STRING setting: a missing key is the default, a present one is trimmed
// (ConfigDef.parseType), and an empty one stays empty.
func TestAliasOf(t *testing.T) {
	for _, tt := range []struct {
		name           string
		config         map[string]string
		source, target string
	}{
		{"unset", map[string]string{}, "source", "target"},
		{"nil config", nil, "source", "target"},
		{"set", map[string]string{"source.cluster.alias": "dc1", "target.cluster.alias": "dc2"}, "dc1", "dc2"},
		{"spaces from a properties file", map[string]string{"source.cluster.alias": " dc1\t", "target.cluster.alias": "dc2 "}, "dc1", "dc2"},
		{"empty is not the default", map[string]string{"source.cluster.alias": "", "target.cluster.alias": "  "}, "", ""},
	} {
		if got := offsets.SourceAliasOf(tt.config); got != tt.source {
			t.Errorf("%s: SourceAliasOf = %q, want %q", tt.name, got, tt.source)
		}
		if got := offsets.TargetAliasOf(tt.config); got != tt.target {
			t.Errorf("%s: TargetAliasOf = %q, want %q", tt.name, got, tt.target)
		}
	}
}

// TestPolicyOf: the policy is read from the configuration as MM2
// reads it, defaults included.
func TestPolicyOf(t *testing.T) {
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
		got, err := offsets.PolicyOf(tc.config)
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
	def0 := offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: "s"}
	if !(offsets.ReplicationPolicy{}).Same(offsets.ReplicationPolicy{Kind: offsets.IdentityPolicy, SourceAlias: "x"}) ||
		!(offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: "s", Separator: "."}).Same(def0) ||
		def0.Same(offsets.ReplicationPolicy{}) ||
		def0.Same(offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: "s", Separator: "_"}) {
		t.Error("Same does not compare the names the policies give")
	}
}

// TestValidTopic: Kafka's topic-name rule, the one the module checks
// names with.
func TestValidTopic(t *testing.T) {
	long := strings.Repeat("a", 249)
	for name, want := range map[string]bool{
		"orders": true, "orders.v2_eu-1": true, "__consumer_offsets": true, long: true, "...": true,
		"": false, ".": false, "..": false, long + "a": false, "orders v2": false, "orders/v2": false, "ordérs": false, "orders\n": false,
	} {
		if got := offsets.ValidTopic(name); got != want {
			t.Errorf("ValidTopic(%q) = %v, want %v", name, got, want)
		}
	}
}
