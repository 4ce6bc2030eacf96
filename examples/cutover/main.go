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
//	cutover -sandbox           the whole cutover on local real Kafka and Connect (a binary
//	                           built with -tags sandbox: go run -tags sandbox ./examples/cutover -sandbox)
//	cutover -sandbox -secure   the same on SASL_SSL clusters and HTTPS Connect with basic auth
//	cutover -sandbox -secure -kerberos
//	                           the same through the brokers' Kerberos listeners (GSSAPI, keytabs
//	                           from an MIT Kerberos KDC the sandbox starts)
//	cutover help [step]        this help, or a step's flags; also -h after a step
//	cutover version            the tool version (also -version; -json for JSON)
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
// Progress goes to stderr, results to stdout (-json for machines: one JSON
// document per step, with a "schema" field; a failure document when a step
// fails before printing its own).
//
// Exit status: 0 done; 1 error worth a retry (a timeout, an unreachable
// system; also any step interrupted by SIGINT or SIGTERM); 2 usage or settings a system rejected (bad flags, a password
// without its user; a wrong password or unknown user, a certificate that
// does not verify against the CA given, a security protocol the listener
// does not speak, a Connect REST 401 or 403: no retry helps); 3 a check
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
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/mm2cutover/mm2cutover/examples/internal/app"
)

// version is the tool version recorded in plans; a release build sets it
// with -ldflags "-X main.version=..."; otherwise readBuildInfo takes the
// module version go install stamps (version.go).
var version = defaultVersion

// defaultVersion is the version of a build that has no stamp.
const defaultVersion = "0.2.0-dev"

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
	rollbackGroup       string
	// The Strimzi path (strimzi.go): the strimzi step's output file,
	// ConfigMap names and KafkaMirrorMaker2 settings; verify's listed
	// offsets.
	strimziOut, strimziAlter, strimziList, strimziGroupID, strimziOffsets string
	strimziReplicas                                                       int
}

// step is one step of the command line.
type step struct {
	name, summary string
	// flags are the flags the step uses besides the settings every step
	// needs (clusters, Connect, connector, group, topics).
	flags []string
}

// The settings every step reads, shown in each step's help.
var commonFlags = []string{"config", "source-bootstrap", "target-bootstrap", "source-security-protocol", "target-security-protocol",
	"source-sasl-mechanism", "target-sasl-mechanism", "source-sasl-username", "target-sasl-username", "source-tls-ca", "target-tls-ca",
	"source-client-config", "target-client-config", "connect-url", "connect-user", "connect-ca", "connect-client-config",
	"request-timeout", "retry-timeout", "connector", "source-alias", "target-alias", "group", "topics", "policy", "tasks-max",
	"mm2-source-client", "mm2-target-client", "connector-properties", "offset-syncs-location", "offset-syncs-replication-factor",
	"exactly-once", "strimzi-cluster", "strimzi-namespace", "json", "log-level"}

var planFlags = []string{"offsets-from", "offsets-alias", "offsets-connector", "offsets-connector-topic", "offsets-file-overrides-group", "flink-source-uid",
	"flink-rest", "flink-job", "accept-expired", "accepted-by", "savepoint", "stability-window", "stopped-window", "worker-producer-max-request-size", "worker-group", "worker-principal", "plan", "audit"}

var steps = []step{
	{"precheck", "read-only checks of the clusters, the group, the target topics and Connect: what would block the cutover", planFlags},
	{"plan", "the precheck, then the plan: per partition where MM2 resumes and why, written to -plan", planFlags},
	{"apply", "re-check the plan, create the connector STOPPED, back up, guard, PATCH the offsets, read them back (-dry-run: show the connector config and offsets it would write)", []string{"plan", "audit", "readback-timeout", "dry-run"}},
	{"resume", "re-check, capture the boundary records, resume the connector (only with -yes)", []string{"plan", "audit", "yes"}},
	{"verify", "before resume: the read-back (from Connect, or -strimzi-offsets: Strimzi's listOffsets ConfigMap); after: boundary records, lag, acceptance checks", []string{"plan", "audit", "readback-timeout", "catchup-timeout", "strimzi-offsets"}},
	{"status", "the connector's state and tasks, its offsets against the plan, the lag", []string{"plan", "audit"}},
	{"run", "plan, apply, resume (only with -yes) and verify, in order", append(slices.Clone(planFlags), "yes", "readback-timeout", "catchup-timeout")},
	{"strimzi", "re-check the plan, render the Strimzi resources that apply it through the operator (KafkaConnector or KafkaMirrorMaker2, state stopped, and the alter ConfigMap) to -strimzi-out, with the steps", []string{"plan", "audit", "strimzi-out", "strimzi-alter-configmap", "strimzi-list-configmap", "strimzi-replicas", "strimzi-group-id", "worker-config-topic", "worker-offset-topic", "worker-status-topic"}},
	{"rollback", "before resume: delete the connector and its offsets; after resume: write C' = M'+1 to -rollback-group (only with -yes)", []string{"plan", "audit", "rollback-group", "yes"}},
}

func findStep(name string) (step, bool) {
	for _, st := range steps {
		if st.name == name {
			return st, true
		}
	}
	return step{}, false
}

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

func usage(w io.Writer, fs *flag.FlagSet, st *step) {
	if st == nil {
		fmt.Fprintln(w, "usage: cutover <step> [flags]    (flags may also come before the step)")
		fmt.Fprintln(w, "       cutover -sandbox [-json] [-go-replicator] [-exactly-once]")
		fmt.Fprintln(w, "       cutover -sandbox -secure [-kerberos]")
		fmt.Fprintln(w, "\nsteps:")
		for _, s := range steps {
			fmt.Fprintf(w, "  %-9s %s\n", s.name, s.summary)
		}
		fmt.Fprintln(w, "  help      this help; cutover help <step> shows a step's flags")
		fmt.Fprintln(w, "  version   the tool version")
		fmt.Fprintln(w, "  completion bash|zsh   a shell completion script: source <(cutover completion bash)")
		fmt.Fprintln(w, "\nEvery flag is also MM2CUTOVER_<FLAG> in the environment or in a -config file; passwords come from the")
		fmt.Fprintln(w, "environment only: MM2CUTOVER_SOURCE_SASL_PASSWORD, MM2CUTOVER_TARGET_SASL_PASSWORD, MM2CUTOVER_CONNECT_PASSWORD.")
		fmt.Fprintln(w, "Exit status: 0 done, 1 error worth a retry, 2 usage or settings a system rejected (credentials, CA,")
		fmt.Fprintln(w, "security protocol), 3 a check failed, 4 refused by a guard, 5 not approved.")
		return
	}
	fmt.Fprintf(w, "usage: cutover %s [flags]\n\n%s.\n\nflags (also MM2CUTOVER_<FLAG> in the environment):\n", st.name, st.summary)
	show := map[string]bool{}
	for _, n := range append(slices.Clone(commonFlags), st.flags...) {
		show[n] = true
	}
	fs.VisitAll(func(f *flag.Flag) {
		if !show[f.Name] {
			return
		}
		def := ""
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			def = fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "  -%s\n    \t%s%s\n", f.Name, f.Usage, def)
	})
}

// run runs the command line. Everything it prints goes through a
// app.SafeWriter: names from a plan or the clusters never reach the
// terminal with control characters raw.
func run(args []string, stdout, stderr io.Writer) int {
	out, errw := app.NewSafeWriter(stdout), app.NewSafeWriter(stderr)
	defer out.Flush()
	defer errw.Flush()
	return runSafe(args, out, errw)
}

func runSafe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cutover", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // usage is printed here, once
	flags := app.BindFlags(fs)
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
	fs.BoolVar(&o.dryRun, "dry-run", false, "apply: show the connector config it would create (secrets redacted) and the offsets it would write, and change nothing")
	fs.StringVar(&o.strimziOut, "strimzi-out", "", "strimzi: the file the resources are written to (default: the plan file with .strimzi.yaml)")
	fs.StringVar(&o.strimziAlter, "strimzi-alter-configmap", "", "strimzi: the ConfigMap that holds the plan's offsets (default: <connector, or the KafkaMirrorMaker2>-alter-offsets)")
	fs.StringVar(&o.strimziList, "strimzi-list-configmap", "", "strimzi: the ConfigMap Strimzi lists the connector's offsets into (default: <connector, or the KafkaMirrorMaker2>-list-offsets)")
	fs.IntVar(&o.strimziReplicas, "strimzi-replicas", 1, "strimzi, KafkaMirrorMaker2: its Connect workers (spec.replicas)")
	fs.StringVar(&o.strimziGroupID, "strimzi-group-id", "", "strimzi, KafkaMirrorMaker2: its Connect group.id (spec.target.groupId; default mirrormaker2-cluster)")
	fs.StringVar(&o.strimziOffsets, "strimzi-offsets", "", "verify before resume: the ConfigMap Strimzi listed the connector's offsets into, as kubectl get configmap NAME -o json writes it")
	name, err := parseArgs(fs, args)
	st, known := findStep(name)
	exactlyOnce := fs.Lookup("exactly-once").Value.String() == "true" // the settings' flag; -sandbox reads it too
	asJSON := o.asJSON || os.Getenv("MM2CUTOVER_JSON") == "true"
	switch {
	case errors.Is(err, flag.ErrHelp):
		if known {
			usage(stdout, fs, &st)
		} else {
			usage(stdout, fs, nil)
		}
		return app.ExitOK
	case err == nil && (name == "completion" || strings.HasPrefix(name, "completion ")):
		return completion(stdout, stderr, fs, strings.TrimSpace(strings.TrimPrefix(name, "completion")))
	case err != nil:
		fmt.Fprintln(stderr, "cutover:", err)
		if asJSON {
			printFailure(stdout, name, "", app.ExitUsage, fmt.Errorf("%w: %w", app.ErrSettings, err))
		}
		if known {
			fmt.Fprintf(stderr, "run 'cutover help %s' for its flags\n", name)
		} else {
			fmt.Fprintln(stderr, "run 'cutover help' for the steps and flags")
		}
		return app.ExitUsage
	case o.showVersion || name == "version":
		return printVersion(context.Background(), stdout, flags, asJSON)
	case name == "help":
		usage(stdout, fs, nil)
		return app.ExitOK
	case strings.HasPrefix(name, "help "):
		if st, ok := findStep(strings.TrimPrefix(name, "help ")); ok {
			usage(stdout, fs, &st)
			return app.ExitOK
		}
		fmt.Fprintf(stderr, "cutover: unknown step %q\n", strings.TrimPrefix(name, "help "))
		return app.ExitUsage
	case o.secure && !o.sandbox:
		fmt.Fprintln(stderr, "cutover: -secure goes with -sandbox (a real cluster's security comes from the settings)")
		return app.ExitUsage
	case exactlyOnce && o.sandbox && o.secure:
		fmt.Fprintln(stderr, "cutover: -exactly-once goes with -sandbox, not with -secure")
		return app.ExitUsage
	case o.kerberos && !(o.sandbox && o.secure):
		fmt.Fprintln(stderr, "cutover: -kerberos goes with -sandbox -secure (a real cluster's Kerberos settings come from the client properties files)")
		return app.ExitUsage
	case o.sandbox:
	case name == "":
		usage(stderr, fs, nil)
		return app.ExitUsage
	case !known:
		fmt.Fprintf(stderr, "cutover: unknown step %q; run 'cutover help' for the steps\n", name)
		if asJSON {
			printFailure(stdout, name, "", app.ExitUsage, fmt.Errorf("%w: unknown step %q", app.ErrSettings, name))
		}
		return app.ExitUsage
	}
	flags.AlsoFromEnv("plan", "audit", "rollback-group", "json", "log-level", "strimzi-out", "strimzi-alter-configmap", "strimzi-list-configmap", "strimzi-replicas", "strimzi-group-id", "strimzi-offsets")
	var level slog.LevelVar // -log-level, or MM2CUTOVER_LOG_LEVEL once Settings has read the environment
	level.Set(o.logLevel)
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: &level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if o.sandbox && o.secure {
		return report(stderr, runSecureSandbox(ctx, log, stdout, stderr, o.kerberos))
	}
	if o.sandbox {
		return report(stderr, runSandbox(ctx, log, stdout, o.asJSON, o.goReplicator, o.fromGroup, exactlyOnce))
	}
	s, err := flags.Settings() // also reads -plan, -audit, ... from the environment
	if err != nil {
		return failed(stdout, stderr, asJSON, name, "", err)
	}
	level.Set(o.logLevel)
	s.ToolVersion = "mm2cutover-cutover/" + version
	s.Logger = log
	if o.auditPath == "" {
		o.auditPath = strings.TrimSuffix(o.planPath, ".json") + ".audit.jsonl"
	}
	if o.dryRun && name != "apply" {
		return failed(stdout, stderr, o.asJSON, name, s.Connector, fmt.Errorf("%w: -dry-run goes with apply", app.ErrSettings))
	}
	if err := strimziRefusesREST(name, s, o.dryRun); err != nil {
		return failed(stdout, stderr, o.asJSON, name, s.Connector, err)
	}
	c := &cli{s: s.WithDefaults(), o: o, out: stdout, log: log, step: name}
	do := map[string]func(context.Context) error{
		"precheck": c.precheck, "plan": c.plan, "apply": c.apply, "verify": c.verify,
		"resume": c.resume, "status": c.status, "run": c.runAll, "rollback": c.rollback, "strimzi": c.strimzi,
	}[name]
	if c.env, err = app.Open(c.s); err != nil {
		return failed(stdout, stderr, o.asJSON, name, s.Connector, err)
	}
	// The strimzi step and the read-back from Strimzi's ConfigMap ask
	// Connect nothing: its REST API may admit only the operator.
	if name != "strimzi" && (name != "verify" || o.strimziOffsets == "") {
		if err := app.CheckConnect(ctx, c.env, c.s); err != nil {
			return failed(stdout, stderr, o.asJSON, name, s.Connector, err)
		}
	}
	err = do(ctx)
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
