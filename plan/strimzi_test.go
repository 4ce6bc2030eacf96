package plan_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// strimziConfig is a connector configuration a Strimzi resource can carry:
// its secret a config provider reference.
func strimziConfig(name string) map[string]string {
	return map[string]string{
		"name":                             name,
		"connector.class":                  "org.apache.kafka.connect.mirror.MirrorSourceConnector",
		"tasks.max":                        "2",
		"source.cluster.alias":             "src",
		"target.cluster.alias":             "dst",
		"source.cluster.bootstrap.servers": "src-kafka-bootstrap:9093",
		"target.cluster.bootstrap.servers": "dst-kafka-bootstrap:9093",
		"source.cluster.security.protocol": "SASL_SSL",
		"target.cluster.security.protocol": "PLAINTEXT",
		"source.cluster.sasl.mechanism":    "SCRAM-SHA-512",
		"source.cluster.sasl.jaas.config":  "${strimzisecrets:kafka/mm2-source:sasl.jaas.config}",
		"topics":                           `orders,payments`,
		"replication.policy.class":         "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
		"emit.offset-syncs.enabled":        "false",
	}
}

// strimziPlan is the applicable plan of the golden tests for a connector
// of this name and configuration.
func strimziPlan(t *testing.T, name string, cfg map[string]string) *plan.Plan {
	t.Helper()
	s := blockedSpec()
	s.ConnectorName, s.SourceAlias, s.ConnectorConfig = name, "src", cfg
	return mustBuild(t, s, applicableSnapshot())
}

func strimziResources(cfg map[string]string) plan.StrimziResources {
	return plan.StrimziResources{Namespace: "kafka", Cluster: "mm2", Config: cfg,
		AlterConfigMap: "mm2-cutover-alter-offsets", ListConfigMap: "mm2-cutover-list-offsets"}
}

func TestStrimziNames(t *testing.T) {
	for _, tt := range []struct {
		connector string
		kind      plan.StrimziKind
		key       string
	}{
		{"mm2-orders", plan.StrimziKafkaConnector, "offsets.json"},
		{"src->dst.MirrorSourceConnector", plan.StrimziKafkaMirrorMaker2, "src--dst.MirrorSourceConnector.json"},
		{"my-cluster-source->my-cluster-target.MirrorSourceConnector", plan.StrimziKafkaMirrorMaker2, "my-cluster-source--my-cluster-target.MirrorSourceConnector.json"},
		{"->dst.MirrorSourceConnector", plan.StrimziKafkaConnector, "offsets.json"},
		{"src->.MirrorSourceConnector", plan.StrimziKafkaConnector, "offsets.json"},
		{"src->dst.MirrorCheckpointConnector", plan.StrimziKafkaConnector, "offsets.json"},
	} {
		if got := plan.StrimziKindOf(tt.connector); got != tt.kind {
			t.Errorf("StrimziKindOf(%q) = %s, want %s", tt.connector, got, tt.kind)
		}
		if got := plan.StrimziOffsetsKey(tt.connector); got != tt.key {
			t.Errorf("StrimziOffsetsKey(%q) = %s, want %s", tt.connector, got, tt.key)
		}
	}
	if got := plan.StrimziMirrorMaker2Connector("src", "dst"); got != "src->dst.MirrorSourceConnector" {
		t.Errorf("StrimziMirrorMaker2Connector = %q", got)
	}
}

// TestStrimziConfigMapKeyMirrorMaker2: a KafkaMirrorMaker2's operator reads
// the offsets of its source connector under "<source>--<target>.
// MirrorSourceConnector.json", not offsets.json (which it ignores: the
// alter would fail with "Data field ... is missing").
func TestStrimziConfigMapKeyMirrorMaker2(t *testing.T) {
	p := strimziPlan(t, "src->dst.MirrorSourceConnector", strimziConfig("src->dst.MirrorSourceConnector"))
	var b bytes.Buffer
	if err := p.WriteStrimziConfigMap(&b, "alter", "kafka"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\ndata:\n  src--dst.MirrorSourceConnector.json: |\n") ||
		!strings.Contains(b.String(), `strimzi.io/mirrormaker-connector="src->dst.MirrorSourceConnector"`) {
		t.Errorf("ConfigMap of a KafkaMirrorMaker2 connector:\n%s", b.String())
	}
}

// TestStrimziStepsOperatorNotes: the steps at the top of the rendered file
// say what the real 1.2.0 operator showed (examples/kubernetes
// TestStrimziOperatorCutover): for a KafkaMirrorMaker2, that keys added
// under spec.target.config or the source's config reach the connector's
// configuration (which then is not the plan's), and for both kinds that
// the status may say STOPPED after the resume patch until the operator's
// next periodic reconciliation.
func TestStrimziStepsOperatorNotes(t *testing.T) {
	for _, tt := range []struct {
		name         string
		configWarned bool
	}{
		{"mm2-orders", false},
		{"src->dst.MirrorSourceConnector", true},
	} {
		cfg := strimziConfig(tt.name)
		var b bytes.Buffer
		if err := strimziPlan(t, tt.name, cfg).WriteStrimzi(&b, strimziResources(cfg)); err != nil {
			t.Fatal(err)
		}
		steps, _, _ := strings.Cut(b.String(), "\n# Connect offsets")
		if got := strings.Contains(steps, "no key under spec.target.config or\n#    spec.mirrors[0].source.config"); got != tt.configWarned {
			t.Errorf("%s: the config warning in the steps: %v, want %v\n%s", tt.name, got, tt.configWarned, steps)
		}
		if !strings.Contains(steps, "# 5. resume: kubectl patch") || !strings.Contains(steps, "may say STOPPED until the operator's next periodic reconciliation") {
			t.Errorf("%s: step 5 does not say the status may lag:\n%s", tt.name, steps)
		}
	}
}

func TestGoldenStrimzi(t *testing.T) {
	for _, tt := range []struct{ name, file string }{
		{"mm2-orders", "applicable.kafkaconnector.yaml"},
		{"src->dst.MirrorSourceConnector", "applicable.kafkamirrormaker2.yaml"},
	} {
		cfg := strimziConfig(tt.name)
		p := strimziPlan(t, tt.name, cfg)
		var b bytes.Buffer
		if err := p.WriteStrimzi(&b, strimziResources(cfg)); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		golden(t, tt.file, b.Bytes())
	}
}

func TestWriteStrimziErrors(t *testing.T) {
	cfg := strimziConfig("mm2-orders")
	p := strimziPlan(t, "mm2-orders", cfg)
	mm2cfg := strimziConfig("src->dst.MirrorSourceConnector")
	mm2 := strimziPlan(t, "src->dst.MirrorSourceConnector", mm2cfg)
	with := func(base map[string]string, k, v string) map[string]string {
		c := maps.Clone(base)
		if v == "" {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	for _, tt := range []struct {
		name    string
		p       *plan.Plan
		edit    func(*plan.StrimziResources)
		changed bool   // a *ConfigChangedError, not ErrInvalidField
		detail  string // in the message
	}{
		{"another config", p, func(r *plan.StrimziResources) { r.Config = with(cfg, "tasks.max", "3") }, true, "config_digest"},
		{"same configmaps", p, func(r *plan.StrimziResources) { r.ListConfigMap = r.AlterConfigMap }, false, "would prove nothing"},
		{"bad cluster", p, func(r *plan.StrimziResources) { r.Cluster = "My_Connect" }, false, "DNS subdomain"},
		{"bad namespace", p, func(r *plan.StrimziResources) { r.Namespace = "a.b" }, false, "DNS label"},
		{"secret in clear", strimziPlan(t, "mm2-orders", with(cfg, "source.cluster.sasl.jaas.config", `org.apache.kafka.common.security.scram.ScramLoginModule required username="mm2" password="hunter2";`)),
			func(r *plan.StrimziResources) {
				r.Config = with(cfg, "source.cluster.sasl.jaas.config", `org.apache.kafka.common.security.scram.ScramLoginModule required username="mm2" password="hunter2";`)
			}, false, "secrets in clear under source.cluster.sasl.jaas.config"},
		{"password key of the plugin", p, func(r *plan.StrimziResources) {
			r.Config = cfg
			r.PasswordKeys = []string{"target.cluster.security.protocol"}
		}, false, "secrets in clear under target.cluster.security.protocol"},
		{"connector name not an object name", strimziPlan(t, "MM2_orders", strimziConfig("MM2_orders")),
			func(r *plan.StrimziResources) { r.Config = strimziConfig("MM2_orders") }, false, "Kubernetes object name"},
		{"mirror name of other aliases", strimziPlan(t, "a->b.MirrorSourceConnector", strimziConfig("a->b.MirrorSourceConnector")),
			func(r *plan.StrimziResources) { r.Config = strimziConfig("a->b.MirrorSourceConnector") }, false, `names this mirror's source connector "src->dst.MirrorSourceConnector"`},
		{"mirror without security.protocol", strimziPlan(t, "src->dst.MirrorSourceConnector", with(mm2cfg, "target.cluster.security.protocol", "")),
			func(r *plan.StrimziResources) { r.Config = with(mm2cfg, "target.cluster.security.protocol", "") }, false, "target.cluster.security.protocol is not set"},
		{"mirror, another config", mm2, func(r *plan.StrimziResources) { r.Config = with(mm2cfg, "topics", "orders") }, true, "config_digest"},
	} {
		r := strimziResources(cfg)
		if tt.p == mm2 {
			r.Config = mm2cfg
		}
		tt.edit(&r)
		var b bytes.Buffer
		err := tt.p.WriteStrimzi(&b, r)
		var changed *plan.ConfigChangedError
		switch {
		case err == nil:
			t.Errorf("%s: no error", tt.name)
		case tt.changed != errors.As(err, &changed) || !tt.changed && !errors.Is(err, plan.ErrInvalidField):
			t.Errorf("%s: %v (%T)", tt.name, err, err)
		case !strings.Contains(err.Error(), tt.detail):
			t.Errorf("%s: %v, want it to say %q", tt.name, err, tt.detail)
		case strings.Contains(err.Error(), "hunter2"):
			t.Errorf("%s: the error shows the secret: %v", tt.name, err)
		case b.Len() != 0:
			t.Errorf("%s: wrote %d bytes", tt.name, b.Len())
		}
	}
}

// listedConfigMap is a ConfigMap as the Kubernetes API returns it after
// Strimzi listed a connector's offsets into it.
func listedConfigMap(key, body string, annotations map[string]string) []byte {
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "mm2-cutover-list-offsets", "namespace": "kafka", "annotations": annotations,
			"ownerReferences": []any{map[string]any{"kind": "KafkaConnector", "name": "mm2-orders"}}},
		"data": map[string]string{key: body, "other": "kept"}}
	b, _ := json.Marshal(cm)
	return b
}

func TestParseStrimziOffsets(t *testing.T) {
	p := strimziPlan(t, "mm2-orders", strimziConfig("mm2-orders"))
	want, err := p.ExpectedOffsets()
	if err != nil {
		t.Fatal(err)
	}
	// What Strimzi writes: Connect's GET answer re-encoded by Jackson's
	// default pretty printer, in Connect's arbitrary order, without the
	// cleared partitions (Connect lists none for them).
	var listed []map[string]any
	for i := len(want) - 1; i >= 0; i-- {
		o := want[i]
		if m, ok := o.Offset.Get(); ok {
			listed = append(listed, map[string]any{"partition": map[string]any{"cluster": o.Partition.Cluster, "partition": o.Partition.Partition, "topic": o.Partition.Topic},
				"offset": map[string]any{"offset": m}})
		}
	}
	body, _ := json.MarshalIndent(map[string]any{"offsets": listed}, "", "  ")
	got, err := plan.ParseStrimziOffsets(listedConfigMap("offsets.json", string(body), nil), "mm2-orders")
	if err != nil {
		t.Fatal(err)
	}
	if rb := offsets.CompareReadBack(want, got); !rb.OK() {
		t.Errorf("read-back of the listed offsets: %s", rb)
	}
	// One offset off: the same verdict as a read-back over REST.
	listed[0]["offset"] = map[string]any{"offset": 1}
	body, _ = json.MarshalIndent(map[string]any{"offsets": listed}, "", "  ")
	got, err = plan.ParseStrimziOffsets(listedConfigMap("offsets.json", string(body), nil), "mm2-orders")
	if err != nil {
		t.Fatal(err)
	}
	if rb := offsets.CompareReadBack(want, got); rb.OK() || rb.Count(offsets.WrongValue) != 1 {
		t.Errorf("read-back with one wrong offset: %s", rb)
	}

	for _, tt := range []struct {
		name, detail string
		data         []byte
	}{
		{"not JSON", "not a ConfigMap in JSON", []byte("apiVersion: v1\nkind: ConfigMap\n")},
		{"not a ConfigMap", `kind "Secret"`, []byte(`{"apiVersion":"v1","kind":"Secret","data":{}}`)},
		{"the alter ConfigMap", "the alter ConfigMap", listedConfigMap("offsets.json", string(body), map[string]string{"mm2cutover.io/plan-fingerprint": p.Fingerprint})},
		{"the KafkaMirrorMaker2 key for a KafkaConnector", "has no key offsets.json", listedConfigMap("src--dst.MirrorSourceConnector.json", string(body), nil)},
		{"not offsets", "offsets.json", listedConfigMap("offsets.json", `{"offsets":[{"partition":{"filename":"/data/x"},"offset":{"position":1}}]}`, nil)},
	} {
		if _, err := plan.ParseStrimziOffsets(tt.data, "mm2-orders"); !errors.Is(err, plan.ErrInvalidField) || !strings.Contains(err.Error(), tt.detail) {
			t.Errorf("%s: %v, want ErrInvalidField saying %q", tt.name, err, tt.detail)
		}
	}
	if got, err := plan.ParseStrimziOffsets(listedConfigMap("src--dst.MirrorSourceConnector.json", `{"offsets":[]}`, nil), "src->dst.MirrorSourceConnector"); err != nil || len(got) != 0 {
		t.Errorf("KafkaMirrorMaker2 key: %v, %v", got, err)
	}
}

// TestF11NegativeReplicasRefused: a KafkaMirrorMaker2 with a negative
// number of Connect workers was rendered with one. It is refused; the zero
// value renders 1 (TestGoldenStrimzi).
func TestF11NegativeReplicasRefused(t *testing.T) {
	cfg := strimziConfig("src->dst.MirrorSourceConnector")
	p := strimziPlan(t, "src->dst.MirrorSourceConnector", cfg)
	r := strimziResources(cfg)
	r.Replicas = -3
	var b bytes.Buffer
	if err := p.WriteStrimzi(&b, r); !errors.Is(err, plan.ErrInvalidField) || !strings.Contains(err.Error(), "strimzi replicas") || b.Len() != 0 {
		t.Errorf("replicas -3: %v, %d bytes written; want ErrInvalidField and nothing written", err, b.Len())
	}
	r.Replicas = 2
	if err := p.WriteStrimzi(&b, r); err != nil || !strings.Contains(b.String(), "spec:\n  replicas: 2\n") {
		t.Errorf("replicas 2: %v\n%s", err, b.String())
	}
}

// TestStrimziExactlyOnce: the connector of an exactly-once plan is rendered
// with its exactly-once settings, and the steps say that the Connect
// cluster's workers need exactly.once.source.support first; an
// at-least-once plan's steps do not.
func TestStrimziExactlyOnce(t *testing.T) {
	for _, eos := range []bool{false, true} {
		cfg := strimziConfig("mirror-orders")
		if eos {
			cfg["exactly.once.support"], cfg["transaction.boundary"], cfg["source.consumer.isolation.level"] = "required", "poll", "read_committed"
		}
		var b strings.Builder
		if err := strimziPlan(t, "mirror-orders", cfg).WriteStrimzi(&b, strimziResources(cfg)); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if got := strings.Contains(out, "exactly.once.source.support: enabled"); got != eos {
			t.Errorf("exactly-once %v: the steps name the workers' setting: %v", eos, got)
		}
		if got := strings.Contains(out, `"exactly.once.support": "required"`); got != eos {
			t.Errorf("exactly-once %v: the connector's config requires exactly-once: %v\n%s", eos, got, out)
		}
	}
}
