package cutover_test

import (
	"context"
	"fmt"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/cutover"
	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/verify"
)

// A whole cutover as another team's tool writes it: open the plan with
// the clients (a *connect.Client and two *kafkaadmin.Client; here a fake
// worker and clusters in memory), a record of the change and an
// approval, then one call per step. Each step proves, right before each
// write, that the connector is the plan's on the plan's clusters; a
// resume or rollback that is not approved only says what it would do.
func Example() {
	ctx := context.Background()
	w := newWorld()
	defer w.worker.Close()
	c, _ := connect.New(w.worker.URL())
	ct, err := cutover.Open(ctx, cutover.Clients{Connect: c, Source: w.source, Target: w.target}, w.p, connectorConfig(), cutover.Options{
		Record: func(_ context.Context, e cutover.Event) error {
			if e.Intent {
				fmt.Println("about to", e.Step)
			}
			return nil // an error here stops the step before its write
		},
		Approve: func(_ context.Context, in cutover.Intent) (bool, error) {
			fmt.Println("approve?", in.Step, in.Partitions, "partitions")
			return true, nil
		},
	})
	if err != nil {
		fmt.Println(errkind.Of(err), err) // refused: a plan of other clusters, ...
		return
	}
	applied, err := ct.Apply(ctx)
	report("apply", err)
	fmt.Println("patched", applied.Patched, "matched", applied.Matched)
	_, err = ct.Apply(ctx) // a retried Job: the guard finds the plan applied
	report("apply again", err)
	resumed, err := ct.Resume(ctx)
	report("resume", err)
	fmt.Println(resumed.State)
	_, err = ct.Apply(ctx) // the plan is stale once MM2 ran
	report("apply after resume", err)
	rolled, err := ct.Rollback(ctx, "flink") // hand back to the old job's group
	report("rollback", err)
	fmt.Println(rolled.Phase, "committed", rolled.Committed)
	// Output:
	// about to create
	// about to patch
	// apply: done
	// patched true matched 2
	// apply again: done
	// approve? resume 2 partitions
	// about to resume
	// resume: done
	// RUNNING
	// apply after resume: refused
	// approve? rollback-after-resume 2 partitions
	// about to stop
	// about to commit
	// rollback: done
	// after-resume committed 2
}

// report says how a step ended, as a tool's exit status would.
func report(step string, err error) {
	switch kind := errkind.Of(err); {
	case kind == errkind.None:
		fmt.Println(step + ": done")
	case kind.Retryable():
		fmt.Printf("%s: %s, run it again\n", step, kind)
	default:
		fmt.Printf("%s: %s\n", step, kind)
	}
}

// The pieces, for a tool that composes the steps itself: each write takes
// the proof of the read before it (package verify makes them, a caller
// cannot), so a PATCH without the guard, or a resume without the check,
// does not compile.
func Example_pieces() {
	ctx := context.Background()
	w := newWorld()
	defer w.worker.Close()
	c, _ := connect.New(w.worker.URL())
	reached, _ := verify.ReadClusters(ctx, w.source, w.target) // read, never passed in
	if _, err := cutover.CreateOrAdopt(ctx, c, w.p, connectorConfig(), reached); err != nil {
		fmt.Println(err)
		return
	}
	_ = c.RequireStopped(ctx, w.p.ConnectorName)
	guarded, err := verify.GuardOffsets(ctx, c, w.p) // the backup and the guard's decision
	if err != nil {
		fmt.Println(errkind.Of(err), err) // a *plan.StaleOffsetsError: never write over them
		return
	}
	n, _ := cutover.Patch(ctx, c, guarded, reached)
	rb, _ := verify.ReadBack(ctx, c, w.p)
	resumable, err := verify.CheckResumable(ctx, c, w.p, reached)
	fmt.Println(n, rb, err)
	fmt.Println(cutover.Resume(ctx, c, resumable, reached))
	// Output:
	// 2 2 match, 0 wrong value, 0 missing, 0 unexpected <nil>
	// <nil>
}
