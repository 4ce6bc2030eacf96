package plan_test

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/redact"
)

// TestPlanRecordsConfig: a version 4 plan records the connector
// configuration, redacted and without its name, and the replication policy
// it names; no secret reaches the plan file, and the policy is what its
// checks use ([plan.Plan.Policy]).
func TestPlanRecordsConfig(t *testing.T) {
	s := spec()
	s.ConnectorConfig["name"] = s.ConnectorName
	s.ConnectorConfig["replication.policy.separator"] = "_"
	s.ConnectorConfig["source.cluster.ssl.truststore.location"] = "/etc/s3cret" // a value holding a secret
	p := mustBuild(t, s, applicableSnapshot())
	want := map[string]string{
		"connector.class":                        "org.apache.kafka.connect.mirror.MirrorSourceConnector",
		"replication.policy.separator":           "_",
		"source.cluster.alias":                   "source",
		"source.cluster.sasl.jaas.config":        redact.Redacted,
		"source.cluster.ssl.truststore.location": "/etc/" + redact.Redacted,
		"target.cluster.alias":                   "target",
		"target.cluster.ssl.keystore.password":   "${file:/etc/kafka/secrets.properties:keystore}",
		"topics":                                 "^(orders|payments)$",
	}
	if diff := cmp.Diff(want, p.ConnectorConfig); diff != "" {
		t.Errorf("recorded configuration (-want +got):\n%s", diff)
	}
	pol, err := p.Policy()
	if wantPol := (offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: "source", Separator: "_"}); err != nil || pol != wantPol {
		t.Errorf("Policy() = %+v, %v; want %+v", pol, err, wantPol)
	}
	data := encode(t, p)
	if bytes.Contains(data, []byte("s3cret")) {
		t.Errorf("a secret reached the plan file:\n%s", data)
	}
	back, err := plan.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, back, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("decoded plan differs (-built +decoded):\n%s", diff)
	}

	s.ConnectorConfig["replication.policy.class"] = "com.example.PrefixPolicy"
	if _, err := plan.Build(s, applicableSnapshot()); !errors.Is(err, offsets.ErrInvalidPolicy) || !errors.Is(err, plan.ErrInvalidField) {
		t.Errorf("Build with a policy the cutover cannot follow: %v; want offsets.ErrInvalidPolicy and plan.ErrInvalidField", err)
	}
	s.ConnectorConfig["replication.policy.class"] = offsets.DefaultPolicyClass
	s.ConnectorConfig["replication.policy.separator"] = "s3cret"
	if _, err := plan.Build(s, applicableSnapshot()); !errors.Is(err, plan.ErrInvalidField) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Build with a separator equal to a password: %v; want ErrInvalidField naming no secret", err)
	}
}

// TestCheckConfigNamesKeys: a configuration that is not the plan's is
// refused with the keys that differ, secrets redacted on both sides; a
// password rotation is not a difference; the plan's own configuration
// passes, with or without its name.
func TestCheckConfigNamesKeys(t *testing.T) {
	s := spec()
	p := mustBuild(t, s, applicableSnapshot())
	same := maps.Clone(s.ConnectorConfig)
	same["name"] = s.ConnectorName
	same["source.cluster.sasl.jaas.config"] = `org.apache.kafka.common.security.plain.PlainLoginModule required username="mm2" password="rotated";`
	if err := p.CheckConfig(same); err != nil {
		t.Errorf("the plan's configuration, password rotated: %v", err)
	}
	other := maps.Clone(s.ConnectorConfig)
	other["topics"] = "orders"
	other["tasks.max"] = "8"
	delete(other, "target.cluster.alias")
	err := p.CheckConfig(other)
	var ce *plan.ConfigChangedError
	if !errors.As(err, &ce) || !errors.Is(err, plan.ErrConfigChanged) {
		t.Fatalf("CheckConfig of another configuration: %v; want a *ConfigChangedError", err)
	}
	want := []plan.ConfigDifference{
		{Key: "target.cluster.alias", Plan: "target", InPlan: true},
		{Key: "tasks.max", Config: "8", InConfig: true},
		{Key: "topics", Plan: "^(orders|payments)$", Config: "orders", InPlan: true, InConfig: true},
	}
	if diff := cmp.Diff(want, ce.Differences); diff != "" {
		t.Errorf("differences (-want +got):\n%s", diff)
	}
	for _, part := range []string{`target.cluster.alias (plan "target", now absent)`, `tasks.max (plan absent, now "8")`, `topics (plan "^(orders|payments)$", now "orders")`} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not say %q", err, part)
		}
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error names a secret: %v", err)
	}
}

// TestDecodeSchemaVersion3 reads a plan written before version 4: it
// decodes and re-encodes unchanged, records no configuration (Policy
// refuses with ErrConfigNotRecorded), and AttachConfig gives it the
// configuration it was built for, never another.
func TestDecodeSchemaVersion3(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "schema3.plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("Decode of a version 3 plan: %v", err)
	}
	if p.SchemaVersion != 3 || p.ConnectorConfig != nil {
		t.Errorf("version %d, config %v; want 3 and none", p.SchemaVersion, p.ConnectorConfig)
	}
	if _, err := p.Policy(); !errors.Is(err, plan.ErrConfigNotRecorded) || !errors.Is(err, plan.ErrInvalid) {
		t.Errorf("Policy of a version 3 plan: %v; want ErrConfigNotRecorded", err)
	}
	other := maps.Clone(spec().ConnectorConfig)
	other["topics"] = "orders"
	if err := p.AttachConfig(other); !errors.Is(err, plan.ErrConfigChanged) || p.ConnectorConfig != nil {
		t.Errorf("AttachConfig of another configuration: %v, config %v; want ErrConfigChanged and none attached", err, p.ConnectorConfig)
	}
	if err := p.AttachConfig(spec().ConnectorConfig); err != nil {
		t.Fatalf("AttachConfig of the plan's configuration: %v", err)
	}
	if pol, err := p.Policy(); err != nil || pol != (offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: "source"}) {
		t.Errorf("Policy after AttachConfig: %+v, %v", pol, err)
	}
	var buf bytes.Buffer
	if err := p.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(data), buf.String()); diff != "" {
		t.Errorf("re-encoded version 3 plan differs (-read +written):\n%s", diff)
	}
	if err := p.CheckConfig(other); err == nil || !strings.Contains(err.Error(), `topics (plan "^(orders|payments)$", now "orders")`) {
		t.Errorf("CheckConfig with the attached configuration: %v; want the key named", err)
	}
}
