//go:build sandbox

package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/internal/flinklike"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// newTestScenario starts a scenario whose names begin with prefix and a
// random part, so that runs against a held sandbox do not collide.
func newTestScenario(t *testing.T, prefix, policy string) (*scenario, context.Context) {
	t.Helper()
	prefix += strconv.FormatInt(time.Now().UnixNano()%1_000_000, 36) + "-"
	sb := sandboxtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel)
	sc, err := newScenario(sb, slog.New(slog.NewTextHandler(testWriter{t}, nil)), &bytes.Buffer{}, false, prefix, policy)
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
	return sc, ctx
}

// TestRollbackBeforeResume applies a plan and rolls back before resume: the
// connector and its offsets are gone, so a new connector of the same name
// starts clean. It also pins why deleting the connector is not enough:
// Connect keeps a deleted connector's offsets for the next one of that name.
func TestRollbackBeforeResume(t *testing.T) {
	sc, ctx := newTestScenario(t, "rbb-", "identity")
	c, name := sc.cli, sc.connector
	p, err := c.buildPlan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.applyPlan(ctx, p); err != nil {
		t.Fatal(err)
	}
	want, _ := p.ExpectedOffsets()
	cfg, err := c.s.ConnectorConfig()
	if err != nil {
		t.Fatal(err)
	}

	// Deleting alone leaves the offsets behind.
	if err := c.env.Connect.Delete(ctx, name); err != nil {
		t.Fatal(err)
	}
	waitGone(ctx, t, c.env.Connect, name)
	if _, err := c.env.Connect.Create(ctx, name, cfg, connect.InitialStopped); err != nil {
		t.Fatal(err)
	}
	if rb, err := c.env.Connect.WaitMirrorOffsets(ctx, name, want); err != nil {
		t.Fatalf("a new connector of the same name did not inherit the deleted one's offsets, unlike Kafka so far: %v", err)
	} else {
		t.Logf("recreated connector inherited the offsets: %s", rb)
	}

	audit := app.NewAudit(nil)
	if _, err := app.Rollback(ctx, c.env, c.s, p, "", false, audit); !errors.Is(err, app.ErrNotApproved) {
		t.Fatalf("rollback without approval: %v, want ErrNotApproved", err)
	}
	if _, err := c.env.Connect.Status(ctx, name); err != nil {
		t.Fatalf("rollback without approval touched the connector: %v", err)
	}
	if _, err := app.Rollback(ctx, c.env, c.s, p, "", true, audit); err != nil {
		t.Fatal(err)
	}
	waitGone(ctx, t, c.env.Connect, name)
	if _, err := c.env.Connect.Create(ctx, name, cfg, connect.InitialStopped); err != nil {
		t.Fatal(err)
	}
	if rb, err := c.env.Connect.WaitMirrorOffsets(ctx, name, nil); err != nil {
		t.Fatalf("after the rollback, a new connector of the same name still has offsets: %v", err)
	} else if len(rb.Partitions) != 0 {
		t.Fatalf("new connector has offsets: %s", rb)
	}
}

func waitGone(ctx context.Context, t *testing.T, c *connect.Client, name string) {
	t.Helper()
	for {
		_, err := c.Connector(ctx, name)
		if errors.Is(err, connect.ErrNotFound) {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("connector %s still there: %v", name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestRollbackAfterResume runs the cutover, lets MM2 replicate under
// traffic, and rolls back to the old job: the group receives, per
// partition, C' = M'+1, which is the next source offset MM2 had not
// replicated (the target partition's end, as the target holds each record
// once). The old job then restarts from the group and, once traffic stops
// and it caught up, the target holds every source record exactly once.
func TestRollbackAfterResume(t *testing.T) {
	sc, ctx := newTestScenario(t, "rba-", "identity")
	c := sc.cli
	if err := c.runAll(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := c.readPlan()
	if err != nil {
		t.Fatal(err)
	}
	from := map[offsets.SourcePartition]int64{}
	for _, e := range p.Entries {
		from[e.Partition], _ = e.GroupOffset.Get()
	}
	waitReplicatedPast(ctx, t, c.env.Connect, sc.connector, from, len(p.Entries)-1)
	res, err := app.Rollback(ctx, c.env, c.s, p, sc.group, true, app.NewAudit(nil))
	if err != nil {
		t.Fatal(err)
	}
	if res.Committed != len(p.Entries) {
		t.Fatalf("committed %d partitions, want %d", res.Committed, len(p.Entries))
	}
	var tps []kafkaadmin.TopicPartition
	for _, e := range p.Entries {
		tps = append(tps, e.Partition)
	}
	ends, err := c.env.Target.LogBounds(ctx, tps)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.env.Source.GroupOffsets(ctx, sc.group, sc.topicNames())
	if err != nil {
		t.Fatal(err)
	}
	advanced := 0
	for _, e := range p.Entries {
		tp := e.Partition
		cPrime := got[tp]
		if want := ends[tp].End; cPrime != want {
			t.Errorf("%s: C' = %d, want the next unreplicated offset %d", tp, cPrime, want)
		}
		if c0, _ := e.GroupOffset.Get(); cPrime > c0 {
			advanced++
		}
	}
	if advanced < len(p.Entries)-1 {
		t.Errorf("only %d partitions advanced past the forward C: MM2 did not replicate", advanced)
	}

	// The old job takes over again from C'.
	job, err := flinklike.Start(ctx, flinklike.Config{Source: sc.sb.Source().Bootstrap(), Target: sc.sb.Target().Bootstrap(),
		Group: sc.group, Topics: sc.topicNames(), Checkpoint: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the old job replicates under traffic
	if _, err := sc.traffic.Stop(); err != nil {
		t.Fatal(err)
	}
	srcEnds, err := flinklike.LogEnds(ctx, sc.sb.Source().Bootstrap(), flinklike.All(sc.topics))
	if err != nil {
		t.Fatal(err)
	}
	if err := job.WaitCommitted(ctx, srcEnds); err != nil {
		t.Fatal(err)
	}
	if _, err := job.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, tp := range flinklike.All(sc.topics) {
		r, err := flinklike.Check(ctx, sc.sb.Source().Bootstrap(), sc.sb.Target().Bootstrap(), tp.Topic, tp.Partition, tp.Topic)
		if err != nil {
			t.Fatal(err)
		}
		if !r.OK() || r.Source != r.Target {
			t.Errorf("after the round trip Flink -> MM2 -> Flink, %s-%d: %+v", tp.Topic, tp.Partition, r)
		}
	}
}
