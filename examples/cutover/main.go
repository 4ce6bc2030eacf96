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
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mm2cutover/mm2cutover/examples/internal/cutover"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// version is the tool version recorded in plans.
const version = "0.1.0"

const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitCheckFailed = 3
	exitRefused     = 4
	exitNotApproved = 5
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command line beyond Settings.
type options struct {
	planPath, auditPath string
	asJSON, yes         bool
	sandbox             bool
	acceptExpired       string
	acceptedBy          string
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cutover", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var s cutover.Settings
	var o options
	var srcSec, tgtSec, srcMech, tgtMech, srcUser, tgtUser, srcCA, tgtCA string
	var srcBoot, tgtBoot, topics, mm2Src, mm2Tgt string
	fs.StringVar(&srcBoot, "source-bootstrap", "", "source cluster bootstrap servers (host:port,...)")
	fs.StringVar(&tgtBoot, "target-bootstrap", "", "target cluster bootstrap servers")
	fs.StringVar(&srcSec, "source-security-protocol", "PLAINTEXT", "PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL")
	fs.StringVar(&tgtSec, "target-security-protocol", "PLAINTEXT", "PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL")
	fs.StringVar(&srcMech, "source-sasl-mechanism", "", "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	fs.StringVar(&tgtMech, "target-sasl-mechanism", "", "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	fs.StringVar(&srcUser, "source-sasl-username", "", "source SASL user (password: MM2CUTOVER_SOURCE_SASL_PASSWORD)")
	fs.StringVar(&tgtUser, "target-sasl-username", "", "target SASL user (password: MM2CUTOVER_TARGET_SASL_PASSWORD)")
	fs.StringVar(&srcCA, "source-tls-ca", "", "PEM file of the CAs of the source brokers")
	fs.StringVar(&tgtCA, "target-tls-ca", "", "PEM file of the CAs of the target brokers")
	fs.StringVar(&s.ConnectURL, "connect-url", "", "Kafka Connect REST URL, e.g. http://mm2-connect:8088")
	fs.StringVar(&s.ConnectUser, "connect-user", "", "Connect REST basic-auth user (password: MM2CUTOVER_CONNECT_PASSWORD)")
	fs.StringVar(&s.ConnectCAFile, "connect-ca", "", "PEM file of the CAs of the Connect REST endpoint")
	fs.StringVar(&s.Connector, "connector", "", "MirrorSourceConnector name (Connect keys offsets by it)")
	fs.StringVar(&s.SourceAlias, "source-alias", "source", "source.cluster.alias")
	fs.StringVar(&s.TargetAlias, "target-alias", "target", "target.cluster.alias")
	fs.StringVar(&s.Group, "group", "", "the old job's consumer group")
	fs.StringVar(&topics, "topics", "", "source topics in scope, comma separated")
	fs.StringVar(&s.Policy, "policy", "identity", "replication policy: identity (same topic names) or default (alias.topic)")
	fs.IntVar(&s.TasksMax, "tasks-max", 1, "tasks.max of the connector")
	fs.StringVar(&mm2Src, "mm2-source-client", "", "properties file of the connector's source client settings (security.protocol, sasl.*, ssl.*; use config provider references for secrets)")
	fs.StringVar(&mm2Tgt, "mm2-target-client", "", "properties file of the connector's target client settings")
	fs.StringVar(&s.Savepoint, "savepoint", "", "the old Flink job's final savepoint, recorded in the plan")
	fs.StringVar(&o.acceptExpired, "accept-expired", "", "partitions whose expired records you accept to lose, e.g. orders:3,orders:5")
	fs.StringVar(&o.acceptedBy, "accepted-by", "", "who accepts the loss (required with -accept-expired)")
	fs.DurationVar(&s.StabilityWindow, "stability-window", 30*time.Second, "how long the group's offsets must stay unchanged")
	fs.DurationVar(&s.ReadBackTimeout, "readback-timeout", 2*time.Minute, "how long to wait for Connect's offsets to equal the plan")
	fs.DurationVar(&s.CatchUpTimeout, "catchup-timeout", 5*time.Minute, "how long to wait, after resume, for the boundary records and for MM2 to catch up")
	fs.StringVar(&o.planPath, "plan", "mm2cutover-plan.json", "plan file")
	fs.StringVar(&o.auditPath, "audit", "", "audit file (JSON lines; default: the plan file with .audit.jsonl)")
	fs.BoolVar(&o.asJSON, "json", false, "print results as JSON")
	fs.BoolVar(&o.yes, "yes", false, "approve the resume")
	fs.BoolVar(&o.sandbox, "sandbox", false, "run the whole cutover on a local sandbox (real Kafka and Connect)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: cutover [flags] precheck|plan|apply|verify|resume|status|run\n       cutover -sandbox\n\nflags (also MM2CUTOVER_<FLAG> in the environment):")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if err := fromEnv(fs); err != nil {
		fmt.Fprintln(stderr, "cutover:", err)
		return exitUsage
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if o.sandbox {
		return report(stderr, runSandbox(ctx, log, stdout, o.asJSON))
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	s.Source = kafkaConfig(srcBoot, srcSec, srcMech, srcUser, os.Getenv("MM2CUTOVER_SOURCE_SASL_PASSWORD"), srcCA)
	s.Target = kafkaConfig(tgtBoot, tgtSec, tgtMech, tgtUser, os.Getenv("MM2CUTOVER_TARGET_SASL_PASSWORD"), tgtCA)
	s.ConnectPassword = kafkaadmin.Secret(os.Getenv("MM2CUTOVER_CONNECT_PASSWORD"))
	s.Topics = splitList(topics)
	s.ToolVersion = "mm2cutover-cutover/" + version
	s.Logger = log
	var err error
	if s.SourceClient, err = readProperties(mm2Src); err != nil {
		fmt.Fprintln(stderr, "cutover:", err)
		return exitUsage
	}
	if s.TargetClient, err = readProperties(mm2Tgt); err != nil {
		fmt.Fprintln(stderr, "cutover:", err)
		return exitUsage
	}
	if s.AcceptExpired, err = acceptances(o.acceptExpired, o.acceptedBy); err != nil {
		fmt.Fprintln(stderr, "cutover:", err)
		return exitUsage
	}
	if o.auditPath == "" {
		o.auditPath = strings.TrimSuffix(o.planPath, ".json") + ".audit.jsonl"
	}
	c := &cli{s: s.WithDefaults(), o: o, out: stdout, log: log}
	if err := s.Validate(); err != nil {
		fmt.Fprintln(stderr, "cutover:", err)
		return exitUsage
	}
	if c.env, err = cutover.Open(c.s); err != nil {
		fmt.Fprintln(stderr, "cutover:", err)
		return exitUsage
	}
	var steps = map[string]func(context.Context) error{
		"precheck": c.precheck, "plan": c.plan, "apply": c.apply, "verify": c.verify,
		"resume": c.resume, "status": c.status, "run": c.runAll,
	}
	step, ok := steps[fs.Arg(0)]
	if !ok {
		fmt.Fprintf(stderr, "cutover: unknown step %q\n", fs.Arg(0))
		fs.Usage()
		return exitUsage
	}
	return report(stderr, step(ctx))
}

// fromEnv sets every flag not given on the command line from
// MM2CUTOVER_<NAME>, with dashes as underscores.
func fromEnv(fs *flag.FlagSet) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil {
			return
		}
		key := "MM2CUTOVER_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(key); ok {
			if e := f.Value.Set(v); e != nil {
				err = fmt.Errorf("%s: %w", key, e)
			}
		}
	})
	return err
}

func kafkaConfig(bootstrap, protocol, mechanism, user, password, ca string) kafkaadmin.Config {
	return kafkaadmin.Config{
		BootstrapServers: splitList(bootstrap),
		ClientID:         "mm2cutover",
		SecurityProtocol: kafkaadmin.SecurityProtocol(protocol),
		SASLMechanism:    kafkaadmin.SASLMechanism(mechanism),
		Username:         user,
		Password:         kafkaadmin.Secret(password),
		TLS:              kafkaadmin.TLSConfig{CAFile: ca},
	}
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// readProperties reads a Java properties file of key=value lines.
func readProperties(path string) (map[string]string, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "!") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: not key=value", path, i+1)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

func acceptances(list, by string) ([]plan.ExpiredAcceptance, error) {
	var out []plan.ExpiredAcceptance
	for _, item := range splitList(list) {
		i := strings.LastIndex(item, ":")
		if i <= 0 {
			return nil, fmt.Errorf("-accept-expired %q: want topic:partition", item)
		}
		p, err := strconv.ParseInt(item[i+1:], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("-accept-expired %q: %w", item, err)
		}
		if by == "" {
			return nil, errors.New("-accept-expired needs -accepted-by: the plan records who accepted the loss")
		}
		out = append(out, plan.ExpiredAcceptance{Partition: offsets.SourcePartition{Topic: item[:i], Partition: int32(p)}, By: by})
	}
	return out, nil
}
