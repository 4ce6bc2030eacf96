package app

import (
	"context"

	"github.com/mm2cutover/mm2cutover/cutover"
	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// ErrHasRun matches a rollback before resume refused because the connector
// is not STOPPED or holds offsets the plan did not set: it has run, so the
// rollback after resume applies (verify.CheckNeverRan).
var ErrHasRun = verify.ErrHasRun

// Rollback hands replication back to the old job through the library
// (cutover.Cutover.Rollback), in the connector's phase: before resume it
// removes the connector and its offsets; after resume it writes C' = M'+1
// to group. Without approve it only returns what it would do, and an error
// matching ErrNotApproved.
func Rollback(ctx context.Context, env *Env, s settings.Settings, p *plan.Plan, group string, approve bool, audit *Audit) (*cutover.RollbackResult, error) {
	res := &cutover.RollbackResult{Connector: s.Connector, Group: group}
	if err := p.Validate(); err != nil {
		return res, err
	}
	c, err := env.Cutover(ctx, s, p, approve, audit)
	if err != nil {
		return res, recordRefusal(audit, "rollback", s.Connector, p.Fingerprint, err)
	}
	res, err = c.Rollback(ctx, group)
	return res, withYes(err)
}
