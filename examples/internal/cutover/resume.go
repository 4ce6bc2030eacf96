package cutover

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// ErrNotApproved matches the error of Resume and of the rollbacks without
// approval: they only say what they would do.
var ErrNotApproved = errkind.New(errkind.NotApproved, "not approved")

// ErrNotApplied matches a resume refused because the connector does not hold
// all of the plan's offsets yet (verify.CheckResumable).
var ErrNotApplied = verify.ErrNotApplied

// ResumeIntent says what Resume would do, or did.
type ResumeIntent struct {
	Connector   string `json:"connector"`
	State       string `json:"state"`
	Fingerprint string `json:"plan_fingerprint"`
	Partitions  int    `json:"partitions"`
	Action      string `json:"action"`
}

// Resume runs step 8. It first proves the connector is STOPPED and holds
// exactly the plan's offsets (a stale plan, or a connector that already ran,
// is refused with *plan.StaleOffsetsError); without approve it then
// returns the intent and ErrNotApproved; with approve it resumes the
// connector and waits until it and all its tasks are RUNNING (a FAILED task
// comes back as *connect.FailedError with its trace).
func Resume(ctx context.Context, env *Env, s Settings, p *plan.Plan, approve bool, audit *Audit) (_ ResumeIntent, err error) {
	s = s.WithPlan(p)
	s = s.WithDefaults()
	name := s.Connector
	in := ResumeIntent{Connector: name, Fingerprint: p.Fingerprint, Partitions: len(p.Entries)}
	defer func() { err = audit.refused("resume", name, p.Fingerprint, err) }()
	if err := Recheck(ctx, env, s, p); err != nil {
		return in, err
	}
	// The records MM2 will copy first, read from the source while the
	// connector's checks run (at 10,000 partitions each takes a few hundred
	// ms), or since the plan was made when this Env's caller started the
	// read then (StartBoundaryCapture); they are kept only if the checks
	// pass and the resume is approved.
	captureCtx, stopCapture := context.WithCancel(ctx)
	defer stopCapture()
	var capture *boundaryCapture
	if approve {
		capture = env.takeCapture(captureCtx, p, time.Now())
	}
	ids, err := env.clusterIDs(ctx)
	if err != nil {
		return in, err
	}
	if err := verify.CheckResumable(ctx, env.Connect, p, ids); err != nil {
		var nse *connect.NotStoppedError
		if errors.As(err, &nse) {
			in.State = nse.State
			err = notStopped(name, err, "resume applies only to a connector the cutover left STOPPED")
		}
		return in, err
	}
	in.State = connect.StateStopped
	in.Action = fmt.Sprintf("PUT /connectors/%s/resume: MM2 starts reading each of %d source partitions at its planned position (plan %s)",
		name, len(p.Entries), p.Fingerprint)
	if !approve {
		return in, fmt.Errorf("%w: the resume of connector %s; approve it with -yes", ErrNotApproved, name)
	}
	// The records MM2 copies first, captured while it is still STOPPED: the
	// check after resume compares with them, whatever compaction does later.
	records, err := capture.wait(ctx)
	if err != nil {
		return in, err
	}
	s.Logger.Debug("boundary records captured", "partitions", len(records), "started", capture.started.Format(time.RFC3339Nano))
	if err := audit.Record(BoundaryCaptureStep, name, p.Fingerprint, records); err != nil {
		return in, err
	}
	s.Logger.Info("resuming the connector", "connector", name)
	if err := verify.Resume(ctx, env.Connect, p, ids); err != nil {
		return in, err
	}
	if err := audit.Record("resume", name, p.Fingerprint, nil); err != nil {
		return in, err
	}
	runCtx, cancel := context.WithTimeout(ctx, s.RunningTimeout)
	defer cancel()
	st, err := env.Connect.WaitRunning(runCtx, name)
	if st != nil {
		in.State = st.Connector.State
	}
	if errors.Is(err, connect.ErrFailed) {
		return in, fmt.Errorf("connector %s FAILED after its resume (MM2 may have copied records since): %w; "+
			"fix the cause and restart it, then run verify, or roll back after resume (rollback -rollback-group G -yes)", name, err)
	}
	if err != nil {
		return in, fmt.Errorf("connector %s after resume: %w", name, err)
	}
	return in, nil
}

// boundaryCapture is a read of a plan's boundary records
// (verify.CaptureBoundary) going on in the background.
type boundaryCapture struct {
	fingerprint string
	started     time.Time
	done        chan struct{} // closed when records and err are set
	records     []verify.BoundaryRecord
	err         error
}

// startCapture starts reading p's boundary records from the source.
func (env *Env) startCapture(ctx context.Context, p *plan.Plan, now time.Time) *boundaryCapture {
	c := &boundaryCapture{fingerprint: p.Fingerprint, started: now, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.records, c.err = verify.CaptureBoundary(ctx, env.Source, p)
	}()
	return c
}

// wait returns the capture's records once read.
func (c *boundaryCapture) wait(ctx context.Context) ([]verify.BoundaryRecord, error) {
	select {
	case <-c.done:
		return c.records, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// StartBoundaryCapture starts reading, in the background, the records MM2
// will copy first once p's connector resumes (verify.CaptureBoundary), for
// Resume of p in this Env to use: `cutover run -yes`, which plans,
// applies and resumes in one process, calls it once the plan is made, so
// that the read (about a second at 10,000 partitions) overlaps apply
// rather than holding back the resume request. The read is of the source
// only, and nothing copies from it until the resume, so it finds what MM2
// will start from, as a read moments later would; a partition with no
// record yet is read again after the resume (verify.CheckBoundary), as
// with a capture Resume makes itself. Resume uses the read only for the same plan and only when it
// started within verify.ObservationReuse; otherwise it reads anew. ctx
// bounds the read.
func (env *Env) StartBoundaryCapture(ctx context.Context, p *plan.Plan) {
	env.capture = env.startCapture(ctx, p, time.Now())
}

// takeCapture returns the capture Resume of p waits for: the one
// StartBoundaryCapture started for p, if recent, or a new one under ctx.
// The Env keeps none after it.
func (env *Env) takeCapture(ctx context.Context, p *plan.Plan, now time.Time) *boundaryCapture {
	c := env.capture
	env.capture = nil
	if c != nil && c.fingerprint == p.Fingerprint && now.Sub(c.started) < verify.ObservationReuse {
		return c
	}
	return env.startCapture(ctx, p, now)
}

// BoundaryCaptureStep is the audit step under which Resume records the
// boundary records it captured (verify.CaptureBoundary), for PostVerify.
const BoundaryCaptureStep = "boundary-capture"

// PostReport is what the verification after resume found (step 9).
type PostReport struct {
	Connector string            `json:"connector"`
	State     string            `json:"state"`
	Tasks     int               `json:"tasks_running"`
	Boundary  []verify.Boundary `json:"boundary"`
	// Captured is true when the boundary was compared with the records
	// captured before resume; false when only the source as it is now was
	// there to compare with.
	Captured bool `json:"boundary_captured"`
	// Duplicates is the number of records the old job wrote past its last
	// commit, which MM2 copies again (see verify.Boundary.Duplicates).
	Duplicates int64          `json:"expected_duplicates"`
	Acceptance verify.Checks  `json:"acceptance"`
	CatchUp    verify.CatchUp `json:"-"`
	LagSamples []int64        `json:"lag_samples"`
	OK         bool           `json:"ok"`
}

// boundaryGrace is how long PostVerify waits for boundary records once MM2
// caught up.
const boundaryGrace = 15 * time.Second

// PostVerify runs step 9: the connector and its tasks are RUNNING; MM2
// catches up with what the source held when verification began (within
// s.CatchUpTimeout; the lag samples show it converging); for every partition
// that received records, the first record MM2 wrote after the plan's target
// end offset is the source record at C (idle partitions are reported, not
// failed); and the acceptance checks hold. capture is what Resume recorded
// under BoundaryCaptureStep; nil compares with the source as it is now.
func PostVerify(ctx context.Context, env *Env, s Settings, p *plan.Plan, capture []verify.BoundaryRecord) (*PostReport, error) {
	s = s.WithPlan(p)
	s = s.WithDefaults()
	name := s.Connector
	rep := &PostReport{Connector: name}
	runCtx, cancel := context.WithTimeout(ctx, s.RunningTimeout)
	st, err := env.Connect.WaitRunning(runCtx, name)
	cancel()
	if st != nil {
		rep.State = st.Connector.State
		rep.Tasks = len(st.Tasks)
	}
	if errors.Is(err, connect.ErrFailed) {
		return rep, fmt.Errorf("connector %s is FAILED: %w; fix the cause and restart it, then run verify again, or roll back after resume (rollback -rollback-group G -yes)", name, err)
	}
	if err != nil {
		return rep, fmt.Errorf("connector %s: %w", name, err)
	}

	s.Logger.Info("following MM2 until it copied what the source holds now", "connector", name)
	lagCtx, cancel := context.WithTimeout(ctx, s.CatchUpTimeout)
	rep.CatchUp, err = verify.WaitCaughtUp(lagCtx, env.Connect, env.Source, p, name, s.Logger)
	cancel()
	for _, smp := range rep.CatchUp.Samples {
		rep.LagSamples = append(rep.LagSamples, smp.Total)
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return rep, err
	}

	// MM2 has caught up: every source record at C is on the target by now,
	// except on partitions that stayed idle. Give stragglers a few seconds.
	s.Logger.Info("comparing MM2's first record on each partition with the source's at C", "partitions", len(p.Entries))
	bCtx, cancel := context.WithTimeout(ctx, boundaryGrace)
	rep.Boundary, err = verify.CheckBoundary(bCtx, env.Source, env.Target, p, capture, s.Logger)
	cancel()
	if err != nil {
		return rep, err
	}
	rep.Captured = capture != nil
	for _, b := range rep.Boundary {
		rep.Duplicates += b.Duplicates
	}

	s.Logger.Info("acceptance checks", "connector", name)
	source, target, err := env.clients()
	if err != nil {
		return rep, err
	}
	if rep.Acceptance, err = verify.Acceptance(ctx, env.Connect, source, target, p, name); err != nil {
		return rep, err
	}
	rep.OK = rep.CatchUp.Reached
	for _, b := range rep.Boundary {
		rep.OK = rep.OK && b.OK()
	}
	rep.OK = rep.OK && len(rep.Acceptance.Failed()) == 0
	return rep, nil
}

// StatusReport is the state of a cutover at one moment.
type StatusReport struct {
	Connector string                `json:"connector"`
	Exists    bool                  `json:"exists"`
	State     string                `json:"state,omitempty"`
	Tasks     []string              `json:"tasks,omitempty"`
	ReadBack  string                `json:"offsets_vs_plan,omitempty"`
	Lag       []verify.PartitionLag `json:"lag,omitempty"`
	TotalLag  int64                 `json:"total_lag"`
	// NextTotal is the sum of MM2's next offsets over the plan's
	// partitions: it grows by the records MM2 copied (and markers passed).
	NextTotal int64     `json:"next_total"`
	At        time.Time `json:"at"`
	// Progress since the previous status, when there was one: how long ago,
	// how far MM2's offsets moved, and whether they advanced. Stalled is
	// true when there is lag and MM2's offsets did not move: what
	// Kubernetes' readiness cannot see.
	Since     string `json:"since_previous,omitempty"`
	Moved     int64  `json:"offsets_moved"`
	Advancing *bool  `json:"advancing,omitempty"`
	Stalled   bool   `json:"stalled"`
}

// ReadStatus reads the connector's state, compares its offsets with the
// plan and computes the lag, reading the connector's offsets once. With the
// previous status of the same plan (prev, nil when none), it says whether
// MM2's offsets advance. It changes nothing.
func ReadStatus(ctx context.Context, env *Env, s Settings, p *plan.Plan, prev *StatusReport) (*StatusReport, error) {
	s = s.WithPlan(p)
	s = s.WithDefaults()
	name := s.Connector
	rep := &StatusReport{Connector: name, At: time.Now().UTC()}
	st, err := env.Connect.Status(ctx, name)
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
	got, err := env.Connect.MirrorOffsets(ctx, name)
	if err != nil {
		return nil, err
	}
	if p != nil {
		if want, err := p.ExpectedOffsets(); err == nil {
			rep.ReadBack = offsets.CompareReadBack(want, got).String()
		}
		if rep.Lag, err = verify.LagOf(ctx, env.Source, p, got); err != nil {
			return nil, err
		}
		rep.TotalLag = verify.TotalLag(rep.Lag)
		for _, l := range rep.Lag {
			rep.NextTotal += l.Next
		}
		if prev != nil && prev.Exists {
			if pr, ok := verify.ProgressOf(prev.NextTotal, prev.TotalLag, rep.NextTotal, rep.TotalLag); ok {
				rep.Since = rep.At.Sub(prev.At).Round(time.Second).String()
				rep.Moved, rep.Advancing, rep.Stalled = pr.Moved, &pr.Advancing, pr.Stalled
			}
		}
	}
	return rep, nil
}
