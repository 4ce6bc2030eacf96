package cutover

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/verify"
)

// Report is what the verification after resume found (step 9).
type Report struct {
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

// boundaryGrace is how long Verify waits for boundary records once MM2
// caught up.
const boundaryGrace = 15 * time.Second

// Verify runs step 9, after Resume: the connector and its tasks are
// RUNNING; MM2 catches up with what the source held when verification
// began (within Options.CatchUpTimeout; the lag samples show it
// converging); for every partition that received records, the first
// record MM2 wrote after the plan's target end offset is the source
// record at C (idle partitions are reported, not failed); and the
// acceptance checks hold (verify.Acceptance). capture is what Resume
// captured (ResumeResult.Boundary, or its "boundary-capture" record); nil
// takes the capture of a Resume of this Cutover, or else compares with the
// source as it is now. It writes nothing. A report whose OK is false is
// returned without an error: the tool decides what a failed check means
// for it.
func (c *Cutover) Verify(ctx context.Context, capture []verify.BoundaryRecord) (*Report, error) {
	p := c.plan
	name := p.ConnectorName
	if capture == nil {
		c.mu.Lock()
		capture = c.captured
		c.mu.Unlock()
	}
	rep := &Report{Connector: name}
	runCtx, cancel := context.WithTimeout(ctx, c.opts.RunningTimeout)
	st, err := c.clients.Connect.WaitRunning(runCtx, name)
	cancel()
	if st != nil {
		rep.State = st.Connector.State
		rep.Tasks = len(st.Tasks)
	}
	if errors.Is(err, connect.ErrFailed) {
		return rep, fmt.Errorf("connector %s is FAILED: %w; fix the cause and restart it, then verify again, or roll back after resume", name, err)
	}
	if err != nil {
		return rep, fmt.Errorf("connector %s: %w", name, err)
	}

	c.log.Info("following MM2 until it copied what the source holds now", "connector", name)
	lagCtx, cancel := context.WithTimeout(ctx, c.opts.CatchUpTimeout)
	rep.CatchUp, err = verify.WaitCaughtUp(lagCtx, c.clients.Connect, c.clients.Source, p, name, c.log)
	cancel()
	for _, smp := range rep.CatchUp.Samples {
		rep.LagSamples = append(rep.LagSamples, smp.Total)
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return rep, err
	}

	// MM2 has caught up: every source record at C is on the target by now,
	// except on partitions that stayed idle. Give stragglers a few seconds.
	c.log.Info("comparing MM2's first record on each partition with the source's at C", "partitions", len(p.Entries))
	bCtx, cancel := context.WithTimeout(ctx, boundaryGrace)
	rep.Boundary, err = verify.CheckBoundary(bCtx, c.clients.Source, c.clients.Target, p, capture, c.log)
	cancel()
	if err != nil {
		return rep, err
	}
	rep.Captured = capture != nil
	for _, b := range rep.Boundary {
		rep.Duplicates += b.Duplicates
	}

	c.log.Info("acceptance checks", "connector", name)
	if rep.Acceptance, err = verify.Acceptance(ctx, c.clients.Connect, c.clients.Source, c.clients.Target, p, name); err != nil {
		return rep, err
	}
	rep.OK = rep.CatchUp.Reached
	for _, b := range rep.Boundary {
		rep.OK = rep.OK && b.OK()
	}
	rep.OK = rep.OK && len(rep.Acceptance.Failed()) == 0
	return rep, nil
}

// Status is the state of a cutover at one moment.
type Status struct {
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

// Status reads the connector's state, compares its offsets with the plan
// and computes the lag, reading the connector's offsets once. With the
// previous status (prev, nil when none), it says whether MM2's offsets
// advance. It writes nothing.
func (c *Cutover) Status(ctx context.Context, prev *Status) (*Status, error) {
	p := c.plan
	name := p.ConnectorName
	rep := &Status{Connector: name, At: time.Now().UTC()}
	st, err := c.clients.Connect.Status(ctx, name)
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
	got, err := c.clients.Connect.MirrorOffsets(ctx, name)
	if err != nil {
		return nil, err
	}
	if want, err := p.ExpectedOffsets(); err == nil {
		rep.ReadBack = offsets.CompareReadBack(want, got).String()
	}
	if rep.Lag, err = verify.LagOf(ctx, c.clients.Source, p, got); err != nil {
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
	return rep, nil
}
