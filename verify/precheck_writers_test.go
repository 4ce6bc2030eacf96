package verify_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/verify"
)

// TestPrecheckOtherWriters runs the precheck while three other writers of
// the cutover's topics exist on the real clusters and Connect cluster — a
// producer writing the target topic during the stability window, a
// MirrorSourceConnector replicating the target back into the source under
// IdentityReplicationPolicy, and another MirrorSourceConnector already
// replicating the same topic to the target — and each fails its check by
// name; with them gone, the checks pass. The connectors are created
// STOPPED: they need not run to be found.
func TestPrecheckOtherWriters(t *testing.T) {
	sb := sandboxtest.Shared(t)
	source, target := clients(t, sb)
	c, err := connect.New(sb.ConnectURL())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	src, dst := sb.Source().Bootstrap(), sb.Target().Bootstrap()
	topic := unique("writers")
	for _, b := range []string{src, dst} {
		if err := sandbox.CreateTopic(ctx, b, topic, 2); err != nil {
			t.Fatal(err)
		}
	}
	produce(ctx, t, src, topic, "r0", "r1")
	group := unique("writers-flink")
	if err := source.CommitOffsets(ctx, group, map[kafkaadmin.TopicPartition]int64{{Topic: topic, Partition: 0}: 1, {Topic: topic, Partition: 1}: 1}); err != nil {
		t.Fatal(err)
	}
	name := unique("writers")
	precheck := func() *verify.PrecheckReport {
		t.Helper()
		r, err := verify.Precheck(ctx, c, source, target, verify.PrecheckSpec{
			Group: group, Topics: []string{topic}, Policy: offsets.ReplicationPolicy{Kind: offsets.IdentityPolicy},
			StabilityWindow: 3 * time.Second, Config: mirrorConfig(sb, name, topic), Connector: name,
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range r.Checks {
			switch c.Name {
			case "target-quiet", "reverse-replication", "other-mirror-connectors":
				t.Logf("%s %s: %s", c.Verdict, c.Name, c.Detail)
			}
		}
		return r
	}

	reverse, other := unique("writers-back"), unique("writers-old")
	backCfg := mirrorConfig(sb, reverse, topic)
	backCfg["source.cluster.bootstrap.servers"], backCfg["target.cluster.bootstrap.servers"] = dst, src
	backCfg["source.cluster.alias"], backCfg["target.cluster.alias"] = "target", "source"
	backCfg["producer.override.bootstrap.servers"] = src
	for n, cfg := range map[string]map[string]string{reverse: backCfg, other: mirrorConfig(sb, other, topic)} {
		if _, err := c.Create(ctx, n, cfg, connect.InitialStopped); err != nil {
			t.Fatal(err)
		}
		defer c.Delete(context.WithoutCancel(ctx), n)
	}
	// Another producer writes the target topic through the window.
	writing, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		p, err := sarama.NewSyncProducer([]string{dst}, sandbox.NewSaramaConfig())
		if err != nil {
			t.Error(err)
			return
		}
		defer p.Close()
		for writing.Err() == nil {
			if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder("stray")}); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	r := precheck()
	stop()
	wg.Wait()
	if got := wantChecks(t, "writers", r, "target-quiet", verify.Fail); len(got) == 1 {
		mustContain(t, "target-quiet", got[0].Detail, "1 target topic written during the 3s window: "+topic)
	}
	// STOPPED, the two connectors write nothing until someone resumes them.
	wantChecks(t, "stopped writers", r, "reverse-replication", verify.Pass)
	if got := wantChecks(t, "stopped writers", r, "other-mirror-connectors", verify.Pass, verify.Warn, verify.Warn); len(got) == 3 {
		mustContain(t, "stopped reverse", got[1].Detail, "connector "+reverse+" reads the target", "writes to the source", topic+" -> "+topic+" if resumed; it is STOPPED")
		mustContain(t, "stopped other", got[2].Detail, "connector "+other+" reads the source", topic+" -> "+topic+" if resumed; it is STOPPED")
	}

	// Running, they are a replication loop and a second writer. (They copy
	// the few records of this test's topic back and forth until deleted.)
	for _, n := range []string{reverse, other} {
		if err := c.Resume(ctx, n); err != nil {
			t.Fatal(err)
		}
		if _, err := c.WaitRunning(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	r = precheck()
	if got := wantChecks(t, "writers", r, "reverse-replication", verify.Fail); len(got) == 1 {
		mustContain(t, "reverse", got[0].Detail, "connector "+reverse+" reads the target", "writes to the source", topic+" -> "+topic, "replication loop")
	}
	if got := wantChecks(t, "writers", r, "other-mirror-connectors", verify.Fail); len(got) == 1 {
		mustContain(t, "other", got[0].Detail, "connector "+other+" reads the source", "already writes "+topic+" -> "+topic)
	}

	for _, n := range []string{reverse, other} {
		if err := c.Delete(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	r = precheck()
	wantChecks(t, "alone", r, "target-quiet", verify.Pass)
	wantChecks(t, "alone", r, "reverse-replication", verify.Pass)
	wantChecks(t, "alone", r, "other-mirror-connectors", verify.Pass)
	if err := r.Blocking(); err != nil {
		t.Errorf("alone: %v", err)
	}
}
