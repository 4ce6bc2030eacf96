package verify_test

import (
	"context"
	"fmt"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/redact"
	"github.com/mm2cutover/mm2cutover/verify"
)

// report says how a step ended, as a tool's exit status would: the kind
// of its error (verify.Classify), and whether running it again may help.
func report(err error) {
	switch kind := verify.Classify(err); {
	case kind == verify.KindNone:
		fmt.Println("done")
	case kind.Retryable():
		fmt.Printf("%s, run it again: %v\n", kind, err)
	default:
		fmt.Printf("%s: %v\n", kind, err)
	}
}

// audit is a tool's record of the change; here it prints.
func audit(step string, detail any) { fmt.Println("audit:", step, detail) }

// The guarded apply of a plan as another team's tool writes it, here
// against connect/connectfake and clusters in memory (a tool decodes the
// plan with plan.Decode and passes *kafkaadmin.Client). It lints the
// configuration, takes the replication policy from it, rechecks the
// clusters, creates the connector STOPPED (or adopts the plan's), backs up
// and guards its offsets, patches once and reads back. Run again, it finds
// the plan applied and writes nothing.
func Example_apply() {
	ctx := context.Background()
	worker, source, target, p, config := exampleWorld()
	defer worker.Close()
	c, _ := connect.New(worker.URL())
	apply := func() error {
		if fs := connect.Lint(config, "4.3.1", connect.LintExpectations{SourceAlias: p.SourceAlias}); connect.HasErrors(fs) {
			return fmt.Errorf("%w: the configuration's lint: %v", verify.ErrCheckFailed, fs)
		}
		policy, err := connect.ReplicationPolicyOf(config)
		if err != nil {
			return err
		}
		obs, err := verify.Observe(ctx, source, target, p, policy, nil)
		if err != nil {
			return err
		}
		if err := verify.Recheck(p, obs); err != nil {
			return err // a *verify.StalePlanError naming each change
		}
		clusters := verify.Clusters{Source: obs.SourceClusterID, Target: obs.TargetClusterID}
		created, err := verify.CreateOrAdopt(ctx, c, p, config, clusters)
		if err != nil {
			return err
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
			n, err := verify.Patch(ctx, c, p, clusters)
			if err != nil {
				return err
			}
			audit("patch", n)
		}
		rb, err := verify.ReadBack(ctx, c, p)
		audit("read-back", rb)
		return err
	}
	report(apply())
	report(apply())
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

// The guarded resume of an applied plan: recheck the clusters, prove the
// connector is the plan's, STOPPED and holding exactly the plan's offsets,
// capture the records MM2 will copy first (for the boundary check after
// resume), then resume it and wait until it and its tasks run. Without the
// operator's approval a tool stops after CheckResumable.
func Example_resume() {
	ctx := context.Background()
	worker, source, target, p, config := exampleApplied(false)
	defer worker.Close()
	c, _ := connect.New(worker.URL())
	resume := func() error {
		policy, err := connect.ReplicationPolicyOf(config)
		if err != nil {
			return err
		}
		obs, err := verify.Observe(ctx, source, target, p, policy, nil)
		if err != nil {
			return err
		}
		if err := verify.Recheck(p, obs); err != nil {
			return err
		}
		clusters := verify.Clusters{Source: obs.SourceClusterID, Target: obs.TargetClusterID}
		if err := verify.CheckResumable(ctx, c, p, clusters); err != nil {
			return err // verify.ErrNotApplied: run the apply first
		}
		capture, err := verify.CaptureBoundary(ctx, source, p)
		if err != nil {
			return err
		}
		audit("boundary-capture", len(capture))
		if err := verify.Resume(ctx, c, p, clusters); err != nil {
			return err
		}
		audit("resume", p.ConnectorName)
		st, err := c.WaitRunning(ctx, p.ConnectorName) // a *connect.FailedError with the trace
		if err == nil {
			fmt.Println(st.Connector.State, len(st.Tasks) > 0)
		}
		return err
	}
	report(resume())
	report(resume()) // resumed: no longer STOPPED
	// Output:
	// audit: boundary-capture 2
	// audit: resume mm2-orders
	// RUNNING true
	// done
	// refused: connect: connector "mm2-orders" is RUNNING with 1 task(s); offsets can only change while it is STOPPED with no tasks: stop it (PUT /connectors/mm2-orders/stop) and wait until its status is STOPPED with an empty task list
}

// The rollback after resume: the old job restarts from the group the
// connector's offsets are reversed into (C' = M'+1, the plan's C where MM2
// stored nothing). The group must have no members and no commits but the
// old job's; the connector is proved the plan's before each write. (Before
// resume, verify.CheckNeverRan and verify.RemoveConnector delete the
// connector and its offsets instead.)
func Example_rollback() {
	ctx := context.Background()
	worker, source, target, p, _ := exampleApplied(true)
	defer worker.Close()
	c, _ := connect.New(worker.URL())
	rollback := func() error {
		clusters := verify.Clusters{Source: "src-id", Target: "tgt-id"} // the IDs the tool's clients read
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
	report(rollback())
	fmt.Println(source.commits[p.GroupID])
	// Output:
	// audit: rollback-backup 2
	// audit: rollback-plan 2
	// audit: rollback 2
	// done
	// map[orders.eu-0:10 payments-0:3]
}
