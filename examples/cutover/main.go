// Command cutover moves replication from a Flink job (or any replicator that
// commits its source position to a consumer group) to MirrorMaker 2's
// MirrorSourceConnector on Kafka Connect, without losing a record.
//
//	cutover precheck [flags]   read-only checks; prints what blocks the cutover
//	cutover plan [flags]       precheck, then write the plan (-plan) and show it
//	cutover apply [flags]      create the connector STOPPED, back up, guard, PATCH, read back
//	cutover verify [flags]     before resume: read-back; after: boundary, lag, acceptance
//	cutover resume [flags]     resume the connector (-yes; without it, say what it would do)
//	cutover status [flags]     the connector's state, its offsets against the plan, the lag
//	cutover run [flags]        all of the above in order (resumes only with -yes)
//	cutover rollback [flags]   before resume: delete the connector and its offsets;
//	                           after resume: stop it and write C' = M'+1 to -rollback-group (-yes)
//	cutover strimzi [flags]    re-check, then render the Strimzi resources (-strimzi-cluster) that
//	                           the operator applies; verify -strimzi-offsets reads them back
//	cutover report [flags]     the change record, from the plan and the audit file: an HTML page
//	                           that loads nothing, and the same as Markdown (reads no cluster)
//	cutover -sandbox           the whole cutover on local real Kafka and Connect (a binary
//	                           built with -tags sandbox: go run -tags sandbox ./examples/cutover -sandbox)
//	cutover -sandbox -secure   the same on SASL_SSL clusters and HTTPS Connect with basic auth
//	cutover -sandbox -secure -kerberos
//	                           the same through the brokers' Kerberos listeners (GSSAPI, keytabs
//	                           from an MIT Kerberos KDC the sandbox starts)
//	cutover help [step]        this help, or a step's examples and flags; also -h after a step
//	cutover options            the flags every step that reaches the clusters takes
//	cutover version            the tool version (also -version; -o json for JSON)
//	cutover completion bash|zsh  a shell completion script made from the flags
//
// Flags may come before or after the step. Every flag can also be set
// through the environment (-source-bootstrap is MM2CUTOVER_SOURCE_BOOTSTRAP,
// and so on) or a settings file of such lines (-config); flags win over the
// environment, the environment over the file. Secrets only come from the
// environment: MM2CUTOVER_SOURCE_SASL_PASSWORD, MM2CUTOVER_TARGET_SASL_PASSWORD,
// MM2CUTOVER_CONNECT_PASSWORD — or, per cluster, from the Kafka client
// properties file Kafka's tools take (-source-client-config,
// -target-client-config; -connect-client-config for the REST client's TLS).
// Progress goes to stderr, results to stdout (-o json, or -json, for
// machines: one JSON document per step, with a "schema" field; a failure
// document when a step fails before printing its own). A mistyped step or
// flag is refused with the ones it may have meant.
//
// Exit status: 0 done; 1 error worth a retry (a timeout, an unreachable
// system; also any step interrupted by SIGINT or SIGTERM); 2 usage or settings a system rejected (bad flags, a password
// without its user; a wrong password or unknown user, a certificate that
// does not verify against the CA given, a security protocol the listener
// does not speak, a Connect REST 401 or 403, a REST URL that redirects: no retry helps); 3 a check
// failed (precheck, blocked plan, verification, a connector FAILED after
// resume); 4 refused by a guard (stale plan, a connector that is not the
// plan's or not STOPPED, plan for other clusters); 5 resume or rollback not
// approved (dry run). A read-back that never read is 1.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/examples/internal/didyoumean"
	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
	"github.com/mm2cutover/mm2cutover/examples/internal/term"
)

// version is the tool version recorded in plans; a release build sets it
// with -ldflags "-X main.version=..."; otherwise readBuildInfo takes the
// module version go install stamps (version.go).
var version = defaultVersion

// defaultVersion is the version of a build that has no stamp: the version
// of this source tree, the one in the repository's VERSION file (a test
// holds every copy of it to that file).
const defaultVersion = "0.2.0"

func main() {
	app.LeanGC()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command line beyond Settings.
type options struct {
	planPath, auditPath string
	asJSON, yes         bool
	logLevel            slog.Level
	sandbox             bool
	goReplicator        bool
	fromGroup           bool
	secure              bool
	kerberos            bool
	showVersion         bool
	dryRun              bool
	table               bool
	rollbackGroup       string
	// The Strimzi path (strimzi.go): the strimzi step's output file,
	// ConfigMap names and KafkaMirrorMaker2 settings; verify's listed
	// offsets.
	strimziOut, strimziAlter, strimziList, strimziGroupID, strimziOffsets, strimziKubectl string
	strimziReplicas                                                                       int
	// reportOut is the report step's HTML file; the Markdown goes beside it.
	reportOut string
	// output is -o: text or json (outputFormats).
	output string
}

// outputFormats are the values of -o (-output): the tables, or -json's
// documents. There is no yaml: the documents are JSON with a schema field,
// and a YAML of them is one yq away.
var outputFormats = []string{"text", "json"}

// parseArgs parses flags before and after the step, and returns the step:
// "" when none was named.
func parseArgs(fs *flag.FlagSet, args []string) (string, error) {
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if fs.NArg() == 0 {
		return "", nil
	}
	name := fs.Arg(0)
	if err := fs.Parse(fs.Args()[1:]); err != nil {
		return name, err
	}
	if fs.NArg() > 0 {
		if (name == "help" || name == "completion") && fs.NArg() == 1 {
			return name + " " + fs.Arg(0), nil
		}
		return name, fmt.Errorf("unexpected arguments after %s: %q", name, fs.Args())
	}
	return name, nil
}

// run runs the command line. Everything it prints goes through a
// term.SafeWriter: names from a plan or the clusters never reach the
// terminal with control characters raw.
//
// On a terminal, stderr has a status line: the long waits (the stability
// window, the read-back, the catch-up after resume) show there what they
// await, how far they are and an estimate of the time left, rewritten in
// place; elsewhere they log a line every five seconds.
func run(args []string, stdout, stderr io.Writer) int {
	var status *term.Status
	if width, ok := term.Terminal(stderr); ok {
		status = term.NewStatus(stderr, width)
		defer status.Clear()
		stdout, stderr = status.Clearing(stdout), status
	}
	out, errw := term.NewSafeWriter(stdout), term.NewSafeWriter(stderr)
	defer out.Flush()
	defer errw.Flush()
	return runSafe(args, out, errw, status)
}

func runSafe(args []string, stdout, stderr io.Writer, status *term.Status) int {
	fs, flags, o := commandLine()
	name, err := parseArgs(fs, args)
	// The command line's own flags that the environment and -config may
	// set too (before version, which reads the settings for Connect's).
	flags.AlsoFromEnv("plan", "audit", "rollback-group", "json", "output", "log-level", "strimzi-out", "strimzi-alter-configmap", "strimzi-list-configmap", "strimzi-replicas", "strimzi-group-id", "strimzi-offsets", "strimzi-kubectl", "report-out")
	st, known := findStep(name)
	exactlyOnce := fs.Lookup("exactly-once").Value.String() == "true" // the settings' flag; -sandbox reads it too
	asJSON := wantJSON(args, flags)
	o.asJSON = asJSON
	usageErr := func(step string, err error) int {
		fmt.Fprintln(stderr, "cutover:", err)
		if asJSON {
			printFailure(stdout, step, "", app.ExitUsage, fmt.Errorf("%w: %w", settings.ErrSettings, err))
		}
		return app.ExitUsage
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		if known {
			usage(stdout, fs, &st)
		} else {
			usage(stdout, fs, nil)
		}
		return app.ExitOK
	case err != nil:
		code := usageErr(name, flagError(err, name))
		if known {
			fmt.Fprintf(stderr, "run 'cutover help %s' for its flags\n", name)
		} else {
			fmt.Fprintln(stderr, "run 'cutover help' for the steps and flags")
		}
		return code
	case checkOutput(o.output, o.asJSON) != nil: // as the command line gives them; the environment's below
		return failed(stdout, stderr, asJSON, name, "", checkOutput(o.output, o.asJSON))
	case name == "completion" || strings.HasPrefix(name, "completion "):
		return completion(stdout, stderr, fs, strings.TrimSpace(strings.TrimPrefix(name, "completion")))
	case o.showVersion || name == "version":
		return printVersion(context.Background(), stdout, flags, asJSON)
	case name == "help":
		usage(stdout, fs, nil)
		return app.ExitOK
	case strings.HasPrefix(name, "help "):
		topic := strings.TrimPrefix(name, "help ")
		if st, ok := findStep(topic); ok {
			usage(stdout, fs, &st)
			return app.ExitOK
		}
		return usageErr(name, unknownStep(topic))
	case name == "options":
		usage(stdout, fs, &st)
		return app.ExitOK
	case o.secure && !o.sandbox:
		return usageErr(name, errors.New("-secure goes with -sandbox (a real cluster's security comes from the settings)"))
	case exactlyOnce && o.sandbox && o.secure:
		return usageErr(name, errors.New("-exactly-once goes with -sandbox, not with -secure"))
	case o.kerberos && !(o.sandbox && o.secure):
		return usageErr(name, errors.New("-kerberos goes with -sandbox -secure (a real cluster's Kerberos settings come from the client properties files)"))
	case o.sandbox:
	case name == "":
		fmt.Fprintf(stderr, "usage: cutover <step> [flags]\nsteps: %s\nrun 'cutover help' for what each does, 'cutover help <step>' for its examples and flags\n", strings.Join(stepNames(), " "))
		if asJSON {
			printFailure(stdout, "", "", app.ExitUsage, fmt.Errorf("%w: no step: name one (cutover help lists them)", settings.ErrSettings))
		}
		return app.ExitUsage
	case !known:
		return usageErr(name, unknownStep(name))
	}
	var level slog.LevelVar // -log-level, or MM2CUTOVER_LOG_LEVEL once Settings has read the environment
	level.Set(o.logLevel)
	log := slog.New(term.NewLogHandler(stderr, status, &slog.HandlerOptions{Level: &level}))
	ctx, stop := app.InterruptContext(func() {
		err := fmt.Errorf("interrupted by a signal: the step did not end within %s of it: %w", app.InterruptGrace, context.Canceled)
		fmt.Fprintln(stderr, "cutover:", err)
		if asJSON {
			printFailure(stdout, name, "", app.ExitError, err)
		}
	})
	defer stop()

	if o.sandbox && o.secure {
		return report(stderr, runSecureSandbox(ctx, log, stdout, stderr, o.kerberos))
	}
	if o.sandbox {
		return report(stderr, runSandbox(ctx, log, stdout, o.asJSON, o.goReplicator, o.fromGroup, exactlyOnce))
	}
	if !st.cluster { // reads files only: no cluster settings, no Connect
		if err := flags.ReadEnv(); err != nil { // -plan, -audit, ... from the environment
			return failed(stdout, stderr, asJSON, name, "", err)
		}
		if err := checkOutput(o.output, asJSON); err != nil {
			return failed(stdout, stderr, asJSON, name, "", err)
		}
		level.Set(o.logLevel)
		if o.dryRun {
			return failed(stdout, stderr, o.asJSON, name, "", fmt.Errorf("%w: -dry-run goes with apply", settings.ErrSettings))
		}
		o.auditPath = auditPath(*o)
		c := &cli{o: *o, out: stdout, log: log, step: name}
		if err := c.writeReport(); err != nil {
			return failed(stdout, stderr, o.asJSON, name, "", err)
		}
		return app.ExitOK
	}
	s, err := flags.Settings() // also reads -plan, -audit, ... from the environment
	o.asJSON = asJSON          // as wantJSON read it, the same way
	if err == nil {
		err = checkOutput(o.output, asJSON)
	}
	if err != nil {
		return failed(stdout, stderr, asJSON, name, "", err)
	}
	level.Set(o.logLevel)
	s.ToolVersion = "mm2cutover-cutover/" + version
	s.Logger = log
	o.auditPath = auditPath(*o)
	if o.dryRun && name != "apply" {
		return failed(stdout, stderr, o.asJSON, name, s.Connector, fmt.Errorf("%w: -dry-run goes with apply", settings.ErrSettings))
	}
	if o.strimziReplicas < 1 {
		// plan.StrimziResources renders 0 as 1: the flag's 0 is a mistake,
		// not "the default".
		return failed(stdout, stderr, o.asJSON, name, s.Connector, fmt.Errorf("%w: -strimzi-replicas %d: want 1 or more Connect workers", settings.ErrSettings, o.strimziReplicas))
	}
	if err := strimziRefusesREST(name, s, o.dryRun); err != nil {
		return failed(stdout, stderr, o.asJSON, name, s.Connector, err)
	}
	c := &cli{s: s.WithDefaults(), o: *o, out: stdout, log: log, step: name}
	do := map[string]func(context.Context) error{
		"precheck": c.precheck, "plan": c.plan, "apply": c.apply, "verify": c.verify,
		"resume": c.resume, "status": c.status, "run": c.runAll, "rollback": c.rollback, "strimzi": c.strimzi,
	}[name]
	if c.env, err = app.Open(c.s); err != nil {
		return failed(stdout, stderr, o.asJSON, name, s.Connector, err)
	}
	defer c.env.Close()
	// The strimzi step and the read-back from Strimzi's ConfigMap ask
	// Connect nothing: its REST API may admit only the operator.
	if name != "strimzi" {
		askConnect := name != "verify" || o.strimziOffsets == ""
		if err := app.FirstContact(ctx, c.env, c.s, askConnect); err != nil {
			return failed(stdout, stderr, o.asJSON, name, s.Connector, err)
		}
	}
	err = do(ctx)
	c.env.LogCost(ctx, log)
	// Interrupted (SIGINT, SIGTERM: a Pod deleted or evicted): worth a
	// retry, whatever the cut-short step reported.
	interrupted := err != nil && ctx.Err() != nil
	if err != nil && o.asJSON && !c.emitted {
		code := app.ExitStatus(err)
		if interrupted {
			code = app.ExitError
		}
		printFailure(stdout, name, s.Connector, code, err)
	}
	code := report(stderr, err)
	if interrupted && code != app.ExitOK {
		fmt.Fprintln(stderr, "cutover: interrupted by a signal")
		return app.ExitError
	}
	return code
}

// commandLine defines the command line's flags: the settings' (settings.Flags)
// and its own (options).
func commandLine() (*flag.FlagSet, *settings.Flags, *options) {
	fs := flag.NewFlagSet("cutover", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // usage is printed here, once
	flags := settings.BindFlags(fs)
	var o options
	fs.StringVar(&o.planPath, "plan", "mm2cutover-plan.json", "plan file")
	fs.StringVar(&o.auditPath, "audit", "", "audit file (JSON lines; default: the plan file with .audit.jsonl)")
	fs.StringVar(&o.rollbackGroup, "rollback-group", "", "rollback after resume: the consumer group to receive C' = M'+1 (the group the old job restarts from)")
	fs.BoolVar(&o.asJSON, "json", false, "print results as JSON (one document per step, with a schema field)")
	fs.TextVar(&o.logLevel, "log-level", slog.LevelInfo, "progress on stderr: debug (also every Connect request with its duration), info, warn or error")
	fs.BoolVar(&o.yes, "yes", false, "approve the resume (or the rollback)")
	fs.BoolVar(&o.sandbox, "sandbox", false, "run the whole cutover on a local sandbox (real Kafka and Connect)")
	fs.BoolVar(&o.fromGroup, "from-group", false, "with -sandbox and real Flink: plan from the group's commits instead of Flink's savepoint (MM2 then copies again the records Flink wrote past its last, lost, commit)")
	fs.BoolVar(&o.goReplicator, "go-replicator", false, "with -sandbox: play the old job with the Go imitation of Flink (internal/flinklike) instead of a real Flink job (MM2CUTOVER_FLINK_VERSION)")
	fs.BoolVar(&o.secure, "secure", false, "with -sandbox: clusters on SASL_SSL with SCRAM-SHA-512 (a source of three brokers), Connect over HTTPS with basic auth; the steps run as this command line, passwords from the environment")
	fs.BoolVar(&o.kerberos, "kerberos", false, "with -sandbox -secure: the tool and MM2's clients on the brokers' Kerberos listeners (GSSAPI), each with a principal and keytab of a KDC the sandbox starts (MIT Kerberos: krb5-kdc, krb5-admin-server)")
	fs.BoolVar(&o.showVersion, "version", false, "print the tool version")
	fs.BoolVar(&o.table, "table", false, "plan, run: after the plan's summary, print a row for every partition (the plan file holds them all; the summary lists the blocked ones)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "apply: show the connector config it would create (secrets redacted) and the offsets it would write, and change nothing")
	fs.StringVar(&o.strimziOut, "strimzi-out", "", "strimzi: the file the resources are written to (default: the plan file with .strimzi.yaml)")
	fs.StringVar(&o.strimziAlter, "strimzi-alter-configmap", "", "strimzi: the ConfigMap that holds the plan's offsets (default: <connector, or the KafkaMirrorMaker2>-alter-offsets)")
	fs.StringVar(&o.strimziList, "strimzi-list-configmap", "", "strimzi: the ConfigMap Strimzi lists the connector's offsets into (default: <connector, or the KafkaMirrorMaker2>-list-offsets)")
	fs.IntVar(&o.strimziReplicas, "strimzi-replicas", 1, "strimzi, KafkaMirrorMaker2: its Connect workers (spec.replicas)")
	fs.StringVar(&o.strimziGroupID, "strimzi-group-id", "", "strimzi, KafkaMirrorMaker2: its Connect group.id (spec.target.groupId; default mirrormaker2-cluster)")
	fs.StringVar(&o.reportOut, "report-out", "", "report: the HTML file the change record is written to; the Markdown goes beside it, with .md for .html (default: the plan file with .report.html and .report.md)")
	fs.StringVar(&o.strimziOffsets, "strimzi-offsets", "", "verify before resume: the ConfigMap Strimzi listed the connector's offsets into, as kubectl get configmap NAME -o json writes it, or configmap/NAME to read it straight from the API server with kubectl (-strimzi-kubectl; its kubeconfig, or the in-cluster config) in -strimzi-namespace")
	fs.StringVar(&o.strimziKubectl, "strimzi-kubectl", "kubectl", "verify -strimzi-offsets configmap/NAME: the kubectl to read it with")
	fs.StringVar(&o.output, "output", "", "text (the tables, the default) or json (the same as -json)")
	fs.StringVar(&o.output, "o", "", "short for -output")
	return fs, flags, &o
}

// auditPath is -audit, by default the plan file with .audit.jsonl.
func auditPath(o options) string {
	if o.auditPath != "" {
		return o.auditPath
	}
	return strings.TrimSuffix(o.planPath, ".json") + ".audit.jsonl"
}

// wantJSON reports whether -json is asked for, as Settings reads it — the
// command line, else MM2CUTOVER_JSON, else the -config file — but also
// where those cannot be parsed or read (a bad flag before -json, a typo in
// the environment), so that every failure of a -json run is a JSON
// document. Values are booleans as the flag package reads them ("1",
// "true", ...).
func wantJSON(args []string, flags *settings.Flags) bool {
	if v, set := setting(args, flags, "json", true); set {
		if asJSON, _ := strconv.ParseBool(v); asJSON {
			return true
		}
	}
	format, _ := setting(args, flags, "output", false)
	return format == "json"
}

// checkOutput refuses a -o (-output) that is not one of outputFormats, and
// -o text beside -json.
func checkOutput(format string, asJSON bool) error {
	switch {
	case format == "":
	case !slices.Contains(outputFormats, format):
		return fmt.Errorf("%w: -o %q: want %s%s", settings.ErrSettings, format, strings.Join(outputFormats, " or "), didyoumean.Hint(format, outputFormats, ""))
	case format == "text" && asJSON:
		return fmt.Errorf("%w: -o text and -json: choose one", settings.ErrSettings)
	}
	return nil
}

// setting returns the value of the flag name (or its alias) as the
// settings read it — the last on the command line, else MM2CUTOVER_<NAME>,
// else the -config file — without parsing them: so that a failure to
// parse can still be reported as asked. A boolean flag's bare -name is
// "true"; another flag's value may be the next argument.
func setting(args []string, flags *settings.Flags, name string, boolean bool) (string, bool) {
	v, set := "", false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		n, val, hasVal := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if !strings.HasPrefix(a, "-") || (n != name && flagAliases[n] != name) {
			continue
		}
		switch {
		case hasVal:
			v = val
		case boolean:
			v = "true"
		case i+1 < len(args):
			i++
			v = args[i]
		}
		set = true
	}
	if set {
		return v, true
	}
	if e, ok := os.LookupEnv("MM2CUTOVER_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))); ok {
		return e, true
	}
	return flags.FileValue(name)
}

// flagError is an error of the flag package, with the flags of step
// (all of them when it is not one) a mistyped flag may have meant.
func flagError(err error, step string) error {
	typo, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return err
	}
	st, known := findStep(step)
	candidates := st.flags
	if !known || len(candidates) == 0 {
		for _, s := range steps {
			candidates = append(candidates, s.flags...)
		}
		candidates = append(candidates, topLevelFlags...)
	}
	for a, of := range flagAliases {
		if slices.Contains(candidates, of) {
			candidates = append(candidates, a)
		}
	}
	return fmt.Errorf("unknown flag -%s%s", typo, didyoumean.Hint(typo, slices.Compact(slices.Sorted(slices.Values(candidates))), "-"))
}

// unknownStep says that name is no step, and which it may have meant.
func unknownStep(name string) error {
	if s := didyoumean.Hint(name, stepNames(), ""); s != "" {
		return fmt.Errorf("unknown step %q%s", name, s)
	}
	return fmt.Errorf("unknown step %q; run 'cutover help' for the steps", name)
}

// failed reports err on stderr and, with -json, as a failure document on
// stdout, and returns the exit status.
func failed(stdout, stderr io.Writer, asJSON bool, step, connector string, err error) int {
	if asJSON {
		printFailure(stdout, step, connector, app.ExitStatus(err), err)
	}
	return report(stderr, err)
}

// printFailure writes the JSON document of a step that failed before it
// printed its own: schema mm2cutover/failure/v1, the step, and the fields
// the Job's result line has (result, connector, error, exit_status).
func printFailure(w io.Writer, step, connector string, code int, err error) {
	doc := struct {
		Schema string `json:"schema"`
		Step   string `json:"step,omitempty"`
		app.Failure
	}{"mm2cutover/failure/v1", step, app.NewFailure(connector, code, err)}
	b, _ := json.MarshalIndent(doc, "", "  ")
	_, _ = w.Write(append(b, '\n'))
}
