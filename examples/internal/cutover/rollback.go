package cutover

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// ErrHasRun matches a rollback before resume refused because the connector
// is not STOPPED or holds offsets the plan did not set: it has run, so the
// rollback after resume applies.
var ErrHasRun = errors.New("the connector has run")

// RollbackResult is what a rollback did.
type RollbackResult struct {
	Connector string `json:"connector"`
	// Phase is "before-resume" (the connector never ran: it and its offsets
	// were deleted) or "after-resume" (MM2 ran: the group received C').
	Phase string `json:"phase"`
	// Reverse is the reverse plan of an after-resume rollback: per
	// partition, C' = M'+1 from the connector's offsets.
	Reverse *plan.Plan `json:"-"`
	// Group received Reverse's offsets; Committed is how many.
	Group     string `json:"group,omitempty"`
	Committed int    `json:"committed"`
	Intent    string `json:"intent"`
}

// RollbackBeforeResume removes a connector that never ran: it resets the
// connector's offsets, then deletes it. Deleting alone is not enough:
// Connect keys offsets by connector name and keeps them after the connector
// is deleted, so the next connector of that name would start from them.
// It refuses a plan for other settings or clusters (ErrPlanMismatch), a
// connector that is not the plan's (*verify.ForeignConnectorError: another
// flow's connector of the same name is never reset or deleted), a connector
// that is not STOPPED, and one whose offsets are not the plan's (ErrHasRun:
// it has run, use RollbackAfterResume); it proves the connector is the
// plan's again right before the reset and before the delete. Every refusal
// but ErrHasRun is recorded in the audit. Without approve it only returns
// what it would do, and an error matching ErrNotApproved.
func RollbackBeforeResume(ctx context.Context, env *Env, s Settings, p *plan.Plan, approve bool, audit *Audit) (_ *RollbackResult, err error) {
	s = s.WithDefaults()
	name := s.Connector
	res := &RollbackResult{Connector: name, Phase: "before-resume"}
	defer func() {
		if !errors.Is(err, ErrHasRun) { // the rollback after resume takes over: not a refusal of the rollback
			err = audit.refused("rollback", name, p.Fingerprint, err)
		}
	}()
	if err := CheckScope(ctx, env, s, p); err != nil {
		return res, err
	}
	if _, err := confirm(ctx, env, p, name); err != nil {
		return res, err
	}
	if state, err := requireStopped(ctx, env, name); err != nil {
		if errors.Is(err, connect.ErrNotStopped) {
			return res, fmt.Errorf("%w: connector %s is %s: a rollback before resume needs it STOPPED; roll back after resume: %w", ErrHasRun, name, state, err)
		}
		return res, notStopped(name, state, err, "")
	}
	got, err := env.Connect.MirrorOffsets(ctx, name)
	if err != nil {
		return res, err
	}
	if _, err := p.Guard(got); err != nil {
		return res, fmt.Errorf("%w: connector %s holds offsets the plan did not set; roll back after resume: %w", ErrHasRun, name, err)
	}
	res.Intent = fmt.Sprintf("DELETE /connectors/%s/offsets (%d partitions), then DELETE /connectors/%s", name, len(got), name)
	if !approve {
		return res, fmt.Errorf("%w: the rollback before resume of connector %s; approve it with -yes", ErrNotApproved, name)
	}
	if err := audit.Record("rollback-backup", name, p.Fingerprint, map[string]any{"offsets": got}); err != nil {
		return res, err
	}
	if _, err := confirm(ctx, env, p, name); err != nil {
		return res, fmt.Errorf("connector %s before the reset of its offsets: %w", name, err)
	}
	if _, err := env.Connect.ResetOffsets(ctx, name); err != nil {
		return res, fmt.Errorf("reset offsets of %s: %w", name, err)
	}
	if _, err := confirm(ctx, env, p, name); err != nil {
		return res, fmt.Errorf("connector %s before its delete: %w", name, err)
	}
	if err := env.Connect.Delete(ctx, name); err != nil {
		return res, fmt.Errorf("delete %s: %w", name, err)
	}
	return res, audit.Record("rollback", name, p.Fingerprint, map[string]any{"phase": res.Phase})
}

// RollbackAfterResume hands replication back to the old job after MM2 ran:
// it stops the connector (which commits its offsets), reads its offsets M',
// builds the reverse plan C' = M'+1 — a partition where MM2 stored nothing
// keeps the forward plan's C — and writes it to group, with the same plan
// format, guard and audit as the forward direction:
//
//   - the group must have no members (kafkaadmin refuses otherwise);
//   - each partition's current commit must be absent, the forward plan's C
//     (the old job's, untouched since), or already C' (a retried rollback);
//     anything else is a *verify.GroupOffsetsError and nothing is written;
//   - after the commit, the group's offsets are read back and must equal C'.
//
// The connector must be the plan's (*verify.ForeignConnectorError
// otherwise: another flow's connector of the same name is never stopped,
// and its offsets never reach the group); that is proved before anything
// is said or done, and again right before the stop and before the commit.
// Every refusal is recorded in the audit. Without approve it stops nothing
// and returns the intent and an error matching ErrNotApproved. The
// connector stays STOPPED; delete it (and its offsets) once the old job
// runs again.
func RollbackAfterResume(ctx context.Context, env *Env, s Settings, forward *plan.Plan, group string, approve bool, audit *Audit) (_ *RollbackResult, err error) {
	s = s.WithDefaults()
	name := s.Connector
	res := &RollbackResult{Connector: name, Phase: "after-resume", Group: group}
	defer func() { err = audit.refused("rollback", name, forward.Fingerprint, err) }()
	if group == "" {
		return res, fmt.Errorf("%w: a rollback after resume needs the consumer group the old job restarts from", ErrSettings)
	}
	if err := forward.Validate(); err != nil {
		return res, err
	}
	if err := CheckScope(ctx, env, s, forward); err != nil {
		return res, err
	}
	if _, err := confirm(ctx, env, forward, name); err != nil {
		return res, err
	}
	res.Intent = fmt.Sprintf("PUT /connectors/%s/stop, read its offsets M', commit C' = M'+1 to group %s for %d partitions", name, group, len(forward.Entries))
	if !approve {
		return res, fmt.Errorf("%w: the rollback after resume of connector %s to group %s; approve it with -yes", ErrNotApproved, name, group)
	}
	topics := planTopics(forward)
	// Refuse before stopping anything when the group holds commits nobody
	// expects: neither absent nor the old job's. A retried rollback (the
	// connector already STOPPED) is checked after C' is known, below.
	if st, err := env.Connect.Status(ctx, name); err != nil {
		return res, fmt.Errorf("status of %s: %w", name, err)
	} else if st.Connector.State != connect.StateStopped {
		if err := guardGroup(ctx, env, forward, group, topics, nil); err != nil {
			return res, err
		}
	}
	g, err := env.Source.DescribeGroup(ctx, group)
	if err != nil {
		return res, err
	}
	if len(g.Members) > 0 {
		return res, fmt.Errorf("%w: group %s has %d members: stop its consumers before the rollback writes its offsets", kafkaadmin.ErrGroupActive, group, len(g.Members))
	}
	if _, err := confirm(ctx, env, forward, name); err != nil {
		return res, fmt.Errorf("connector %s before the stop: %w", name, err)
	}
	if err := env.Connect.Stop(ctx, name); err != nil {
		return res, fmt.Errorf("stop %s: %w", name, err)
	}
	stopCtx, cancel := context.WithTimeout(ctx, s.RunningTimeout)
	_, err = env.Connect.WaitStopped(stopCtx, name)
	cancel()
	if err != nil {
		return res, fmt.Errorf("connector %s did not stop: %w", name, err)
	}
	if err := audit.Record("rollback-stop", name, forward.Fingerprint, nil); err != nil {
		return res, err
	}
	// The stopped tasks committed their last offsets; GET is eventually
	// consistent, so read until two reads a second apart agree.
	got, err := settledOffsets(ctx, env, name)
	if err != nil {
		return res, err
	}
	if err := audit.Record("rollback-backup", name, forward.Fingerprint, map[string]any{"offsets": got}); err != nil {
		return res, err
	}
	reverse, err := offsets.Reverse(forward.SourceAlias, got)
	if err != nil {
		return res, fmt.Errorf("reverse the offsets of %s: %w", name, err)
	}
	for _, e := range forward.Entries {
		if _, ok := reverse[e.Partition]; !ok {
			if c, ok := e.GroupOffset.Get(); ok {
				reverse[e.Partition] = c // MM2 replicated nothing there
			}
		}
	}

	// The reverse plan, in the forward plan's format, for the connector's
	// live configuration.
	srcBounds, ends, err := bounds(ctx, env, s, forward)
	if err != nil {
		return res, err
	}
	live, err := confirm(ctx, env, forward, name)
	if err != nil {
		return res, fmt.Errorf("connector %s after the stop: %w", name, err)
	}
	res.Reverse, err = plan.Build(plan.Spec{
		CreatedAt: time.Now().UTC(), ToolVersion: s.ToolVersion,
		SourceClusterID: forward.SourceClusterID, TargetClusterID: forward.TargetClusterID,
		ConnectorName: s.Connector, SourceAlias: s.SourceAlias, ConnectorConfig: live, GroupID: group,
	}, plan.Snapshot{Group: reverse, Source: srcBounds, TargetEnd: ends})
	if err != nil {
		return res, err
	}
	if err := res.Reverse.Blocked(); err != nil {
		return res, fmt.Errorf("the reverse plan cannot be applied: %w", err)
	}
	if err := audit.Record("rollback-plan", name, res.Reverse.Fingerprint, map[string]any{"group": group, "partitions": len(res.Reverse.Entries)}); err != nil {
		return res, err
	}

	// Guard the group again, now that C' is known; commit; read back.
	write := offsets.GroupOffsets{}
	for _, e := range res.Reverse.Entries {
		cPrime, _ := e.GroupOffset.Get()
		write[e.Partition] = cPrime
	}
	if err := guardGroup(ctx, env, forward, group, topics, write); err != nil {
		return res, err
	}
	if _, err := confirm(ctx, env, forward, name); err != nil {
		return res, fmt.Errorf("connector %s before the commit of its offsets to %s: %w", name, group, err)
	}
	if err := env.Source.CommitOffsets(ctx, group, write); err != nil {
		return res, fmt.Errorf("commit C' to %s: %w", group, err)
	}
	after, err := env.Source.GroupOffsets(ctx, group, topics)
	if err != nil {
		return res, err
	}
	for tp, c := range write {
		if have := after.Lookup(tp); have != offsets.NewGroupOffset(c) {
			return res, fmt.Errorf("group %s: %s reads back %v, want %d", group, tp, have, c)
		}
	}
	res.Committed = len(write)
	return res, audit.Record("rollback", name, res.Reverse.Fingerprint, map[string]any{"phase": res.Phase, "group": group, "committed": res.Committed})
}

// guardGroup reads the group's commits and refuses, with a
// *verify.GroupOffsetsError, commits that are neither the old job's nor the
// reverse plan's (verify.CheckRollbackGroup).
func guardGroup(ctx context.Context, env *Env, forward *plan.Plan, group string, topics []string, reverse offsets.GroupOffsets) error {
	current, err := env.Source.GroupOffsets(ctx, group, topics)
	if err != nil {
		return err
	}
	return verify.CheckRollbackGroup(forward, group, current, reverse)
}

// settledOffsets reads the connector's offsets until two reads a second
// apart agree.
func settledOffsets(ctx context.Context, env *Env, name string) ([]offsets.ConnectOffset, error) {
	prev, err := env.Connect.MirrorOffsets(ctx, name)
	if err != nil {
		return nil, err
	}
	for range 30 {
		t := time.NewTimer(time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		cur, err := env.Connect.MirrorOffsets(ctx, name)
		if err != nil {
			return nil, err
		}
		if offsets.CompareReadBack(prev, cur).OK() {
			return cur, nil
		}
		prev = cur
	}
	return nil, fmt.Errorf("the offsets of %s kept changing after it stopped", name)
}

// bounds reads the source log bounds and the target end offsets of the
// forward plan's partitions now.
func bounds(ctx context.Context, env *Env, s Settings, forward *plan.Plan) (map[offsets.SourcePartition]offsets.LogBounds, map[offsets.SourcePartition]int64, error) {
	var tps []kafkaadmin.TopicPartition
	topics := kafkaadmin.Topics{}
	for _, e := range forward.Entries {
		tps = append(tps, e.Partition)
		topics[e.Partition.Topic] = max(topics[e.Partition.Topic], e.Partition.Partition+1)
	}
	b, err := env.Source.LogBounds(ctx, tps)
	if err != nil {
		return nil, nil, fmt.Errorf("source log bounds: %w", err)
	}
	ends, err := verify.TargetEnds(ctx, env.Target, topics, s.ReplicationPolicy())
	return b, ends, err
}
