package verify_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/verify"
)

// TestPrecheckStrimziManaged runs the precheck on a real Connect cluster
// that carries what the Strimzi operator leaves visible over REST — a
// connector named as a KafkaMirrorMaker2 names its own, with a credential
// referencing Strimzi's config provider — and finds it: strimzi-managed
// fails (the operator would delete a connector created over REST), the
// re-check before a write refuses, and with PrecheckSpec.Strimzi (the
// cutover goes through Strimzi's resources) the check passes. On the same
// cluster without such a connector it passes. A dedicated sandbox: the
// signs would fail every other test's precheck on a shared one.
func TestPrecheckStrimziManaged(t *testing.T) {
	sb := sandboxtest.Dedicated(t, sandbox.Config{Workers: 1})
	source, target := clients(t, sb)
	c, err := connect.New(sb.ConnectURL())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	topic, group := quietSetup(ctx, t, sb, source, "strimzi")
	name := unique("strimzi")
	precheck := func(what string, strimzi bool) verify.Check {
		t.Helper()
		r, err := verify.Precheck(ctx, c, source, target, verify.PrecheckSpec{
			Group: group, Topics: []string{topic}, StabilityWindow: time.Second, Config: mirrorConfig(sb, name, topic), Connector: name, Strimzi: strimzi,
		})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		got := checksNamed(r, "strimzi-managed")
		if len(got) != 1 {
			t.Fatalf("%s: strimzi-managed checks %v", what, got)
		}
		return got[0]
	}
	if ch := precheck("plain Connect", false); ch.Verdict != verify.Pass {
		t.Errorf("plain Connect: %s %s", ch.Verdict, ch.Detail)
	}

	// What a KafkaMirrorMaker2 with SCRAM on its source creates.
	mirror := "src->dst.MirrorSourceConnector"
	cfg := mirrorConfig(sb, mirror, unique("strimzi-other"))
	cfg["source.cluster.alias"], cfg["target.cluster.alias"] = "src", "dst"
	cfg["source.cluster.sasl.jaas.config"] = `org.apache.kafka.common.security.scram.ScramLoginModule required username="mm2" password="${strimzisecrets:kafka/mm2-source:password}";`
	if _, err := c.Create(ctx, mirror, cfg, connect.InitialStopped); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.WithoutCancel(ctx), mirror) })

	ch := precheck("Strimzi's connector beside", false)
	if ch.Verdict != verify.Fail || !strings.Contains(ch.Detail, `"src->dst.MirrorSourceConnector" is named as a KafkaMirrorMaker2`) ||
		!strings.Contains(ch.Detail, "strimzisecrets") || strings.Contains(ch.Detail, "mm2-source") {
		t.Errorf("Strimzi's connector beside: %s %s", ch.Verdict, ch.Detail)
	}
	if ch := precheck("the Strimzi path", true); ch.Verdict != verify.Pass || !strings.Contains(ch.Detail, "2 signs") {
		t.Errorf("the Strimzi path: %s %s", ch.Verdict, ch.Detail)
	}

	w, err := verify.ObserveWriters(ctx, c, target, mirrorConfig(sb, name, topic))
	if err != nil || len(w.Strimzi) != 2 {
		t.Fatalf("ObserveWriters: %+v, %v", w, err)
	}
	p := boundaryPlan(t, topic, 1, 1, 0)
	o := verify.Observation{SourceClusterID: p.SourceClusterID, TargetClusterID: p.TargetClusterID, Writers: &w}
	o.Writers.WorkerClusterID, o.Writers.ProducerClusterID = p.TargetClusterID, p.TargetClusterID
	var stale *verify.StalePlanError
	if err := verify.Recheck(p, o); !errors.As(err, &stale) || !strings.Contains(err.Error(), "strimzi-managed") {
		t.Errorf("Recheck on a Strimzi-managed Connect: %v", err)
	}
}
