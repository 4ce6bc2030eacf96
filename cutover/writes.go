package cutover

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// The writes of a cutover, one function each, for a tool that composes the
// steps itself (a Cutover calls them in their order). Each takes the proof
// of the read that makes it safe (package verify makes them; they cannot
// be made by hand), proves right before it writes that the connector is
// the plan's on the plan's clusters (verify.ConfirmConnector), and writes
// nothing when that fails. The raw writes of connect.Client (Create,
// AlterMirrorOffsets, Resume, Stop, ResetOffsets, Delete) stay as an escape
// hatch without any of these guards.

// ErrWorkerLags matches a connector that the worker asked does not show
// yet after it was created (a worker that forwarded the create to the
// leader and has not read the new configuration): worth a retry, which
// adopts the connector.
var ErrWorkerLags = errkind.New(errkind.Retry, "cutover: the worker does not show the connector it created yet")

// CreateOrAdopt is step 3: it makes sure the plan's connector exists with
// the plan's configuration, created STOPPED so that it never runs before
// its offsets are set. config is the configuration to create it with (with
// "name"); it must be the one the plan was built for (a
// *plan.ConfigChangedError otherwise, nothing written). A connector that
// does not exist is created STOPPED (connect.InitialStopped) and created
// is true, also when the worker asked still does not show it once
// (*connect.Client).WaitKnown gives up (then with an error matching
// ErrWorkerLags). One that exists is adopted only when it is the plan's
// (verify.ConfirmConnector: a *verify.ForeignConnectorError otherwise,
// never written).
//
// Then call (*connect.Client).RequireStopped: a connector just created has
// no status for a moment, and one adopted may be RUNNING, PAUSED or FAILED,
// which a cutover never changes the state of.
func CreateOrAdopt(ctx context.Context, c *connect.Client, p *plan.Plan, config map[string]string, reached verify.Reached) (created bool, err error) {
	return createOrAdopt(ctx, c, p, config, reached, nil)
}

// createOrAdopt is CreateOrAdopt; with seen (Apply's look at the
// connector, read while its recheck ran) it takes whether the connector
// exists and its configuration from it instead of reading them again.
func createOrAdopt(ctx context.Context, c *connect.Client, p *plan.Plan, config map[string]string, reached verify.Reached, seen *connectorLook) (created bool, err error) {
	if err := p.CheckConfig(config); err != nil {
		return false, fmt.Errorf("the configuration to create connector %s with: %w", p.ConnectorName, err)
	}
	if !reached.Proven() {
		return false, fmt.Errorf("%w: the clusters the step reaches were not read", verify.ErrNoProof)
	}
	if reached.Source() != p.SourceClusterID || reached.Target() != p.TargetClusterID {
		_, err := verify.ConfirmConnector(ctx, nopConfig{}, p, p.ConnectorName, reached)
		return false, err
	}
	name := p.ConnectorName
	var configs verify.ConnectorConfigReader = c
	if seen != nil {
		err, configs = seen.err, seenConfig(seen.config)
		if err == nil && !seen.exists {
			err = connect.ErrNotFound
		}
	} else {
		_, err = c.Connector(ctx, name)
	}
	switch {
	case errors.Is(err, connect.ErrNotFound):
		if _, err := c.Create(ctx, name, p.WithClaim(config), connect.InitialStopped); err != nil {
			return false, fmt.Errorf("create connector %s: %w", name, err)
		}
		// The steps after this one read the connector's configuration
		// through the same worker, which may not know it yet when it
		// forwarded the create to the leader.
		if _, err := c.WaitKnown(ctx, name); err != nil {
			return true, fmt.Errorf("%w: connector %s: %w", ErrWorkerLags, name, err)
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("connector %s: %w", name, err)
	}
	cfg, err := verify.ConfirmConnector(ctx, configs, p, name, reached)
	if err == nil {
		err = verify.CheckClaim(p, name, cfg)
	}
	if err != nil {
		return false, fmt.Errorf("connector %s exists and is not the plan's (another flow's, another plan's, or changed since): %w", name, err)
	}
	return false, nil
}

// seenConfig answers a connector's configuration as read before.
type seenConfig map[string]string

func (s seenConfig) Config(context.Context, string) (map[string]string, error) {
	return s, nil
}

// nopConfig answers any connector's configuration as empty, so that
// ConfirmConnector reports a plan built on other clusters before anything
// is read or written.
type nopConfig struct{}

func (nopConfig) Config(context.Context, string) (map[string]string, error) {
	return map[string]string{}, nil
}

// Patch is step 6: after verify.GuardOffsets decided plan.GuardApply, it
// proves the connector is still the plan's and sends the plan's offsets in
// one PATCH ((*connect.Client).AlterMirrorOffsets: STOPPED guard, retries
// on transient errors). It returns the number of partitions sent: 0 when
// the guard found the plan applied already. A Guarded no read made is
// refused (verify.ErrNoProof). An error matching connect.ErrOutcomeUnknown
// means the PATCH may have been applied: run the apply again, whose guard
// finds the offsets applied or applies them.
//
// For an exactly-once connector with an offsets topic of its own
// (exactly.once.support=required and offsets.storage.topic), the PATCH
// leaves out the deletions (null offsets, for partitions with C = 0) of
// partitions the guard found without an offset, which are no-ops:
// Kafka Connect 3.8 to 4.3 cannot write a null offset for such a
// connector. Its Worker commits the PATCH's transaction right after it
// hands the offsets over, while ConnectorOffsetBackingStore writes the
// workers' topic first and the connector's own only once that write
// completes (KAFKA-15018), by then outside any transaction ("Cannot add
// partition ... to transaction while in state READY"): the PATCH never
// answers. With no null left the PATCH holds only what the plan sets; a
// plan of nothing but deletions sends none.
func Patch(ctx context.Context, c *connect.Client, g verify.Guarded, reached verify.Reached) (int, error) {
	p := g.Plan()
	if p == nil {
		return 0, fmt.Errorf("%w: the guard of the connector's offsets did not run", verify.ErrNoProof)
	}
	if g.Action() != plan.GuardApply {
		return 0, nil
	}
	patch, err := p.ConnectOffsets()
	if err != nil {
		return 0, err
	}
	patch = withoutNoopDeletions(p.ConnectorConfig, patch, g.Backup())
	if len(patch) == 0 {
		return 0, nil
	}
	err = confirmClaimThen(ctx, c, p, reached, "the PATCH", "alter offsets of", func() error {
		_, err := c.AlterMirrorOffsets(ctx, p.ConnectorName, patch)
		return err
	})
	if err != nil {
		return 0, err
	}
	return len(patch), nil
}

// withoutNoopDeletions drops, for an exactly-once connector with an
// offsets topic of its own, the null entries of patch whose partitions
// hold no offset in backup (see Patch). Any other patch is returned as it
// is.
func withoutNoopDeletions(config map[string]string, patch, backup []offsets.ConnectOffset) []offsets.ConnectOffset {
	if !connect.ExactlyOnceOf(config) || connect.OffsetsTopicOf(config, "") == "" {
		return patch
	}
	held := make(map[offsets.ConnectPartition]bool, len(backup))
	for _, o := range backup {
		held[o.Partition] = true
	}
	return slices.DeleteFunc(slices.Clone(patch), func(o offsets.ConnectOffset) bool { return !o.Offset.Present() && !held[o.Partition] })
}

// Resume is step 8 once approved, after verify.CheckResumable (whose
// proof it takes) and verify.CaptureBoundary: it proves the connector is
// still the plan's and resumes it (PUT /connectors/{name}/resume). It does
// not wait: call (*connect.Client).WaitRunning, which returns a
// *connect.FailedError for a connector or task FAILED after the resume.
func Resume(ctx context.Context, c *connect.Client, r verify.Resumable, reached verify.Reached) error {
	p := r.Plan()
	if p == nil {
		return fmt.Errorf("%w: the connector was not proven resumable", verify.ErrNoProof)
	}
	return confirmClaimThen(ctx, c, p, reached, "the resume", "resume", func() error { return c.Resume(ctx, p.ConnectorName) })
}

// RemoveConnector is the rollback before resume, after verify.CheckNeverRan
// (whose proof it takes): it resets the connector's offsets, then deletes
// it, proving it is the plan's right before each. Deleting alone is not
// enough: Connect keys offsets by connector name and keeps them after the
// connector is deleted, so the next connector of that name would start
// from them.
func RemoveConnector(ctx context.Context, c *connect.Client, n verify.NeverRan, reached verify.Reached) error {
	p := n.Plan()
	if p == nil {
		return fmt.Errorf("%w: the connector was not proven never to have run", verify.ErrNoProof)
	}
	err := confirmThen(ctx, c, p, reached, "the reset of its offsets", "reset offsets of", func() error {
		_, err := c.ResetOffsets(ctx, p.ConnectorName)
		return err
	})
	if err != nil {
		return err
	}
	return confirmThen(ctx, c, p, reached, "its delete", "delete", func() error { return c.Delete(ctx, p.ConnectorName) })
}

// StopForRollback is the first half of a rollback after resume: it
// refuses, before stopping anything, a group that holds commits nobody
// expects (verify.GuardRollbackGroup, unless the connector is already
// STOPPED: a retried rollback, checked again once C' is known) or that has
// members (kafkaadmin.ErrGroupActive: the old job, or anyone, still
// consumes); it proves the connector is the plan's and stops it (PUT
// .../stop, which makes its tasks commit their last offsets). It does not
// wait: call (*connect.Client).WaitStopped, then SettledMirrorOffsets for
// M'.
func StopForRollback(ctx context.Context, c *connect.Client, source verify.GroupReader, forward *plan.Plan, group string, reached verify.Reached) error {
	name := forward.ConnectorName
	if _, err := verify.ConfirmConnector(ctx, c, forward, name, reached); err != nil {
		return err
	}
	if st, err := c.Status(ctx, name); err != nil {
		return fmt.Errorf("status of %s: %w", name, err)
	} else if st.Connector.State != connect.StateStopped {
		if err := verify.GuardRollbackGroup(ctx, source, forward, group, nil); err != nil {
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
	return confirmThen(ctx, c, forward, reached, "the stop", "stop", func() error { return c.Stop(ctx, name) })
}

// SourceCommitter is the source cluster a rollback after resume commits
// C' to, as *kafkaadmin.Client is: CommitReverse reads its cluster ID to
// prove it is the plan's source before it commits.
type SourceCommitter interface {
	verify.GroupCommitter
	ClusterID(ctx context.Context) (string, error)
}

// CommitReverse is the last step of a rollback after resume, with the
// reverse plan of verify.ReversePlan: it proves source is the plan's
// source cluster (its cluster ID, read now), guards the group again now
// that C' is known (verify.GuardRollbackGroup), proves the connector is
// still the plan's, commits the reverse plan's offsets to its group, and
// reads them back: each must equal C'. It returns the number of partitions
// committed.
func CommitReverse(ctx context.Context, c *connect.Client, source SourceCommitter, rev *verify.Reverse, reached verify.Reached) (int, error) {
	if rev == nil || rev.Plan() == nil {
		return 0, fmt.Errorf("%w: no reverse plan", verify.ErrNoProof)
	}
	forward, reverse := rev.Forward(), rev.Plan()
	id, err := source.ClusterID(ctx)
	if err != nil {
		return 0, fmt.Errorf("source cluster: %w", err)
	}
	if id != forward.SourceClusterID {
		return 0, &verify.ForeignConnectorError{Connector: forward.ConnectorName, Check: "source-cluster", Plan: forward.SourceClusterID, Have: id}
	}
	group := reverse.GroupID
	write := offsets.GroupOffsets{}
	for _, e := range reverse.Entries {
		if cPrime, ok := e.GroupOffset.Get(); ok {
			write[e.Partition] = cPrime
		}
	}
	if err := verify.GuardRollbackGroup(ctx, source, forward, group, write); err != nil {
		return 0, err
	}
	err = confirmThen(ctx, c, forward, reached, "the commit of its offsets to "+group, "commit C' to "+group+" from", func() error {
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
			return 0, fmt.Errorf("%w: group %s: %s reads back %v, want %d", verify.ErrCheckFailed, group, tp, have, c)
		}
	}
	return len(write), nil
}

// confirmThen is the rule every write follows: prove, right before it,
// that the connector is the plan's (verify.ConfirmConnector), then write.
// before names the write in the refusal ("connector X before the stop:
// ..."), verb in the write's error ("stop X: ...").
func confirmThen(ctx context.Context, c *connect.Client, p *plan.Plan, reached verify.Reached, before, verb string, write func() error) error {
	if _, err := verify.ConfirmConnector(ctx, c, p, p.ConnectorName, reached); err != nil {
		return fmt.Errorf("connector %s before %s: %w", p.ConnectorName, before, err)
	}
	if err := write(); err != nil {
		return fmt.Errorf("%s %s: %w", verb, p.ConnectorName, err)
	}
	return nil
}

// confirmClaimThen is confirmThen for the writes only the plan whose apply
// created the connector may make (the PATCH, the resume): the connector's
// configuration must also carry no other plan's claim (verify.CheckClaim).
// The rollback's writes do not ask it: a connector that never ran is
// removed, and one that ran is stopped, whichever plan created it.
func confirmClaimThen(ctx context.Context, c *connect.Client, p *plan.Plan, reached verify.Reached, before, verb string, write func() error) error {
	cfg, err := verify.ConfirmConnector(ctx, c, p, p.ConnectorName, reached)
	if err == nil {
		err = verify.CheckClaim(p, p.ConnectorName, cfg)
	}
	if err != nil {
		return fmt.Errorf("connector %s before %s: %w", p.ConnectorName, before, err)
	}
	if err := write(); err != nil {
		return fmt.Errorf("%s %s: %w", verb, p.ConnectorName, err)
	}
	return nil
}

// planTopics returns the plan's source topics in plan order (sorted).
func planTopics(p *plan.Plan) []string {
	var topics []string
	for _, e := range p.Entries {
		if len(topics) == 0 || topics[len(topics)-1] != e.Partition.Topic {
			topics = append(topics, e.Partition.Topic)
		}
	}
	return topics
}
