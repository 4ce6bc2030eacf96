package cutover

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/verify"
)

// ResumeResult is what Resume would do, or did.
type ResumeResult struct {
	Intent Intent `json:"intent"`
	// State is the connector's state last seen: STOPPED before an
	// approval, RUNNING after the resume.
	State string `json:"state"`
	// Boundary are the records MM2 copies first, captured while the
	// connector was still STOPPED (also recorded, "boundary-capture"):
	// what Verify compares the target with.
	Boundary []verify.BoundaryRecord `json:"-"`
}

// BoundaryCaptureStep is the Event step under which Resume records the
// boundary records it captured: a tool that verifies in another process
// (a Kubernetes Job's second container) reads them from its record and
// gives them to Verify.
const BoundaryCaptureStep = "boundary-capture"

// Resume runs step 8: it rechecks the plan against the clusters
// (verify.Prepare) and, at the same time, proves the connector is the
// plan's, STOPPED, and holds exactly the plan's offsets
// (verify.CheckResumable: a stale plan, or a connector that already ran,
// is refused with *plan.StaleOffsetsError; one not applied yet with
// verify.ErrNotApplied; a refused recheck wins), then asks Options.Approve
// with what it would do. Unapproved, it returns the intent and an error
// matching ErrNotApproved. Approved, it captures the records MM2 will copy
// first (verify.CaptureBoundary, while the connector is still STOPPED),
// resumes the connector and waits until it and all its tasks are RUNNING
// (Options.RunningTimeout; a FAILED task comes back as a
// *connect.FailedError with its trace).
func (c *Cutover) Resume(ctx context.Context) (_ *ResumeResult, err error) {
	p := c.plan
	name := p.ConnectorName
	res := &ResumeResult{Intent: Intent{Step: "resume", Connector: name, Fingerprint: p.Fingerprint, Partitions: len(p.Entries)}}
	defer func() { err = c.refused(ctx, "resume", err) }()
	// The connector's proof (verify.CheckResumable: its configuration,
	// STOPPED, then its offsets, 50,000 of them a read of seconds) is read
	// while the recheck reads the clusters, on the clusters the last step
	// read; both are in before anything is asked or written.
	before := c.clusters()
	checkCtx, stopCheck := context.WithCancel(ctx)
	defer stopCheck()
	type checked struct {
		proof verify.Resumable
		err   error
	}
	checking := make(chan checked, 1)
	go func() {
		proof, err := verify.CheckResumable(checkCtx, c.clients.Connect, p, before)
		checking <- checked{proof, err}
	}()
	if err := c.prepare(ctx); err != nil {
		stopCheck()
		<-checking
		return res, err
	}
	// The records MM2 will copy first, read from the source while the
	// checks run, or since StartBoundaryCapture; kept only if the checks
	// pass and the resume is approved.
	captureCtx, stopCapture := context.WithCancel(ctx)
	defer stopCapture()
	var capture *boundaryCapture
	if c.opts.Approve != nil { // nothing to capture for a resume nobody can approve
		capture = c.takeCapture(captureCtx, time.Now())
	}
	reached := c.clusters()
	check := <-checking
	proof, err := check.proof, check.err
	if reached != before { // the recheck read other clusters: prove the connector on those
		proof, err = verify.CheckResumable(ctx, c.clients.Connect, p, reached)
	}
	if err != nil {
		var nse *connect.NotStoppedError
		if errors.As(err, &nse) {
			res.State = nse.State
			err = NotStopped(name, err, "resume applies only to a connector the cutover left STOPPED")
		}
		return res, err
	}
	res.State = connect.StateStopped
	res.Intent.Action = fmt.Sprintf("PUT /connectors/%s/resume: MM2 starts reading each of %d source partitions at its planned position (plan %s)",
		name, len(p.Entries), p.Fingerprint)
	if err := c.approve(ctx, res.Intent); err != nil {
		return res, err
	}
	// Captured while the connector is still STOPPED: the check after resume
	// compares with them, whatever compaction does later.
	records, err := capture.wait(ctx)
	if err != nil {
		return res, err
	}
	res.Boundary = records
	c.log.Debug("boundary records captured", "partitions", len(records), "started", capture.started.Format(time.RFC3339Nano))
	if err := c.record(ctx, Event{Step: BoundaryCaptureStep, Detail: records}); err != nil {
		return res, err
	}
	c.log.Info("resuming the connector", "connector", name)
	if err := c.write(ctx, "resume", nil, func() error { return Resume(ctx, c.clients.Connect, proof, reached) }); err != nil {
		return res, err
	}
	c.mu.Lock()
	c.captured = records
	c.mu.Unlock()
	runCtx, cancel := context.WithTimeout(ctx, c.opts.RunningTimeout)
	defer cancel()
	st, err := c.clients.Connect.WaitRunning(runCtx, name)
	if st != nil {
		res.State = st.Connector.State
	}
	if errors.Is(err, connect.ErrFailed) {
		return res, fmt.Errorf("connector %s FAILED after its resume (MM2 may have copied records since): %w; "+
			"fix the cause and restart it, then verify, or roll back after resume", name, err)
	}
	if err != nil {
		return res, fmt.Errorf("connector %s after resume: %w", name, err)
	}
	return res, nil
}

// boundaryCapture is a read of a plan's boundary records
// (verify.CaptureBoundary) going on in the background.
type boundaryCapture struct {
	started time.Time
	done    chan struct{} // closed when records and err are set
	records []verify.BoundaryRecord
	err     error
}

// startCapture starts reading the plan's boundary records from the source.
func (c *Cutover) startCapture(ctx context.Context, now time.Time) *boundaryCapture {
	bc := &boundaryCapture{started: now, done: make(chan struct{})}
	go func() {
		defer close(bc.done)
		bc.records, bc.err = verify.CaptureBoundary(ctx, c.clients.Source, c.plan)
	}()
	return bc
}

// wait returns the capture's records once read.
func (bc *boundaryCapture) wait(ctx context.Context) ([]verify.BoundaryRecord, error) {
	select {
	case <-bc.done:
		return bc.records, bc.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// StartBoundaryCapture starts reading, in the background, the records MM2
// will copy first once the connector resumes (verify.CaptureBoundary), for
// Resume to use: a tool that plans, applies and resumes in one process
// calls it once the plan is made, so that the read (about a second at
// 10,000 partitions) overlaps Apply rather than holding back the resume.
// The read is of the source only, and nothing copies from it until the
// resume, so it finds what MM2 will start from, as a read moments later
// would. Resume uses it only when it started within
// verify.ObservationReuse; otherwise it reads anew. ctx bounds the read.
func (c *Cutover) StartBoundaryCapture(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.capture = c.startCapture(ctx, time.Now())
}

// takeCapture returns the capture Resume waits for: the one
// StartBoundaryCapture started, if recent, or a new one under ctx.
func (c *Cutover) takeCapture(ctx context.Context, now time.Time) *boundaryCapture {
	c.mu.Lock()
	bc := c.capture
	c.capture = nil
	c.mu.Unlock()
	if bc != nil && now.Sub(bc.started) < verify.ObservationReuse {
		return bc
	}
	return c.startCapture(ctx, now)
}
