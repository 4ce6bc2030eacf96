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
	"github.com/mm2cutover/mm2cutover/examples/internal/cutover"
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
	p1, pc, err := cutover.MakePlan(ctx, base.env, base.s, time.Now())
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
			p, err := cutover.BuildPlan(c.s, pc, p1.CreatedAt.Add(time.Duration(i)*time.Second))
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
			if cutover.ExitStatus(err) != cutover.ExitRefused {
				t.Errorf("rollback -yes of a plan whose connector is another flow's: %v (exit %d), want refused (4)", err, cutover.ExitStatus(err))
			} else if !strings.Contains(err.Error(), other.topic) {
				t.Errorf("the refusal does not name what the connector replicates (%s): %v", other.topic, err)
			}
			if refusals := auditRecords(t, c.o.auditPath, "refuse"); len(refusals) == 0 {
				t.Errorf("the refused rollback left no refuse record in %s", c.o.auditPath)
			}
			for _, step := range []string{"rollback", "rollback-stop", "rollback-backup", "rollback-plan"} {
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
