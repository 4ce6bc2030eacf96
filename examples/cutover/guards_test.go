//go:build sandbox

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/internal/flinklike"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/verify"
)

// startScenario starts a demo scenario whose names begin with prefix on the
// shared sandbox, with its CLI ready.
func startScenario(ctx context.Context, t *testing.T, prefix string) (*scenario, *bytes.Buffer) {
	t.Helper()
	sb := sandboxtest.Shared(t)
	var out bytes.Buffer
	prefix += strconv.FormatInt(time.Now().UnixNano()%1e6, 36) + "-" // several runs may share a held sandbox
	sc, err := newScenario(sb, slog.New(slog.NewTextHandler(testWriter{t}, nil)), &out, false, prefix, "identity")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sc.dir) })
	if err := sc.start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sc.traffic.Stop() })
	if err := sc.newCLI(); err != nil {
		t.Fatal(err)
	}
	return sc, &out
}

// member joins the old job's group as a consumer that commits nothing, as a
// forgotten consumer of the group would, and leaves when the test ends or
// leave is called.
func member(ctx context.Context, t *testing.T, sc *scenario) (leave func()) {
	t.Helper()
	cfg := sandbox.NewSaramaConfig()
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cg, err := sarama.NewConsumerGroup([]string{sc.sb.Source().Bootstrap()}, sc.group, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for mctx.Err() == nil {
			_ = cg.Consume(mctx, sc.topicNames(), idleHandler{})
		}
	}()
	waitMembers(ctx, t, sc, true)
	once := false
	leave = func() {
		if once {
			return
		}
		once = true
		cancel()
		<-done
		cg.Close()
		wctx, stop := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer stop()
		waitMembers(wctx, t, sc, false)
	}
	t.Cleanup(leave)
	return leave
}

// idleHandler consumes nothing and marks nothing.
type idleHandler struct{}

func (idleHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (idleHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (idleHandler) ConsumeClaim(s sarama.ConsumerGroupSession, _ sarama.ConsumerGroupClaim) error {
	<-s.Context().Done()
	return nil
}

func waitMembers(ctx context.Context, t *testing.T, sc *scenario, want bool) {
	t.Helper()
	for {
		g, err := sc.cli.env.Source.DescribeGroup(ctx, sc.group)
		if err != nil {
			t.Fatal(err)
		}
		if (len(g.Members) > 0) == want {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("group %s: members %v, want present=%v", sc.group, g.Members, want)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestGuardsRefuseALiveMember: a consumer joined the old job's group after
// the plan (committing nothing, so the offsets did not move). Precheck
// refuses that state, and so do apply and resume now, which re-check
// everything the precheck checked that can change; before, apply exited 0
// and resume -yes set the connector RUNNING.
func TestGuardsRefuseALiveMember(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	sc, _ := startScenario(ctx, t, "guards-")
	p, err := sc.cli.buildPlan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { // no connector left behind on the shared sandbox
		c := sc.cli
		c.o.yes = true
		_ = c.rollback(context.WithoutCancel(ctx))
	}()

	leave := member(ctx, t, sc)
	err = sc.cli.applyPlan(ctx, p)
	if app.ExitStatus(err) != app.ExitRefused || !errors.Is(err, verify.ErrStalePlan) || !strings.Contains(err.Error(), "group-members") {
		t.Fatalf("apply with a live member: %v (exit %d), want refused naming group-members", err, app.ExitStatus(err))
	}
	if _, err := sc.cli.env.Connect.Status(ctx, sc.connector); !errors.Is(err, connect.ErrNotFound) {
		t.Fatalf("the refused apply created the connector: %v", err)
	}
	leave()
	if err := sc.cli.applyPlan(ctx, p); err != nil {
		t.Fatalf("apply once the member left: %v", err)
	}

	member(ctx, t, sc)
	err = sc.cli.resumePlan(ctx, p)
	if app.ExitStatus(err) != app.ExitRefused || !strings.Contains(err.Error(), "group-members") {
		t.Fatalf("resume -yes with a live member: %v (exit %d), want refused", err, app.ExitStatus(err))
	}
	st, err := sc.cli.env.Connect.Status(ctx, sc.connector)
	if err != nil || st.Connector.State != connect.StateStopped {
		t.Fatalf("after the refused resume the connector is %+v, %v; want STOPPED", st, err)
	}
}

// TestPrecheckNamesWhatIsWrong: C below the log start (records deleted
// before the old job copied them) fails the precheck naming the partition;
// a group that does not exist is said to not exist, not reported as
// "no committed offset" on every partition.
func TestPrecheckNamesWhatIsWrong(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	sc, _ := startScenario(ctx, t, "range-")
	src := sc.sb.Source().Bootstrap()
	orders0 := flinklike.Partition{Topic: sc.busy()[0].Topic, Partition: sc.busy()[0].Partition}
	g, err := sc.cli.env.Source.GroupOffsets(ctx, sc.group, []string{orders0.Topic})
	if err != nil {
		t.Fatal(err)
	}
	c := g[kafkaadmin.TopicPartition{Topic: orders0.Topic, Partition: orders0.Partition}]
	waitEnd(ctx, t, sc.cli.env.Source, kafkaadmin.TopicPartition{Topic: orders0.Topic, Partition: orders0.Partition}, c+2)
	admin, err := sarama.NewClusterAdmin([]string{src}, sandbox.NewSaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := admin.DeleteRecords(orders0.Topic, map[int32]int64{orders0.Partition: c + 2}); err != nil {
		t.Fatal(err)
	}
	err = sc.cli.precheck(ctx)
	want := kafkaadmin.TopicPartition{Topic: orders0.Topic, Partition: orders0.Partition}.String() + " (C "
	if app.ExitStatus(err) != app.ExitCheckFailed || !strings.Contains(err.Error(), "offsets-in-range") || !strings.Contains(err.Error(), want) {
		t.Errorf("precheck with C below the log start: %v; want offsets-in-range naming %s", err, want)
	}

	sc.cli.s.Group = sc.group + "-typo"
	err = sc.cli.precheck(ctx)
	if app.ExitStatus(err) != app.ExitCheckFailed || !strings.Contains(err.Error(), "group-exists") || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("precheck of a group that does not exist: %v; want group-exists", err)
	}

	// A source topic that does not exist is a failed check (exit 3), not
	// an error worth a retry; the topics that exist are checked on.
	sc.cli.s.Group = sc.group
	missing := sc.topicNames()[0] + "-missing"
	sc.cli.s.Topics = append(sc.topicNames(), missing)
	err = sc.cli.precheck(ctx)
	if app.ExitStatus(err) != app.ExitCheckFailed || !strings.Contains(err.Error(), "source-topics") || !strings.Contains(err.Error(), strconv.Quote(missing)) ||
		!strings.Contains(err.Error(), "offsets-in-range") {
		t.Errorf("precheck with a missing source topic: %v (exit %d); want source-topics naming %s, and the other topics checked", err, app.ExitStatus(err), missing)
	}
	sc.cli.s.Topics = []string{missing}
	if _, err := sc.cli.buildPlan(ctx); app.ExitStatus(err) != app.ExitCheckFailed || !strings.Contains(err.Error(), "source-topics") {
		t.Errorf("plan with only a missing source topic: %v (exit %d); want source-topics, exit 3", err, app.ExitStatus(err))
	}
}

// TestStatusSaysWhetherOffsetsAdvance: status compares MM2's offsets with
// the previous status of the same plan (from the audit file): under traffic
// they advance; with the connector paused and the source still growing,
// status reports it stalled — what Kubernetes' readiness cannot see.
func TestStatusSaysWhetherOffsetsAdvance(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	sc, out := startScenario(ctx, t, "status-")
	if err := sc.cli.runAll(ctx); err != nil {
		t.Fatalf("cutover: %v\n%s", err, out)
	}
	defer func() { // no running connector left behind on the shared sandbox
		_ = sc.cli.env.Connect.Stop(context.WithoutCancel(ctx), sc.connector)
	}()
	status := func() app.StatusReport {
		t.Helper()
		var buf bytes.Buffer
		c := *sc.cli
		c.out, c.o.asJSON = &buf, true
		if err := c.status(ctx); err != nil {
			t.Fatal(err)
		}
		var rep app.StatusReport
		if err := json.Unmarshal(buf.Bytes(), &rep); err != nil {
			t.Fatalf("%v: %s", err, buf.String())
		}
		return rep
	}
	// Connect stores a task's offsets every offset.flush.interval.ms (10 s
	// here): two status reads 12 s apart see a running task's offsets move.
	// On a loaded machine a commit can come later; each phase polls until
	// its answer or a deadline, never trusting one window.
	const window = 12 * time.Second
	until := func(what string, ok func(app.StatusReport) bool) app.StatusReport {
		t.Helper()
		var rep app.StatusReport
		waitFor(ctx, t, what, 3*time.Minute, window, func(context.Context) error {
			if rep = status(); !ok(rep) {
				return fmt.Errorf("advancing %v, stalled %v, moved %d, lag %d", rep.Advancing, rep.Stalled, rep.Moved, rep.TotalLag)
			}
			return nil
		})
		return rep
	}
	status()
	rep := until("running under traffic: status says advancing", func(r app.StatusReport) bool {
		return r.Advancing != nil && *r.Advancing && !r.Stalled
	})
	t.Logf("running: offsets moved by %d in %s", rep.Moved, rep.Since)
	if err := sc.cli.env.Connect.Pause(ctx, sc.connector); err != nil {
		t.Fatal(err)
	}
	// The pausing task commits what it copied, then nothing moves while the
	// source grows.
	rep = until("paused under traffic: status says stalled", func(r app.StatusReport) bool {
		return r.Stalled && r.Advancing != nil && !*r.Advancing && r.TotalLag > 0
	})
	t.Logf("paused: stalled with lag %d", rep.TotalLag)
}

// javaMember joins the old job's group as Apache Kafka's Java consumer
// with the given group.protocol, holding the partitions of the first topic
// and committing nothing, and leaves when the test ends or leave is called.
func javaMember(ctx context.Context, t *testing.T, sc *scenario, protocol string) (leave func()) {
	t.Helper()
	jc, err := sc.sb.StartJavaConsumer(ctx, sandbox.JavaConsumerConfig{Group: sc.group, Topic: sc.topicNames()[0], Protocol: protocol})
	if err != nil {
		t.Fatal(err)
	}
	once := false
	leave = func() {
		if once {
			return
		}
		once = true
		if err := jc.Stop(context.WithoutCancel(ctx)); err != nil {
			t.Errorf("stop the java consumer: %v", err)
		}
		jc.Close()
	}
	t.Cleanup(leave)
	return leave
}

// TestGuardsSeeConsumerProtocolMembers: a member of the consumer protocol
// (KIP-848, group.protocol=consumer: a Java KafkaConsumer of Kafka 4)
// holding partitions of the old job's group. The precheck fails
// group-inactive, apply and resume -yes are refused naming group-members,
// and a rollback after resume is refused while it holds the group. Before,
// the classic DescribeGroups saw such a group as Dead with no members and
// every step went through.
func TestGuardsSeeConsumerProtocolMembers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	sc, _ := startScenario(ctx, t, "kip848-")
	if major, _ := strconv.Atoi(strings.Split(sc.sb.KafkaVersion(), ".")[0]); major < 4 {
		t.Skipf("Kafka %s: the consumer protocol is GA from 4.0", sc.sb.KafkaVersion())
	}
	p, err := sc.cli.buildPlan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var leave func()
	defer func() { // no member, no connector left behind on the shared sandbox
		leave()
		c := *sc.cli
		c.o.yes, c.o.rollbackGroup = true, sc.group
		if err := c.rollback(context.WithoutCancel(ctx)); err != nil {
			t.Logf("cleanup: rollback: %v", err)
		}
	}()

	leave = javaMember(ctx, t, sc, "consumer")
	if err := sc.cli.precheck(ctx); app.ExitStatus(err) != app.ExitCheckFailed || !strings.Contains(err.Error(), "group-inactive") {
		t.Errorf("precheck with a consumer-protocol member: %v (exit %d), want group-inactive failed", err, app.ExitStatus(err))
	}
	err = sc.cli.applyPlan(ctx, p)
	if app.ExitStatus(err) != app.ExitRefused || !strings.Contains(err.Error(), "group-members") {
		t.Fatalf("apply with a consumer-protocol member: %v (exit %d), want refused naming group-members", err, app.ExitStatus(err))
	}
	if _, err := sc.cli.env.Connect.Status(ctx, sc.connector); !errors.Is(err, connect.ErrNotFound) {
		t.Fatalf("the refused apply created the connector: %v", err)
	}
	leave()
	waitMembers(ctx, t, sc, false)
	if err := sc.cli.applyPlan(ctx, p); err != nil {
		t.Fatalf("apply once the member left: %v", err)
	}

	leave = javaMember(ctx, t, sc, "consumer")
	err = sc.cli.resumePlan(ctx, p)
	if app.ExitStatus(err) != app.ExitRefused || !strings.Contains(err.Error(), "group-members") {
		t.Fatalf("resume -yes with a consumer-protocol member: %v (exit %d), want refused", err, app.ExitStatus(err))
	}
	if st, err := sc.cli.env.Connect.Status(ctx, sc.connector); err != nil || st.Connector.State != connect.StateStopped {
		t.Fatalf("after the refused resume the connector is %+v, %v; want STOPPED", st, err)
	}
	leave()
	waitMembers(ctx, t, sc, false)
	if err := sc.cli.resumePlan(ctx, p); err != nil {
		t.Fatalf("resume once the member left: %v", err)
	}

	leave = javaMember(ctx, t, sc, "consumer")
	c := *sc.cli
	c.o.yes, c.o.rollbackGroup = true, sc.group
	err = c.rollback(ctx)
	if app.ExitStatus(err) != app.ExitRefused || !errors.Is(err, kafkaadmin.ErrGroupActive) {
		t.Fatalf("rollback after resume with a consumer-protocol member in the group: %v (exit %d), want refused", err, app.ExitStatus(err))
	}
	if st, err := sc.cli.env.Connect.Status(ctx, sc.connector); err != nil || st.Connector.State != connect.StateRunning {
		t.Errorf("after the refused rollback the connector is %+v, %v; want RUNNING", st, err)
	}
}
