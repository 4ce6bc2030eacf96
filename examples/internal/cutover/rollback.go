package cutover

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// ErrHasRun matches a rollback before resume refused because the connector
// is not STOPPED or holds offsets the plan did not set: it has run, so the
// rollback after resume applies (verify.CheckNeverRan).
var ErrHasRun = verify.ErrHasRun

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
	s = s.WithPlan(p)
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
	ids, err := env.clusterIDs(ctx)
	if err != nil {
		return res, err
	}
	got, err := verify.CheckNeverRan(ctx, env.Connect, p, ids)
	if nse := (*connect.NotStoppedError)(nil); errors.As(err, &nse) && nse.Settling {
		return res, notStopped(name, err, "")
	}
	if err != nil {
		return res, err
	}
	res.Intent = fmt.Sprintf("DELETE /connectors/%s/offsets (%d partitions), then DELETE /connectors/%s", name, len(got), name)
	if !approve {
		return res, fmt.Errorf("%w: the rollback before resume of connector %s; approve it with -yes", ErrNotApproved, name)
	}
	if err := audit.Record("rollback-backup", name, p.Fingerprint, map[string]any{"offsets": got}); err != nil {
		return res, err
	}
	if err := verify.RemoveConnector(ctx, env.Connect, p, ids); err != nil {
		return res, err
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
	s = s.WithPlan(forward)
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
	ids, err := env.clusterIDs(ctx)
	if err != nil {
		return res, err
	}
	if err := verify.StopForRollback(ctx, env.Connect, env.Source, forward, group, ids); err != nil {
		return res, err
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
	got, err := env.Connect.SettledMirrorOffsets(ctx, name)
	if err != nil {
		return res, err
	}
	if err := audit.Record("rollback-backup", name, forward.Fingerprint, map[string]any{"offsets": got}); err != nil {
		return res, err
	}
	res.Reverse, err = verify.ReversePlan(ctx, env.Connect, env.Source, env.Target, forward, got, ids,
		verify.ReverseSpec{CreatedAt: time.Now().UTC(), ToolVersion: s.ToolVersion, Group: group})
	if err != nil {
		return res, err
	}
	if err := audit.Record("rollback-plan", name, res.Reverse.Fingerprint, map[string]any{"group": group, "partitions": len(res.Reverse.Entries)}); err != nil {
		return res, err
	}
	res.Committed, err = verify.CommitReverse(ctx, env.Connect, env.Source, forward, res.Reverse, ids)
	if err != nil {
		return res, err
	}
	return res, audit.Record("rollback", name, res.Reverse.Fingerprint, map[string]any{"phase": res.Phase, "group": group, "committed": res.Committed})
}
