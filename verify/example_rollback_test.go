package verify_test

import (
	"context"
	"fmt"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// rollbackPlan is the rollback after resume: the old job restarts from the
// group the connector's offsets are reversed into (C' = M'+1, the plan's C
// where MM2 stored nothing). The group must have no members and no commits
// but the old job's; the connector is proved the plan's before each write.
// (Before resume, verify.CheckNeverRan and verify.RemoveConnector delete
// the connector and its offsets instead.)
func rollbackPlan(ctx context.Context, c *connect.Client, source, target kafka, p *plan.Plan) error {
	clusters, err := verify.ReadClusters(ctx, source, target)
	if err != nil {
		return err
	}
	if err := verify.StopForRollback(ctx, c, source, p, p.GroupID, clusters); err != nil {
		return err // kafkaadmin.ErrGroupActive, *verify.GroupOffsetsError, ...
	}
	if _, err := c.WaitStopped(ctx, p.ConnectorName); err != nil {
		return err
	}
	got, err := c.SettledMirrorOffsets(ctx, p.ConnectorName)
	if err != nil {
		return err
	}
	audit("rollback-backup", len(got))
	reverse, err := verify.ReversePlan(ctx, c, source, target, p, got, clusters,
		verify.ReverseSpec{CreatedAt: time.Now(), ToolVersion: "example", Group: p.GroupID})
	if err != nil {
		return err
	}
	audit("rollback-plan", len(reverse.Entries))
	n, err := verify.CommitReverse(ctx, c, source, p, reverse, clusters)
	audit("rollback", n)
	return err
}

// The rollback against connect/connectfake and clusters in memory, after
// MM2 copied records: the group holds C' afterwards.
func Example_rollback() {
	ctx := context.Background()
	worker, source, target, p, _ := exampleApplied(true)
	defer worker.Close()
	c, _ := connect.New(worker.URL())
	report(rollbackPlan(ctx, c, source, target, p))
	fmt.Println(source.Commits[p.GroupID])
	// Output:
	// audit: rollback-backup 2
	// audit: rollback-plan 2
	// audit: rollback 2
	// done
	// map[orders.eu-0:10 payments-0:3]
}
