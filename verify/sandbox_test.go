package verify_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

func TestMain(m *testing.M) { sandboxtest.Main(m) }

// unique adds a random part to a topic or connector name, so that runs
// against a held sandbox do not collide.
func unique(name string) string {
	return name + "-" + strconv.FormatInt(time.Now().UnixNano()%1_000_000_000, 36)
}

func clients(t *testing.T, sb *sandbox.Sandbox) (source, target *kafkaadmin.Client) {
	t.Helper()
	var err error
	if source, err = kafkaadmin.NewClient(kafkaadmin.Config{BootstrapServers: []string{sb.Source().Bootstrap()}}); err != nil {
		t.Fatal(err)
	}
	if target, err = kafkaadmin.NewClient(kafkaadmin.Config{BootstrapServers: []string{sb.Target().Bootstrap()}}); err != nil {
		t.Fatal(err)
	}
	return source, target
}

func mirrorConfig(sb *sandbox.Sandbox, name, topic string) map[string]string {
	cfg, err := connect.MirrorSource{Name: name, SourceBootstrap: sb.Source().Bootstrap(), TargetBootstrap: sb.Target().Bootstrap(),
		Topics: []string{topic}}.Config()
	if err != nil {
		panic(err)
	}
	return cfg
}

// boundaryPlan is a plan for one partition with C and the target end given.
func boundaryPlan(t *testing.T, topic string, c, end, targetEnd int64) *plan.Plan {
	t.Helper()
	return boundaryPlanAs(t, "", topic, c, end, targetEnd)
}

// boundaryPlanAs is boundaryPlan for a connector under MM2's default
// replication policy with source alias alias, or, for "", the identity
// policy.
func boundaryPlanAs(t *testing.T, alias, topic string, c, end, targetEnd int64) *plan.Plan {
	t.Helper()
	sp := offsets.SourcePartition{Topic: topic, Partition: 0}
	config := map[string]string{"topics": topic, "replication.policy.class": offsets.IdentityPolicyClass}
	if alias != "" {
		config = map[string]string{"topics": topic, "source.cluster.alias": alias}
	}
	p, err := plan.Build(plan.Spec{CreatedAt: time.Now(), SourceClusterID: "s", TargetClusterID: "t", ConnectorName: "c",
		SourceAlias: offsets.SourceAliasOf(config), GroupID: "g", ConnectorConfig: config}, plan.Snapshot{
		Group:     offsets.GroupOffsets{sp: c},
		Source:    map[offsets.SourcePartition]offsets.LogBounds{sp: {Start: 0, End: end}},
		TargetEnd: map[offsets.SourcePartition]int64{sp: targetEnd},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func produce(ctx context.Context, t *testing.T, bootstrap, topic string, values ...string) {
	t.Helper()
	var msgs []*sarama.ProducerMessage
	for _, v := range values {
		msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder("k-" + v), Value: sarama.StringEncoder(v),
			Headers:   []sarama.RecordHeader{{Key: []byte("h"), Value: []byte(v)}},
			Timestamp: recordTime})
	}
	if err := sandbox.Produce(ctx, bootstrap, msgs); err != nil {
		t.Fatal(err)
	}
}

// TestCheckBoundary reads real records: the target's record at the target
// end offset against the source's at C. A copy of the right record passes;
// a copy of the record after it is a difference; a partition with nothing
// at C on the source is idle (not a failure); a source record at C that
// never reached the target is a failure.
func TestCheckBoundary(t *testing.T) {
	sb := sandboxtest.Shared(t)
	source, target := clients(t, sb)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := unique("verify-boundary")
	for _, b := range []*sandbox.Broker{sb.Source(), sb.Target()} {
		if err := sandbox.CreateTopic(ctx, b.Bootstrap(), topic, 1); err != nil {
			t.Fatal(err)
		}
	}
	produce(ctx, t, sb.Source().Bootstrap(), topic, "r0", "r1", "r2", "r3")
	// The target holds r0 r1 (the old job's), then r2 (as MM2 would copy it).
	produce(ctx, t, sb.Target().Bootstrap(), topic, "r0", "r1", "r2")

	got, err := verify.CheckBoundary(ctx, source, target, boundaryPlan(t, topic, 2, 4, 2), nil, nil)
	if err != nil || len(got) != 1 || !got[0].OK() || got[0].Duplicates != 0 {
		t.Fatalf("right record: %+v, %v", got, err)
	}
	got, err = verify.CheckBoundary(ctx, source, target, boundaryPlan(t, topic, 1, 4, 2), nil, nil)
	if err != nil || len(got) != 1 || got[0].OK() || len(got[0].Differences) == 0 || !strings.Contains(got[0].Differences[0], "did not copy") {
		t.Fatalf("record of C+1 on the target: %+v, %v; want the record at C reported as skipped", got, err)
	}
	t.Logf("differences found: %v", got[0].Differences)
	got, err = verify.CheckBoundary(ctx, source, target, boundaryPlan(t, topic, 3, 4, 2), nil, nil)
	if err != nil || len(got) != 1 || got[0].OK() || len(got[0].Differences) == 0 || !strings.Contains(got[0].Differences[0], "before C") {
		t.Fatalf("record of C-1 on the target: %+v, %v; want MM2 reported as starting before C", got, err)
	}
	short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
	defer cancelShort()
	got, err = verify.CheckBoundary(short, source, target, boundaryPlan(t, topic, 4, 4, 3), nil, nil)
	if err != nil || len(got) != 1 || !got[0].Pending || !got[0].Idle || !got[0].OK() {
		t.Fatalf("nothing at C on the source yet: %+v, %v; want pending, idle, not a failure", got, err)
	}
	short2, cancelShort2 := context.WithTimeout(ctx, 2*time.Second)
	defer cancelShort2()
	got, err = verify.CheckBoundary(short2, source, target, boundaryPlan(t, topic, 3, 4, 3), nil, nil)
	if err != nil || len(got) != 1 || !got[0].Pending || got[0].Idle || got[0].OK() {
		t.Fatalf("source record at C never copied: %+v, %v; want pending and a failure", got, err)
	}
}

// TestAcceptanceFindsWhatTheDesignForbids runs the acceptance checks on a
// Connect cluster of its own: clean at first, then with an offset-syncs
// topic on the target and a MirrorCheckpointConnector, and with a connector
// whose configuration changed after the plan.
func TestAcceptanceFindsWhatTheDesignForbids(t *testing.T) {
	sb := sandboxtest.Dedicated(t, sandbox.Config{Workers: 1})
	source, target := clients(t, sb)
	c, err := connect.New(sb.ConnectURL())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := "accept"
	cfg := mirrorConfig(sb, name, "accept")
	if _, err := c.Create(ctx, name, cfg, connect.InitialStopped); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(plan.Spec{CreatedAt: time.Now(), SourceClusterID: "s", TargetClusterID: "t", ConnectorName: name,
		SourceAlias: "source", GroupID: "g", ConnectorConfig: cfg}, plan.Snapshot{
		Group:     offsets.GroupOffsets{{Topic: "accept", Partition: 0}: 1},
		Source:    map[offsets.SourcePartition]offsets.LogBounds{{Topic: "accept", Partition: 0}: {End: 1}},
		TargetEnd: map[offsets.SourcePartition]int64{{Topic: "accept", Partition: 0}: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	findings := func() map[string]bool {
		t.Helper()
		fs, err := verify.Acceptance(ctx, c, source, target, p, name)
		if err != nil {
			t.Fatal(err)
		}
		ok := map[string]bool{}
		for _, f := range fs {
			ok[f.Name] = f.Verdict == verify.Pass
		}
		return ok
	}
	for check, ok := range findings() {
		if !ok {
			t.Errorf("clean cluster: %s fails", check)
		}
	}

	if err := sandbox.CreateTopic(ctx, sb.Target().Bootstrap(), "mm2-offset-syncs.source.internal", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "accept-checkpoints", map[string]string{
		"connector.class":                  "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
		"source.cluster.alias":             "source",
		"target.cluster.alias":             "target",
		"source.cluster.bootstrap.servers": sb.Source().Bootstrap(),
		"target.cluster.bootstrap.servers": sb.Target().Bootstrap(),
	}, connect.InitialStopped); err != nil {
		t.Fatal(err)
	}
	cfg["tasks.max"] = "2"
	if _, _, err := c.PutConfig(ctx, name, cfg); err != nil {
		t.Fatal(err)
	}
	got := findings()
	for _, check := range []string{"no-checkpoint-or-heartbeat-connector", "no-offset-syncs-topic-on-target", "config-digest"} {
		if got[check] {
			t.Errorf("%s passes, want it to fail", check)
		}
	}
	if !got["no-offset-syncs-topic-on-source"] {
		t.Errorf("no-offset-syncs-topic-on-source fails, want it to pass")
	}
}
