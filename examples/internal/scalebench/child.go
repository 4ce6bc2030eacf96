package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/plan"
)

// childArg, as the first argument, makes the binary run one job read from
// stdin and print its childResult on stdout.
const childArg = "-child-run"

// childResult is what a child measured.
type childResult struct {
	OK      bool          `json:"ok"`
	Error   string        `json:"error,omitempty"`
	Elapsed time.Duration `json:"elapsed_ns"`
	// Plan and Apply split a library run: MakePlan, then Apply.
	Plan  time.Duration `json:"plan_ns,omitempty"`
	Apply time.Duration `json:"apply_ns,omitempty"`
	// ToResume is, in a pause run, when the resume request went out; the
	// rest of Elapsed is Connect starting the connector and its tasks.
	ToResume time.Duration `json:"to_resume_ns,omitempty"`
	// FirstRecord is, in a pause run, when the target's end offsets first
	// grew after the resume request: MM2's first copied record.
	FirstRecord time.Duration `json:"first_record_ns,omitempty"`
	// Verify is, in a pause run, how long `cutover verify` after the resume
	// took (PostVerify: catch-up, the boundary check on every partition,
	// acceptance), and VerifyOK whether it passed.
	Verify   time.Duration `json:"verify_ns,omitempty"`
	VerifyOK bool          `json:"verify_ok,omitempty"`
	// CatchUp is the part of Verify spent until MM2 had copied what the
	// source held when verify began: Connect's time (copying, and storing
	// its offsets every offset.flush.interval.ms), not the tool's.
	CatchUp time.Duration `json:"catch_up_ns,omitempty"`
	// Again is a second `cutover verify` right after the first passed:
	// MM2 has caught up, so it is the tool's own time (read-back of the
	// offsets, lag, the boundary check on every partition, acceptance).
	Again time.Duration `json:"verify_again_ns,omitempty"`
	Steps []step        `json:"steps,omitempty"`
	// Costs are what each step cost the Kafka clusters (cli: plan and
	// apply, as each process logged it; raw: the floor's reads).
	Costs []stepCost `json:"costs,omitempty"`
	// MaxRSS is the peak resident set size in bytes of the process that
	// did the work: the child's own, read when its work is done, or for
	// the cli run the larger of its two processes'.
	MaxRSS int64 `json:"max_rss_bytes"`
}

// step is one thing a run did: At from the start of the measured work,
// Took when it is a request with a known duration.
type step struct {
	At   time.Duration `json:"at_ns"`
	Took time.Duration `json:"took_ns,omitempty"`
	What string        `json:"what"`
}

func runChild(stdin io.Reader, stdout io.Writer) int {
	var j job
	var res childResult
	if err := json.NewDecoder(stdin).Decode(&j); err != nil {
		res.Error = "decode job: " + err.Error()
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		res = doJob(ctx, j)
		cancel()
		if j.Mode != "cli" { // cliRun measured the processes it started; this one only waited
			res.MaxRSS = peakRSS()
		}
	}
	if err := json.NewEncoder(stdout).Encode(res); err != nil {
		return 1
	}
	return 0
}

func doJob(ctx context.Context, j job) childResult {
	switch j.Mode {
	case "lib":
		return libraryRun(ctx, j)
	case "cli":
		return cliRun(ctx, j)
	case "raw":
		return rawFloor(ctx, j)
	case "status":
		return statusRun(ctx, j)
	case "pause":
		return pauseRun(ctx, j)
	}
	return childResult{Error: "unknown mode " + j.Mode}
}

// libraryRun does what `cutover plan` and `cutover apply` do.
func libraryRun(ctx context.Context, j job) (res childResult) {
	if j.CPUProfile != "" {
		f, err := os.Create(j.CPUProfile)
		if err != nil {
			return childResult{Error: err.Error()}
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return childResult{Error: err.Error()}
		}
		defer pprof.StopCPUProfile()
	}
	tr := newTracer()
	_, p, planned, err := planAndApply(ctx, j, tr, false)
	res = tr.result(err)
	res.Plan, res.Apply = planned, res.Elapsed-planned
	if err == nil && j.PlanFile != "" {
		f, err := os.Create(j.PlanFile)
		if err == nil {
			err = errors.Join(p.Encode(f), f.Close())
		}
		if err != nil {
			res.OK, res.Error = false, "write plan: "+err.Error()
		}
	}
	return res
}

// planAndApply runs MakePlan and Apply and returns their Env, the plan and
// when MakePlan ended. With resume, it starts the capture of the boundary
// records once the plan is made, as `cutover run -yes` does.
func planAndApply(ctx context.Context, j job, tr *tracer, resume bool) (*app.Env, *plan.Plan, time.Duration, error) {
	s := cutoverSettings(j, tr.logger())
	env, err := app.Open(s)
	if err != nil {
		return nil, nil, 0, err
	}
	p, _, err := app.MakePlan(ctx, env, s, time.Now())
	planned := tr.since()
	if err != nil {
		return env, nil, planned, fmt.Errorf("plan: %w", err)
	}
	tr.mark(fmt.Sprintf("plan built: %d entries", len(p.Entries)))
	if err := p.Blocked(); err != nil {
		return env, nil, planned, err
	}
	if resume {
		if err := env.StartBoundaryCapture(ctx, s, p, nil); err != nil {
			return env, nil, planned, err
		}
	}
	res, err := app.Apply(ctx, env, s, p, app.NewAudit(nil))
	if err != nil {
		return env, nil, planned, fmt.Errorf("apply: %w", err)
	}
	if res.Matched != len(p.Entries) {
		return env, nil, planned, fmt.Errorf("apply: %d of %d offsets read back", res.Matched, len(p.Entries))
	}
	source, target := env.Source.(*kafkaadmin.Client), env.Target.(*kafkaadmin.Client) // Open makes clients
	tr.mark(fmt.Sprintf("applied: %d offsets read back; Kafka requests: source %d, target %d",
		res.Matched, source.Requests(), target.Requests()))
	return env, p, planned, nil
}

// statusRun does what `cutover status` does on the applied connector.
func statusRun(ctx context.Context, j job) childResult {
	tr := newTracer()
	err := func() error {
		f, err := os.Open(j.PlanFile)
		if err != nil {
			return err
		}
		p, err := plan.Decode(f)
		f.Close()
		if err != nil {
			return err
		}
		tr.mark("plan decoded")
		s := cutoverSettings(j, tr.logger())
		env, err := app.Open(s)
		if err != nil {
			return err
		}
		rep, err := app.ReadStatus(ctx, env, s, p, nil)
		if err != nil {
			return err
		}
		if want := fmt.Sprintf("%d match, 0 wrong value, 0 missing, 0 unexpected", len(p.Entries)); !strings.HasPrefix(rep.ReadBack, want) {
			return fmt.Errorf("status read-back %q, want %q", rep.ReadBack, want)
		}
		tr.mark(fmt.Sprintf("status: %s, total lag %d", rep.State, rep.TotalLag))
		return nil
	}()
	return tr.result(err)
}

// pauseRun commits the group's offsets (the old job's last commit), then
// plans, applies and resumes with approval until the connector runs, in
// one process and with one Env as `cutover run -yes` does: the operator
// pause at its shortest, the stability window included.
func pauseRun(ctx context.Context, j job) childResult {
	src, err := kafkaadmin.NewClient(j.kafkaConfig(j.Source, "scalebench-job", true))
	if err != nil {
		return childResult{Error: err.Error()}
	}
	offs := make(map[kafkaadmin.TopicPartition]int64)
	for _, t := range j.Topics {
		for p := range j.PerTopic {
			offs[kafkaadmin.TopicPartition{Topic: t, Partition: p}] = committed(p)
		}
	}
	if err := src.CommitOffsets(ctx, j.Group, offs); err != nil {
		return childResult{Error: "commit: " + err.Error()}
	}
	tr := newTracer() // the pause starts when the last commit is done
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch() // a failed run stops the watcher at once
	var verifyRun func() (time.Duration, time.Duration, bool, error)
	var first <-chan time.Duration
	err = func() error {
		env, p, _, err := planAndApply(ctx, j, tr, true)
		if err != nil {
			return err
		}
		s := cutoverSettings(j, tr.logger())
		if first, err = watchFirstRecord(watchCtx, j, tr); err != nil {
			return err
		}
		in, err := app.Resume(ctx, env, s, p, true, app.NewAudit(nil))
		if err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		tr.mark("connector " + in.State)
		verifyRun = func() (time.Duration, time.Duration, bool, error) {
			start := time.Now()
			rep, err := app.PostVerify(ctx, env, s, p, nil)
			if err != nil {
				return 0, 0, false, err
			}
			var catchUp time.Duration
			if n := len(rep.CatchUp.Samples); n > 0 {
				catchUp = rep.CatchUp.Samples[n-1].At.Sub(start)
			}
			if !rep.OK { // why, for the record of the run
				pending, differ := 0, 0
				for _, b := range rep.Boundary {
					switch {
					case b.OK():
					case b.Pending:
						pending++
					default:
						differ++
					}
				}
				tr.mark(fmt.Sprintf("verify did not pass: caught up %v, boundary records pending %d, differing %d; acceptance checks failed: %v",
					rep.CatchUp.Reached, pending, differ, rep.Acceptance.Failed()))
			}
			return time.Since(start), catchUp, rep.OK, nil
		}
		return nil
	}()
	res := tr.result(err)
	if first != nil && err == nil {
		select {
		case res.FirstRecord = <-first:
		case <-ctx.Done():
		}
	}
	if verifyRun != nil {
		var verr error
		if res.Verify, res.CatchUp, res.VerifyOK, verr = verifyRun(); verr != nil {
			res.OK, res.Error = false, "verify: "+verr.Error()
		} else if res.VerifyOK {
			tr.mark("verifying again, MM2 caught up")
			var ok bool
			if res.Again, _, ok, verr = verifyRun(); verr != nil || !ok {
				res.OK, res.Error, res.VerifyOK = false, fmt.Sprintf("verify again: ok %v, %v", ok, verr), false
			}
		}
		tr.mark("verified")
		res.Steps = tr.result(nil).Steps // the pause's steps, then verify's

	}
	for _, st := range res.Steps {
		if st.What == "resuming the connector" {
			res.ToResume = st.At
		}
	}
	return res
}

// watchFirstRecord reads the last stable offsets of the job's target
// partitions and then polls them every 20 ms until ctx ends; the channel
// gets, from the tracer's start, when their sum first grew: the first
// record MM2 copied that a read_committed reader sees (for an exactly-once
// connector, once its first transaction committed). The polls are
// ListOffsets of every partition on the target broker (three per leader:
// log start, end and last stable offset), which MM2's start shares.
func watchFirstRecord(ctx context.Context, j job, tr *tracer) (<-chan time.Duration, error) {
	tgt, err := kafkaadmin.NewClient(j.kafkaConfig(j.Target, "scalebench-watch", false))
	if err != nil {
		return nil, err
	}
	var tps []kafkaadmin.TopicPartition
	for _, t := range j.Topics {
		for p := range j.PerTopic {
			tps = append(tps, kafkaadmin.TopicPartition{Topic: t, Partition: p})
		}
	}
	// The last stable offsets: what a read_committed reader sees, the same
	// as the ends without transactions, and for an exactly-once connector
	// the first record once its transaction committed.
	sum := func() (int64, error) {
		bounds, err := tgt.LogBounds(ctx, tps)
		var n int64
		for _, b := range bounds {
			n += b.StableEnd
		}
		return n, err
	}
	base, err := sum()
	if err != nil {
		return nil, fmt.Errorf("target end offsets: %w", err)
	}
	out := make(chan time.Duration, 1)
	go func() {
		defer close(out)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if n, err := sum(); err == nil && n > base {
				out <- tr.since()
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return out, nil
}

// tracer records what a run does: every Connect request the client logs
// (method, path, status, duration) and every step the library logs.
type tracer struct {
	start time.Time
	mu    sync.Mutex
	steps []step
	costs []stepCost
}

func newTracer() *tracer { return &tracer{start: time.Now()} }

func (t *tracer) since() time.Duration { return time.Since(t.start) }

func (t *tracer) mark(what string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.steps = append(t.steps, step{At: time.Since(t.start), What: what})
}

func (t *tracer) result(err error) childResult {
	res := childResult{OK: err == nil, Elapsed: t.since()}
	if err != nil {
		res.Error = err.Error()
	}
	t.mu.Lock()
	res.Steps = append(res.Steps, t.steps...)
	res.Costs = append(res.Costs, t.costs...)
	t.mu.Unlock()
	return res
}

func (t *tracer) logger() *slog.Logger { return slog.New(traceHandler{t}) }

// traceHandler turns log records into steps.
type traceHandler struct{ t *tracer }

func (h traceHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h traceHandler) Handle(_ context.Context, r slog.Record) error {
	s := step{At: r.Time.Sub(h.t.start), What: r.Message}
	var method, path string
	var status int64
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "method":
			method = a.Value.String()
		case "path":
			path = a.Value.String()
		case "status":
			status = a.Value.Int64()
		case "duration":
			s.Took = a.Value.Duration()
		case "error", "attempt", "wait":
			s.What += " " + a.Key + "=" + a.Value.String()
		}
		return true
	})
	if r.Message == "kafka connect request" {
		s.At -= s.Took
		s.What = fmt.Sprintf("%s %s -> %d", method, path, status)
	}
	h.t.mu.Lock()
	h.t.steps = append(h.t.steps, s)
	h.t.mu.Unlock()
	return nil
}

func (h traceHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h traceHandler) WithGroup(string) slog.Handler      { return h }
