// Command scalebench measures the cutover's control plane at scale on the
// sandbox, side by side with the raw floor, in one run.
//
// For each size N (default 1,000, 2,000 and 10,000 source partitions, in
// -topics topics of N/topics partitions) it sets up, on the sandbox's source
// cluster, topics holding two records per partition, a consumer group with
// a committed offset on every partition (C = 1 or 2), the same topics on the
// target, and for every measured run a fresh MirrorSourceConnector created
// STOPPED. Then, for -rounds rounds, with the order of the three paths
// rotated every round, it times in child processes:
//
//   - cli: `cutover plan`, then `cutover apply`, two processes of the
//     command line (built for the run from examples/cutover) with the
//     flags an operator gives, as an operator runs them;
//   - library: what the CLI's plan and apply do, in one process, through
//     examples/internal/app: MakePlan (precheck, stability window at
//     -window) and Apply (guards, PATCH, read-back until equal);
//   - raw floor: the same change done directly with sarama and net/http:
//     Metadata, FindCoordinator, one OffsetFetch, ListOffsets earliest and
//     latest per leader, one PATCH, and GET polled every 100 ms until the
//     offsets equal what was written.
//
// After each library run it also times ReadStatus (the CLI's status) on
// the applied connector, and after the rounds it measures the operator
// pause: from the group's last commit to the connector RUNNING at C
// (MakePlan, Apply and Resume with approval, in one child).
//
// With -exactly-once it measures the operator pause a second time per
// size and tasks.max, with an exactly-once connector (Kafka Connect's
// exactly-once source support) on a second Connect group of the sandbox's
// clusters whose workers run with it, side by side with the at-least-once
// pause of the first group: a worker with the support runs every source
// task exactly-once, so the two need groups of their own.
//
// It prints per size the median of each path, their ratio, how many runs
// succeeded, and the peak RSS of the library's child process (its rusage
// maxrss, which counts the Go runtime and everything the process touched).
// Progress goes to stderr, the table to stdout (-json for one JSON
// document).
//
//	go run ./examples/internal/scalebench                      # starts its own sandbox
//	go run ./examples/internal/scalebench -sizes 10000 -rounds 7
//	MM2CUTOVER_SANDBOX=/tmp/mm2sandbox.json go run ./examples/internal/scalebench -keep
//
// A single sandbox broker holds at most about 15,000-19,000 partitions
// here (open-file limit 20,000). The sandbox it starts has one broker per
// cluster for every 15,000 partitions of the largest size (or -brokers),
// with replication factor 1 so that the partitions spread over them. Sizes
// are set up one after another and deleted after their rounds unless -keep
// is given.
//
//	go run ./examples/internal/scalebench -sizes 1000,10000,50000 -rounds 3
//	go run ./examples/internal/scalebench -sizes 10000 -rounds 1 -pause 3 -exactly-once
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
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == childArg {
		os.Exit(runChild(os.Stdin, os.Stdout))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type options struct {
	sizes      []int
	topics     int
	rounds     int
	warmup     int
	window     time.Duration
	pause      int
	keep       bool
	jsonOut    bool
	profileDir string
	workers    int
	prefix     string // of the topics, group and connectors
	tasksMax   int
	// pauseTasks are more tasks.max values to measure the operator pause
	// with, after the connectors' own.
	pauseTasks []int
	// brokers is the number of brokers of each cluster of the sandbox it
	// starts; 0 is brokersFor the largest size.
	brokers int
	// workerHeap is the -Xmx of the workers of the sandbox it starts.
	workerHeap string
	// paths are the paths measured, of lib, cli and raw.
	paths []string
	// latency is the round trip the sandbox it starts adds to every
	// client connection to a broker or worker; secure makes that sandbox
	// SASL_SSL (SCRAM-SHA-512) with Connect over HTTPS.
	latency time.Duration
	secure  bool
	// exactlyOnce also measures the pause with an exactly-once connector,
	// on a second Connect group with exactly-once support.
	exactlyOnce bool
}

// partitionsPerBroker is what one sandbox broker holds here with room to
// spare: each partition keeps files open, and a process may open 20,000.
const partitionsPerBroker = 15000

// brokersFor is the brokers a cluster needs for n partitions.
func brokersFor(n int) int { return max(1, (n+partitionsPerBroker-1)/partitionsPerBroker) }

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("scalebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	sizes := fs.String("sizes", "1000,2000,10000", "source partition counts to measure, comma separated (each a multiple of -topics)")
	fs.IntVar(&o.topics, "topics", 10, "topics per size")
	fs.IntVar(&o.rounds, "rounds", 5, "rounds per size; the order of the three paths rotates")
	fs.IntVar(&o.warmup, "warmup", 1, "rounds per size run first and not counted")
	fs.DurationVar(&o.window, "window", time.Millisecond, "the library's stability window (its minimum by default)")
	fs.IntVar(&o.pause, "pause", 1, "operator-pause measurements per size (0: none)")
	fs.BoolVar(&o.keep, "keep", false, "keep the topics and group (on a held sandbox: the next run reuses them)")
	fs.BoolVar(&o.jsonOut, "json", false, "print the results as JSON")
	fs.StringVar(&o.profileDir, "profile", "", "write a CPU profile of every library run to this directory")
	fs.IntVar(&o.workers, "workers", 1, "Connect workers of the sandbox it starts")
	fs.IntVar(&o.tasksMax, "tasks-max", 0, "tasks.max of the connectors; 0 is the cutover's choice, connect.TasksFor (MM2 loads each task's offsets one partition at a time)")
	pauseTasks := fs.String("pause-tasks", "", "more tasks.max values to measure the operator pause with, comma separated (e.g. 20,40): each gets -pause runs after those with the connectors' own")
	fs.StringVar(&o.prefix, "prefix", "scalebench", "prefix of the names of the topics, group and connectors it creates")
	fs.IntVar(&o.brokers, "brokers", 0, "brokers of each cluster of the sandbox it starts, the partitions spread over them (replication factor 1); 0: one per 15,000 partitions of the largest size")
	fs.BoolVar(&o.exactlyOnce, "exactly-once", false, "also measure the operator pause with an exactly-once connector, on a second Connect group (as many workers as -workers) of the sandbox's clusters with exactly-once support, beside the at-least-once one")
	fs.StringVar(&o.workerHeap, "worker-heap", "2g", "maximum heap of the workers of the sandbox it starts, as the Kubernetes example's (a worker starting 50 tasks at 50,000 partitions ran out of 768m)")
	fs.DurationVar(&o.latency, "latency", 0, "round trip added to every client connection to the sandbox's brokers and workers, by a proxy in front of each (the brokers advertise it); 20ms is a network between regions")
	fs.BoolVar(&o.secure, "secure", false, "a sandbox of SASL_SSL brokers (SCRAM-SHA-512 for the tool, the floor and MM2) and HTTPS workers with basic auth")
	paths := fs.String("paths", "lib,cli,raw", "the paths measured, comma separated: lib (the library in one process), cli (plan and apply, two processes), raw (the floor)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for _, p := range strings.Split(*paths, ",") {
		if p = strings.TrimSpace(p); !slices.Contains([]string{"lib", "cli", "raw"}, p) {
			return o, fmt.Errorf("-paths: unknown path %q (lib, cli, raw)", p)
		}
		o.paths = append(o.paths, strings.TrimSpace(p))
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 || o.topics <= 0 || n%o.topics != 0 {
			return o, fmt.Errorf("size %q: want a positive multiple of -topics (%d)", s, o.topics)
		}
		if o.brokers > 0 && n > partitionsPerBroker*o.brokers {
			return o, fmt.Errorf("size %d: %d brokers hold at most about %d partitions here (%d each)", n, o.brokers, partitionsPerBroker*o.brokers, partitionsPerBroker)
		}
		o.sizes = append(o.sizes, n)
	}
	if *pauseTasks != "" {
		for _, s := range strings.Split(*pauseTasks, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n <= 0 {
				return o, fmt.Errorf("-pause-tasks %q: want positive tasks.max values", s)
			}
			o.pauseTasks = append(o.pauseTasks, n)
		}
	}
	if o.profileDir != "" {
		if err := os.MkdirAll(o.profileDir, 0o755); err != nil {
			return o, err
		}
	}
	if o.brokers < 0 {
		return o, errors.New("-brokers must be 0 (one per 15,000 partitions) or more")
	}
	if o.tasksMax < 0 {
		return o, errors.New("-tasks-max must be 0 (the cutover's choice) or more")
	}
	if o.rounds < 1 || o.warmup < 0 {
		return o, errors.New("-rounds must be at least 1, -warmup at least 0")
	}
	return o, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "scalebench:", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	sb, err := openSandbox(ctx, o, log)
	if err != nil {
		fmt.Fprintln(stderr, "scalebench: sandbox:", err)
		return 1
	}
	defer func() {
		if err := sb.close(); err != nil {
			log.Warn("closing the sandbox", "error", err)
		}
	}()
	return bench(ctx, sb, o, stdout, stderr, log)
}

// bench measures every size on the sandbox and prints the results. Its
// exit status is 3 when a run failed.
func bench(ctx context.Context, sb *held, o options, stdout, stderr io.Writer, log *slog.Logger) int {
	rep := report{KafkaVersion: sb.sb.KafkaVersion(), Latency: o.latency, Secure: o.secure, Window: o.window, TasksMax: o.tasksMax, LoadStart: loadAvg()}
	dir, err := os.MkdirTemp("", "scalebench-cli-")
	if err != nil {
		fmt.Fprintln(stderr, "scalebench:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	log.Info("building the command line (examples/cutover)")
	if sb.cutover, err = buildCutover(ctx, dir); err == nil {
		sb.props = filepath.Join(dir, "connector.properties")
		err = os.WriteFile(sb.props, []byte(connectorProps), 0o644)
	}
	if err == nil {
		sb.secure, err = newSecureJob(sb.sb, dir)
	}
	if err != nil {
		fmt.Fprintln(stderr, "scalebench:", err)
		return 1
	}
	var results []sizeResult
	for _, n := range o.sizes {
		res, err := measureSize(ctx, sb, o, n, log)
		if err != nil {
			fmt.Fprintf(stderr, "scalebench: %d partitions: %v\n", n, err)
			return 1
		}
		results = append(results, res)
	}
	rep.Sizes, rep.LoadEnd = results, loadAvg()
	if o.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return 1
		}
		return 0
	}
	printTable(stdout, rep, o)
	for _, r := range results {
		for _, p := range o.paths {
			if map[string]int{"lib": r.LibOK, "cli": r.CLIOK, "raw": r.RawOK}[p] != r.Rounds {
				return 3
			}
		}
	}
	return 0
}

// held is the sandbox the run uses: its own, or one it attached to.
type held struct {
	sb   *sandbox.Sandbox
	own  bool
	base string // prefix of every name the run creates
	// cutover is the command line's binary, built for the run, and props
	// its -connector-properties file.
	cutover, props string
	// secure is what a job needs on a secure sandbox; nil on a plain one.
	secure *secureJob
	// eosURL is a worker of the exactly-once Connect group (-exactly-once),
	// eosGroup its group.id.
	eosURL, eosGroup string
}

func (h *held) close() error {
	if h.own {
		return h.sb.Close()
	}
	return nil
}

func openSandbox(ctx context.Context, o options, log *slog.Logger) (*held, error) {
	base := runBase(o.prefix)
	if path := os.Getenv(sandbox.StateEnv); path != "" && o.latency == 0 && !o.secure {
		if o.exactlyOnce {
			return nil, errors.New("-exactly-once starts a Connect group of its own: run it on a sandbox it starts, not a held one")
		}
		sb, err := sandbox.Attach(ctx, path)
		if err != nil {
			return nil, err
		}
		log.Info("attached to the held sandbox", "state", path)
		return &held{sb: sb, base: base}, nil
	}
	cfg := sandbox.ConfigFromEnv()
	cfg.Workers = o.workers
	cfg.WorkerHeap = o.workerHeap
	cfg.Latency, cfg.Secure = o.latency, o.secure
	cfg.Logger = log
	brokers := o.brokers
	if brokers == 0 {
		brokers = brokersFor(slices.Max(o.sizes))
	}
	cfg.SourceBrokers, cfg.TargetBrokers = brokers, brokers
	if brokers > 1 {
		cfg.ReplicationFactor = 1
	}
	log.Info("starting a sandbox", "workers", o.workers, "worker_heap", o.workerHeap, "brokers_per_cluster", brokers, "latency", o.latency, "secure", o.secure)
	sb, err := sandbox.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	h := &held{sb: sb, own: true, base: base}
	if o.exactlyOnce {
		h.eosGroup = "scalebench-eos"
		log.Info("starting the exactly-once Connect group", "workers", o.workers, "group", h.eosGroup)
		ws, err := sb.AddWorkers(ctx, h.eosGroup, o.workers, true)
		if err != nil {
			sb.Close()
			return nil, err
		}
		h.eosURL = ws[0].URL()
	}
	return h, nil
}

// runBase prefixes the connectors of one run: Connect keeps a connector's
// offsets after it is deleted, so every run needs names of its own.
func runBase(prefix string) string {
	return prefix + "-" + strconv.FormatInt(time.Now().UnixNano()/int64(time.Millisecond)%100_000_000, 36)
}

// report is the -json output.
type report struct {
	KafkaVersion string        `json:"kafka_version"`
	Latency      time.Duration `json:"latency_ns"`
	Secure       bool          `json:"secure"`
	Window       time.Duration `json:"window_ns"`
	TasksMax     int           `json:"tasks_max"`
	LoadStart    string        `json:"load_average_start"` // 1, 5, 15 min
	LoadEnd      string        `json:"load_average_end"`
	Sizes        []sizeResult  `json:"sizes"`
}

// sizeResult is what one size measured. Durations are medians over the
// successful runs; RSS is in bytes.
type sizeResult struct {
	Partitions int `json:"partitions"`
	Topics     int `json:"topics"`
	Rounds     int `json:"rounds"`
	TasksMax   int `json:"tasks_max"`
	LibOK      int `json:"library_ok"`
	CLIOK      int `json:"cli_ok"`
	RawOK      int `json:"raw_ok"`

	Raw      time.Duration `json:"raw_ns"`
	Lib      time.Duration `json:"library_ns"`
	LibPlan  time.Duration `json:"library_plan_ns"`
	LibApply time.Duration `json:"library_apply_ns"`
	Ratio    float64       `json:"ratio"`
	LibRSS   int64         `json:"library_peak_rss_bytes"`
	// CLI is `cutover plan` then `cutover apply`, two processes; CLIRSS
	// the larger of their peaks.
	CLI       time.Duration `json:"cli_ns"`
	CLIPlan   time.Duration `json:"cli_plan_ns"`
	CLIApply  time.Duration `json:"cli_apply_ns"`
	CLIRatio  float64       `json:"cli_ratio"`
	CLIRSS    int64         `json:"cli_peak_rss_bytes"`
	RawRSS    int64         `json:"raw_peak_rss_bytes"`
	Status    time.Duration `json:"status_ns"`
	StatusRSS int64         `json:"status_peak_rss_bytes"`
	// Pauses are the operator pauses measured: the first with the
	// connectors' own tasks.max, then one per -pause-tasks value.
	Pauses []pauseResult `json:"pauses,omitempty"`
	Errors []string      `json:"errors,omitempty"`

	// Steps is where the library's time went in its median run: each
	// Connect request and each step the library logged, from the start.
	Steps []step `json:"library_steps"`
	// CLISteps are the command line's processes and what they logged, in
	// its median run.
	CLISteps []step `json:"cli_steps"`
	// RawSteps are the raw floor's phases in its median run.
	RawSteps []step `json:"raw_steps"`
	// CLICosts and RawCosts are what each step of the median cli and raw
	// runs cost the Kafka clusters.
	CLICosts []stepCost `json:"cli_costs,omitempty"`
	RawCosts []stepCost `json:"raw_costs,omitempty"`
}

// pauseResult is the operator pause with one tasks.max: medians over its
// successful runs.
type pauseResult struct {
	TasksMax int `json:"tasks_max"`
	// ExactlyOnce is true for the pause of an exactly-once connector.
	ExactlyOnce bool `json:"exactly_once,omitempty"`
	Runs        int  `json:"runs"`
	OK          int  `json:"ok"`
	// Pause is from the group's last commit to the connector RUNNING.
	Pause time.Duration `json:"pause_ns"`
	// ToResume is the part of Pause until the resume request: the
	// stability window and the tool's own reads and writes.
	ToResume time.Duration `json:"to_resume_ns"`
	// FirstRecord is when, in the same run, MM2's first copied record
	// reached the target.
	FirstRecord time.Duration `json:"first_record_ns,omitempty"`
	Steps       []step        `json:"steps,omitempty"`
	// Verify is `cutover verify` after the resume, and VerifyOK whether
	// one passed.
	Verify   time.Duration `json:"verify_ns,omitempty"`
	VerifyOK bool          `json:"verify_ok,omitempty"`
	// VerifyCatchUp is the part of Verify until MM2 had caught up.
	VerifyCatchUp time.Duration `json:"verify_catch_up_ns,omitempty"`
	// VerifyAgain is a second `cutover verify` once MM2 had caught up:
	// the tool's own time.
	VerifyAgain time.Duration `json:"verify_again_ns,omitempty"`
}

// okRuns is the fewest successful runs of the paths measured.
func okRuns(r sizeResult, paths []string) int {
	n := r.Rounds
	for _, p := range paths {
		n = min(n, map[string]int{"lib": r.LibOK, "cli": r.CLIOK, "raw": r.RawOK}[p])
	}
	return n
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func printTable(w io.Writer, rep report, o options) {
	rs := rep.Sizes
	tasks := strconv.Itoa(rep.TasksMax)
	if rep.TasksMax == 0 {
		tasks = fmt.Sprintf("the cutover's (connect.TasksFor, one per %d partitions, at most %d tasks x partitions)", connect.PartitionsPerTask, connect.TaskPartitionBudget)
	}
	network := "loopback, PLAINTEXT"
	if rep.Secure {
		network = "loopback, SASL_SSL (SCRAM-SHA-512) and HTTPS"
	}
	if rep.Latency > 0 {
		network += fmt.Sprintf(", %v round trip added", rep.Latency)
	}
	fmt.Fprintf(w, "Kafka %s; %s; %d rounds per size after %d warm-up, order rotating; stability window %v; tasks.max %s; medians\n",
		rep.KafkaVersion, network, o.rounds, o.warmup, o.window, tasks)
	fmt.Fprintf(w, "load average (1, 5, 15 min) %s at the start, %s at the end\n\n", rep.LoadStart, rep.LoadEnd)
	fmt.Fprintf(w, "%-6s %5s %5s %8s %8s %8s %8s %6s %8s %8s %8s %6s %8s %8s %8s %8s %8s %8s\n",
		"N", "tasks", "ok", "raw", "cli", "(plan", "apply)", "ratio", "cli RSS", "library", "(plan", "ratio", "lib RSS", "status", "pause", "(tool", "connect)", "verify")
	for _, r := range rs {
		pause, tool, conn, vfy := "-", "-", "-", "-"
		if len(r.Pauses) > 0 && r.Pauses[0].Pause > 0 {
			pr := r.Pauses[0]
			pause, tool, conn = ms(pr.Pause), ms(pr.ToResume), ms(pr.Pause-pr.ToResume)
			if pr.Verify > 0 {
				vfy = ms(pr.Verify) + "/" + ms(pr.VerifyCatchUp) + "/" + ms(pr.VerifyAgain)
				if !pr.VerifyOK {
					vfy += "!"
				}
			}
		}
		fmt.Fprintf(w, "%-6d %5d %5s %8s %8s %8s %8s %6.2f %8s %8s %8s %6.2f %8s %8s %8s %8s %8s %8s\n",
			r.Partitions, r.TasksMax, fmt.Sprintf("%d/%d", okRuns(r, o.paths), r.Rounds), ms(r.Raw),
			ms(r.CLI), ms(r.CLIPlan), ms(r.CLIApply), r.CLIRatio, mb(r.CLIRSS),
			ms(r.Lib), ms(r.LibPlan), r.Ratio, mb(r.LibRSS), ms(r.Status), pause, tool, conn, vfy)
	}
	fmt.Fprintf(w, "\nok: runs of all three paths that succeeded. cli: `cutover plan` then `cutover apply`, two processes as an\n"+
		"operator runs them (apply's part: the second process). ratio: cli or library / raw. pause: from the group's\n"+
		"last commit to the connector RUNNING (plan, apply, resume -yes in one process): (tool) until the resume request, stability\n"+
		"window included; (connect) the worker starting MM2 and its task, seen by polling. verify: `cutover verify`\n"+
		"after that resume (catch-up, boundary check on every partition, acceptance) / the part of it until MM2\n"+
		"caught up (Connect copying and storing its offsets) / a second verify once caught up (the tool's own time);\n"+
		"! when it did not pass.\n")
	printPauses(w, rs, o.window)
	if len(rs) > 1 {
		first, last := rs[0], rs[len(rs)-1]
		scale := float64(last.Partitions) / float64(first.Partitions)
		fmt.Fprintf(w, "\n%dx the partitions: cli %.2fx the time, library %.2fx, raw floor %.2fx, status %.2fx; cli RSS %.2fx, library RSS %.2fx\n",
			int(scale), ratio(last.CLI, first.CLI), ratio(last.Lib, first.Lib), ratio(last.Raw, first.Raw), ratio(last.Status, first.Status),
			float64(last.CLIRSS)/float64(max(first.CLIRSS, 1)), float64(last.LibRSS)/float64(max(first.LibRSS, 1)))
	}
	fmt.Fprintf(w, "\nKafka requests and connections per step (the median runs; source and target together, then by kind):\n")
	for _, r := range rs {
		for _, c := range append(slices.Clone(r.CLICosts), r.RawCosts...) {
			fmt.Fprintf(w, "%-6d %-6s %4d requests %3d connections  source: %s", r.Partitions, c.Step, c.Requests, c.Connections, c.Source)
			if c.Target != "" {
				fmt.Fprintf(w, "; target: %s", c.Target)
			}
			fmt.Fprintln(w)
		}
	}
	for _, r := range rs {
		fmt.Fprintf(w, "\nN=%d cli, median run (ms from the start of plan):\n", r.Partitions)
		printSteps(w, r.CLISteps)
		fmt.Fprintf(w, "N=%d library, median run (ms from start):\n", r.Partitions)
		printSteps(w, r.Steps)
		fmt.Fprintf(w, "N=%d raw floor, median run:\n", r.Partitions)
		printSteps(w, r.RawSteps)
		for _, pr := range r.Pauses {
			if len(pr.Steps) > 0 {
				fmt.Fprintf(w, "N=%d operator pause, tasks.max %d, median run (ms after the last commit):\n", r.Partitions, pr.TasksMax)
				printSteps(w, pr.Steps)
			}
		}
		for _, e := range r.Errors {
			fmt.Fprintf(w, "  error: %s\n", e)
		}
	}
}

// printPauses prints the operator pause of every size and tasks.max
// measured: from the group's last commit (the old job's proven stop) to
// MM2's first copied record.
func printPauses(w io.Writer, rs []sizeResult, window time.Duration) {
	fmt.Fprintf(w, "\noperator pause, median (ms): the stability window, the tool's reads and writes after it, Connect starting\n"+
		"MM2 (resume request to RUNNING), the first copied record on the target a read_committed reader sees (resume request to\n"+
		"the record), total; mode: at-least-once, or exactly-once (Connect's exactly-once source support, a Connect group of its own)\n")
	fmt.Fprintf(w, "%-6s %5s %-13s %5s %8s %8s %8s %8s %8s\n", "N", "tasks", "mode", "ok", "window", "tool", "connect", "record", "total")
	for _, r := range rs {
		for _, pr := range r.Pauses {
			mode := "at-least-once"
			if pr.ExactlyOnce {
				mode = "exactly-once"
			}
			if pr.OK == 0 {
				fmt.Fprintf(w, "%-6d %5d %-13s %5s\n", r.Partitions, pr.TasksMax, mode, fmt.Sprintf("0/%d", pr.Runs))
				continue
			}
			rec, total := "-", "-"
			if pr.FirstRecord > 0 {
				rec, total = ms(pr.FirstRecord-pr.ToResume), ms(pr.FirstRecord)
			}
			fmt.Fprintf(w, "%-6d %5d %-13s %5s %8s %8s %8s %8s %8s\n", r.Partitions, pr.TasksMax, mode, fmt.Sprintf("%d/%d", pr.OK, pr.Runs),
				ms(window), ms(pr.ToResume-window), ms(pr.Pause-pr.ToResume), rec, total)
		}
	}
}

func printSteps(w io.Writer, steps []step) {
	for _, s := range steps {
		if s.Took > 0 {
			fmt.Fprintf(w, "  %8s %8s  %s\n", ms(s.At), ms(s.Took), s.What)
		} else {
			fmt.Fprintf(w, "  %8s %8s  %s\n", ms(s.At), "", s.What)
		}
	}
}

// loadAvg is the machine's 1, 5 and 15 minute load averages.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 0, 64) + "ms"
}

func mb(b int64) string {
	if b <= 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + "MiB"
}
