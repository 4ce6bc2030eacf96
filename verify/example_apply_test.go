package verify_test

import (
	"context"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/redact"
	"github.com/mm2cutover/mm2cutover/verify"
)

// applyPlan is the guarded apply of a plan as another team's tool writes
// it. verify.Prepare proves the configuration is the plan's and passes the
// lint, takes the replication policy from it and rechecks the clusters;
// then the connector is created STOPPED (or the plan's adopted), its
// offsets backed up and guarded, patched once and read back. Run again, it
// finds the plan applied and writes nothing.
func applyPlan(ctx context.Context, c *connect.Client, source, target kafka, p *plan.Plan, config map[string]string) error {
	pre, err := verify.Prepare(ctx, c, source, target, p, config, verify.PrepareOptions{})
	if err != nil {
		return err // a *verify.StalePlanError, *verify.LintError, *plan.ConfigChangedError, ...
	}
	created, err := verify.CreateOrAdopt(ctx, c, p, config, pre.Clusters)
	if err != nil {
		return err // a *verify.ForeignConnectorError: another connector of that name
	}
	if created {
		audit("create", redact.Config(config)["source.cluster.sasl.jaas.config"])
	}
	if err := c.RequireStopped(ctx, p.ConnectorName); err != nil {
		return err
	}
	backup, action, err := verify.GuardOffsets(ctx, c, p)
	audit("backup", len(backup))
	if err != nil {
		return err // a *plan.StaleOffsetsError: never write over them
	}
	if action == plan.GuardApply {
		n, err := verify.Patch(ctx, c, p, pre.Clusters)
		if err != nil {
			return err // connect.ErrOutcomeUnknown: run it again
		}
		audit("patch", n)
	}
	rb, err := verify.ReadBack(ctx, c, p)
	audit("read-back", rb)
	return err
}

// The apply against connect/connectfake and clusters in memory (a tool
// decodes the plan with plan.Decode and passes *kafkaadmin.Client), run
// twice.
func Example_apply() {
	ctx := context.Background()
	worker, source, target, p, config := exampleWorld()
	defer worker.Close()
	c, _ := connect.New(worker.URL())
	report(applyPlan(ctx, c, source, target, p, config))
	report(applyPlan(ctx, c, source, target, p, config))
	// Output:
	// audit: create [redacted]
	// audit: backup 0
	// audit: patch 2
	// audit: read-back 2 match, 0 wrong value, 0 missing, 0 unexpected
	// done
	// audit: backup 2
	// audit: read-back 2 match, 0 wrong value, 0 missing, 0 unexpected
	// done
}
