//go:build sandbox

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
	"github.com/mm2cutover/mm2cutover/internal/flinklike"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/verify"
)

// runSandbox is -sandbox: start real Kafka and Connect, play the old job,
// run the whole cutover, and prove no record was lost or duplicated. With
// exactlyOnce (-sandbox -exactly-once) the old job writes exactly-once (a
// transaction per checkpoint), the workers run with exactly-once source
// support and the cutover creates an exactly-once connector; the target
// is counted read_committed.
func runSandbox(ctx context.Context, log *slog.Logger, out io.Writer, asJSON, goReplicator, fromGroup, exactlyOnce bool) error {
	cfg := sandbox.ConfigFromEnv()
	cfg.Workers, cfg.Logger, cfg.ExactlyOnce = 2, log, exactlyOnce
	start := time.Now()
	sb, err := sandbox.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer sb.Close()
	log.Info("sandbox ready", "kafka", sb.KafkaVersion(), "took", time.Since(start).Round(time.Millisecond))
	sc, err := newScenario(sb, log, out, asJSON, "", "identity")
	if err != nil {
		return err
	}
	defer os.RemoveAll(sc.dir)
	sc.realFlink, sc.fromGroup, sc.exactlyOnce = !goReplicator, fromGroup, exactlyOnce
	if err := sc.start(ctx); err != nil {
		return err
	}
	defer sc.traffic.Stop()
	if err := sc.cutover(ctx); err != nil {
		return err
	}
	res, err := sc.finish(ctx)
	if err != nil {
		return err
	}
	sc.printFinal(res, time.Since(start))
	return res.err()
}

// scenario is the demo, also run by the acceptance test: two topics, twelve
// partitions, a Flink-like job that replicated them and stopped, producers
// that never stop, and the cutover to MirrorMaker 2.
type scenario struct {
	sb      *sandbox.Sandbox
	log     *slog.Logger
	out     io.Writer
	asJSON  bool
	dir     string
	topics  map[string]int32
	idle    []flinklike.Partition // no traffic until after resume
	traffic *flinklike.Traffic
	cli     *cli
	// group and connector are the old job's group and the connector's name.
	group, connector string
	// policy is the replication policy: "identity" or "default".
	policy string
	// offsetSyncs is the offset-syncs decision for a worker below Kafka 3.9.
	offsetSyncs *connect.OffsetSyncsTopic
	// realFlink plays the old job with the real Flink job (flinkdemo.go)
	// instead of the Flink-like Go replicator; savepoint is its final
	// savepoint, the plan's input unless fromGroup. groupLag holds the
	// records it wrote past its last group commit, expectedDup the
	// duplicates the cutover is expected to make: groupLag from the group,
	// none from the savepoint.
	realFlink, fromGroup bool
	savepoint            string
	// exactlyOnce: the old job writes in transactions and the cutover
	// creates an exactly-once connector on workers with the support.
	exactlyOnce           bool
	groupLag, expectedDup map[offsets.SourcePartition]int
}

const (
	// trafficBatch records per partition every trafficInterval.
	trafficBatch    = 2
	trafficInterval = 100 * time.Millisecond
)

// newScenario names its topics, group and connector with prefix, so that
// several scenarios can share a sandbox; policy is the replication policy
// of the old job and of MM2 ("identity" or "default").
func newScenario(sb *sandbox.Sandbox, log *slog.Logger, out io.Writer, asJSON bool, prefix, policy string) (*scenario, error) {
	dir, err := os.MkdirTemp("", "mm2cutover-demo-")
	if err != nil {
		return nil, err
	}
	orders, payments := prefix+"orders", prefix+"payments"
	return &scenario{
		sb: sb, log: log, out: out, asJSON: asJSON, dir: dir,
		topics: map[string]int32{orders: 8, payments: 4},
		// payments-3 never gets a record before the cutover (C = 0);
		// orders-7 gets none after the old job stopped (C = log end).
		idle:      []flinklike.Partition{{Topic: orders, Partition: 7}, {Topic: payments, Partition: 3}},
		group:     prefix + "flink-orders-replicator",
		connector: prefix + "mm2-orders",
		policy:    policy,
	}, nil
}

// targetTopic names a source topic's target topic under the policy.
func (sc *scenario) targetTopic(source string) string {
	t, err := sc.cutoverSettings().ReplicationPolicy().TargetTopic(source)
	if err != nil {
		panic(err) // the sandbox's aliases and names are valid
	}
	return t
}

func (sc *scenario) topicNames() []string {
	var names []string
	for n := range sc.topics {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (sc *scenario) busy() []flinklike.Partition {
	var ps []flinklike.Partition
	for _, p := range flinklike.All(sc.topics) {
		if !slices.Contains(sc.idle, p) {
			ps = append(ps, p)
		}
	}
	return ps
}

// start creates the topics, lets the Flink-like job replicate and commit
// under live traffic, then stops the job; traffic goes on.
func (sc *scenario) start(ctx context.Context) error {
	if sc.realFlink {
		return sc.startRealFlink(ctx)
	}
	src, tgt := sc.sb.Source().Bootstrap(), sc.sb.Target().Bootstrap()
	for name, n := range sc.topics {
		if err := sandbox.CreateTopic(ctx, src, name, n); err != nil {
			return err
		}
		if err := sandbox.CreateTopic(ctx, tgt, sc.targetTopic(name), n); err != nil {
			return err
		}
	}
	seeded := append(sc.busy(), sc.idle[0]) // orders-7 has records, payments-3 none
	if err := flinklike.Produce(ctx, src, seeded, 100); err != nil {
		return err
	}
	job, err := flinklike.Start(ctx, flinklike.Config{Source: src, Target: tgt, Group: sc.group,
		Topics: sc.topicNames(), Checkpoint: 500 * time.Millisecond, TargetTopic: sc.targetTopic, ExactlyOnce: sc.exactlyOnce})
	if err != nil {
		return err
	}
	if sc.traffic, err = flinklike.StartTraffic(ctx, src, sc.busy(), trafficBatch, trafficInterval); err != nil {
		job.Stop()
		return err
	}
	sc.log.Info("the Flink-like job replicates under live traffic")
	// At least 4 s of replication under traffic and two completed
	// checkpoints: on a busy machine a new cluster's group coordinator can
	// take longer than that to load, and a job stopped before its first
	// commit leaves nothing to cut over from.
	if err := waitCheckpoints(ctx, job, 2, 4*time.Second); err != nil {
		job.Stop()
		return err
	}
	st, err := job.Stop()
	if err != nil {
		return fmt.Errorf("flink-like job: %w", err)
	}
	sc.log.Info("the Flink-like job stopped (final checkpoint committed); traffic goes on",
		"replicated", st.Records, "checkpoints", st.Checkpoints)
	return nil
}

// waitCheckpoints waits until the job has run for at least atLeast and
// completed n checkpoints, for at most 3 minutes.
func waitCheckpoints(ctx context.Context, job *flinklike.Replicator, n int, atLeast time.Duration) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := job.WaitCheckpoints(ctx, n); err != nil {
		return fmt.Errorf("flink-like job: %w", err)
	}
	return sleep(ctx, atLeast-time.Since(start))
}

// cutoverSettings are the cutover's settings on the sandbox.
func (sc *scenario) cutoverSettings() settings.Settings {
	return settings.Settings{
		Source:           kafkaadmin.Config{BootstrapServers: []string{sc.sb.Source().Bootstrap()}, ClientID: "mm2cutover-demo"},
		Target:           kafkaadmin.Config{BootstrapServers: []string{sc.sb.Target().Bootstrap()}, ClientID: "mm2cutover-demo"},
		ConnectURL:       sc.sb.ConnectURL(),
		Connector:        sc.connector,
		Group:            sc.group,
		Topics:           sc.topicNames(),
		Policy:           sc.policy,
		Savepoint:        sc.savepoint,
		OffsetsSavepoint: sc.offsetsSavepoint(),
		StabilityWindow:  3 * time.Second,
		ReadBackTimeout:  time.Minute,
		RunningTimeout:   time.Minute,
		CatchUpTimeout:   2 * time.Minute,
		ToolVersion:      "mm2cutover-cutover/" + version + " (sandbox)",
		Logger:           sc.log,
		// The sandbox's clusters have one broker each.
		Extra:       map[string]string{"replication.factor": "1"},
		OffsetSyncs: sc.offsetSyncs,
		ExactlyOnce: sc.exactlyOnce,
		WorkerGroup: sandbox.WorkerGroupID,
	}.WithDefaults()
}

// offsetsSavepoint is the savepoint the plan takes C from, "" for the group.
func (sc *scenario) offsetsSavepoint() string {
	if !sc.realFlink || sc.fromGroup {
		return ""
	}
	return sc.savepoint
}

// cutover runs the CLI's run step with approval, exactly as an operator
// would with -yes, starting traffic on the idle partitions after resume.
func (sc *scenario) cutover(ctx context.Context) error {
	if err := sc.newCLI(); err != nil {
		return err
	}
	if sc.exactlyOnce {
		// The checks an exactly-once cutover adds, shown as an operator
		// sees them first: the old job's transactions, every worker's
		// support, the target's ACLs.
		if err := sc.cli.precheck(ctx); err != nil {
			return err
		}
	}
	return sc.cli.runAll(ctx)
}

// newCLI sets sc.cli up as the CLI with -yes on the sandbox.
func (sc *scenario) newCLI() error {
	s := sc.cutoverSettings()
	env, err := app.Open(s)
	if err != nil {
		return err
	}
	plan := filepath.Join(sc.dir, "plan.json")
	sc.cli = &cli{s: s, env: env, out: sc.out, log: sc.log,
		o: options{planPath: plan, auditPath: filepath.Join(sc.dir, "plan.audit.jsonl"), yes: true, asJSON: sc.asJSON},
		afterResume: func(ctx context.Context) error {
			return flinklike.Produce(ctx, sc.sb.Source().Bootstrap(), sc.idle, 20)
		},
	}
	return nil
}

// finalResult is the end of the demo: every source record on the target?
type finalResult struct {
	Partitions []flinklike.Result `json:"partitions"`
	Records    int                `json:"source_records"`
	Lost       int                `json:"lost"`
	Duplicated int                `json:"duplicated"`
	// Expected are the duplicates the old job caused by writing past its
	// last commit (real Flink planned from the group only); Unexpected the
	// others. GroupLag is what the old job wrote past its last group commit
	// (real Flink only): the duplicates a plan from the group makes, and
	// that a plan from the savepoint avoids.
	Expected   int     `json:"expected_duplicates"`
	GroupLag   int     `json:"group_lag"`
	From       string  `json:"offsets_from"`
	Unexpected int     `json:"unexpected_duplicates"`
	OutOfOrder int     `json:"out_of_order"`
	Foreign    int     `json:"foreign"`
	LagSamples []int64 `json:"final_lag_samples"`
}

func (r finalResult) err() error {
	if r.Lost+r.Unexpected+r.OutOfOrder+r.Foreign > 0 {
		return fmt.Errorf("%w: %d lost, %d duplicated (%d expected), %d out of order, %d foreign records", app.ErrCheckFailed, r.Lost, r.Duplicated, r.Expected, r.OutOfOrder, r.Foreign)
	}
	return nil
}

// finish stops the traffic, waits until MM2 has replicated everything
// (lag 0), and compares every partition of source and target.
func (sc *scenario) finish(ctx context.Context) (finalResult, error) {
	var res finalResult
	n, err := sc.traffic.Stop()
	if err != nil {
		return res, fmt.Errorf("traffic: %w", err)
	}
	sc.log.Info("traffic stopped; waiting for lag 0", "produced", n)
	p, err := sc.cli.readPlan()
	if err != nil {
		return res, err
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cu, err := verify.WaitCaughtUp(wctx, sc.cli.env.Connect, sc.cli.env.Source, p, sc.connector, sc.log)
	for _, smp := range cu.Samples {
		res.LagSamples = append(res.LagSamples, smp.Total)
	}
	if err != nil {
		return res, err
	}
	// Connect's offsets trail what MM2 wrote; the target itself is the proof.
	src, tgt := sc.sb.Source().Bootstrap(), sc.sb.Target().Bootstrap()
	for _, tp := range flinklike.All(sc.topics) {
		var r flinklike.Result
		for {
			r, err = flinklike.Check(wctx, src, tgt, tp.Topic, tp.Partition, sc.targetTopic(tp.Topic))
			if err != nil {
				return res, err
			}
			if r.Lost == 0 {
				break
			}
			select { // Connect's offsets trail what MM2 wrote by a flush; so can the reads
			case <-wctx.Done():
			case <-time.After(time.Second):
				continue
			}
			break
		}
		res.Partitions = append(res.Partitions, r)
		res.Records += r.Source
		res.Lost += r.Lost
		res.Duplicated += r.Duplicated
		want := sc.expectedDup[offsets.SourcePartition{Topic: tp.Topic, Partition: tp.Partition}]
		res.Expected += want
		res.GroupLag += sc.groupLag[offsets.SourcePartition{Topic: tp.Topic, Partition: tp.Partition}]
		res.Unexpected += max(r.Duplicated-want, want-r.Duplicated)
		res.OutOfOrder += r.OutOfOrder
		res.Foreign += r.Foreign
	}
	return res, nil
}

func (sc *scenario) printFinal(res finalResult, took time.Duration) {
	res.From = "group"
	if sc.offsetsSavepoint() != "" {
		res.From = "flink-savepoint"
	}
	sc.cli.emit("sandbox-result", res, func(w io.Writer) {
		fmt.Fprintln(w, "\nPARTITION\tSOURCE RECORDS\tON TARGET\tLOST\tDUPLICATED\tWRITTEN BY THE OLD JOB PAST ITS GROUP COMMIT")
		for _, r := range res.Partitions {
			lag := sc.groupLag[offsets.SourcePartition{Topic: r.Topic, Partition: r.Partition}]
			fmt.Fprintf(w, "%s-%d\t%d\t%d\t%d\t%d\t%d\n", r.Topic, r.Partition, r.Source, r.Target, r.Lost, r.Duplicated, lag)
		}
		switch {
		case res.From == "flink-savepoint":
			fmt.Fprintf(w, "\n%d source records, %d lost, %d duplicated: C came from Flink's savepoint, exact; the group lagged it by %d records, which a plan from the group would have copied again; the whole demo took %v\n",
				res.Records, res.Lost, res.Duplicated, res.GroupLag, took.Round(time.Second))
		case sc.realFlink:
			fmt.Fprintf(w, "\n%d source records, %d lost, %d duplicated (%d written by Flink past its last group commit; a plan from the savepoint, the default, copies none again); the whole demo took %v\n",
				res.Records, res.Lost, res.Duplicated, res.Expected, took.Round(time.Second))
		default:
			fmt.Fprintf(w, "\n%d source records, %d lost, %d duplicated; the whole demo took %v\n", res.Records, res.Lost, res.Duplicated, took.Round(time.Second))
		}
	})
}
