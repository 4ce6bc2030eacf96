package cutover_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/cutover"
	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/kafkaadmin/kafkafake"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// pieces is the world with its client and the clusters proven.
type pieces struct {
	*world
	c       *connect.Client
	reached verify.Reached
}

func newPieces(t *testing.T) *pieces {
	t.Helper()
	w := newWorld()
	t.Cleanup(w.worker.Close)
	reached, err := verify.ReadClusters(context.Background(), w.source, w.target)
	if err != nil {
		t.Fatal(err)
	}
	return &pieces{world: w, c: w.connect(t), reached: reached}
}

// apply runs the apply's pieces and returns what the guard said.
func (w *pieces) apply(t *testing.T, ctx context.Context) (created bool, action plan.GuardAction) {
	t.Helper()
	created, err := cutover.CreateOrAdopt(ctx, w.c, w.p, connectorConfig(), w.reached)
	if err != nil {
		t.Fatalf("CreateOrAdopt: %v", err)
	}
	if err := w.c.RequireStopped(ctx, w.p.ConnectorName); err != nil {
		t.Fatalf("RequireStopped: %v", err)
	}
	g, err := verify.GuardOffsets(ctx, w.c, w.p)
	if err != nil {
		t.Fatalf("GuardOffsets: %v", err)
	}
	n, err := cutover.Patch(ctx, w.c, g, w.reached)
	if want := map[plan.GuardAction]int{plan.GuardApply: len(w.p.Entries)}[g.Action()]; err != nil || n != want {
		t.Fatalf("Patch = %d, %v; want %d partitions", n, err, want)
	}
	if rb, err := verify.ReadBack(ctx, w.c, w.p); err != nil || !rb.OK() {
		t.Fatalf("ReadBack = %v, %v", rb, err)
	}
	return created, g.Action()
}

// TestApplyResumePieces follows a plan through apply, a retried apply,
// resume, and the guards that refuse afterwards.
func TestApplyResumePieces(t *testing.T) {
	w, ctx := newPieces(t), ctxFor(t)
	if _, err := verify.CheckResumable(ctx, w.c, w.p, w.reached); !errors.Is(err, connect.ErrNotFound) {
		t.Errorf("CheckResumable before the apply = %v, want ErrNotFound", err)
	}
	if created, action := w.apply(t, ctx); !created || action != plan.GuardApply {
		t.Errorf("first apply: created %v, guard %v; want created, apply", created, action)
	}
	if created, action := w.apply(t, ctx); created || action != plan.GuardAlreadyApplied {
		t.Errorf("second apply: created %v, guard %v; want adopted, already-applied", created, action)
	}
	proof, err := verify.CheckResumable(ctx, w.c, w.p, w.reached)
	if err != nil {
		t.Fatalf("CheckResumable after the apply: %v", err)
	}
	if err := cutover.Resume(ctx, w.c, proof, w.reached); err != nil {
		t.Fatal(err)
	}
	if _, err := w.c.WaitRunning(ctx, w.p.ConnectorName); err != nil {
		t.Fatal(err)
	}
	// Now RUNNING: every step that needs it STOPPED refuses, and writes nothing.
	if created, err := cutover.CreateOrAdopt(ctx, w.c, w.p, connectorConfig(), w.reached); created || err != nil {
		t.Errorf("CreateOrAdopt of the running plan's connector = %v, %v; want it adopted", created, err)
	}
	err = w.c.RequireStopped(ctx, w.p.ConnectorName)
	if !errors.Is(err, connect.ErrNotStopped) || errkind.Of(err) != errkind.Refused {
		t.Errorf("RequireStopped of the running connector = %v (%v), want a refusal matching ErrNotStopped", err, errkind.Of(err))
	}
	if _, err := verify.CheckResumable(ctx, w.c, w.p, w.reached); errkind.Of(err) != errkind.Refused {
		t.Errorf("CheckResumable of the running connector = %v, want a refusal", err)
	}
	_, err = verify.CheckNeverRan(ctx, w.c, w.p, w.reached)
	if !errors.Is(err, verify.ErrHasRun) || errkind.Of(err) != errkind.Refused {
		t.Errorf("CheckNeverRan of the running connector = %v, want ErrHasRun", err)
	}
}

// TestZeroProofsAreRefused: a proof no read made (a zero value, which
// is all a caller can make of one) writes nothing.
func TestZeroProofsAreRefused(t *testing.T) {
	w, ctx := newPieces(t), ctxFor(t)
	w.apply(t, ctx)
	var writes []string
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			writes = append(writes, r.Method+" "+r.URL.Path)
		}
		w.worker.ServeHTTP(rw, r)
	}))
	defer srv.Close()
	c, err := connect.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	w.c = c
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"CreateOrAdopt without clusters read", func() error {
			_, err := cutover.CreateOrAdopt(ctx, w.c, w.p, connectorConfig(), verify.Reached{})
			return err
		}()},
		{"Patch without the guard", func() error { _, err := cutover.Patch(ctx, w.c, verify.Guarded{}, w.reached); return err }()},
		{"Resume without CheckResumable", cutover.Resume(ctx, w.c, verify.Resumable{}, w.reached)},
		{"RemoveConnector without CheckNeverRan", cutover.RemoveConnector(ctx, w.c, verify.NeverRan{}, w.reached)},
		{"CommitReverse without a reverse plan", func() error {
			_, err := cutover.CommitReverse(ctx, w.c, w.source, &verify.Reverse{}, w.reached)
			return err
		}()},
		{"StopForRollback without clusters read", cutover.StopForRollback(ctx, w.c, w.source, w.p, "flink", verify.Reached{})},
	} {
		if !errors.Is(tc.err, verify.ErrNoProof) || errkind.Of(tc.err) != errkind.Refused {
			t.Errorf("%s = %v, want a refusal matching verify.ErrNoProof", tc.name, tc.err)
		}
	}
	if len(writes) > 0 {
		t.Errorf("refused writes sent %v", writes)
	}
}

// TestWritesRefuseOtherClusters: a plan built on other clusters than
// those the clients reach is never written, whichever the write.
func TestWritesRefuseOtherClusters(t *testing.T) {
	w, ctx := newPieces(t), ctxFor(t)
	elsewhere := kafkafake.New("other-id")
	reached, err := verify.ReadClusters(ctx, elsewhere, w.target)
	if err != nil {
		t.Fatal(err)
	}
	created, err := cutover.CreateOrAdopt(ctx, w.c, w.p, connectorConfig(), reached)
	var foreign *verify.ForeignConnectorError
	if created || !errors.As(err, &foreign) || foreign.Check != "source-cluster" {
		t.Errorf("CreateOrAdopt on other clusters = %v, %v; want a refusal on source-cluster", created, err)
	}
	if _, err := w.c.Connector(ctx, w.p.ConnectorName); !errors.Is(err, connect.ErrNotFound) {
		t.Errorf("the refused create created the connector: %v", err)
	}
}

// TestCreateOrAdoptRefuses: a connector of the plan's name that is not
// the plan's is never adopted, and a configuration that is not the plan's
// is never created.
func TestCreateOrAdoptRefuses(t *testing.T) {
	w, ctx := newPieces(t), ctxFor(t)
	other := connectorConfig()
	other["topics"] = "orders.eu"
	if created, err := cutover.CreateOrAdopt(ctx, w.c, w.p, other, w.reached); created || !errors.Is(err, plan.ErrConfigChanged) || errkind.Of(err) != errkind.Refused {
		t.Errorf("CreateOrAdopt with another configuration = %v, %v; want a refusal matching plan.ErrConfigChanged", created, err)
	}
	if _, err := w.c.Connector(ctx, w.p.ConnectorName); !errors.Is(err, connect.ErrNotFound) {
		t.Fatalf("the refused create created the connector: %v", err)
	}
	if _, err := w.c.Create(ctx, w.p.ConnectorName, other, connect.InitialStopped); err != nil {
		t.Fatal(err)
	}
	created, err := cutover.CreateOrAdopt(ctx, w.c, w.p, connectorConfig(), w.reached)
	var foreign *verify.ForeignConnectorError
	if created || !errors.As(err, &foreign) || foreign.Check != "topics" || errkind.Of(err) != errkind.Refused {
		t.Errorf("CreateOrAdopt of another flow's connector = %v, %v; want a *ForeignConnectorError on topics", created, err)
	}
}

// TestRollbackBeforeResumePieces: a connector that never ran is reset and
// deleted, so a new one of the same name starts from nothing.
func TestRollbackBeforeResumePieces(t *testing.T) {
	w, ctx := newPieces(t), ctxFor(t)
	w.apply(t, ctx)
	never, err := verify.CheckNeverRan(ctx, w.c, w.p, w.reached)
	if err != nil || len(never.Offsets()) != len(w.p.Entries) {
		t.Fatalf("CheckNeverRan = %v, %v; want the plan's %d offsets", never.Offsets(), err, len(w.p.Entries))
	}
	if err := cutover.RemoveConnector(ctx, w.c, never, w.reached); err != nil {
		t.Fatal(err)
	}
	if _, err := w.c.Connector(ctx, w.p.ConnectorName); !errors.Is(err, connect.ErrNotFound) {
		t.Errorf("connector after RemoveConnector: %v, want ErrNotFound", err)
	}
	if created, action := w.apply(t, ctx); !created || action != plan.GuardApply {
		t.Errorf("apply after the rollback: created %v, guard %v; want a new connector with no offsets", created, action)
	}
}

// TestRollbackAfterResumePieces: after MM2 ran, the group the old job
// restarts from receives C' = M'+1, and a group holding other commits, or
// members, is refused before anything is stopped; a committer that is not
// the plan's source cluster is refused before it commits.
func TestRollbackAfterResumePieces(t *testing.T) {
	w, ctx := newPieces(t), ctxFor(t)
	w.apply(t, ctx)
	proof, err := verify.CheckResumable(ctx, w.c, w.p, w.reached)
	if err != nil {
		t.Fatal(err)
	}
	if err := cutover.Resume(ctx, w.c, proof, w.reached); err != nil {
		t.Fatal(err)
	}
	kafka := w.source
	kafka.Members["flink"] = 1
	if err := cutover.StopForRollback(ctx, w.c, kafka, w.p, "flink", w.reached); !errors.Is(err, kafkaadmin.ErrGroupActive) || errkind.Of(err) != errkind.Refused {
		t.Errorf("StopForRollback with a member in the group = %v, want ErrGroupActive", err)
	}
	kafka.Members["flink"] = 0
	kafka.Commits["flink"] = offsets.GroupOffsets{orders: 15}
	if err := cutover.StopForRollback(ctx, w.c, kafka, w.p, "flink", w.reached); !errors.Is(err, verify.ErrGroupOffsets) {
		t.Errorf("StopForRollback with another commit in the group = %v, want ErrGroupOffsets", err)
	}
	if st, err := w.c.Status(ctx, w.p.ConnectorName); err != nil || st.Connector.State != connect.StateRunning {
		t.Fatalf("the refused rollbacks stopped the connector: %v, %v", st, err)
	}

	kafka.Commits["flink"] = offsets.GroupOffsets{orders: 10} // the old job's own commit
	if err := cutover.StopForRollback(ctx, w.c, kafka, w.p, "flink", w.reached); err != nil {
		t.Fatal(err)
	}
	if _, err := w.c.WaitStopped(ctx, w.p.ConnectorName); err != nil {
		t.Fatal(err)
	}
	got, err := w.c.SettledMirrorOffsets(ctx, w.p.ConnectorName)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := verify.ReversePlan(ctx, w.c, kafka, w.target, w.p, got, w.reached, verify.ReverseSpec{CreatedAt: time.Now(), Group: "flink"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cutover.CommitReverse(ctx, w.c, kafkafake.New("other-id"), rev, w.reached); !errors.Is(err, verify.ErrForeignConnector) {
		t.Errorf("CommitReverse to another cluster = %v, want a refusal", err)
	}
	n, err := cutover.CommitReverse(ctx, w.c, kafka, rev, w.reached)
	if err != nil || n != 2 {
		t.Fatalf("CommitReverse = %d, %v; want 2 partitions", n, err)
	}
	// MM2 copied nothing here (the fake runs no task): C' is C.
	if got, want := kafka.Commits["flink"], (offsets.GroupOffsets{orders: 10, payments: 3}); len(got) != 2 || got[orders] != 10 || got[payments] != 3 {
		t.Errorf("group after the rollback = %v, want %v", got, want)
	}
}

// TestPatchBodyIsWhatPatchSends pins the one codec of the PATCH body: the
// bytes Patch sends (through AlterMirrorOffsets) are plan.PatchBody's.
func TestPatchBodyIsWhatPatchSends(t *testing.T) {
	w, ctx := newPieces(t), ctxFor(t)
	var sent []byte
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch {
			sent, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(sent))
		}
		w.worker.ServeHTTP(rw, r)
	}))
	defer srv.Close()
	c, err := connect.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	w.c = c
	w.apply(t, ctx)
	want, err := w.p.PatchBody()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sent, want) {
		t.Errorf("PATCH sent\n%s\nplan.PatchBody renders\n%s", sent, want)
	}
}
