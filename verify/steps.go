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

// The reads that prove each write of a cutover safe (the design's steps 3
// to 10), each returning a proof that the write of package cutover takes:
//
//	Prepare, ReadClusters   Reached: the clusters the clients reach
//	GuardOffsets            Guarded: the connector's offsets and the guard's decision
//	ReadBack                the read-back after the PATCH
//	CheckResumable          Resumable: STOPPED, holding exactly the plan's offsets
//	CheckNeverRan           NeverRan: STOPPED, holding no offsets but the plan's
//	GuardRollbackGroup      the group of a rollback holds nothing unexpected
//	ReversePlan             *Reverse: C' = M'+1 from the stopped connector
//
// None of them writes.

// ErrNotApplied matches a resume refused by CheckResumable because the
// connector does not hold all of the plan's offsets yet: run the apply
// first.
var ErrNotApplied = errkind.New(errkind.Refused, "verify: the plan is not applied yet")

// ErrHasRun matches a rollback before resume refused by CheckNeverRan: the
// connector is not STOPPED, or holds offsets the plan did not set, so it
// has run, and the rollback after resume applies.
var ErrHasRun = errkind.New(errkind.Refused, "verify: the connector has run")

// GuardOffsets is steps 4 and 5: it reads the connector's offsets — the
// backup a tool records before it writes — and decides with
// [plan.Plan.Guard]: plan.GuardApply when it holds none of the plan's
// offsets (or only some, set to the plan's values), plan.GuardAlreadyApplied
// when it holds exactly the plan's (a retried apply: nothing to write), or a
// *plan.StaleOffsetsError when it holds others: it ran, or another plan
// was applied, and must not be written over. The proof it returns is what
// the PATCH takes. It writes nothing.
func GuardOffsets(ctx context.Context, c MirrorOffsetsReader, p *plan.Plan) (Guarded, error) {
	backup, err := c.MirrorOffsets(ctx, p.ConnectorName)
	if err != nil {
		return Guarded{}, fmt.Errorf("read offsets of %s: %w", p.ConnectorName, err)
	}
	action, err := p.Guard(backup)
	return Guarded{plan: p, backup: backup, action: action}, err
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
// the connector is the plan's on the clusters reached (ConfirmConnector),
// STOPPED with no tasks ((*connect.Client).RequireStopped) and holds
// exactly the plan's offsets (an error matching ErrNotApplied when some are
// missing, a *plan.StaleOffsetsError when it holds others: a stale plan, or
// a connector that ran). The proof it returns is what the resume takes. It
// writes nothing.
func CheckResumable(ctx context.Context, c *connect.Client, p *plan.Plan, reached Reached) (Resumable, error) {
	name := p.ConnectorName
	if _, err := ConfirmConnector(ctx, c, p, name, reached); err != nil {
		return Resumable{}, fmt.Errorf("connector %s is not the plan's (reconfigured after apply, or another flow's): resuming it could read other topics or another alias: %w", name, err)
	}
	if err := c.RequireStopped(ctx, name); err != nil {
		return Resumable{}, err
	}
	g, err := GuardOffsets(ctx, c, p)
	if err != nil {
		return Resumable{}, err
	}
	if g.action != plan.GuardAlreadyApplied {
		want, err := p.ExpectedOffsets()
		if err != nil {
			return Resumable{}, err
		}
		return Resumable{}, fmt.Errorf("%w: connector %s does not hold all of the plan's offsets yet (%s): run apply first", ErrNotApplied, name, offsets.CompareReadBack(want, g.backup))
	}
	return Resumable{plan: p}, nil
}

// CheckNeverRan is the guard of a rollback before resume: the connector is
// the plan's (ConfirmConnector), STOPPED, and holds no offsets but the
// plan's. A connector RUNNING, PAUSED or FAILED, or holding other offsets,
// has run: the error matches ErrHasRun (and connect.ErrNotStopped or
// plan.ErrStaleOffsets), and the rollback after resume applies. The proof
// it returns holds the offsets the connector holds, for the record, and is
// what the rollback before resume takes. It writes nothing.
func CheckNeverRan(ctx context.Context, c *connect.Client, p *plan.Plan, reached Reached) (NeverRan, error) {
	name := p.ConnectorName
	if _, err := ConfirmConnector(ctx, c, p, name, reached); err != nil {
		return NeverRan{}, err
	}
	if err := c.RequireStopped(ctx, name); err != nil {
		var nse *connect.NotStoppedError
		if errors.As(err, &nse) && !nse.Settling {
			return NeverRan{}, fmt.Errorf("%w: connector %s is %s: a rollback before resume needs it STOPPED; roll back after resume: %w", ErrHasRun, name, nse.State, err)
		}
		return NeverRan{}, err
	}
	g, err := GuardOffsets(ctx, c, p)
	if errors.Is(err, plan.ErrStaleOffsets) {
		return NeverRan{}, fmt.Errorf("%w: connector %s holds offsets the plan did not set; roll back after resume: %w", ErrHasRun, name, err)
	}
	if err != nil {
		return NeverRan{}, err
	}
	return NeverRan{plan: p, offsets: g.backup}, nil
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
func ReversePlan(ctx context.Context, c *connect.Client, source BoundsReader, target EndsReader, forward *plan.Plan, got []offsets.ConnectOffset, reached Reached, spec ReverseSpec) (*Reverse, error) {
	reverse, err := forward.ReverseOffsets(got)
	if err != nil {
		return nil, fmt.Errorf("reverse the offsets of %s: %w", forward.ConnectorName, err)
	}
	live, err := ConfirmConnector(ctx, c, forward, forward.ConnectorName, reached)
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
	rev := &Reverse{forward: forward, reverse: rp}
	if err := rp.Blocked(); err != nil {
		return rev, fmt.Errorf("the reverse plan cannot be applied: %w", err)
	}
	return rev, nil
}
