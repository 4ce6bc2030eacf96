package migrationtool

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/connect/connectfake"
	"github.com/mm2cutover/mm2cutover/cutover"
	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/kafkaadmin/kafkafake"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

var orders0 = kafkaadmin.TopicPartition{Topic: "orders", Partition: 0}

// world is what the tool's tests run against: a fake Connect worker and
// two clusters in memory, the source's group flink at C = 42 of 50.
type world struct {
	worker         *connectfake.Server
	source, target *kafkafake.Cluster
	config         map[string]string
	p              *plan.Plan
	log            bytes.Buffer
}

func newWorld(t *testing.T, opts ...connectfake.Option) *world {
	t.Helper()
	w := &world{worker: connectfake.New(append([]connectfake.Option{connectfake.WithKafkaClusterID("target-id")}, opts...)...),
		source: kafkafake.New("source-id"), target: kafkafake.New("target-id")}
	t.Cleanup(w.worker.Close)
	w.source.SeedTopic("orders", 1)
	w.source.Produce(orders0, 0, 50, nil)
	w.source.SeedCommits("flink", offsets.GroupOffsets{orders0: 42})
	w.target.SeedTopic("orders", 1)
	w.target.Produce(orders0, 0, 42, nil)
	var err error
	w.config, err = connect.MirrorSource{Name: "mm2-orders", SourceBootstrap: "source:9092", TargetBootstrap: "target:9092",
		Topics: []string{"orders"}}.Config()
	if err != nil {
		t.Fatal(err)
	}
	w.p = w.plan(t, 42)
	return w
}

// plan builds the plan for the group at C = c, as the tool's plan step
// would from the precheck.
func (w *world) plan(t *testing.T, c int64) *plan.Plan {
	t.Helper()
	p, err := plan.Build(plan.Spec{CreatedAt: time.Now(), SourceClusterID: "source-id", TargetClusterID: "target-id",
		ConnectorName: "mm2-orders", SourceAlias: "source", GroupID: "flink", ConnectorConfig: w.config},
		plan.Snapshot{Group: offsets.GroupOffsets{orders0: c}, Source: map[offsets.SourcePartition]offsets.LogBounds{orders0: {End: 50, StableEnd: 50}},
			TargetEnd: map[offsets.SourcePartition]int64{orders0: 42}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (w *world) run(t *testing.T, step string, approved bool) error {
	t.Helper()
	c, err := connect.New(w.worker.URL(), connect.WithRetry(connect.Retry{Attempts: 2}))
	if err != nil {
		t.Fatal(err)
	}
	return Run(context.Background(), step, cutover.Clients{Connect: c, Source: w.source, Target: w.target}, w.p, w.config, "flink", approved, &w.log)
}

// stored is what the connector holds on orders-0.
func (w *world) stored(t *testing.T) offsets.ConnectOffset {
	got, err := w.worker.Offsets("mm2-orders")
	if err != nil || len(got) != 1 {
		return offsets.ConnectOffset{}
	}
	return got[0]
}

func TestCutover(t *testing.T) {
	w := newWorld(t)
	for _, step := range []string{"apply", "apply"} {
		if err := w.run(t, step, false); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	if m, _ := w.stored(t).Offset.Get(); m != 41 {
		t.Fatalf("the connector holds %v, want M = C-1 = 41", w.stored(t))
	}
	if err := w.run(t, "resume", false); !errors.Is(err, cutover.ErrNotApproved) {
		t.Fatalf("resume unapproved = %v, want ErrNotApproved", err)
	}
	if err := w.run(t, "resume", true); err != nil {
		t.Fatal(err)
	}
	if c, ok := w.worker.Connector("mm2-orders"); !ok || c.State != connectfake.StateRunning {
		t.Fatalf("after resume the connector is %+v", c)
	}
	if err := w.run(t, "rollback", true); err != nil {
		t.Fatal(err)
	}
	if got := w.source.Commits["flink"][orders0]; got != 42 {
		t.Errorf("the group after the rollback holds %d, want C' = M'+1 = 42", got)
	}
}

// TestRefusals: what the tool must never do, each refused with nothing
// written and the refusal recorded.
func TestRefusals(t *testing.T) {
	foreign := maps.Clone(newWorld(t).config)
	foreign["topics"] = "payments"
	for _, tc := range []struct {
		name  string
		world func(t *testing.T) *world
		step  string
		want  error
		// creates: the connector did not exist, and apply creates it
		// STOPPED before it can read the offsets its name holds; nothing
		// else may be written.
		creates bool
	}{
		{"the old job's members are back", func(t *testing.T) *world {
			w := newWorld(t)
			w.source.SetMembers("flink", 1)
			return w
		}, "apply", verify.ErrStalePlan, false},
		{"another flow's connector of the name", func(t *testing.T) *world {
			return newWorld(t, connectfake.WithConnectors(connectfake.Connector{Name: "mm2-orders", Config: foreign, State: connectfake.StateStopped}))
		}, "apply", verify.ErrForeignConnector, false},
		{"a stale plan over offsets MM2 moved", func(t *testing.T) *world {
			w := newWorld(t, connectfake.WithOffsets("mm2-orders", offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders"}, Offset: offsets.NewMirrorOffset(47)}))
			return w
		}, "apply", plan.ErrStaleOffsets, true},
		{"a resume of a plan never applied", func(t *testing.T) *world { return newWorld(t) }, "resume", connect.ErrNotFound, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.world(t)
			before := len(w.worker.Requests())
			err := w.run(t, tc.step, true)
			if !errors.Is(err, tc.want) || errkind.Of(err) != errkind.Refused {
				t.Fatalf("%s = %v (%v), want a refusal matching %v", tc.step, err, errkind.Of(err), tc.want)
			}
			for _, r := range w.worker.Requests()[before:] {
				if r.Writes() && !(tc.creates && r.Method == "POST" && r.Path == "/connectors") {
					t.Errorf("the refused %s sent %s %s", tc.step, r.Method, r.Path)
				}
			}
			if !strings.Contains(w.log.String(), `"Step":"refuse"`) {
				t.Errorf("no refusal in the record:\n%s", w.log.String())
			}
		})
	}
}

// TestOutcomeUnknownPatchThenRerun: a PATCH the worker timed out on but
// applied is recorded before it was sent, and the apply run again finds
// the plan applied.
func TestOutcomeUnknownPatchThenRerun(t *testing.T) {
	w := newWorld(t)
	w.worker.FailNext("PATCH", "/connectors/mm2-orders/offsets", 2, connectfake.RequestTimeout)
	err := w.run(t, "apply", false)
	if errkind.Of(err) != errkind.OutcomeUnknown {
		t.Fatalf("apply with the PATCH timed out = %v (%v), want outcome unknown", err, errkind.Of(err))
	}
	if !strings.Contains(w.log.String(), `"Step":"patch","Intent":true`) {
		t.Errorf("the PATCH was not recorded before it was sent:\n%s", w.log.String())
	}
	if err := w.run(t, "apply", false); err != nil {
		t.Fatalf("apply run again: %v", err)
	}
	if m, _ := w.stored(t).Offset.Get(); m != 41 {
		t.Errorf("the connector holds %v, want 41", w.stored(t))
	}
}
