//go:build sandbox

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/examples/internal/app"
)

// TestStrimziPath runs the Strimzi path on the sandbox, the operator's part
// played by the test exactly as Strimzi 1.2.0 does it over REST: the
// precheck and plan pass with -strimzi-cluster (strimzi-managed: the
// resources' path), the strimzi step writes the resources, the connector is
// created STOPPED with the KafkaConnector's spec.config (and the plan's
// digest holds for what Connect stores), the alter ConfigMap's offsets.json
// is sent as the PATCH body as it stands, the offsets Connect then lists
// are written into a ConfigMap as Strimzi's list does, and verify
// -strimzi-offsets reads them back: 100% equal. The same ConfigMap with one
// offset changed fails (exit 3), and the alter ConfigMap itself is refused.
func TestStrimziPath(t *testing.T) {
	sc, ctx := newTestScenario(t, "stz-", "identity")
	c := sc.cli
	c.s.StrimziCluster, c.s.StrimziNamespace = "mm2-connect", "kafka"
	p, err := c.buildPlan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.o.strimziOut = filepath.Join(sc.dir, "strimzi.yaml")
	if err := c.strimzi(ctx); err != nil {
		t.Fatal(err)
	}
	rendered, err := os.ReadFile(c.o.strimziOut)
	if err != nil {
		t.Fatal(err)
	}
	body, config := renderedParts(t, string(rendered))

	// The operator: create STOPPED (initial_state, Strimzi 1.2.0), then
	// PATCH the ConfigMap's data as it stands (AbstractConnectOperator
	// alterConnectorOffsets sends it unchanged).
	config["name"], config["connector.class"], config["tasks.max"] = sc.connector, connect.MirrorSourceConnectorClass, "1"
	if _, err := c.env.Connect.Create(ctx, sc.connector, config, connect.InitialStopped); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.env.Connect.Delete(ctx, sc.connector) })
	// A worker that forwarded the create to the leader answers 404 until
	// its own configuration store has read the new connector (CI of
	// dcdb5f2: GET config 404 right after the 201).
	stored, err := c.env.Connect.WaitKnown(ctx, sc.connector)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckConfig(stored); err != nil {
		t.Errorf("the connector created from the KafkaConnector's spec is not the plan's: %v", err)
	}
	var list struct{ Offsets []connect.Offset }
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	if _, err := c.env.Connect.AlterOffsets(ctx, sc.connector, list.Offsets); err != nil {
		t.Fatalf("PATCH with the alter ConfigMap's offsets: %v", err)
	}
	want, _ := p.ExpectedOffsets()
	if _, err := c.env.Connect.WaitMirrorOffsets(ctx, sc.connector, want); err != nil {
		t.Fatal(err)
	}
	// The operator's list: GET, pretty printed into the list ConfigMap.
	got, err := c.env.Connect.Offsets(ctx, sc.connector)
	if err != nil {
		t.Fatal(err)
	}
	listed := func(offs []connect.Offset, annotations map[string]string) string {
		b, _ := json.MarshalIndent(map[string]any{"offsets": offs}, "", "  ")
		cm, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "mm2-list", "namespace": "kafka", "annotations": annotations}, "data": map[string]string{"offsets.json": string(b)}})
		f := filepath.Join(sc.dir, "listed.json")
		if err := os.WriteFile(f, cm, 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	var out bytes.Buffer
	c.out = &out
	c.o.strimziOffsets = listed(got, nil)
	if err := c.verify(ctx); err != nil || !strings.Contains(out.String(), "match, 0 wrong value, 0 missing, 0 unexpected") {
		t.Fatalf("verify -strimzi-offsets: %v\n%s", err, out.String())
	}
	got[0].Offset = map[string]any{"offset": int64(1)}
	out.Reset()
	c.o.strimziOffsets = listed(got, nil)
	if err := c.verify(ctx); app.ExitStatus(err) != app.ExitCheckFailed || !strings.Contains(out.String(), "1 wrong value") {
		t.Errorf("verify of a wrong listing: exit %d, %v\n%s", app.ExitStatus(err), err, out.String())
	}
	c.o.strimziOffsets = listed(got, map[string]string{"mm2cutover.io/plan-fingerprint": p.Fingerprint})
	if err := c.verify(ctx); app.ExitStatus(err) != app.ExitUsage || !strings.Contains(err.Error(), "the alter ConfigMap") {
		t.Errorf("verify of the alter ConfigMap: %v", err)
	}
}

// renderedParts returns the alter ConfigMap's offsets.json and the
// KafkaConnector's spec.config of the strimzi step's file.
func renderedParts(t *testing.T, yaml string) (string, map[string]string) {
	t.Helper()
	var body strings.Builder
	config := map[string]string{}
	section := ""
	sc := bufio.NewScanner(strings.NewReader(yaml))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case l == "  offsets.json: |":
			section = "offsets"
		case l == "  config:":
			section = "config"
		case section == "offsets" && strings.HasPrefix(l, "    "):
			body.WriteString(l[4:] + "\n")
		case section == "config" && strings.HasPrefix(l, "    "):
			var kv map[string]string
			if err := json.Unmarshal([]byte("{"+l+"}"), &kv); err != nil {
				t.Fatalf("config line %q: %v", l, err)
			}
			for k, v := range kv {
				config[k] = v
			}
		default:
			section = ""
		}
	}
	if body.Len() == 0 || len(config) == 0 {
		t.Fatalf("no offsets or no config in:\n%s", yaml)
	}
	return body.String(), config
}
