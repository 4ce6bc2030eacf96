package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/cutover"
	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// ErrNotApproved matches the error of Resume and of the rollbacks without
// approval: they only say what they would do.
var ErrNotApproved = cutover.ErrNotApproved

// ErrNotApplied matches a resume refused because the connector does not hold
// all of the plan's offsets yet (verify.CheckResumable).
var ErrNotApplied = verify.ErrNotApplied

// Resume runs step 8 through the library (cutover.Cutover.Resume): it
// proves the connector is STOPPED and holds exactly the plan's offsets;
// without approve it then returns the intent and ErrNotApproved; with
// approve it resumes the connector and waits until it and its tasks run.
func Resume(ctx context.Context, env *Env, s settings.Settings, p *plan.Plan, approve bool, audit *Audit) (*cutover.ResumeResult, error) {
	c, err := env.Cutover(ctx, s, p, approve, audit)
	if err != nil {
		return &cutover.ResumeResult{Intent: cutover.Intent{Step: "resume", Connector: s.Connector, Fingerprint: p.Fingerprint}},
			recordRefusal(audit, "resume", s.Connector, p.Fingerprint, err)
	}
	res, err := c.Resume(ctx)
	return res, withYes(err)
}

// withYes adds to a step that was not approved how the CLI approves it.
func withYes(err error) error {
	if errors.Is(err, ErrNotApproved) {
		return fmt.Errorf("%w; approve it with -yes", err)
	}
	return err
}

// StartBoundaryCapture starts reading, in the background, the records MM2
// will copy first once p's connector resumes, for Resume of p in this Env
// (cutover.Cutover.StartBoundaryCapture): `cutover run -yes` calls it once
// the plan is made.
func (env *Env) StartBoundaryCapture(ctx context.Context, s settings.Settings, p *plan.Plan, audit *Audit) error {
	c, err := env.Cutover(ctx, s, p, false, audit)
	if err != nil {
		return err
	}
	c.StartBoundaryCapture(ctx)
	return nil
}

// BoundaryCaptureStep is the audit step under which Resume records the
// boundary records it captured, for PostVerify.
const BoundaryCaptureStep = cutover.BoundaryCaptureStep

// PostVerify runs step 9 through the library (cutover.Cutover.Verify).
// capture is what Resume recorded under BoundaryCaptureStep; nil compares
// with the source as it is now.
func PostVerify(ctx context.Context, env *Env, s settings.Settings, p *plan.Plan, capture []verify.BoundaryRecord) (*cutover.Report, error) {
	c, err := env.Cutover(ctx, s, p, false, env.audit)
	if err != nil {
		return nil, err
	}
	return c.Verify(ctx, capture)
}

// StatusReport is the state of a cutover at one moment.
type StatusReport = cutover.Status

// ReadStatus reads the connector's state and, with a plan, compares its
// offsets with it and computes the lag (cutover.Cutover.Status). With the
// previous status of the same plan (prev, nil when none), it says whether
// MM2's offsets advance. It changes nothing.
func ReadStatus(ctx context.Context, env *Env, s settings.Settings, p *plan.Plan, prev *StatusReport) (*StatusReport, error) {
	if p != nil {
		c, err := env.Cutover(ctx, s, p, false, env.audit)
		if err != nil {
			return nil, err
		}
		return c.Status(ctx, prev)
	}
	rep := &StatusReport{Connector: s.Connector, At: time.Now().UTC()}
	st, err := env.Connect.Status(ctx, s.Connector)
	if errors.Is(err, connect.ErrNotFound) {
		return rep, nil
	}
	if err != nil {
		return nil, err
	}
	rep.Exists, rep.State = true, st.Connector.State
	for _, t := range st.Tasks {
		rep.Tasks = append(rep.Tasks, fmt.Sprintf("%d:%s", t.ID, t.State))
	}
	return rep, nil
}
