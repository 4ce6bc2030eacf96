package verify_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
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

const (
	fiveMB  = "5242880"
	threeMB = 3 << 20
)

// bigProducer sends records of up to 5 MB to a plaintext cluster.
func bigProducer(t *testing.T, bootstrap string) sarama.SyncProducer {
	t.Helper()
	cfg := sandbox.NewSaramaConfig()
	cfg.Producer.MaxMessageBytes = 6 << 20
	p, err := sarama.NewSyncProducer([]string{bootstrap}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func alterTopic(t *testing.T, bootstrap, topic, key, value string) {
	t.Helper()
	admin, err := sarama.NewClusterAdmin([]string{bootstrap}, sandbox.NewSaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := admin.AlterConfig(sarama.TopicResource, topic, map[string]*string{key: &value}, false); err != nil {
		t.Fatal(err)
	}
}

// checksNamed returns the checks of one name.
func checksNamed(r *verify.PrecheckReport, name string) verify.Checks {
	var out verify.Checks
	for _, c := range r.Checks {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// wantChecks asserts that the checks of one name have exactly the
// verdicts given, each detail holding every fragment.
func wantChecks(t *testing.T, what string, r *verify.PrecheckReport, name string, want ...verify.Verdict) verify.Checks {
	t.Helper()
	got := checksNamed(r, name)
	ok := len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = got[i].Verdict == want[i]
	}
	if !ok {
		t.Errorf("%s: %s checks %+v, want verdicts %v", what, name, got, want)
	}
	return got
}

func mustContain(t *testing.T, what, detail string, fragments ...string) {
	t.Helper()
	for _, f := range fragments {
		if !strings.Contains(detail, f) {
			t.Errorf("%s: %q does not say %q", what, detail, f)
		}
	}
}

// forward listens on this machine's first address that is not loopback
// and forwards every connection to addr, so that a real worker is reached
// over an address anyone on the network could use. It returns the
// listener's host:port, or "" when the machine has no such address.
func forward(t *testing.T, addr string) string {
	t.Helper()
	addrs, _ := net.InterfaceAddrs()
	var host string
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
			host = ipn.IP.String()
			break
		}
	}
	if host == "" {
		return ""
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return ""
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				w, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				defer w.Close()
				go io.Copy(w, c)
				io.Copy(c, w)
			}()
		}
	}()
	return l.Addr().String()
}

// TestPrecheckRecordSize proves the record-size check on real brokers and
// a real MirrorSourceConnector: a source topic that accepts 5 MB batches
// against a target topic at Kafka's 1 MB default and MM2's producer at its
// 1 MB default fails, naming the numbers and the settings to raise. A
// target.producer.max.request.size in the connector does not help — a
// connector run with it fails its task on a 3 MB record
// (RecordTooLargeException), which pins where MM2's records' producer takes
// its settings. With the target topic raised and
// producer.override.max.request.size set the check passes, and a real 3 MB
// record then crosses through the library's plan, apply and resume — with
// MM2's source consumer at its 1 MB max.partition.fetch.bytes, which the
// check only warns about (a broker returns an oversize first batch whole).
// The first precheck reaches the worker through a plain-HTTP address that
// is not loopback, and warns about REST exposure; the others go through
// loopback and do not.
func TestPrecheckRecordSize(t *testing.T) {
	sb := sandboxtest.Shared(t)
	source, target := clients(t, sb)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	src, dst := sb.Source().Bootstrap(), sb.Target().Bootstrap()
	topic, pinTopic := unique("size"), unique("size-pin")
	for _, tn := range []string{topic, pinTopic} {
		if err := sandbox.CreateTopicWithConfig(ctx, src, tn, 1, map[string]string{"max.message.bytes": fiveMB}); err != nil {
			t.Fatal(err)
		}
		if err := sandbox.CreateTopic(ctx, dst, tn, 1); err != nil {
			t.Fatal(err)
		}
	}
	big := make([]byte, threeMB)
	rand.Read(big)
	p := bigProducer(t, src)
	for _, m := range []*sarama.ProducerMessage{
		{Topic: topic, Value: sarama.StringEncoder("r0")},
		{Topic: topic, Value: sarama.StringEncoder("r1")},
		{Topic: topic, Key: sarama.StringEncoder("big"), Value: sarama.ByteEncoder(big)},
		{Topic: pinTopic, Key: sarama.StringEncoder("big"), Value: sarama.ByteEncoder(big)},
	} {
		if _, _, err := p.SendMessage(m); err != nil {
			t.Fatal(err)
		}
	}
	group := unique("size-flink")
	if err := source.CommitOffsets(ctx, group, map[kafkaadmin.TopicPartition]int64{{Topic: topic, Partition: 0}: 1}); err != nil {
		t.Fatal(err)
	}

	name := unique("size")
	loopback, err := connect.New(sb.ConnectURL())
	if err != nil {
		t.Fatal(err)
	}
	precheck := func(c *connect.Client, extra map[string]string) *verify.PrecheckReport {
		t.Helper()
		cfg := mirrorConfig(sb, name, topic)
		for k, v := range extra {
			cfg[k] = v
		}
		start := time.Now()
		r, err := verify.Precheck(ctx, c, source, target, verify.PrecheckSpec{
			Group: group, Topics: []string{topic}, Policy: offsets.ReplicationPolicy{Kind: offsets.IdentityPolicy},
			StabilityWindow: 2 * time.Second, Config: cfg, Connector: name,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("precheck took %v", time.Since(start).Round(time.Millisecond))
		for _, c := range r.Checks {
			if strings.HasPrefix(c.Name, "record-size") || c.Name == "connect-rest-exposure" {
				t.Logf("%s %s: %s", c.Verdict, c.Name, c.Detail)
			}
		}
		return r
	}

	// 1. Kafka's defaults against a 5 MB source topic.
	c := loopback
	wantExposure := verify.Pass
	if fwd := forward(t, strings.TrimPrefix(sb.ConnectURL(), "http://")); fwd != "" {
		if c, err = connect.New("http://" + fwd); err != nil {
			t.Fatal(err)
		}
		wantExposure = verify.Warn
	} else {
		t.Log("no address other than loopback here: the REST exposure warning is shown by TestCheckRESTExposure only")
	}
	r := precheck(c, nil)
	got := wantChecks(t, "defaults", r, "record-size", verify.Fail, verify.Fail, verify.Warn)
	if len(got) == 3 {
		mustContain(t, "producer", got[0].Detail, "max.request.size is 1048576 (Kafka's default", "below 5242880", "producer.override.max.request.size=5242880")
		mustContain(t, "target topic", got[1].Detail, topic+" accepts 1048588", "5242880", "max.message.bytes")
		mustContain(t, "consumer", got[2].Detail, "max.partition.fetch.bytes is 1048576", "KIP-74")
	}
	if e := wantChecks(t, "exposure", r, "connect-rest-exposure", wantExposure); len(e) == 1 && wantExposure == verify.Warn {
		mustContain(t, "exposure", e[0].Detail, "plain HTTP", "stop or delete connectors")
	}
	if p := wantChecks(t, "no authorizer", r, "permissions", verify.Warn, verify.Warn); len(p) == 2 {
		mustContain(t, "no authorizer", p[0].Detail, "the source brokers run no authorizer")
	}
	if err := r.Blocking(); !errors.Is(err, verify.ErrPrecheck) {
		t.Errorf("blocking: %v, want the record-size failures", err)
	}

	// 2. The target raised; MM2's target.producer.* does not reach the producer.
	alterTopic(t, dst, topic, "max.message.bytes", fiveMB)
	alterTopic(t, dst, pinTopic, "max.message.bytes", fiveMB)
	waitTopicConfig(ctx, t, target, topic, "max.message.bytes", fiveMB)
	targetProducer := map[string]string{"target.producer.max.request.size": fiveMB}
	r = precheck(loopback, targetProducer)
	wantChecks(t, "target.producer.*", r, "record-size", verify.Fail, verify.Warn, verify.Warn)
	wantChecks(t, "loopback", r, "connect-rest-exposure", verify.Pass)
	pinTargetProducer(ctx, t, sb, loopback, pinTopic, targetProducer)

	// 3. producer.override.max.request.size: the check passes and a 3 MB record crosses.
	override := map[string]string{"producer.override.max.request.size": fiveMB}
	r = precheck(loopback, override)
	wantChecks(t, "raised", r, "record-size", verify.Warn, verify.Pass)
	if err := r.Blocking(); err != nil {
		t.Fatalf("precheck after raising the limits: %v", err)
	}
	cfg := mirrorConfig(sb, name, topic)
	cfg["producer.override.max.request.size"] = fiveMB
	crossWithPlan(ctx, t, loopback, r, name, group, cfg)
	recs, err := sandbox.Consume(ctx, dst, topic, 0, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if string(recs[0].Value) != "r1" || string(recs[1].Key) != "big" || !bytes.Equal(recs[1].Value, big) {
		t.Fatalf("target holds %q, then %d bytes keyed %q; want r1, then the 3 MB record", recs[0].Value, len(recs[1].Value), recs[1].Key)
	}
	t.Logf("the %d-byte record crossed: target offset %d", len(recs[1].Value), recs[1].Offset)
}

// waitTopicConfig waits until the brokers report a topic's new setting.
func waitTopicConfig(ctx context.Context, t *testing.T, r *kafkaadmin.Client, topic, key, want string) {
	t.Helper()
	for {
		got, err := r.TopicConfigs(ctx, []string{topic}, key)
		if err != nil {
			t.Fatal(err)
		}
		if got[topic].Values[key].Value == want {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("%s's %s never became %s: %+v", topic, key, want, got[topic])
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// pinTargetProducer runs a connector with only target.producer.* raised on
// a topic holding a 3 MB record: its task fails with
// RecordTooLargeException, because Connect's worker producer — not MM2's
// target.producer.* settings — writes the records.
func pinTargetProducer(ctx context.Context, t *testing.T, sb *sandbox.Sandbox, c *connect.Client, topic string, extra map[string]string) {
	t.Helper()
	name := unique("size-pin")
	cfg := mirrorConfig(sb, name, topic)
	for k, v := range extra {
		cfg[k] = v
	}
	if _, err := c.Create(ctx, name, cfg, connect.InitialRunning); err != nil {
		t.Fatal(err)
	}
	defer c.Delete(context.WithoutCancel(ctx), name)
	for {
		st, err := c.Status(ctx, name)
		if err != nil && !errors.Is(err, connect.ErrNotFound) {
			t.Fatal(err)
		}
		if st != nil && len(st.Tasks) > 0 && st.Tasks[0].State.State == connect.StateFailed {
			if !strings.Contains(st.Tasks[0].Trace, "RecordTooLargeException") {
				t.Fatalf("task failed for another reason:\n%s", st.Tasks[0].Trace)
			}
			t.Logf("with %v only, the task fails: %s", extra, firstLine(st.Tasks[0].Trace))
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("the task did not fail: %+v", st)
		}
		time.Sleep(time.Second)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// crossWithPlan does what the cutover's apply and resume do, with the
// library: the plan from the precheck, the connector created STOPPED, its
// offsets written and read back, then resumed until its task runs.
func crossWithPlan(ctx context.Context, t *testing.T, c *connect.Client, r *verify.PrecheckReport, name, group string, cfg map[string]string) {
	t.Helper()
	snap, err := r.PlanSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(plan.Spec{CreatedAt: time.Now(), SourceClusterID: r.SourceClusterID, TargetClusterID: r.TargetClusterID,
		ConnectorName: name, SourceAlias: "source", GroupID: group, ConnectorConfig: cfg,
		OffsetsFrom: r.OffsetsFrom}, snap)
	if err != nil {
		t.Fatal(err)
	}
	want, err := p.ConnectOffsets()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, name, cfg, connect.InitialStopped); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Delete(context.WithoutCancel(ctx), name) })
	if _, err := c.WaitStopped(ctx, name); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AlterMirrorOffsets(ctx, name, want); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitMirrorOffsets(ctx, name, want); err != nil {
		t.Fatal(err)
	}
	if err := c.Resume(ctx, name); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitRunning(ctx, name); err != nil {
		t.Fatal(err)
	}
}
