package flinklike_test

import (
	"context"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/flinklike"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
)

func TestMain(m *testing.M) { sandboxtest.Main(m) }

// TestReplicatorCopiesExactlyOnceAcrossRestarts runs the job, stops it while
// traffic goes on, restarts it from its committed offsets, and finds every
// source record on the target exactly once, with the final commits equal to
// the source log ends.
func TestReplicatorCopiesExactlyOnceAcrossRestarts(t *testing.T) {
	sb := sandboxtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	topics := map[string]int32{"fl-a": 3, "fl-b": 2}
	// fl-empty never gets a record: Flink still commits its position, 0.
	for name, n := range map[string]int32{"fl-a": 3, "fl-b": 2, "fl-empty": 1} {
		for _, b := range []*sandbox.Broker{sb.Source(), sb.Target()} {
			if err := sandbox.CreateTopic(ctx, b.Bootstrap(), name, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	traffic, err := flinklike.StartTraffic(ctx, sb.Source().Bootstrap(), flinklike.All(topics), 5, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	cfg := flinklike.Config{Source: sb.Source().Bootstrap(), Target: sb.Target().Bootstrap(), Group: "fl-group",
		Topics: []string{"fl-a", "fl-b", "fl-empty"}, Checkpoint: 300 * time.Millisecond}
	for round := range 2 {
		r, err := flinklike.Start(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		// Two checkpoints under traffic: on a busy machine the new group
		// coordinator may load for longer than any fixed wait.
		if err := r.WaitCheckpoints(ctx, 2); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		st, err := r.Stop()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if st.Records == 0 || st.Checkpoints == 0 {
			t.Fatalf("round %d: replicated nothing: %+v", round, st)
		}
	}
	produced, err := traffic.Stop()
	if err != nil {
		t.Fatal(err)
	}
	// A last run with no traffic catches up to the log ends.
	r, err := flinklike.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ends, err := flinklike.LogEnds(ctx, sb.Source().Bootstrap(), flinklike.All(map[string]int32{"fl-a": 3, "fl-b": 2, "fl-empty": 1}))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WaitCommitted(ctx, ends); err != nil {
		t.Fatal(err)
	}
	st, err := r.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := st.Committed["fl-empty"][0]; !ok || c != 0 {
		t.Errorf("empty partition: committed %d (present %v), want 0", c, ok)
	}
	var total int
	for name, n := range topics {
		for p := range n {
			res, err := flinklike.Check(ctx, sb.Source().Bootstrap(), sb.Target().Bootstrap(), name, p, name)
			if err != nil {
				t.Fatal(err)
			}
			if !res.OK() || res.Target != res.Source {
				t.Errorf("%s-%d: %+v", name, p, res)
			}
			if got, want := st.Committed[name][p], int64(res.Source); got != want {
				t.Errorf("%s-%d: committed %d, want log end %d", name, p, got, want)
			}
			total += res.Source
		}
	}
	if int64(total) != produced {
		t.Errorf("source holds %d records, traffic produced %d", total, produced)
	}
	t.Logf("%d records replicated exactly once over 3 runs", total)
}
