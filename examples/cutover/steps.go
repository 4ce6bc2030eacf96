package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/mm2cutover/mm2cutover/clientconf"
	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/cutover"
	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
	"github.com/mm2cutover/mm2cutover/examples/internal/term"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// cli runs the steps of one invocation.
type cli struct {
	s   settings.Settings
	o   options
	env *app.Env
	out io.Writer
	log *slog.Logger
	// afterResume, if set, runs once the connector is RUNNING (the sandbox
	// demo starts producing to the idle partitions there).
	afterResume func(context.Context) error
	// step is the step the command line named.
	step string
	// emitted is set once a step printed its result.
	emitted bool
}

// report prints err, and what to do when the error says, and returns the
// exit status.
func report(stderr io.Writer, err error) int {
	if err != nil {
		fmt.Fprintln(stderr, "cutover:", err)
		if a := advice(err); a != "" {
			fmt.Fprintln(stderr, "cutover: what to do:", a)
		}
	}
	return app.ExitStatus(err)
}

// advice is what to do about err: the library's words, or, for an endpoint
// that does not answer, the settings that name it and the flag that waits
// longer.
func advice(err error) string {
	var (
		cu *connect.UnreachableError
		ku *kafkaadmin.UnreachableError
	)
	switch {
	case errors.As(err, &cu):
		return "check -connect-url and that a Connect worker listens there; -retry-timeout waits longer (10s by default while nothing answers)"
	case errors.As(err, &ku):
		return "check -source-bootstrap and -target-bootstrap (or the client properties files) and that the brokers are up; -retry-timeout waits longer (10s by default while nothing answers)"
	}
	return errkind.Advice(err)
}

// emit writes one result: with -json, one JSON document whose first field,
// "schema", names its shape ("mm2cutover/<schema>/v1", see docs/cutover.md); else the
// human table.
func (c *cli) emit(schema string, v any, human func(w io.Writer)) {
	c.emitted = true
	if c.o.asJSON {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			c.log.Error("cannot encode the result", "error", err)
			return
		}
		if len(b) > 1 && b[0] == '{' {
			head := fmt.Sprintf("{\n  \"schema\": %q", "mm2cutover/"+schema+"/v1")
			if string(b) != "{}" {
				head += ","
			}
			b = append([]byte(head), b[1:]...)
		}
		_, _ = c.out.Write(append(b, '\n'))
		return
	}
	bw := bufio.NewWriterSize(c.out, 64<<10) // tabwriter writes cell by cell
	tw := tabwriter.NewWriter(bw, 0, 4, 2, ' ', 0)
	human(tw)
	tw.Flush()
	bw.Flush()
}

func printChecks(w io.Writer, checks verify.Checks) {
	fmt.Fprintln(w, "CHECK\tSTATUS\tDETAIL")
	for _, ch := range checks {
		fmt.Fprintf(w, "%s\t%s\t%s\n", ch.Name, ch.Verdict, ch.Detail)
	}
}

func (c *cli) precheck(ctx context.Context) error {
	pc, err := app.RunPrecheck(ctx, c.env, c.s)
	if err != nil {
		return err
	}
	if err := c.record("precheck", "", map[string]any{"ok": pc.Err() == nil, "checks": pc.Checks}); err != nil {
		return err
	}
	c.emit("precheck", pc, func(w io.Writer) { printChecks(w, pc.Checks) })
	return pc.Err()
}

// record appends one entry to the audit file. Every step records what it
// found and did; a step whose record cannot be written fails.
func (c *cli) record(step, fingerprint string, detail any) error {
	audit, done, err := c.audit()
	if err != nil {
		return err
	}
	defer done()
	return audit.Record(step, c.s.Connector, fingerprint, detail)
}

// plan runs the precheck and writes the plan. Partitions without a usable
// offset are in the plan as blocked entries; any other failed check means
// no plan is written.
func (c *cli) plan(ctx context.Context) error {
	_, err := c.buildPlan(ctx)
	return err
}

func (c *cli) buildPlan(ctx context.Context) (*plan.Plan, error) {
	p, pc, err := app.MakePlan(ctx, c.env, c.s, time.Now())
	c.s = c.s.WithPlan(p) // -tasks-max 0: the plan chose it
	if pc != nil {
		if rerr := c.record("precheck", "", map[string]any{"ok": pc.Err() == nil, "checks": pc.Checks}); rerr != nil {
			return nil, rerr
		}
	}
	if err != nil {
		if pc != nil {
			c.emit("precheck", pc, func(w io.Writer) { printChecks(w, pc.Checks) })
		}
		return nil, err
	}
	var buf bytes.Buffer
	if err := p.Encode(&buf); err != nil {
		return nil, err
	}
	if err := writeFileAtomic(c.o.planPath, buf.Bytes()); err != nil {
		return nil, err
	}
	c.log.Info("plan written", "file", c.o.planPath, "fingerprint", p.Fingerprint, "partitions", len(p.Entries))
	if err := c.record("plan", p.Fingerprint, map[string]any{"file": c.o.planPath, "partitions": len(p.Entries),
		"applicable": p.Applicable(), "offsets_from": p.OffsetsFrom.String()}); err != nil {
		return nil, err
	}
	c.emitted = true
	if c.o.asJSON {
		_, _ = c.out.Write(buf.Bytes())
	} else {
		// The summary; with -table a line per partition after it, written
		// cell by cell: one write(2) per cell unbuffered, 200,000 at
		// 10,000 partitions, and about 35 ms of a plan's time buffered.
		bw := bufio.NewWriterSize(c.out, 64<<10)
		_ = p.WriteSummary(bw)
		if c.o.table {
			_, _ = bw.WriteString("\n")
			_ = p.WriteTable(bw)
		}
		_ = bw.Flush()
	}
	return p, p.Blocked()
}

func (c *cli) readPlan() (*plan.Plan, error) {
	if fi, err := os.Stat(c.o.planPath); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%w: -plan %s is a directory", settings.ErrSettings, c.o.planPath)
	}
	// A named pipe or a pipe neither blocks the open nor the reads for
	// ever (clientconf.OpenInput).
	f, err := clientconf.OpenInput(c.o.planPath)
	if err != nil {
		return nil, fmt.Errorf("read the plan: %w (run the plan step first, or pass -plan)", err)
	}
	defer f.Close()
	p, err := plan.Decode(f)
	if err != nil {
		return nil, err
	}
	c.s = c.s.WithPlan(p) // -tasks-max 0 takes the plan's
	return p, nil
}

func (c *cli) audit() (*app.Audit, func(), error) {
	// O_NONBLOCK: a named pipe with no reader is an error (ENXIO), not an
	// open that waits for ever.
	f, err := os.OpenFile(c.o.auditPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("audit file: %w", err)
	}
	w := term.NewSafeWriter(f) // so that cat shows no control character raw either
	return app.NewAudit(w), func() { w.Flush(); f.Close() }, nil
}

func (c *cli) apply(ctx context.Context) error {
	p, err := c.readPlan()
	if err != nil {
		return err
	}
	if c.o.dryRun {
		return c.applyDryRun(ctx, p)
	}
	return c.applyPlan(ctx, p)
}

// writeApply writes apply's table. A read-back that did not run (the step
// stopped before it, at a PATCH that failed) is said to be that, never "0
// match".
func writeApply(w io.Writer, res *cutover.ApplyResult, auditPath string) {
	fmt.Fprintf(w, "connector\t%s\n", res.Connector)
	fmt.Fprintf(w, "created STOPPED\t%v\n", res.Created)
	fmt.Fprintf(w, "offsets before (backed up to %s)\t%d\n", auditPath, len(res.Backup))
	fmt.Fprintf(w, "guard\t%s\n", res.Guard)
	fmt.Fprintf(w, "patched\t%v\n", res.Patched)
	switch {
	case !res.ReadBackRan:
		fmt.Fprintf(w, "read-back\tnot run: the step stopped before it (see the error)\n")
	case res.Unread:
		fmt.Fprintf(w, "read-back\tnot read: no read of the offsets succeeded (see the error)\n")
	default:
		fmt.Fprintf(w, "read-back\t%s\n", res.ReadBack)
	}
}

// applyDryRun shows what apply would write: the connector configuration
// it would create (POST /connectors, STOPPED), with secrets redacted as the
// audit records them, and the offsets (the PATCH body). It writes nothing:
// no connector, no offsets, no audit record; the plan is checked against the
// settings, not against the clusters.
func (c *cli) applyDryRun(ctx context.Context, p *plan.Plan) error {
	if err := app.CheckPlan(ctx, c.env, c.s, p); err != nil {
		return err
	}
	cfg, err := c.s.ConnectorConfig()
	if err != nil {
		return err
	}
	shown := app.RedactConfig(ctx, c.env, c.s, cfg)
	body, err := p.PatchBody()
	if err != nil {
		return err
	}
	c.emit("apply-dry-run", map[string]any{"connector": c.s.Connector, "initial_state": "STOPPED", "config": shown,
		"plan_fingerprint": p.Fingerprint, "offsets": json.RawMessage(body)}, func(w io.Writer) {
		fmt.Fprintf(w, "dry run: nothing is written\n\nwould create %s (STOPPED) with:\n", c.s.Connector)
		for _, k := range slices.Sorted(maps.Keys(shown)) {
			fmt.Fprintf(w, "  %s\t%s\n", k, shown[k])
		}
		fmt.Fprintf(w, "\nwould PATCH %d partition offsets of plan %s (-json shows the body)\n", len(p.Entries), p.Fingerprint)
	})
	return nil
}

func (c *cli) applyPlan(ctx context.Context, p *plan.Plan) error {
	audit, done, err := c.audit()
	if err != nil {
		return err
	}
	defer done()
	res, err := app.Apply(ctx, c.env, c.s, p, audit)
	if res != nil {
		c.emit("apply", res, func(w io.Writer) { writeApply(w, res, c.o.auditPath) })
	}
	return err
}

func (c *cli) verify(ctx context.Context) error {
	p, err := c.readPlan()
	if err != nil {
		return err
	}
	// The read-back from Strimzi's listOffsets ConfigMap asks Connect
	// nothing: its REST API may admit only the operator.
	if c.o.strimziOffsets != "" {
		return c.verifyStrimzi(ctx, p)
	}
	// A plan for another connector or other clusters, or a connector that is
	// not the plan's, is refused (and the refusal recorded) before anything
	// is compared or recorded as this plan's verification.
	if err := app.ConfirmConnector(ctx, c.env, c.s, p); err != nil {
		if app.ExitStatus(err) == app.ExitRefused {
			if rerr := c.record("refuse", p.Fingerprint, map[string]any{"step": "verify", "reason": err.Error()}); rerr != nil {
				return errors.Join(err, rerr)
			}
		}
		return err
	}
	st, err := c.env.Connect.Status(ctx, c.s.Connector)
	if err != nil {
		return err
	}
	if st.Connector.State == connect.StateStopped {
		want, err := p.ExpectedOffsets()
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, c.s.ReadBackTimeout)
		defer cancel()
		rb, err := c.env.Connect.WaitMirrorOffsets(ctx, c.s.Connector, want)
		unread := errors.Is(err, connect.ErrOffsetsUnread)
		detail := map[string]any{"state": "STOPPED", "ok": err == nil && rb.OK(), "read_back": rb.String()}
		if unread {
			detail = map[string]any{"state": "STOPPED", "ok": false, "read": false, "read_back": "not read: " + err.Error()}
		}
		if rerr := c.record("verify", p.Fingerprint, detail); rerr != nil && err == nil {
			err = rerr
		}
		c.emit("read-back", map[string]any{"state": "STOPPED", "ok": err == nil && rb.OK(), "read": !unread, "read_back": rb.Partitions}, func(w io.Writer) {
			if unread {
				fmt.Fprintf(w, "connector %s is STOPPED; its offsets could not be read: no read succeeded (see the error)\n", c.s.Connector)
				return
			}
			fmt.Fprintf(w, "connector %s is STOPPED; offsets against plan %s: %s\n", c.s.Connector, p.Fingerprint, rb)
			if d := rb.Diff(); d != "" {
				fmt.Fprintf(w, "diff (-plan +connect):\n%s", d)
			}
		})
		return err
	}
	return c.postVerify(ctx, p)
}

func (c *cli) postVerify(ctx context.Context, p *plan.Plan) error {
	capture, err := c.boundaryCapture(p)
	if err != nil {
		return err
	}
	rep, err := app.PostVerify(ctx, c.env, c.s, p, capture)
	if rep != nil {
		c.emit("verify", rep, func(w io.Writer) { printPost(w, rep) })
		// The record holds what the change record (the report step) shows:
		// the boundary of every partition, and the lag samples with their
		// times besides their totals (lag_samples, as before).
		if rerr := c.record("verify", p.Fingerprint, map[string]any{"state": rep.State, "ok": rep.OK && err == nil,
			"expected_duplicates": rep.Duplicates, "lag_samples": rep.LagSamples, "acceptance": rep.Acceptance,
			"lag": rep.CatchUp.Samples, "caught_up": rep.CatchUp.Reached, "boundary": rep.Boundary,
			"boundary_captured": rep.Captured}); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil {
		return err
	}
	if !rep.OK {
		return fmt.Errorf("%w: see the report", app.ErrCheckFailed)
	}
	return nil
}

// boundaryCapture returns the boundary records the resume of plan p
// recorded in the audit file (the last such entry), or nil when there is
// none: the check then compares with the source as it is now.
func (c *cli) boundaryCapture(p *plan.Plan) ([]verify.BoundaryRecord, error) {
	var capture []verify.BoundaryRecord
	ok, err := c.lastAudit(app.BoundaryCaptureStep, p.Fingerprint, &capture)
	if err != nil {
		return nil, err
	}
	if !ok {
		c.log.Warn("no boundary capture for this plan in the audit file: comparing with the source as it is now (compaction since resume would show as a difference)", "audit", c.o.auditPath)
	}
	return capture, nil
}

// lastAudit decodes into detail the detail of the last audit entry of step
// for plan fingerprint fp, and reports whether there was one.
func (c *cli) lastAudit(step, fp string, detail any) (bool, error) {
	f, err := clientconf.OpenInput(c.o.auditPath)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("audit file: %w", err)
	}
	defer f.Close()
	var last []byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 256<<20)
	for sc.Scan() {
		var e struct {
			Step        string          `json:"step"`
			Fingerprint string          `json:"plan_fingerprint"`
			Detail      json.RawMessage `json:"detail"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Step == step && e.Fingerprint == fp {
			last = e.Detail
		}
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("audit file %s: %w", c.o.auditPath, err)
	}
	if last == nil {
		return false, nil
	}
	if err := json.Unmarshal(last, detail); err != nil {
		return false, fmt.Errorf("audit file %s: the last %s entry: %w", c.o.auditPath, step, err)
	}
	return true, nil
}

func printPost(w io.Writer, rep *cutover.Report) {
	fmt.Fprintf(w, "connector %s: %s, %d tasks\n\n", rep.Connector, rep.State, rep.Tasks)
	fmt.Fprintln(w, "PARTITION\tSOURCE C\tRECORD\tTARGET OFFSET\tFIRST REPLICATED RECORD")
	for _, b := range rep.Boundary {
		verdict := "equals the source record at C"
		switch {
		case b.Idle:
			verdict = "idle: no source record at C yet, nothing to compare"
		case b.Pending:
			verdict = "pending: no record yet"
		case len(b.Differences) > 0:
			verdict = fmt.Sprintf("DIFFERS: %v", b.Differences)
		case b.Placed:
			verdict = fmt.Sprintf("compaction removed the record compared; MM2's first %d copies are gone from the source too, the next is the record at %d, none is from before C, and no record the source holds from C on was skipped",
				b.CopiesGone, b.RecordOffset)
		case b.RemovedFromSource:
			verdict = "equals the record captured at resume (compaction has since removed it from the source)"
		case b.Captured:
			verdict = "equals the source record captured at resume"
		}
		if b.Duplicates > 0 {
			verdict += fmt.Sprintf("; %d duplicates expected: the old job wrote them past its last commit", b.Duplicates)
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%s-%d@%d\t%s\n", b.Partition, b.SourceOffset, b.RecordOffset, b.TargetTopic, b.Partition.Partition, b.TargetOffset, verdict)
	}
	if rep.Duplicates > 0 {
		fmt.Fprintf(w, "\nexpected duplicates\t%d (records the old job wrote to the target after its last commit; MM2 copies them again)\n", rep.Duplicates)
	}
	fmt.Fprintf(w, "\nlag samples (total, first to last)\t%v\n", rep.LagSamples)
	fmt.Fprintf(w, "caught up with the source as of the first sample\t%v\n\n", rep.CatchUp.Reached)
	fmt.Fprintln(w, "ACCEPTANCE\tSTATUS\tDETAIL")
	for _, ch := range rep.Acceptance {
		fmt.Fprintf(w, "%s\t%s\t%s\n", ch.Name, ch.Verdict, ch.Detail)
	}
	fmt.Fprintf(w, "\nverification passed\t%v\n", rep.OK)
}

func (c *cli) resume(ctx context.Context) error {
	p, err := c.readPlan()
	if err != nil {
		return err
	}
	return c.resumePlan(ctx, p)
}

// resumeOutput is what resume prints.
type resumeOutput struct {
	Connector   string `json:"connector"`
	State       string `json:"state"`
	Fingerprint string `json:"plan_fingerprint"`
	Partitions  int    `json:"partitions"`
	Action      string `json:"action"`
}

func (c *cli) resumePlan(ctx context.Context, p *plan.Plan) error {
	audit, done, err := c.audit()
	if err != nil {
		return err
	}
	defer done()
	res, err := app.Resume(ctx, c.env, c.s, p, c.o.yes, audit)
	in := resumeOutput{Connector: res.Intent.Connector, State: res.State, Fingerprint: res.Intent.Fingerprint,
		Partitions: res.Intent.Partitions, Action: res.Intent.Action}
	if errors.Is(err, app.ErrNotApproved) {
		c.emit("resume", in, func(w io.Writer) {
			fmt.Fprintf(w, "would do\t%s\n", in.Action)
			fmt.Fprintln(w, "approve with\t-yes")
		})
		return err
	}
	if err != nil {
		return err
	}
	c.emit("resume", in, func(w io.Writer) { fmt.Fprintf(w, "resumed\t%s is %s\n", in.Connector, in.State) })
	if c.afterResume != nil {
		return c.afterResume(ctx)
	}
	return nil
}

func (c *cli) status(ctx context.Context) error {
	p, err := c.readPlan()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	fp := ""
	var prev *app.StatusReport
	if p != nil {
		fp = p.Fingerprint
		var last struct {
			Exists    bool      `json:"exists"`
			NextTotal int64     `json:"next_total"`
			TotalLag  int64     `json:"total_lag"`
			At        time.Time `json:"at"`
		}
		ok, err := c.lastAudit("status", fp, &last)
		if err != nil {
			return err
		}
		if ok {
			prev = &app.StatusReport{Exists: last.Exists, NextTotal: last.NextTotal, TotalLag: last.TotalLag, At: last.At}
		}
	}
	rep, err := app.ReadStatus(ctx, c.env, c.s, p, prev)
	if err != nil {
		return err
	}
	if err := c.record("status", fp, map[string]any{"exists": rep.Exists, "state": rep.State, "tasks": rep.Tasks,
		"total_lag": rep.TotalLag, "next_total": rep.NextTotal, "at": rep.At}); err != nil {
		return err
	}
	c.emit("status", rep, func(w io.Writer) {
		if !rep.Exists {
			fmt.Fprintf(w, "connector %s does not exist\n", rep.Connector)
			return
		}
		fmt.Fprintf(w, "connector\t%s %s, tasks %v\n", rep.Connector, rep.State, rep.Tasks)
		if rep.ReadBack != "" {
			fmt.Fprintf(w, "offsets against plan\t%s\n", rep.ReadBack)
		}
		fmt.Fprintf(w, "total lag\t%d\n", rep.TotalLag)
		switch {
		case rep.Advancing == nil:
			fmt.Fprintf(w, "progress\tno earlier status of this plan to compare with\n")
		case rep.Stalled:
			fmt.Fprintf(w, "progress\tSTALLED: MM2's offsets did not move in %s although it lags\n", rep.Since)
		default:
			fmt.Fprintf(w, "progress\tMM2's offsets moved by %d in %s\n", rep.Moved, rep.Since)
		}
		if len(rep.Lag) > 0 {
			fmt.Fprintln(w, "PARTITION\tNEXT\tEND\tSTABLE END\tLAG")
			for _, l := range rep.Lag {
				fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\n", l.Partition, l.Next, l.End, l.StableEnd, l.Lag)
			}
		}
	})
	return nil
}

// runAll chains precheck and plan, apply, resume (only with -yes) and the
// verification after resume.
func (c *cli) runAll(ctx context.Context) error {
	p, err := c.buildPlan(ctx)
	if err != nil {
		return err
	}
	if c.o.yes {
		// The records MM2 will copy first are read while apply runs.
		if err := c.env.StartBoundaryCapture(ctx, c.s, p, nil); err != nil {
			return err
		}
	}
	if err := c.applyPlan(ctx, p); err != nil {
		return err
	}
	if err := c.resumePlan(ctx, p); err != nil {
		return err
	}
	return c.postVerify(ctx, p)
}

// rollback chooses the rollback of the connector's phase: before resume (it
// never ran: delete it and its offsets) or after resume (write C' = M'+1 to
// -rollback-group). Both need -yes; without it they say what they would do.
func (c *cli) rollback(ctx context.Context) error {
	p, err := c.readPlan()
	if err != nil {
		return err
	}
	audit, done, err := c.audit()
	if err != nil {
		return err
	}
	defer done()
	res, err := app.Rollback(ctx, c.env, c.s, p, c.o.rollbackGroup, c.o.yes, audit)
	reversePath := ""
	var reverse *plan.Plan
	if err == nil && res.Reverse != nil {
		reverse = res.Reverse.Plan()
		reversePath = strings.TrimSuffix(c.o.planPath, ".json") + ".reverse.json"
		var buf bytes.Buffer
		if err := reverse.Encode(&buf); err != nil {
			return err
		}
		if err := writeFileAtomic(reversePath, buf.Bytes()); err != nil {
			return err
		}
	}
	if res != nil {
		out := rollbackOutput{Connector: res.Connector, Phase: res.Phase, Group: res.Group, Committed: res.Committed, Intent: res.Intent.Action}
		c.emit("rollback", out, func(w io.Writer) {
			fmt.Fprintf(w, "phase\t%s\n", res.Phase)
			if errors.Is(err, app.ErrNotApproved) {
				fmt.Fprintf(w, "would do\t%s\n", res.Intent.Action)
				fmt.Fprintln(w, "approve with\t-yes")
				return
			}
			if reverse != nil {
				fmt.Fprintf(w, "reverse plan\t%s (%s)\n", reversePath, reverse.Fingerprint)
				fmt.Fprintf(w, "group %s\t%d partitions committed at C' = M'+1\n", res.Group, res.Committed)
				_ = reverse.WriteSummary(w)
			}
		})
	}
	return err
}

// rollbackOutput is what rollback prints.
type rollbackOutput struct {
	Connector string `json:"connector"`
	Phase     string `json:"phase"`
	Group     string `json:"group,omitempty"`
	Committed int    `json:"committed"`
	Intent    string `json:"intent"`
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory, synced and renamed over path: a reader sees the old file or the
// whole new one, never half a plan.
func writeFileAtomic(path string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
