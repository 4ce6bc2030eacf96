// Command job is the Kubernetes Job of the cutover: it builds the plan (or
// reads the one mounted at MM2CUTOVER_PLAN), keeps it in the ConfigMap
// MM2CUTOVER_PLAN_CONFIGMAP names (see planstore.go), creates the MirrorSourceConnector
// STOPPED if it is missing, applies the plan's offsets and verifies them by
// reading them back. It never resumes the connector: an operator does, with
// `cutover resume -yes`, after reading the Job's result.
//
// With MM2CUTOVER_PLAN_CONFIGMAP, the plan is kept in that ConfigMap of the
// Job's namespace (key plan.json) before any offset is written, and a plan
// already there (a retried Job's, or one an operator reviewed and put there)
// is applied instead of building another; the steps after the Job mount it.
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
// MM2CUTOVER_CONNECT_PASSWORD, or client properties files mounted from
// Secrets: MM2CUTOVER_SOURCE_CLIENT_CONFIG, ...). Progress and the audit
// trail go to stderr; the last line on stdout is one JSON object with the
// result, always, a bad flag included: result (applied, already-applied,
// check-failed, refused, error), error, kind (errkind.Of's name for
// the error: retry, outcome-unknown, refused, check-failed, rejected) and
// exit_status are the fields the CLI's failure document (cutover -json,
// mm2cutover/failure/v1) has too.
//
// Exit status: 0 applied or already applied; 1 error (worth a retry: an
// unreachable system, a read-back that never read; also whatever failed
// after SIGTERM, as when the Pod is deleted or evicted);
// 2 bad configuration, or settings a system rejected (credentials, CA,
// security protocol; a Connect REST 401 or 403, a REST URL that redirects): no retry helps; 3 a check
// failed (precheck, blocked plan, read-back); 4 refused by a guard (the
// connector ran, is not the plan's, another plan, other clusters).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/clientconf"
	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
	"github.com/mm2cutover/mm2cutover/examples/internal/term"
	"github.com/mm2cutover/mm2cutover/plan"
)

// version is stamped at build time (-ldflags "-X main.version=...", as
// examples/job/Dockerfile and the release do); unstamped, it is the version
// of this source tree, the one in the repository's VERSION file. Every plan
// the Job builds records it as its tool version, mm2cutover-job/<version>.
var version = "0.2.0"

// crashEnv names the points where a test makes the Job die, as a killed
// Pod would: before-create, after-create, before-patch, after-patch,
// before-verify.
const crashEnv = "MM2CUTOVER_JOB_CRASH_AT"

// holdEnv names a point where a test makes the Job wait, "STEP" (until the
// Pod is deleted) or "STEP:DURATION", so that it can delete the Job's Pod,
// or a worker's, while the Job is there. The Kubernetes tests set it from
// an optional ConfigMap key, so that the retried Pod does not wait.
const holdEnv = "MM2CUTOVER_JOB_HOLD_AT"

// result is the Job's last line on stdout.
type result struct {
	Result      string  `json:"result"` // applied, already-applied, refused, check-failed, error
	Connector   string  `json:"connector,omitempty"`
	Fingerprint string  `json:"plan_fingerprint,omitempty"`
	PlanSource  string  `json:"plan_source,omitempty"` // built, mounted or stored (from the plan ConfigMap)
	PlanStore   string  `json:"plan_configmap,omitempty"`
	Created     bool    `json:"created"`
	Patched     bool    `json:"patched"`
	Partitions  int     `json:"partitions"`
	Matched     int     `json:"matched"`
	Error       string  `json:"error,omitempty"`
	Kind        string  `json:"kind,omitempty"`   // errkind.Of's name for the error
	Advice      string  `json:"advice,omitempty"` // what to do, when the error says (errkind.Advice)
	ExitStatus  int     `json:"exit_status"`
	Seconds     float64 `json:"seconds"`
}

func main() {
	app.LeanGC()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the Job. Everything it prints goes through a
// term.SafeWriter: names from a plan or the clusters never reach a log
// with control characters raw.
func run(args []string, stdout, stderr io.Writer) int {
	out, errw := term.NewSafeWriter(stdout), term.NewSafeWriter(stderr)
	defer out.Flush()
	defer errw.Flush()
	stdout, stderr = out, errw
	start := time.Now()
	fs := flag.NewFlagSet("job", flag.ContinueOnError)
	fs.SetOutput(stderr)
	flags := settings.BindFlags(fs)
	planPath := fs.String("plan", "", "a plan to apply (e.g. mounted from a ConfigMap); empty: build one")
	storeName := fs.String("plan-configmap", "", "the ConfigMap of the Job's namespace that keeps the plan (key plan.json): a plan there is applied, else the plan built is stored there before any offset is written")
	res := result{}
	code := app.ExitOK
	switch err := fs.Parse(args); {
	case err != nil:
		code = fail(&res, "error", fmt.Errorf("%w: %w", settings.ErrSettings, err), app.ExitUsage)
	case fs.NArg() > 0:
		code = fail(&res, "error", fmt.Errorf("%w: unexpected arguments %q: the Job takes flags only", settings.ErrSettings, fs.Args()), app.ExitUsage)
	default:
		flags.AlsoFromEnv("plan", "plan-configmap")
		log := slog.New(slog.NewJSONHandler(stderr, nil))
		ctx, stop := app.InterruptContext(func() {
			// Still the last line: the result, worth a retry (res belongs
			// to the step, which still runs).
			r := result{Result: "error", Kind: errkind.Retry.String(), ExitStatus: app.ExitError, Seconds: time.Since(start).Seconds(),
				Error: fmt.Sprintf("interrupted by a signal: the step did not end within %s of it", app.InterruptGrace)}
			b, _ := json.Marshal(r)
			fmt.Fprintln(stdout, string(b))
		})
		defer stop()
		code = apply(ctx, flags, planPath, storeName, log, stderr, &res)
		if ctx.Err() != nil && code != app.ExitOK {
			// SIGTERM (the Pod deleted or evicted) cut a step short: whatever
			// failed then, say so and exit worth a retry, never as a check that
			// failed or a refusal, which would fail the Job for good.
			code, res.Result = app.ExitError, "error"
			res.Error = "interrupted by a signal: " + res.Error
		}
	}
	res.ExitStatus = code
	res.Seconds = time.Since(start).Seconds()
	b, _ := json.Marshal(res)
	fmt.Fprintln(stdout, string(b))
	return code
}

// apply runs the Job. planFlag and storeFlag are read after
// flags.Settings, which also sets them from MM2CUTOVER_PLAN and
// MM2CUTOVER_PLAN_CONFIGMAP.
func apply(ctx context.Context, flags *settings.Flags, planFlag, storeFlag *string, log *slog.Logger, stderr io.Writer, res *result) int {
	s, err := flags.Settings()
	if err != nil {
		return classify(res, err)
	}
	planPath, storeName := *planFlag, *storeFlag
	if planPath != "" {
		// Before any contact: a plan named but absent, or a directory (a
		// ConfigMap mounted without subPath), is a setting no retry fixes.
		if fi, err := os.Stat(planPath); err != nil {
			return classify(res, fmt.Errorf("%w: mounted plan: %w", settings.ErrSettings, err))
		} else if fi.IsDir() {
			return classify(res, fmt.Errorf("%w: mounted plan %s is a directory (mount the plan's key as a file, with subPath or items)", settings.ErrSettings, planPath))
		}
	}
	s.ToolVersion, s.Logger = "mm2cutover-job/"+version, log
	log.Info("mm2cutover-job", "tool_version", s.ToolVersion)
	crashAt := os.Getenv(crashEnv)
	holdAt, holdFor, _ := strings.Cut(os.Getenv(holdEnv), ":")
	if crashAt != "" || holdAt != "" {
		s.OnStep = func(step string) {
			if step == crashAt {
				log.Warn("dying on purpose", "at", step)
				os.Exit(137) // as SIGKILL: no cleanup, nothing more written
			}
			if step == holdAt {
				hold(ctx, log, step, holdFor)
			}
		}
	}
	s = s.WithDefaults()
	res.Connector = s.Connector
	env, err := app.Open(s)
	if err != nil {
		return classify(res, err)
	}
	defer env.Close()
	if err := app.FirstContact(ctx, env, s, true); err != nil {
		return classify(res, err)
	}

	var p *plan.Plan
	switch {
	case planPath != "":
		// A plan named but absent is refused: the Job never applies a plan
		// nobody reviewed in place of the one that was meant.
		f, err := clientconf.OpenInput(planPath) // a pipe blocks neither the open nor the reads for ever
		if err != nil {
			return classify(res, fmt.Errorf("%w: mounted plan: %w", settings.ErrSettings, err))
		}
		p, err = plan.Decode(f)
		f.Close()
		if err != nil {
			return classify(res, fmt.Errorf("mounted plan %s: %w", planPath, err))
		}
		res.PlanSource = "mounted"
	case storeName != "":
		res.PlanStore = storeName
		if p, res.PlanSource, err = storedPlan(ctx, env, s, storeName, log); err != nil {
			return classify(res, err)
		}
	default:
		if p, _, err = app.MakePlan(ctx, env, s, time.Now()); err != nil {
			return classify(res, err)
		}
		res.PlanSource = "built"
	}
	res.Fingerprint, res.Partitions = p.Fingerprint, len(p.Entries)
	ar, err := app.Apply(ctx, env, s, p, app.NewAudit(stderr))
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

// hold waits at step for d (a time.Duration), or until ctx ends when d is
// empty or invalid.
func hold(ctx context.Context, log *slog.Logger, step, d string) {
	wait, err := time.ParseDuration(d)
	if err != nil {
		wait = 24 * time.Hour
	}
	log.Warn("holding on purpose", "at", step, "for", wait.String())
	select {
	case <-ctx.Done():
	case <-time.After(wait):
	}
	log.Warn("hold over", "at", step)
}

// storedPlan returns the plan kept in the ConfigMap name ("stored"), or
// builds one and keeps it there before returning it ("built"): no offset
// is ever written from a plan that is not kept.
func storedPlan(ctx context.Context, env *app.Env, s settings.Settings, name string, log *slog.Logger) (*plan.Plan, string, error) {
	store, err := newPlanStore(name)
	if err != nil {
		return nil, "", err
	}
	cm, err := store.load(ctx)
	if err != nil {
		return nil, "", err
	}
	if text := cm.Data[planKey]; strings.TrimSpace(text) != "" {
		p, err := plan.Decode(strings.NewReader(text))
		if err != nil {
			return nil, "", fmt.Errorf("the plan in ConfigMap %s: %w", name, err)
		}
		log.Info("applying the plan kept in the ConfigMap", "configmap", name, "plan", p.Fingerprint, "created", p.CreatedAt)
		return p, "stored", nil
	}
	p, _, err := app.MakePlan(ctx, env, s, time.Now())
	if err != nil {
		return nil, "", err
	}
	var buf bytes.Buffer
	if err := p.Encode(&buf); err != nil {
		return nil, "", err
	}
	if err := store.save(ctx, cm, buf.Bytes(), p.Fingerprint); err != nil {
		return nil, "", err
	}
	log.Info("plan kept in the ConfigMap before any offset is written", "configmap", name, "key", planKey, "plan", p.Fingerprint)
	return p, "built", nil
}

// classify fills the result of a failed Job from err: the exit status (a
// table over errkind.Of) and the kind.
func classify(res *result, err error) int {
	code := app.ExitStatus(err)
	res.Kind, res.Advice = errkind.Of(err).String(), errkind.Advice(err)
	return fail(res, app.ResultOf(code), err, code)
}

func fail(res *result, kind string, err error, code int) int {
	res.Result, res.Error = kind, err.Error()
	return code
}
