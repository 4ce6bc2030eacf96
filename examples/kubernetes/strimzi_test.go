package kubernetes_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/kube"
	"github.com/mm2cutover/mm2cutover/internal/kube/kubetest"
	"github.com/mm2cutover/mm2cutover/internal/strimzicrd"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// strimziNamespace is where the Strimzi tests put their objects.
const strimziNamespace = "mm2cutover-strimzi"

// installStrimziCRDs makes Strimzi's own KafkaConnector and
// KafkaMirrorMaker2 CRDs (strimzicrd: its model classes and CRD generator
// from Maven Central, run as Strimzi's build runs it), installs them and
// waits until the API server serves them.
func installStrimziCRDs(ctx context.Context, t *testing.T, c *kube.Cluster) {
	t.Helper()
	dir, err := strimzicrd.Generate(ctx, kube.DefaultCacheDir(), strimzicrd.Version)
	if errors.Is(err, strimzicrd.ErrNoJava21) || errors.Is(err, strimzicrd.ErrNoMaven) {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strimzicrd.Files {
		if _, err := c.Kubectl(ctx, "apply", "--server-side", "--force-conflicts", "-f", filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.WaitEstablished(ctx, "crd/kafkaconnectors.kafka.strimzi.io", "crd/kafkamirrormaker2s.kafka.strimzi.io"); err != nil {
		t.Fatal(err)
	}
	ns := `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + strimziNamespace + `"}}`
	if _, err := c.KubectlIn(ctx, strings.NewReader(ns), "apply", "-f", "-"); err != nil {
		t.Fatal(err)
	}
}

// strimziPlan is an applicable plan for connector, as the cutover's plan
// step builds it, and the connector configuration it records.
func strimziPlan(t *testing.T, connector string) (*plan.Plan, map[string]string) {
	t.Helper()
	cfg := map[string]string{
		"name": connector, "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector", "tasks.max": "2",
		"source.cluster.alias": "src", "target.cluster.alias": "dst",
		"source.cluster.bootstrap.servers": "src-kafka-bootstrap.kafka:9093", "target.cluster.bootstrap.servers": "dst-kafka-bootstrap.kafka:9093",
		"source.cluster.security.protocol": "SASL_SSL", "target.cluster.security.protocol": "PLAINTEXT",
		"source.cluster.sasl.mechanism":   "SCRAM-SHA-512",
		"source.cluster.sasl.jaas.config": "${strimzisecrets:kafka/mm2-source:sasl.jaas.config}",
		"topics":                          `orders,payments\.v1`, "replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
		"emit.offset-syncs.enabled": "false", "source.consumer.auto.offset.reset": "earliest",
	}
	sp := func(topic string, p int32) offsets.SourcePartition {
		return offsets.SourcePartition{Topic: topic, Partition: p}
	}
	p, err := plan.Build(plan.Spec{
		CreatedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), ToolVersion: "strimzi-test", SourceClusterID: "src-id", TargetClusterID: "dst-id",
		ConnectorName: connector, SourceAlias: "src", ConnectorConfig: cfg, GroupID: "flink-orders",
	}, plan.Snapshot{
		Group:     offsets.GroupOffsets{sp("orders", 0): 42, sp("orders", 1): 0, sp("payments.v1", 0): 7},
		Source:    map[offsets.SourcePartition]offsets.LogBounds{sp("orders", 0): {Start: 0, End: 50}, sp("orders", 1): {Start: 0, End: 0}, sp("payments.v1", 0): {Start: 0, End: 7}},
		TargetEnd: map[offsets.SourcePartition]int64{sp("orders", 0): 42, sp("orders", 1): 0, sp("payments.v1", 0): 7},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p, cfg
}

// TestStrimziResourcesServerSide sends the Strimzi resources the cutover
// renders (plan.WriteStrimzi: a KafkaConnector, and a KafkaMirrorMaker2,
// each with its alter ConfigMap) to a real API server that holds Strimzi
// 1.2.0's own CRDs, with server-side dry run and strict field validation:
// accepted without warning. Edits the CRDs' schemas refuse are refused,
// so the validation is real. Then a ConfigMap shaped as Strimzi's
// listOffsets writes it is stored and read back through the API
// (kubectl get -o json): plan.ParseStrimziOffsets and
// offsets.CompareReadBack give the read-back's verdict on it.
func TestStrimziResourcesServerSide(t *testing.T) {
	c := kubetest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	installStrimziCRDs(ctx, t, c)

	rendered := map[string]string{}
	for _, connector := range []string{"mm2-orders", plan.StrimziMirrorMaker2Connector("src", "dst")} {
		p, cfg := strimziPlan(t, connector)
		var b strings.Builder
		err := p.WriteStrimzi(&b, plan.StrimziResources{Namespace: strimziNamespace, Cluster: "mm2", Config: cfg,
			AlterConfigMap: "mm2-alter-offsets", ListConfigMap: "mm2-list-offsets", Replicas: 3})
		if err != nil {
			t.Fatalf("%s: %v", connector, err)
		}
		kind := string(plan.StrimziKindOf(connector))
		rendered[kind] = b.String()
		out, warnings, err := c.KubectlStreams(ctx, strings.NewReader(b.String()), "apply", "--dry-run=server", "--validate=strict", "-f", "-")
		if err != nil || warnings != "" {
			t.Errorf("%s: %v, warnings %q\n%s", kind, err, warnings, b.String())
			continue
		}
		t.Logf("%s (server dry run):\n%s", kind, strings.TrimSpace(out))
	}

	for _, tc := range []struct {
		name, kind, old, new, want string
	}{
		{"a state Strimzi does not know", "KafkaConnector", "  state: stopped\n", "  state: halted\n", `spec.state: Unsupported value: "halted"`},
		{"tasksMax not a number", "KafkaConnector", "  tasksMax: 2\n", "  tasksMax: two\n", "spec.tasksMax"},
		{"a misspelt field", "KafkaConnector", "  alterOffsets:\n", "  alterOffset:\n", `unknown field "spec.alterOffset"`},
		{"alterOffsets without its ConfigMap", "KafkaConnector", "  alterOffsets:\n    fromConfigMap:\n      name: \"mm2-alter-offsets\"\n", "  alterOffsets: {}\n", "spec.alterOffsets.fromConfigMap: Required value"},
		{"the v1 target without groupId", "KafkaMirrorMaker2", "    groupId: \"mirrormaker2-cluster\"\n", "", "spec.target.groupId: Required value"},
		{"a mirror connector's state Strimzi does not know", "KafkaMirrorMaker2", "      state: stopped\n", "      state: halted\n", `spec.mirrors[0].sourceConnector.state: Unsupported value: "halted"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := rendered[tc.kind]
			mutated := strings.Replace(doc, tc.old, tc.new, 1)
			if mutated == doc {
				t.Fatalf("the %s has no %q to edit", tc.kind, tc.old)
			}
			_, err := c.KubectlIn(ctx, strings.NewReader(mutated), "apply", "--dry-run=server", "--validate=strict", "-f", "-")
			var ke *kube.KubectlError
			if !errors.As(err, &ke) || !strings.Contains(ke.Stderr, tc.want) {
				t.Fatalf("got %v, want the API server to refuse it with %q", err, tc.want)
			}
		})
	}

	// The read-back from a listOffsets ConfigMap, stored and read through
	// the API as the operator's and kubectl leave it: Connect's GET body,
	// pretty printed, under the key of the connector's kind.
	p, _ := strimziPlan(t, "mm2-orders")
	want, err := p.ExpectedOffsets()
	if err != nil {
		t.Fatal(err)
	}
	var listed []map[string]any
	for _, o := range want {
		if m, ok := o.Offset.Get(); ok {
			listed = append(listed, map[string]any{"partition": map[string]any{"cluster": o.Partition.Cluster, "partition": o.Partition.Partition, "topic": o.Partition.Topic},
				"offset": map[string]any{"offset": m}})
		}
	}
	for _, tc := range []struct {
		name    string
		edit    func()
		matches bool
	}{
		{"as written", func() {}, true},
		{"one offset off", func() { listed[0]["offset"] = map[string]any{"offset": 40} }, false},
	} {
		tc.edit()
		body, _ := json.MarshalIndent(map[string]any{"offsets": listed}, "", "  ")
		cm, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "mm2-list-offsets", "namespace": strimziNamespace,
				"labels": map[string]string{"strimzi.io/cluster": "mm2", "strimzi.io/kind": "KafkaConnector"}},
			"data": map[string]string{plan.StrimziOffsetsKey("mm2-orders"): string(body)}})
		if _, err := c.KubectlIn(ctx, strings.NewReader(string(cm)), "apply", "--server-side", "--force-conflicts", "-f", "-"); err != nil {
			t.Fatal(err)
		}
		got, err := c.Kubectl(ctx, "get", "configmap", "mm2-list-offsets", "-n", strimziNamespace, "-o", "json")
		if err != nil {
			t.Fatal(err)
		}
		read, err := plan.ParseStrimziOffsets([]byte(got), "mm2-orders")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if rb := offsets.CompareReadBack(want, read); rb.OK() != tc.matches {
			t.Errorf("%s: read-back %s, want OK %v", tc.name, rb, tc.matches)
		}
	}
}
