// Command cutover moves replication from a Flink job (or any replicator that
// commits its source position to a consumer group) to MirrorMaker 2's
// MirrorSourceConnector on Kafka Connect, without losing a record.
//
//	cutover [flags] precheck   read-only checks; prints what blocks the cutover
//	cutover [flags] plan       precheck, then write the plan (-plan) and show it
//	cutover [flags] apply      create the connector STOPPED, back up, guard, PATCH, read back
//	cutover [flags] verify     before resume: read-back; after: boundary, lag, acceptance
//	cutover [flags] resume     resume the connector (-yes; without it, say what it would do)
//	cutover [flags] status     the connector's state, its offsets against the plan, the lag
//	cutover [flags] run        all of the above in order (resumes only with -yes)
//	cutover [flags] rollback   before resume: delete the connector and its offsets;
//	                           after resume: stop it and write C' = M'+1 to -rollback-group (-yes)
//	cutover -sandbox           the whole cutover on local real Kafka and Connect
//
// Every flag can also be set through the environment: -source-bootstrap is
// MM2CUTOVER_SOURCE_BOOTSTRAP, and so on. Secrets only come from the
// environment: MM2CUTOVER_SOURCE_SASL_PASSWORD, MM2CUTOVER_TARGET_SASL_PASSWORD,
// MM2CUTOVER_CONNECT_PASSWORD. Progress goes to stderr, results to stdout
// (-json for machines).
//
// Exit status: 0 done; 1 error; 2 usage; 3 a check failed (precheck, blocked
// plan, verification); 4 refused by a guard (stale plan, connector not
// STOPPED, plan for other clusters); 5 resume not approved (dry run).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/mm2cutover/mm2cutover/examples/internal/cutover"
)

// version is the tool version recorded in plans.
const version = "0.1.0"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command line beyond Settings.
type options struct {
	planPath, auditPath string
	asJSON, yes         bool
	sandbox             bool
	goReplicator        bool
	rollbackGroup       string
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cutover", flag.ContinueOnError)
	fs.SetOutput(stderr)
	flags := cutover.BindFlags(fs)
	var o options
	fs.StringVar(&o.planPath, "plan", "mm2cutover-plan.json", "plan file")
	fs.StringVar(&o.auditPath, "audit", "", "audit file (JSON lines; default: the plan file with .audit.jsonl)")
	fs.StringVar(&o.rollbackGroup, "rollback-group", "", "rollback after resume: the consumer group to receive C' = M'+1 (the group the old job restarts from)")
	fs.BoolVar(&o.asJSON, "json", false, "print results as JSON")
	fs.BoolVar(&o.yes, "yes", false, "approve the resume (or the rollback)")
	fs.BoolVar(&o.sandbox, "sandbox", false, "run the whole cutover on a local sandbox (real Kafka and Connect)")
	fs.BoolVar(&o.goReplicator, "go-replicator", false, "with -sandbox: play the old job with the Go imitation of Flink (internal/flinklike) instead of a real Flink job (MM2CUTOVER_FLINK_VERSION)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: cutover [flags] precheck|plan|apply|verify|resume|status|run|rollback\n       cutover -sandbox\n\nflags (also MM2CUTOVER_<FLAG> in the environment):")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return cutover.ExitUsage
	}
	flags.AlsoFromEnv("plan", "audit", "rollback-group", "json")
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if o.sandbox {
		return report(stderr, runSandbox(ctx, log, stdout, o.asJSON, o.goReplicator))
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return cutover.ExitUsage
	}
	s, err := flags.Settings() // also reads -plan, -audit, ... from the environment
	if err != nil {
		return report(stderr, err)
	}
	s.ToolVersion = "mm2cutover-cutover/" + version
	s.Logger = log
	if o.auditPath == "" {
		o.auditPath = strings.TrimSuffix(o.planPath, ".json") + ".audit.jsonl"
	}
	c := &cli{s: s.WithDefaults(), o: o, out: stdout, log: log}
	steps := map[string]func(context.Context) error{
		"precheck": c.precheck, "plan": c.plan, "apply": c.apply, "verify": c.verify,
		"resume": c.resume, "status": c.status, "run": c.runAll, "rollback": c.rollback,
	}
	step, ok := steps[fs.Arg(0)]
	if !ok {
		fmt.Fprintf(stderr, "cutover: unknown step %q\n", fs.Arg(0))
		fs.Usage()
		return cutover.ExitUsage
	}
	if c.env, err = cutover.Open(c.s); err != nil {
		return report(stderr, err)
	}
	return report(stderr, step(ctx))
}
