// Command job is the Kubernetes Job of the cutover: it builds the plan (or
// reads the one mounted at MM2CUTOVER_PLAN), creates the MirrorSourceConnector
// STOPPED if it is missing, applies the plan's offsets and verifies them by
// reading them back. It never resumes the connector: an operator does, with
// `cutover resume -yes`, after reading the Job's result.
//
// It is idempotent: a Job retried after a failure at any point converges to
// the same offsets — a connector already holding the plan's offsets is left
// alone — and it never rewinds a connector that has run: building its plan,
// its precheck fails (connector-name, exit status 3) on a connector of its
// name that runs, ran past the plan or is another flow's; with a plan
// mounted, it refuses (exit status 4). Either way it writes nothing.
//
// Configuration: the flags of examples/cutover, each also read from
// MM2CUTOVER_<FLAG> (so a Job sets only environment variables, credentials
// from Secrets: MM2CUTOVER_SOURCE_SASL_PASSWORD, MM2CUTOVER_TARGET_SASL_PASSWORD,
// MM2CUTOVER_CONNECT_PASSWORD). Progress and the audit trail go to stderr;
// the last line on stdout is one JSON object with the result.
//
// Exit status: 0 applied or already applied; 1 error (worth a retry: an
// unreachable system, a read-back that never read);
// 2 bad configuration, or settings a system rejected (credentials, CA,
// security protocol; a Connect REST 401 or 403): no retry helps; 3 a check
// failed (precheck, blocked plan, read-back); 4 refused by a guard (the
// connector ran, is not the plan's, another plan, other clusters).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mm2cutover/mm2cutover/examples/internal/cutover"
	"github.com/mm2cutover/mm2cutover/plan"
)

// version is stamped at build time (-ldflags "-X main.version=0.1.0", as
// examples/job/Dockerfile does); every plan the Job builds records it as its
// tool version, mm2cutover-job/<version>.
var version = "dev"

// crashEnv names the points where a test makes the Job die, as a killed
// Pod would: before-create, after-create, after-patch, before-verify.
const crashEnv = "MM2CUTOVER_JOB_CRASH_AT"

// result is the Job's last line on stdout.
type result struct {
	Result      string  `json:"result"` // applied, already-applied, refused, check-failed, error
	Connector   string  `json:"connector,omitempty"`
	Fingerprint string  `json:"plan_fingerprint,omitempty"`
	PlanSource  string  `json:"plan_source,omitempty"` // built or mounted
	Created     bool    `json:"created"`
	Patched     bool    `json:"patched"`
	Partitions  int     `json:"partitions"`
	Matched     int     `json:"matched"`
	Error       string  `json:"error,omitempty"`
	Seconds     float64 `json:"seconds"`
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the Job. Everything it prints goes through a
// cutover.SafeWriter: names from a plan or the clusters never reach a log
// with control characters raw.
func run(args []string, stdout, stderr io.Writer) int {
	out, errw := cutover.NewSafeWriter(stdout), cutover.NewSafeWriter(stderr)
	defer out.Flush()
	defer errw.Flush()
	stdout, stderr = out, errw
	start := time.Now()
	fs := flag.NewFlagSet("job", flag.ContinueOnError)
	fs.SetOutput(stderr)
	flags := cutover.BindFlags(fs)
	planPath := fs.String("plan", "", "a plan to apply (e.g. mounted from a ConfigMap); empty: build one")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	flags.AlsoFromEnv("plan")
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	res := result{}
	code := apply(ctx, flags, planPath, log, stderr, &res)
	res.Seconds = time.Since(start).Seconds()
	b, _ := json.Marshal(res)
	fmt.Fprintln(stdout, string(b))
	return code
}

// apply runs the Job. planFlag is read after flags.Settings, which also sets
// it from MM2CUTOVER_PLAN.
func apply(ctx context.Context, flags *cutover.Flags, planFlag *string, log *slog.Logger, stderr io.Writer, res *result) int {
	s, err := flags.Settings()
	if err != nil {
		return classify(res, err)
	}
	planPath := *planFlag
	s.ToolVersion, s.Logger = "mm2cutover-job/"+version, log
	log.Info("mm2cutover-job", "tool_version", s.ToolVersion)
	if at := os.Getenv(crashEnv); at != "" {
		s.OnStep = func(step string) {
			if step == at {
				log.Warn("dying on purpose", "at", step)
				os.Exit(137) // as SIGKILL: no cleanup, nothing more written
			}
		}
	}
	s = s.WithDefaults()
	res.Connector = s.Connector
	env, err := cutover.Open(s)
	if err != nil {
		return classify(res, err)
	}
	if err := cutover.CheckConnect(ctx, env, s); err != nil {
		return classify(res, err)
	}

	var p *plan.Plan
	if planPath != "" {
		// A plan named but absent is refused: the Job never applies a plan
		// nobody reviewed in place of the one that was meant.
		f, err := os.Open(planPath)
		if err != nil {
			return classify(res, fmt.Errorf("%w: mounted plan: %w", cutover.ErrSettings, err))
		}
		p, err = plan.Decode(f)
		f.Close()
		if err != nil {
			return classify(res, fmt.Errorf("mounted plan %s: %w", planPath, err))
		}
		res.PlanSource = "mounted"
	} else {
		if p, _, err = cutover.MakePlan(ctx, env, s, time.Now()); err != nil {
			return classify(res, err)
		}
		res.PlanSource = "built"
	}
	res.Fingerprint, res.Partitions = p.Fingerprint, len(p.Entries)
	ar, err := cutover.Apply(ctx, env, s, p, cutover.NewAudit(stderr))
	if ar != nil {
		res.Created, res.Patched, res.Matched = ar.Created, ar.Patched, ar.Matched
	}
	if err != nil {
		return classify(res, err)
	}
	res.Result = "applied"
	if ar.Guard == plan.GuardAlreadyApplied.String() {
		res.Result = "already-applied"
	}
	log.Info("offsets applied and verified; the connector stays STOPPED until an operator resumes it",
		"connector", s.Connector, "plan", p.Fingerprint, "result", res.Result)
	return 0
}

func classify(res *result, err error) int {
	code := cutover.ExitStatus(err)
	kind := map[int]string{cutover.ExitCheckFailed: "check-failed", cutover.ExitRefused: "refused"}[code]
	if kind == "" {
		kind = "error"
	}
	return fail(res, kind, err, code)
}

func fail(res *result, kind string, err error, code int) int {
	res.Result, res.Error = kind, err.Error()
	return code
}
