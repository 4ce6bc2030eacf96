package verify

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// The steps of a cutover that write (the design's steps 3 to 10), each a
// function a tool calls in order with a plan it decoded and the cluster IDs
// its Kafka clients reach. Every one of them proves, right before each
// write, that the connector is the plan's (ConfirmConnector), and writes
// nothing when a guard refuses. What a tool adds between them is its own:
// an audit record, an approval, output. The order for an apply:
//
//	Prepare                       the plan valid, config the plan's and linted,
//	                              the clusters as the plan saw them
//	CreateOrAdopt                 step 3: the connector exists, the plan's
//	(*connect.Client).RequireStopped      and is STOPPED with no tasks
//	GuardOffsets                  steps 4, 5: its offsets (the backup) and the guard
//	Patch                         step 6, when the guard says plan.GuardApply
//	ReadBack                      step 7
//
// A resume: Prepare, CheckResumable, CaptureBoundary, Resume,
// then (*connect.Client).WaitRunning. A rollback before resume: CheckNeverRan,
// RemoveConnector. A rollback after resume: StopForRollback,
// (*connect.Client).WaitStopped and SettledMirrorOffsets, ReversePlan,
// CommitReverse, with the IDs of ReadClusters. The package's examples
// (Example_apply, Example_resume, Example_rollback) are these sequences
// as a tool writes them, each a function of 21 to 29 lines.

// ErrNotApplied matches a resume refused by CheckResumable because the
// connector does not hold all of the plan's offsets yet: run the apply
// first.
var ErrNotApplied = errkind.New(errkind.Refused, "verify: the plan is not applied yet")

// ErrHasRun matches a rollback before resume refused by CheckNeverRan: the
// connector is not STOPPED, or holds offsets the plan did not set, so it
// has run, and the rollback after resume applies.
var ErrHasRun = errkind.New(errkind.Refused, "verify: the connector has run")

// CreateOrAdopt is step 3: it makes sure the plan's connector exists with
// the plan's configuration, created STOPPED so that it never runs before
// its offsets are set. config is the configuration to create it with (with
// "name"); it must be the one the plan was built for (a
// *plan.ConfigChangedError otherwise, nothing written). A connector that
// does not exist is created STOPPED (connect.InitialStopped) and created
// is true, also when the worker asked still does not show it once
// (*connect.Client).WaitKnown gives up (then with its error): record the
// create either way. One that exists is adopted only when it is the plan's
// (ConfirmConnector: a *ForeignConnectorError otherwise, never written).
//
// Then call (*connect.Client).RequireStopped, the STOPPED guard: a
// connector just created has no status for a moment, and one adopted may be
// RUNNING, PAUSED or FAILED, which a cutover never changes the state of.
// (It is a call of its own so that a tool records the create before it
// waits.)
func CreateOrAdopt(ctx context.Context, c *connect.Client, p *plan.Plan, config map[string]string, clusters Clusters) (created bool, err error) {
	if err := p.CheckConfig(config); err != nil {
		return false, fmt.Errorf("the configuration to create connector %s with: %w", p.ConnectorName, err)
	}
	name := p.ConnectorName
	_, err = c.Connector(ctx, name)
	switch {
	case errors.Is(err, connect.ErrNotFound):
		if _, err := c.Create(ctx, name, config, connect.InitialStopped); err != nil {
			return false, fmt.Errorf("create connector %s: %w", name, err)
		}
		// The steps after this one read the connector's configuration
		// (Patch's confirmation) through the same worker, which may not
		// know it yet when it forwarded the create to the leader.
		if _, err := c.WaitKnown(ctx, name); err != nil {
			return true, fmt.Errorf("connector %s was created, and the worker does not show it yet: %w", name, err)
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("connector %s: %w", name, err)
	}
	if _, err := ConfirmConnector(ctx, c, p, name, clusters); err != nil {
		return false, fmt.Errorf("connector %s exists and is not the plan's (another flow's, another plan's, or changed since): %w", name, err)
	}
	return false, nil
}

// GuardOffsets is steps 4 and 5: it reads the connector's offsets — the
// backup a tool records before it writes — and decides with
// [plan.Plan.Guard]: plan.GuardApply when it holds none of the plan's
// offsets (or only some, set to the plan's values), plan.GuardAlreadyApplied
// when it holds exactly the plan's (a retried apply: nothing to write), or a
// *plan.StaleOffsetsError when it holds others: it ran, or another plan
// was applied, and must not be written over. It writes nothing.
func GuardOffsets(ctx context.Context, c MirrorOffsetsReader, p *plan.Plan) (backup []offsets.ConnectOffset, action plan.GuardAction, err error) {
	backup, err = c.MirrorOffsets(ctx, p.ConnectorName)
	if err != nil {
		return nil, 0, fmt.Errorf("read offsets of %s: %w", p.ConnectorName, err)
	}
	action, err = p.Guard(backup)
	return backup, action, err
}

// Patch is step 6: right after GuardOffsets said plan.GuardApply, it
// proves the connector is still the plan's (ConfirmConnector) and sends the
// plan's offsets in one PATCH ((*connect.Client).AlterMirrorOffsets:
// STOPPED guard, retries on transient errors). It returns the number of
// partitions sent. An error matching connect.ErrOutcomeUnknown means the
// PATCH may have been applied: run the apply again, whose guard finds the
// offsets applied or applies them.
func Patch(ctx context.Context, c *connect.Client, p *plan.Plan, clusters Clusters) (int, error) {
	patch, err := p.ConnectOffsets()
	if err != nil {
		return 0, err
	}
	err = confirmThen(ctx, c, p, clusters, "the PATCH", "alter offsets of", func() error {
		_, err := c.AlterMirrorOffsets(ctx, p.ConnectorName, patch)
		return err
	})
	if err != nil {
		return 0, err
	}
	return len(patch), nil
}

// ReadBack is step 7: it reads the connector's offsets until they equal
// the plan's ((*connect.Client).WaitMirrorOffsets; bound it with ctx) and
// returns the last comparison. Its errors are WaitMirrorOffsets': a
// *connect.ReadBackError with what was read, or one matching
// connect.ErrOffsetsUnread when no read succeeded (worth a retry of the
// apply).
func ReadBack(ctx context.Context, c *connect.Client, p *plan.Plan) (offsets.ReadBack, error) {
	want, err := p.ExpectedOffsets()
	if err != nil {
		return offsets.ReadBack{}, err
	}
	return c.WaitMirrorOffsets(ctx, p.ConnectorName, want)
}

// CheckResumable is the guard of step 8, before a tool asks for approval:
// the connector is the plan's (ConfirmConnector), STOPPED with no tasks
// ((*connect.Client).RequireStopped) and holds exactly the plan's offsets
// (an error matching ErrNotApplied when some are missing, a
// *plan.StaleOffsetsError when it holds others: a stale plan, or a
// connector that ran). It writes nothing.
func CheckResumable(ctx context.Context, c *connect.Client, p *plan.Plan, clusters Clusters) error {
	name := p.ConnectorName
	if _, err := ConfirmConnector(ctx, c, p, name, clusters); err != nil {
		return fmt.Errorf("connector %s is not the plan's (reconfigured after apply, or another flow's): resuming it could read other topics or another alias: %w", name, err)
	}
	if err := c.RequireStopped(ctx, name); err != nil {
		return err
	}
	got, action, err := GuardOffsets(ctx, c, p)
	if err != nil {
		return err
	}
	if action != plan.GuardAlreadyApplied {
		want, err := p.ExpectedOffsets()
		if err != nil {
			return err
		}
		return fmt.Errorf("%w: connector %s does not hold all of the plan's offsets yet (%s): run apply first", ErrNotApplied, name, offsets.CompareReadBack(want, got))
	}
	return nil
}

// Resume is step 8 once approved, after CheckResumable and
// CaptureBoundary: it proves the connector is still the plan's and resumes
// it (PUT /connectors/{name}/resume). It does not wait: call
// (*connect.Client).WaitRunning, which returns a *connect.FailedError for a
// connector or task FAILED after the resume (MM2 may have copied records
// by then: no step but the rollback after resume acts on it).
func Resume(ctx context.Context, c *connect.Client, p *plan.Plan, clusters Clusters) error {
	return confirmThen(ctx, c, p, clusters, "the resume", "resume", func() error { return c.Resume(ctx, p.ConnectorName) })
}

// CheckNeverRan is the guard of a rollback before resume: the connector is
// the plan's (ConfirmConnector), STOPPED, and holds no offsets but the
// plan's. A connector RUNNING, PAUSED or FAILED, or holding other offsets,
// has run: the error matches ErrHasRun (and connect.ErrNotStopped or
// plan.ErrStaleOffsets), and the rollback after resume applies. It returns
// the offsets the connector holds, for the record. It writes nothing.
func CheckNeverRan(ctx context.Context, c *connect.Client, p *plan.Plan, clusters Clusters) ([]offsets.ConnectOffset, error) {
	name := p.ConnectorName
	if _, err := ConfirmConnector(ctx, c, p, name, clusters); err != nil {
		return nil, err
	}
	if err := c.RequireStopped(ctx, name); err != nil {
		var nse *connect.NotStoppedError
		if errors.As(err, &nse) && !nse.Settling {
			return nil, fmt.Errorf("%w: connector %s is %s: a rollback before resume needs it STOPPED; roll back after resume: %w", ErrHasRun, name, nse.State, err)
		}
		return nil, err
	}
	got, _, err := GuardOffsets(ctx, c, p)
	if errors.Is(err, plan.ErrStaleOffsets) {
		return nil, fmt.Errorf("%w: connector %s holds offsets the plan did not set; roll back after resume: %w", ErrHasRun, name, err)
	}
	return got, err
}

// RemoveConnector is the rollback before resume, after CheckNeverRan: it
// resets the connector's offsets, then deletes it, proving it is the plan's
// right before each. Deleting alone is not enough: Connect keys offsets by
// connector name and keeps them after the connector is deleted, so the
// next connector of that name would start from them.
func RemoveConnector(ctx context.Context, c *connect.Client, p *plan.Plan, clusters Clusters) error {
	err := confirmThen(ctx, c, p, clusters, "the reset of its offsets", "reset offsets of", func() error {
		_, err := c.ResetOffsets(ctx, p.ConnectorName)
		return err
	})
	if err != nil {
		return err
	}
	return confirmThen(ctx, c, p, clusters, "its delete", "delete", func() error { return c.Delete(ctx, p.ConnectorName) })
}

// GroupReader reads a consumer group's members and commits, as
// *kafkaadmin.Client does.
type GroupReader interface {
	DescribeGroup(ctx context.Context, group string) (kafkaadmin.Group, error)
	GroupOffsets(ctx context.Context, group string, topics []string) (offsets.GroupOffsets, error)
}

// GroupCommitter commits and reads a consumer group's offsets, as
// *kafkaadmin.Client does.
type GroupCommitter interface {
	GroupReader
	CommitOffsets(ctx context.Context, group string, offsets map[kafkaadmin.TopicPartition]int64) error
}

// GuardRollbackGroup reads group's commits for the forward plan's topics
// and decides with [CheckRollbackGroup]: before C' is known (reverse nil)
// and again right before the commit.
func GuardRollbackGroup(ctx context.Context, source GroupReader, forward *plan.Plan, group string, reverse offsets.GroupOffsets) error {
	current, err := source.GroupOffsets(ctx, group, planTopics(forward))
	if err != nil {
		return err
	}
	return CheckRollbackGroup(forward, group, current, reverse)
}

// StopForRollback is the first half of a rollback after resume: it
// refuses, before stopping anything, a group that holds commits nobody
// expects (GuardRollbackGroup, unless the connector is already STOPPED: a
// retried rollback, checked again once C' is known) or that has members
// (kafkaadmin.ErrGroupActive: the old job, or anyone, still consumes); it
// proves the connector is the plan's and stops it (PUT .../stop, which
// makes its tasks commit their last offsets). It does not wait: call
// (*connect.Client).WaitStopped, then SettledMirrorOffsets for M'.
func StopForRollback(ctx context.Context, c *connect.Client, source GroupReader, forward *plan.Plan, group string, clusters Clusters) error {
	name := forward.ConnectorName
	if _, err := ConfirmConnector(ctx, c, forward, name, clusters); err != nil {
		return err
	}
	if st, err := c.Status(ctx, name); err != nil {
		return fmt.Errorf("status of %s: %w", name, err)
	} else if st.Connector.State != connect.StateStopped {
		if err := GuardRollbackGroup(ctx, source, forward, group, nil); err != nil {
			return err
		}
	}
	g, err := source.DescribeGroup(ctx, group)
	if err != nil {
		return err
	}
	if len(g.Members) > 0 {
		return fmt.Errorf("%w: group %s has %d members: stop its consumers before the rollback writes its offsets", kafkaadmin.ErrGroupActive, group, len(g.Members))
	}
	return confirmThen(ctx, c, forward, clusters, "the stop", "stop", func() error { return c.Stop(ctx, name) })
}

// ReverseSpec is what ReversePlan records in the reverse plan beside what
// it reads.
type ReverseSpec struct {
	CreatedAt   time.Time
	ToolVersion string
	// Group is the consumer group the old job restarts from.
	Group string
}

// ReversePlan builds the reverse plan of a rollback after resume, in the
// forward plan's format: per partition C' = M'+1 from got, the stopped
// connector's settled offsets, and the forward plan's C where MM2 stored
// nothing ([plan.Plan.ReverseOffsets]); the source log bounds and target
// end offsets as they are now, the target topics named by the replication
// policy of the connector's live configuration (which it proves is the
// plan's, ConfirmConnector). A reverse plan with a blocked entry is
// returned with an error matching plan.ErrBlocked. It writes nothing.
func ReversePlan(ctx context.Context, c *connect.Client, source BoundsReader, target EndsReader, forward *plan.Plan, got []offsets.ConnectOffset, clusters Clusters, spec ReverseSpec) (*plan.Plan, error) {
	reverse, err := forward.ReverseOffsets(got)
	if err != nil {
		return nil, fmt.Errorf("reverse the offsets of %s: %w", forward.ConnectorName, err)
	}
	live, err := ConfirmConnector(ctx, c, forward, forward.ConnectorName, clusters)
	if err != nil {
		return nil, fmt.Errorf("connector %s after the stop: %w", forward.ConnectorName, err)
	}
	policy, err := offsets.PolicyOf(live)
	if err != nil {
		return nil, err
	}
	var tps []kafkaadmin.TopicPartition
	topics := kafkaadmin.Topics{}
	for _, e := range forward.Entries {
		tps = append(tps, e.Partition)
		topics[e.Partition.Topic] = max(topics[e.Partition.Topic], e.Partition.Partition+1)
	}
	bounds, err := source.LogBounds(ctx, tps)
	if err != nil {
		return nil, fmt.Errorf("source log bounds: %w", err)
	}
	ends, err := TargetEnds(ctx, target, topics, policy)
	if err != nil {
		return nil, err
	}
	rp, err := plan.Build(plan.Spec{
		CreatedAt: spec.CreatedAt, ToolVersion: spec.ToolVersion,
		SourceClusterID: forward.SourceClusterID, TargetClusterID: forward.TargetClusterID,
		ConnectorName: forward.ConnectorName, SourceAlias: forward.SourceAlias, ConnectorConfig: live, GroupID: spec.Group,
	}, plan.Snapshot{Group: reverse, Source: bounds, TargetEnd: ends})
	if err != nil {
		return nil, err
	}
	if err := rp.Blocked(); err != nil {
		return rp, fmt.Errorf("the reverse plan cannot be applied: %w", err)
	}
	return rp, nil
}

// CommitReverse is the last step of a rollback after resume: it guards the
// group again now that C' is known (GuardRollbackGroup), proves the
// connector is still the plan's, commits the reverse plan's offsets to its
// group, and reads them back: each must equal C'. It returns the number of
// partitions committed.
func CommitReverse(ctx context.Context, c *connect.Client, source GroupCommitter, forward, reverse *plan.Plan, clusters Clusters) (int, error) {
	group := reverse.GroupID
	write := offsets.GroupOffsets{}
	for _, e := range reverse.Entries {
		if cPrime, ok := e.GroupOffset.Get(); ok {
			write[e.Partition] = cPrime
		}
	}
	if err := GuardRollbackGroup(ctx, source, forward, group, write); err != nil {
		return 0, err
	}
	err := confirmThen(ctx, c, forward, clusters, "the commit of its offsets to "+group, "commit C' to "+group+" from", func() error {
		return source.CommitOffsets(ctx, group, write)
	})
	if err != nil {
		return 0, err
	}
	after, err := source.GroupOffsets(ctx, group, planTopics(forward))
	if err != nil {
		return 0, err
	}
	for tp, c := range write {
		if have := after.Lookup(tp); have != offsets.NewGroupOffset(c) {
			return 0, fmt.Errorf("%w: group %s: %s reads back %v, want %d", ErrCheckFailed, group, tp, have, c)
		}
	}
	return len(write), nil
}

// confirmThen is the rule every write of a step follows: prove, right
// before it, that the connector is the plan's (ConfirmConnector), then
// write. before names the write in the refusal ("connector X before the
// stop: ..."), verb in the write's error ("stop X: ...").
func confirmThen(ctx context.Context, c *connect.Client, p *plan.Plan, clusters Clusters, before, verb string, write func() error) error {
	if _, err := ConfirmConnector(ctx, c, p, p.ConnectorName, clusters); err != nil {
		return fmt.Errorf("connector %s before %s: %w", p.ConnectorName, before, err)
	}
	if err := write(); err != nil {
		return fmt.Errorf("%s %s: %w", verb, p.ConnectorName, err)
	}
	return nil
}
