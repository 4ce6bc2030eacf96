package cutover_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
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

// open opens the world's plan with a recorder and an approval of yes.
func (w *world) open(t *testing.T, ctx context.Context, r *recorder, yes bool) *cutover.Cutover {
	t.Helper()
	c, err := cutover.Open(ctx, w.clients(t), w.p, connectorConfig(), cutover.Options{
		Record:  r.record,
		Approve: func(context.Context, cutover.Intent) (bool, error) { return yes, nil },
	})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return c
}

// TestSequence runs a plan's apply twice, its resume unapproved and
// approved, and the steps a RUNNING connector refuses; the record holds
// the intent of each write before it.
func TestSequence(t *testing.T) {
	w, ctx := newWorld(), ctxFor(t)
	defer w.worker.Close()
	r := &recorder{}
	c := w.open(t, ctx, r, false)
	res, err := c.Apply(ctx)
	if err != nil || !res.Created || !res.Patched || res.Matched != 2 {
		t.Fatalf("Apply = %+v, %v; want created, patched, 2 matched", res, err)
	}
	if want := []string{"create!", "create", "backup", "patch!", "patch", "read-back"}; !slices.Equal(r.entries, want) {
		t.Errorf("record of the apply = %v, want %v", r.entries, want)
	}
	res, err = c.Apply(ctx)
	if err != nil || res.Created || res.Patched || res.Guard != plan.GuardAlreadyApplied.String() {
		t.Errorf("Apply again = %+v, %v; want adopted, already applied, nothing patched", res, err)
	}
	in, err := c.Resume(ctx)
	if !errors.Is(err, cutover.ErrNotApproved) || errkind.Of(err) != errkind.NotApproved || in.Intent.Action == "" {
		t.Fatalf("Resume unapproved = %+v, %v; want the intent and ErrNotApproved", in, err)
	}
	if st, err := w.connect(t).Status(ctx, w.p.ConnectorName); err != nil || st.Connector.State != connect.StateStopped {
		t.Fatalf("after an unapproved resume the connector is %v, %v; want STOPPED", st, err)
	}
	r.entries = nil
	c = w.open(t, ctx, r, true)
	if in, err = c.Resume(ctx); err != nil || in.State != connect.StateRunning || len(in.Boundary) != 2 {
		t.Fatalf("Resume = %+v, %v; want RUNNING with 2 boundary records", in, err)
	}
	if want := []string{cutover.BoundaryCaptureStep, "resume!", "resume"}; !slices.Equal(r.entries, want) {
		t.Errorf("record of the resume = %v, want %v", r.entries, want)
	}
	// Now it has run: the plan is stale.
	r.entries = nil
	if _, err := c.Apply(ctx); !errors.Is(err, connect.ErrNotStopped) || errkind.Of(err) != errkind.Refused {
		t.Errorf("Apply after the resume = %v, want a refusal (not STOPPED)", err)
	}
	if _, err := c.Resume(ctx); errkind.Of(err) != errkind.Refused {
		t.Errorf("Resume again = %v, want a refusal", err)
	}
	if want := []string{"refuse", "refuse"}; !slices.Equal(r.entries, want) {
		t.Errorf("record of the refusals = %v, want %v", r.entries, want)
	}
}

// TestSequenceRefusals: what changed since the plan is refused before
// anything is written, and recorded.
func TestSequenceRefusals(t *testing.T) {
	t.Run("the old job's members came back", func(t *testing.T) {
		w, ctx := newWorld(), ctxFor(t)
		defer w.worker.Close()
		r := &recorder{}
		c := w.open(t, ctx, r, true)
		w.source.Members["flink"] = 1
		_, err := c.Apply(ctx)
		if !errors.Is(err, verify.ErrStalePlan) || errkind.Of(err) != errkind.Refused {
			t.Errorf("Apply with a member in the group = %v, want a *verify.StalePlanError", err)
		}
		if !slices.Equal(r.entries, []string{"refuse"}) {
			t.Errorf("record = %v, want the refusal alone", r.entries)
		}
		if _, err := w.connect(t).Connector(ctx, w.p.ConnectorName); !errors.Is(err, connect.ErrNotFound) {
			t.Errorf("the refused apply created the connector: %v", err)
		}
	})
	t.Run("another flow's connector of the plan's name", func(t *testing.T) {
		w, ctx := newWorld(), ctxFor(t)
		defer w.worker.Close()
		other := connectorConfig()
		other["topics"] = "orders.eu"
		if _, err := w.connect(t).Create(ctx, w.p.ConnectorName, other, connect.InitialStopped); err != nil {
			t.Fatal(err)
		}
		_, err := w.open(t, ctx, &recorder{}, true).Apply(ctx)
		var foreign *verify.ForeignConnectorError
		if !errors.As(err, &foreign) || errkind.Of(err) != errkind.Refused {
			t.Errorf("Apply over another flow's connector = %v, want a *verify.ForeignConnectorError", err)
		}
		if got, err := w.connect(t).MirrorOffsets(ctx, w.p.ConnectorName); err != nil || len(got) != 0 {
			t.Errorf("the other flow's connector holds %v, %v; want nothing written", got, err)
		}
	})
	t.Run("another plan applied first", func(t *testing.T) {
		w, ctx := newWorld(), ctxFor(t)
		defer w.worker.Close()
		if _, err := w.open(t, ctx, &recorder{}, true).Apply(ctx); err != nil {
			t.Fatal(err)
		}
		w.source.Commits["flink"][orders] = 12 // the old job ran on; a new plan says 12
		w.source.Produce(orders, 20, 22, nil)
		stale := w.p
		w.p = buildPlanAt(12, 22)
		// The first plan's apply created the connector, and its claim
		// refuses the second before the guard reads the offsets.
		var fe *verify.ForeignConnectorError
		if _, err := w.open(t, ctx, &recorder{}, true).Apply(ctx); !errors.As(err, &fe) || fe.Check != "plan" {
			t.Errorf("Apply of a second plan = %v, want a refusal naming another plan's claim", err)
		}
		w.p = stale
		if _, err := w.open(t, ctx, &recorder{}, true).Resume(ctx); errkind.Of(err) != errkind.Refused {
			t.Errorf("Resume of the first plan after the group moved = %v, want a refusal", err)
		}
	})
	t.Run("plan of other clusters", func(t *testing.T) {
		w, ctx := newWorld(), ctxFor(t)
		defer w.worker.Close()
		w.target.ID = "elsewhere"
		_, err := cutover.Open(ctx, w.clients(t), w.p, connectorConfig(), cutover.Options{})
		var foreign *verify.ForeignConnectorError
		if !errors.As(err, &foreign) || foreign.Check != "target-cluster" {
			t.Errorf("Open on other clusters = %v, want a refusal on target-cluster", err)
		}
	})
	t.Run("a record that cannot be written stops the write", func(t *testing.T) {
		w, ctx := newWorld(), ctxFor(t)
		defer w.worker.Close()
		r := &recorder{failAt: "patch!"}
		_, err := w.open(t, ctx, r, true).Apply(ctx)
		if err == nil || errkind.Of(err) != errkind.Unclassified {
			t.Errorf("Apply with the patch's record failing = %v (%v), want its error, not worth a retry", err, errkind.Of(err))
		}
		if got, _ := w.connect(t).MirrorOffsets(ctx, w.p.ConnectorName); len(got) != 0 {
			t.Errorf("the unrecorded PATCH was sent: %v", got)
		}
	})
}

// TestOutcomeUnknownPatchThenRerun: a PATCH the worker timed out on (and
// applied) leaves its intent in the record; the apply run again finds it
// applied.
func TestOutcomeUnknownPatchThenRerun(t *testing.T) {
	w, ctx := newWorld(), ctxFor(t)
	defer w.worker.Close()
	w.worker.FailNext("PATCH", "/connectors/mm2-orders/offsets", 2, connectfake.RequestTimeout)
	r := &recorder{}
	_, err := w.open(t, ctx, r, true).Apply(ctx)
	if errkind.Of(err) != errkind.OutcomeUnknown || !errors.Is(err, connect.ErrOutcomeUnknown) {
		t.Fatalf("Apply with the PATCH timed out = %v (%v), want outcome unknown", err, errkind.Of(err))
	}
	if !slices.Contains(r.entries, "patch!") {
		t.Errorf("record = %v: no intent of the PATCH", r.entries)
	}
	res, err := w.open(t, ctx, r, true).Apply(ctx)
	if err != nil || res.Guard != plan.GuardAlreadyApplied.String() || res.Patched {
		t.Errorf("Apply again = %+v, %v; want the plan found applied", res, err)
	}
}

// TestRollbackPhases: a connector that never ran is removed with its
// offsets; one that ran needs the group, refuses it while it has members,
// and gives it C'.
func TestRollbackPhases(t *testing.T) {
	w, ctx := newWorld(), ctxFor(t)
	defer w.worker.Close()
	c := w.open(t, ctx, &recorder{}, true)
	if _, err := c.Apply(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := w.open(t, ctx, &recorder{}, false).Rollback(ctx, "")
	if !errors.Is(err, cutover.ErrNotApproved) || res.Phase != "before-resume" {
		t.Fatalf("Rollback unapproved = %+v, %v; want the intent of a rollback before resume", res, err)
	}
	if res, err = c.Rollback(ctx, ""); err != nil || res.Phase != "before-resume" {
		t.Fatalf("Rollback before resume = %+v, %v", res, err)
	}
	if got, err := w.connect(t).MirrorOffsets(ctx, w.p.ConnectorName); !errors.Is(err, connect.ErrNotFound) && len(got) != 0 {
		t.Errorf("after the rollback the name holds offsets %v, %v", got, err)
	}

	c = w.open(t, ctx, &recorder{}, true)
	if _, err := c.Apply(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Rollback(ctx, ""); !errors.Is(err, cutover.ErrNeedsGroup) || errkind.Of(err) != errkind.Refused {
		t.Errorf("Rollback of a connector that ran, without a group = %v, want ErrNeedsGroup", err)
	}
	w.source.Members["flink"] = 1
	if _, err := c.Rollback(ctx, "flink"); !errors.Is(err, kafkaadmin.ErrGroupActive) {
		t.Errorf("Rollback into a group with members = %v, want ErrGroupActive", err)
	}
	w.source.Members["flink"] = 0
	res, err = c.Rollback(ctx, "flink")
	if err != nil || res.Phase != "after-resume" || res.Committed != 2 || res.Reverse == nil {
		t.Fatalf("Rollback after resume = %+v, %v", res, err)
	}
	if got := w.source.Commits["flink"]; got[orders] != 10 || got[payments] != 3 {
		t.Errorf("group after the rollback = %v, want C' (MM2 copied nothing here)", got)
	}
}

// TestApplyLooksAtConnectorDuringRecheck: an apply reads the connector it
// finds (configuration, status, offsets) while its recheck reads the
// clusters, not after: the recheck's read of the group is held until the
// worker has answered the connector's offsets, and the apply still
// patches, having asked whether the connector exists once. A recheck that
// refuses wins over what that look found: a plan gone stale while the
// connector runs is refused as stale.
func TestApplyLooksAtConnectorDuringRecheck(t *testing.T) {
	w, ctx := newWorld(), ctxFor(t)
	defer w.worker.Close()
	// A first apply creates the connector STOPPED and stops before its PATCH.
	if _, err := w.open(t, ctx, &recorder{failAt: "patch!"}, false).Apply(ctx); err == nil {
		t.Fatal("the first apply did not stop before its PATCH")
	}
	asked := len(w.worker.Requests())
	w.holdGroupReadUntilOffsetsRead(asked)
	res, err := w.open(t, ctx, &recorder{}, false).Apply(ctx)
	if err != nil || res.Created || !res.Patched || res.Matched != 2 {
		t.Fatalf("Apply = %+v, %v; want adopted, patched, 2 matched", res, err)
	}
	exists := 0
	for _, r := range w.worker.Requests()[asked:] {
		if r.Method == http.MethodGet && r.Path == "/connectors/"+w.p.ConnectorName {
			exists++
		}
	}
	if exists != 1 {
		t.Errorf("the apply asked whether the connector exists %d times, want 1", exists)
	}
	w.source.Intercept(nil)

	// Resumed, it runs; then the group moves: the plan is stale.
	if _, err := w.open(t, ctx, &recorder{}, true).Resume(ctx); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	w.source.Commits["flink"] = offsets.GroupOffsets{orders: 12, payments: 3}
	_, err = w.open(t, ctx, &recorder{}, false).Apply(ctx)
	if !errors.Is(err, verify.ErrStalePlan) || errors.Is(err, connect.ErrNotStopped) {
		t.Errorf("Apply of a stale plan on a RUNNING connector = %v, want the stale plan, not the state", err)
	}
}

// TestResumeChecksConnectorDuringRecheck: a resume proves the connector
// (its configuration, STOPPED, its offsets) while its recheck reads the
// clusters: the recheck's read of the group is held until the worker has
// answered the connector's offsets, and the resume still goes through.
func TestResumeChecksConnectorDuringRecheck(t *testing.T) {
	w, ctx := newWorld(), ctxFor(t)
	defer w.worker.Close()
	if _, err := w.open(t, ctx, &recorder{}, false).Apply(ctx); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	w.holdGroupReadUntilOffsetsRead(len(w.worker.Requests()))
	if res, err := w.open(t, ctx, &recorder{}, true).Resume(ctx); err != nil || res.State != connect.StateRunning {
		t.Fatalf("Resume = %+v, %v; want RUNNING", res, err)
	}
}

// holdGroupReadUntilOffsetsRead makes the source hold a step's read of the
// group's members (its recheck) until the worker has answered a GET of the
// connector's offsets among the requests after the first asked ones, and
// fail that read if it has not within 10 s: a step that reads the
// connector only after its recheck fails on it.
func (w *world) holdGroupReadUntilOffsetsRead(asked int) {
	offsetsPath := "/connectors/" + w.p.ConnectorName + "/offsets"
	w.source.Intercept(func(ctx context.Context, call kafkafake.Call, next func() error) error {
		if call.Op != kafkafake.OpDescribeGroup {
			return next()
		}
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			for _, r := range w.worker.Requests()[asked:] {
				if r.Method == http.MethodGet && r.Path == offsetsPath && r.Status != 0 {
					return next()
				}
			}
		}
		return errors.New("the connector's offsets were not read while the recheck read the group")
	})
}
