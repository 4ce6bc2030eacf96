//go:build sandbox

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/internal/flinklike"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// foreignFlow is another team's replication on the same Connect cluster:
// its own topic, copied from the same source to the same target by a
// MirrorSourceConnector that happens to carry the cutover's connector name.
type foreignFlow struct {
	topic string
	parts int32
}

// newForeignFlow creates the flow's topic on both clusters and writes n
// records to each of its partitions.
func newForeignFlow(ctx context.Context, t *testing.T, sc *scenario, topic string, n int) foreignFlow {
	t.Helper()
	f := foreignFlow{topic: topic, parts: 2}
	for _, b := range []*sandbox.Broker{sc.sb.Source(), sc.sb.Target()} {
		if err := sandbox.CreateTopic(ctx, b.Bootstrap(), topic, f.parts); err != nil {
			t.Fatal(err)
		}
	}
	if n > 0 {
		if err := flinklike.Produce(ctx, sc.sb.Source().Bootstrap(), flinklike.All(map[string]int32{topic: f.parts}), n); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// config is the foreign connector's configuration under name: the same
// clusters and aliases as the cutover's, another topic.
func (f foreignFlow) config(t *testing.T, sc *scenario, name string) map[string]string {
	t.Helper()
	cfg, err := connect.MirrorSource{
		Name: name, SourceBootstrap: sc.sb.Source().Bootstrap(), TargetBootstrap: sc.sb.Target().Bootstrap(),
		Topics: []string{f.topic}, Extra: map[string]string{"replication.factor": "1"},
	}.Config()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// connectorSnapshot is what a rollback must leave as it found on a
// connector that is not the plan's.
type connectorSnapshot struct {
	State   string
	Tasks   int
	Config  map[string]string
	Offsets []offsets.ConnectOffset
}

func snapshotConnector(ctx context.Context, t *testing.T, c *connect.Client, name string) connectorSnapshot {
	t.Helper()
	st, err := c.Status(ctx, name)
	if err != nil {
		t.Fatalf("status of %s: %v", name, err)
	}
	cfg, err := c.Config(ctx, name)
	if err != nil {
		t.Fatalf("config of %s: %v", name, err)
	}
	got, err := c.MirrorOffsets(ctx, name)
	if err != nil {
		t.Fatalf("offsets of %s: %v", name, err)
	}
	slices.SortFunc(got, offsets.CompareConnectOffsets)
	return connectorSnapshot{State: st.Connector.State, Tasks: len(st.Tasks), Config: cfg, Offsets: got}
}

// removeForeign deletes a test's foreign connector and its offsets, so that
// none is left on a shared sandbox.
func removeForeign(ctx context.Context, t *testing.T, c *connect.Client, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	if err := c.Stop(ctx, name); err != nil {
		if !errors.Is(err, connect.ErrNotFound) {
			t.Logf("cleanup: stop %s: %v", name, err)
		}
		return
	}
	if _, err := c.WaitStopped(ctx, name); err != nil {
		t.Logf("cleanup: %s did not stop: %v", name, err)
	}
	if _, err := c.ResetOffsets(ctx, name); err != nil {
		t.Logf("cleanup: reset offsets of %s: %v", name, err)
	}
	if err := c.Delete(ctx, name); err != nil {
		t.Logf("cleanup: delete %s: %v", name, err)
	}
}

// auditRecords returns the audit file's records of the given step.
func auditRecords(t *testing.T, path, step string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if rec["step"] == step {
			out = append(out, rec)
		}
	}
	return out
}

// writePlan writes p where the CLI c reads its plan.
func writePlan(t *testing.T, c *cli, p *plan.Plan) {
	t.Helper()
	f, err := os.Create(c.o.planPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := p.Encode(f); err != nil {
		t.Fatal(err)
	}
}

// TestRollbackLeavesForeignConnectors: a connector of the plan's name that
// is not the plan's — another flow, another topic, the same clusters and
// aliases — is never written by a rollback, approved and with the rollback
// group given, as an operator would run it. One RUNNING (the rollback after
// resume used to stop it and go on to the group), one STOPPED without
// offsets (the rollback before resume used to reset its offsets and delete
// it), one STOPPED holding offsets of its own: each is refused (exit 4),
// the refusal is in the audit file, and each connector's state, config and
// offsets are as before, as are the group's commits.
func TestRollbackLeavesForeignConnectors(t *testing.T) {
	sc, ctx := newTestScenario(t, "rbf-", "identity")
	base := sc.cli
	p1, pc, err := app.MakePlan(ctx, base.env, base.s, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	other := newForeignFlow(ctx, t, sc, strings.TrimSuffix(sc.connector, "mm2-orders")+"other", 30)
	groupBefore, err := base.env.Source.GroupOffsets(ctx, sc.group, sc.topicNames())
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name    string
		initial connect.InitialState
		patch   bool // the STOPPED connector holds offsets of its own topic
	}{
		{"running", connect.InitialRunning, false},
		{"stopped", connect.InitialStopped, false},
		{"stopped-with-offsets", connect.InitialStopped, true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A plan for a connector of this name, built from the same
			// precheck: the cutover's plan, never applied.
			c := *base
			c.s.Connector = sc.connector + "-" + tc.name
			c.o.planPath = filepath.Join(sc.dir, "plan-"+tc.name+".json")
			c.o.auditPath = filepath.Join(sc.dir, "plan-"+tc.name+".audit.jsonl")
			c.o.yes, c.o.rollbackGroup = true, sc.group
			p, err := app.BuildPlan(c.s, pc, p1.CreatedAt.Add(time.Duration(i)*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			writePlan(t, &c, p)

			name := c.s.Connector
			t.Cleanup(func() { removeForeign(ctx, t, c.env.Connect, name) })
			if _, err := c.env.Connect.Create(ctx, name, other.config(t, sc, name), tc.initial); err != nil {
				t.Fatal(err)
			}
			var want []offsets.ConnectOffset
			switch {
			case tc.initial == connect.InitialRunning:
				for part := range other.parts {
					want = append(want, offsets.ConnectOffset{Partition: offsets.SourcePartition{Topic: other.topic, Partition: part}.Connect("source"), Offset: offsets.NewMirrorOffset(29)})
				}
				if _, err := c.env.Connect.WaitRunning(ctx, name); err != nil {
					t.Fatal(err)
				}
			case tc.patch:
				if _, err := c.env.Connect.WaitStopped(ctx, name); err != nil {
					t.Fatal(err)
				}
				for part := range other.parts {
					want = append(want, offsets.ConnectOffset{Partition: offsets.SourcePartition{Topic: other.topic, Partition: part}.Connect("source"), Offset: offsets.NewMirrorOffset(9)})
				}
				if _, err := c.env.Connect.AlterMirrorOffsets(ctx, name, want); err != nil {
					t.Fatal(err)
				}
			default:
				if _, err := c.env.Connect.WaitStopped(ctx, name); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := c.env.Connect.WaitMirrorOffsets(ctx, name, want); err != nil {
				t.Fatalf("the foreign connector's offsets: %v", err)
			}
			before := snapshotConnector(ctx, t, c.env.Connect, name)

			err = c.rollback(ctx)
			if app.ExitStatus(err) != app.ExitRefused {
				t.Errorf("rollback -yes of a plan whose connector is another flow's: %v (exit %d), want refused (4)", err, app.ExitStatus(err))
			} else if !strings.Contains(err.Error(), other.topic) {
				t.Errorf("the refusal does not name what the connector replicates (%s): %v", other.topic, err)
			}
			if refusals := auditRecords(t, c.o.auditPath, "refuse"); len(refusals) == 0 {
				t.Errorf("the refused rollback left no refuse record in %s", c.o.auditPath)
			}
			for _, step := range []string{"rollback", "intent", "stop", "delete", "commit", "rollback-backup", "rollback-plan"} {
				if recs := auditRecords(t, c.o.auditPath, step); len(recs) > 0 {
					t.Errorf("the audit says the rollback did %s: %v", step, recs)
				}
			}
			if _, err := c.env.Connect.Connector(ctx, name); err != nil {
				t.Fatalf("the foreign connector is gone after the rollback: %v", err)
			}
			after := snapshotConnector(ctx, t, c.env.Connect, name)
			if d := cmp.Diff(before, after); d != "" {
				t.Errorf("the rollback changed the foreign connector (-before +after):\n%s", d)
			}
			groupAfter, err := c.env.Source.GroupOffsets(ctx, sc.group, sc.topicNames())
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(groupBefore, groupAfter); d != "" {
				t.Errorf("the rollback committed to group %s (-before +after):\n%s", sc.group, d)
			}
		})
	}
}

// TestPrecheckNamesATakenConnector: the precheck (and so the plan) fails
// connector-name, saying what to do, when the cutover's connector name is
// taken by a connector apply would refuse — another flow's RUNNING,
// someone else's STOPPED, or the cutover's own that MM2 already ran under —
// and passes for the cutover's own applied but never resumed (a retried
// Job). Before, precheck and plan exited 0 and apply refused later.
func TestPrecheckNamesATakenConnector(t *testing.T) {
	sc, ctx := newTestScenario(t, "taken-", "identity")
	other := newForeignFlow(ctx, t, sc, strings.TrimSuffix(sc.connector, "mm2-orders")+"other", 10)
	named := func(suffix string) *cli {
		c := *sc.cli
		c.s.Connector = sc.connector + "-" + suffix
		c.o.planPath = filepath.Join(sc.dir, "plan-"+suffix+".json")
		c.o.auditPath = filepath.Join(sc.dir, "plan-"+suffix+".audit.jsonl")
		name := c.s.Connector
		t.Cleanup(func() { removeForeign(ctx, t, c.env.Connect, name) })
		return &c
	}
	refused := func(t *testing.T, c *cli, says string) {
		t.Helper()
		err := c.precheck(ctx)
		if app.ExitStatus(err) != app.ExitCheckFailed || !strings.Contains(err.Error(), "connector-name") || !strings.Contains(err.Error(), says) {
			t.Errorf("precheck with connector %s taken: %v (exit %d), want connector-name failed saying %q", c.s.Connector, err, app.ExitStatus(err), says)
		}
		os.Remove(c.o.planPath)
		err = c.plan(ctx)
		if app.ExitStatus(err) != app.ExitCheckFailed {
			t.Errorf("plan with connector %s taken: %v (exit %d), want 3", c.s.Connector, err, app.ExitStatus(err))
		}
		if _, err := os.Stat(c.o.planPath); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("plan with connector %s taken wrote %s (%v)", c.s.Connector, c.o.planPath, err)
		}
	}

	t.Run("another flow's running", func(t *testing.T) {
		c := named("running")
		if _, err := c.env.Connect.Create(ctx, c.s.Connector, other.config(t, sc, c.s.Connector), connect.InitialRunning); err != nil {
			t.Fatal(err)
		}
		if _, err := c.env.Connect.WaitRunning(ctx, c.s.Connector); err != nil {
			t.Fatal(err)
		}
		refused(t, c, "with another configuration")
	})
	t.Run("someone else's stopped", func(t *testing.T) {
		c := named("stopped")
		if _, err := c.env.Connect.Create(ctx, c.s.Connector, other.config(t, sc, c.s.Connector), connect.InitialStopped); err != nil {
			t.Fatal(err)
		}
		if _, err := c.env.Connect.WaitStopped(ctx, c.s.Connector); err != nil {
			t.Fatal(err)
		}
		refused(t, c, "choose a connector name nobody uses")
	})
	t.Run("ours, applied and never resumed", func(t *testing.T) {
		c := named("applied")
		p, err := c.buildPlan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.applyPlan(ctx, p); err != nil {
			t.Fatal(err)
		}
		var buf strings.Builder
		c.out, c.o.asJSON = &buf, false
		if err := c.precheck(ctx); err != nil {
			t.Fatalf("precheck with the cutover's own connector applied: %v", err)
		}
		if !strings.Contains(buf.String(), "already applied") {
			t.Errorf("the precheck does not say the plan is already applied:\n%s", buf.String())
		}
	})
	t.Run("ours, after MM2 ran", func(t *testing.T) {
		c := named("ran")
		p, err := c.buildPlan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.applyPlan(ctx, p); err != nil {
			t.Fatal(err)
		}
		if err := c.resumePlan(ctx, p); err != nil {
			t.Fatal(err)
		}
		want, _ := p.ExpectedOffsets()
		for {
			got, err := c.env.Connect.MirrorOffsets(ctx, c.s.Connector)
			if err != nil {
				t.Fatal(err)
			}
			if !offsets.CompareReadBack(want, got).OK() {
				break // MM2 copied and stored offsets past the plan
			}
			select {
			case <-ctx.Done():
				t.Fatal("MM2 stored no offset past the plan")
			case <-time.After(500 * time.Millisecond):
			}
		}
		refused(t, c, "is RUNNING")
		if err := c.env.Connect.Stop(ctx, c.s.Connector); err != nil {
			t.Fatal(err)
		}
		if _, err := c.env.Connect.WaitStopped(ctx, c.s.Connector); err != nil {
			t.Fatal(err)
		}
		refused(t, c, "holds offsets the plan would not set")
	})
}

// TestEveryRefusalIsRecorded: each refusal a step makes is in the audit
// file as a refuse record naming the step — a plan for another connector
// (apply, and verify, which used to accept it and record a verification in
// that plan's audit), a connector of the plan's name that is another
// flow's, and the plan's own connector PAUSED — and nothing else is
// recorded for them. Without -yes, resume and rollback say which step was
// not approved (the rollback used to say "resume not approved").
func TestEveryRefusalIsRecorded(t *testing.T) {
	sc, ctx := newTestScenario(t, "refuse-", "identity")
	c := *sc.cli
	t.Cleanup(func() { removeForeign(ctx, t, c.env.Connect, c.s.Connector) })
	p, err := c.buildPlan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other := newForeignFlow(ctx, t, sc, strings.TrimSuffix(sc.connector, "mm2-orders")+"other", 0)
	refused := func(t *testing.T, what string, err error, step, says string) {
		t.Helper()
		if app.ExitStatus(err) != app.ExitRefused || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v (exit %d), want refused (4) saying %q", what, err, app.ExitStatus(err), says)
		}
		recs := auditRecords(t, c.o.auditPath, "refuse")
		if len(recs) == 0 {
			t.Fatalf("%s left no refuse record", what)
		}
		last := recs[len(recs)-1]["detail"].(map[string]any)
		if last["step"] != step || !strings.Contains(last["reason"].(string), says) {
			t.Errorf("%s: the last refuse record is %v, want step %s saying %q", what, last, step, says)
		}
	}

	t.Run("a plan for another connector", func(t *testing.T) {
		o := c
		o.s.Connector = sc.connector + "-other"
		refused(t, "apply of another connector's plan", o.applyPlan(ctx, p), "apply", `the plan's is "`+sc.connector)
		if _, err := c.env.Connect.Connector(ctx, o.s.Connector); !errors.Is(err, connect.ErrNotFound) {
			t.Errorf("the refused apply created %s: %v", o.s.Connector, err)
		}
		refused(t, "verify of another connector's plan", o.verify(ctx), "verify", "the plan is for connector")
		if recs := auditRecords(t, c.o.auditPath, "verify"); len(recs) > 0 {
			t.Errorf("the refused verify recorded a verification of the plan: %v", recs)
		}
	})
	t.Run("another flow's connector of the plan's name", func(t *testing.T) {
		if _, err := c.env.Connect.Create(ctx, c.s.Connector, other.config(t, sc, c.s.Connector), connect.InitialStopped); err != nil {
			t.Fatal(err)
		}
		refused(t, "apply over another flow's connector", c.applyPlan(ctx, p), "apply", "is not the plan's")
		refused(t, "verify of another flow's connector", c.verify(ctx), "verify", "is not the plan's")
		removeForeign(ctx, t, c.env.Connect, c.s.Connector)
		waitGone(ctx, t, c.env.Connect, c.s.Connector)
	})
	t.Run("not approved", func(t *testing.T) {
		if err := c.applyPlan(ctx, p); err != nil {
			t.Fatal(err)
		}
		o := c
		o.o.yes = false
		for _, tc := range []struct {
			step string
			run  func(context.Context) error
		}{{"resume", func(ctx context.Context) error { return o.resumePlan(ctx, p) }}, {"rollback", o.rollback}} {
			err := tc.run(ctx)
			if app.ExitStatus(err) != app.ExitNotApproved || !strings.Contains(err.Error(), "the "+tc.step) || !strings.Contains(err.Error(), "-yes") {
				t.Errorf("%s without -yes: %v (exit %d), want not approved (5) naming the %s", tc.step, err, app.ExitStatus(err), tc.step)
			}
			if tc.step == "rollback" && (strings.Contains(err.Error(), "resume not approved") || strings.Contains(err.Error(), "the resume of")) {
				t.Errorf("rollback without -yes speaks of a resume: %v", err)
			}
		}
	})
	t.Run("the plan's connector PAUSED", func(t *testing.T) {
		if err := c.env.Connect.Pause(ctx, c.s.Connector); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(time.Minute)
		for {
			st, err := c.env.Connect.Status(ctx, c.s.Connector)
			if err == nil && st.Connector.State == connect.StatePaused {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the connector did not pause: %+v, %v", st, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
		refused(t, "apply of a PAUSED connector", c.applyPlan(ctx, p), "apply", "is PAUSED, not STOPPED")
		refused(t, "resume of a PAUSED connector", c.resumePlan(ctx, p), "resume", "is PAUSED, not STOPPED")
	})
}
