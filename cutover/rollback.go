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

// RollbackResult is what a rollback would do, or did.
type RollbackResult struct {
	Connector string `json:"connector"`
	// Phase is "before-resume" (the connector never ran: it and its
	// offsets are removed) or "after-resume" (MM2 ran: the group receives
	// C').
	Phase  string `json:"phase"`
	Intent Intent `json:"intent"`
	// Reverse is the reverse plan of a rollback after resume: per
	// partition, C' = M'+1 from the connector's offsets.
	Reverse *verify.Reverse `json:"-"`
	// Group received Reverse's offsets; Committed is how many.
	Group     string `json:"group,omitempty"`
	Committed int    `json:"committed"`
}

// ErrNeedsGroup matches a rollback of a connector that has run, asked
// without the consumer group the old job restarts from.
var ErrNeedsGroup = fmt.Errorf("%w: the connector has run: a rollback after resume needs the consumer group the old job restarts from", verify.ErrHasRun)

// Rollback hands replication back to the old job, in the phase the
// connector is in.
//
// Before resume — the connector is the plan's, STOPPED, and holds no
// offsets but the plan's (verify.CheckNeverRan) — it resets the
// connector's offsets and deletes it (RemoveConnector): Connect keeps a
// deleted connector's offsets under its name, so deleting alone would
// leave them to the next connector of that name. group is not used.
//
// After resume — the connector has run — it writes C' = M'+1 to group, the
// consumer group the old job restarts from (an empty group is refused with
// an error matching ErrNeedsGroup): it refuses a group with members or
// with commits nobody expects (verify.GuardRollbackGroup), stops the
// connector (its tasks commit their last offsets), reads its settled
// offsets M', builds the reverse plan (verify.ReversePlan; a partition
// where MM2 stored nothing keeps the forward plan's C), commits it to the
// group and reads the group back. The connector stays STOPPED: delete it
// (and its offsets) once the old job runs again.
//
// Both phases ask Options.Approve with what they would do before their
// first write, and prove before each write that the connector is the
// plan's (another flow's connector of the same name is never stopped,
// reset or deleted, and its offsets never reach the group). Every refusal
// is recorded.
func (c *Cutover) Rollback(ctx context.Context, group string) (_ *RollbackResult, err error) {
	p := c.plan
	name := p.ConnectorName
	res := &RollbackResult{Connector: name}
	defer func() { err = c.refused(ctx, "rollback", err) }()
	reached := c.clusters()
	never, err := verify.CheckNeverRan(ctx, c.clients.Connect, p, reached)
	if nse := (*connect.NotStoppedError)(nil); errors.As(err, &nse) && nse.Settling {
		return res, NotStopped(name, err, "")
	}
	switch {
	case err == nil:
		return c.rollbackBeforeResume(ctx, res, never, reached)
	case !errors.Is(err, verify.ErrHasRun):
		return res, err
	case group == "":
		return res, fmt.Errorf("%w (%w)", ErrNeedsGroup, err)
	}
	return c.rollbackAfterResume(ctx, res, group, reached)
}

func (c *Cutover) rollbackBeforeResume(ctx context.Context, res *RollbackResult, never verify.NeverRan, reached verify.Reached) (*RollbackResult, error) {
	p, name := c.plan, c.plan.ConnectorName
	res.Phase = "before-resume"
	res.Intent = Intent{Step: "rollback-before-resume", Connector: name, Fingerprint: p.Fingerprint, Partitions: len(never.Offsets()),
		Action: fmt.Sprintf("DELETE /connectors/%s/offsets (%d partitions), then DELETE /connectors/%s", name, len(never.Offsets()), name)}
	if err := c.approve(ctx, res.Intent); err != nil {
		return res, err
	}
	if err := c.record(ctx, Event{Step: "rollback-backup", Detail: map[string]any{"offsets": never.Offsets()}}); err != nil {
		return res, err
	}
	err := c.write(ctx, "delete", map[string]any{"phase": res.Phase, "requests": res.Intent.Action}, func() error {
		return RemoveConnector(ctx, c.clients.Connect, never, reached)
	})
	if err != nil {
		return res, err
	}
	return res, c.record(ctx, Event{Step: "rollback", Detail: map[string]any{"phase": res.Phase}})
}

func (c *Cutover) rollbackAfterResume(ctx context.Context, res *RollbackResult, group string, reached verify.Reached) (*RollbackResult, error) {
	forward, name := c.plan, c.plan.ConnectorName
	res.Phase, res.Group = "after-resume", group
	res.Intent = Intent{Step: "rollback-after-resume", Connector: name, Fingerprint: forward.Fingerprint, Partitions: len(forward.Entries), Group: group,
		Action: fmt.Sprintf("PUT /connectors/%s/stop, read its offsets M', commit C' = M'+1 to group %s for %d partitions", name, group, len(forward.Entries))}
	if _, err := verify.ConfirmConnector(ctx, c.clients.Connect, forward, name, reached); err != nil {
		return res, err
	}
	if err := c.approve(ctx, res.Intent); err != nil {
		return res, err
	}
	err := c.write(ctx, "stop", map[string]any{"phase": res.Phase, "group": group}, func() error {
		return StopForRollback(ctx, c.clients.Connect, c.clients.Source, forward, group, reached)
	})
	if err != nil {
		return res, err
	}
	stopCtx, cancel := context.WithTimeout(ctx, c.opts.RunningTimeout)
	_, err = c.clients.Connect.WaitStopped(stopCtx, name)
	cancel()
	if err != nil {
		return res, fmt.Errorf("connector %s did not stop: %w", name, err)
	}
	// The stopped tasks committed their last offsets; GET is eventually
	// consistent, so read until two reads a second apart agree.
	got, err := c.clients.Connect.SettledMirrorOffsets(ctx, name)
	if err != nil {
		return res, err
	}
	if err := c.record(ctx, Event{Step: "rollback-backup", Detail: map[string]any{"offsets": got}}); err != nil {
		return res, err
	}
	res.Reverse, err = verify.ReversePlan(ctx, c.clients.Connect, c.clients.Source, c.clients.Target, forward, got, reached,
		verify.ReverseSpec{CreatedAt: time.Now().UTC(), ToolVersion: c.opts.ToolVersion, Group: group})
	if err != nil {
		return res, err
	}
	reverse := res.Reverse.Plan()
	if err := c.record(ctx, Event{Step: "rollback-plan", Fingerprint: reverse.Fingerprint, Detail: map[string]any{"group": group, "partitions": len(reverse.Entries)}}); err != nil {
		return res, err
	}
	err = c.write(ctx, "commit", map[string]any{"group": group, "partitions": committable(reverse)}, func() error {
		var err error
		res.Committed, err = CommitReverse(ctx, c.clients.Connect, c.clients.Source, res.Reverse, reached)
		return err
	})
	if err != nil {
		return res, err
	}
	return res, c.record(ctx, Event{Step: "rollback", Fingerprint: reverse.Fingerprint, Detail: map[string]any{"phase": res.Phase, "group": group, "committed": res.Committed}})
}

// committable counts the partitions of a reverse plan that get a commit.
func committable(reverse *plan.Plan) int {
	n := 0
	for _, e := range reverse.Entries {
		if _, ok := e.GroupOffset.Get(); ok {
			n++
		}
	}
	return n
}
