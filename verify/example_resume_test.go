package verify_test

import (
	"context"
	"fmt"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// resumePlan is the guarded resume of an applied plan: verify.Prepare as
// for the apply (configuration, lint, policy, the clusters rechecked), then
// the proof that the connector is the plan's, STOPPED and holding exactly
// the plan's offsets; the capture of the records MM2 will copy first (for
// the boundary check after resume); the resume, and the wait until the
// connector and its tasks run. Without the operator's approval a tool
// stops after CheckResumable.
func resumePlan(ctx context.Context, c *connect.Client, source, target kafka, p *plan.Plan, config map[string]string) error {
	pre, err := verify.Prepare(ctx, c, source, target, p, config, verify.PrepareOptions{})
	if err != nil {
		return err
	}
	if err := verify.CheckResumable(ctx, c, p, pre.Clusters); err != nil {
		return err // verify.ErrNotApplied: run the apply first
	}
	capture, err := verify.CaptureBoundary(ctx, source, p)
	if err != nil {
		return err
	}
	audit("boundary-capture", len(capture))
	if err := verify.Resume(ctx, c, p, pre.Clusters); err != nil {
		return err
	}
	audit("resume", p.ConnectorName)
	st, err := c.WaitRunning(ctx, p.ConnectorName) // a *connect.FailedError with the trace
	if err == nil {
		fmt.Println(st.Connector.State, len(st.Tasks) > 0)
	}
	return err
}

// The resume against connect/connectfake and clusters in memory, run
// twice: the second time the connector is no longer STOPPED.
func Example_resume() {
	ctx := context.Background()
	worker, source, target, p, config := exampleApplied(false)
	defer worker.Close()
	c, _ := connect.New(worker.URL())
	report(resumePlan(ctx, c, source, target, p, config))
	report(resumePlan(ctx, c, source, target, p, config))
	// Output:
	// audit: boundary-capture 2
	// audit: resume mm2-orders
	// RUNNING true
	// done
	// refused: connect: connector "mm2-orders" is RUNNING with 1 task(s), not STOPPED with none
}
