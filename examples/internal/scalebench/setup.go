package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/redact"
)

// recordsPerPartition is how many records setup keeps in every source
// partition; the group's committed offset C is 1 or 2 (never 0: every
// partition gets a Connect offset to write and read back).
const recordsPerPartition = 2

func committed(p int32) int64 { return 1 + int64(p)%2 }

// job is what a child process is asked to do.
type job struct {
	Mode       string        `json:"mode"` // lib, cli, raw, status, pause
	Source     string        `json:"source"`
	Target     string        `json:"target"`
	ConnectURL string        `json:"connect_url"`
	Connector  string        `json:"connector"`
	Group      string        `json:"group"`
	Topics     []string      `json:"topics"`
	PerTopic   int32         `json:"per_topic"`
	Window     time.Duration `json:"window"`
	PlanFile   string        `json:"plan_file,omitempty"`
	CPUProfile string        `json:"cpu_profile,omitempty"`
	// Cutover is the command line's binary and PropsFile its
	// -connector-properties file, for a cli job.
	Cutover   string `json:"cutover,omitempty"`
	PropsFile string `json:"props_file,omitempty"`
	// TasksMax is the connector's tasks.max; measureSize sets it, to
	// connect.TasksFor of the job's partitions unless -tasks-max is given.
	TasksMax int `json:"tasks_max,omitempty"`
	// Secure is set on a secure sandbox (-secure).
	Secure *secureJob `json:"secure,omitempty"`
	// ExactlyOnce creates the connector exactly-once (the cutover's
	// -exactly-once) on the Connect group WorkerGroup, whose worker
	// ConnectURL is.
	ExactlyOnce bool   `json:"exactly_once,omitempty"`
	WorkerGroup string `json:"worker_group,omitempty"`
}

// connectorProps is what the -connector-properties file of a cli job
// holds: settings' Extra, so that the cli and the library create the same connector.
const connectorProps = "replication.factor=1\n"

// cutoverSettings are the cutover's settings for a job, as the CLI would have
// them from its flags.
func cutoverSettings(j job, log *slog.Logger) settings.Settings {
	s := settings.Settings{
		Source:          j.kafkaConfig(j.Source, "scalebench", true),
		Target:          j.kafkaConfig(j.Target, "scalebench", false),
		ConnectURL:      j.ConnectURL,
		Connector:       j.Connector,
		Group:           j.Group,
		Topics:          j.Topics,
		StabilityWindow: j.Window,
		TasksMax:        j.TasksMax,
		ReadBackTimeout: 2 * time.Minute,
		RunningTimeout:  2 * time.Minute,
		ToolVersion:     "scalebench",
		Logger:          log,
		// The sandbox's clusters have one broker each.
		Extra:       map[string]string{"replication.factor": "1"},
		ExactlyOnce: j.ExactlyOnce,
		WorkerGroup: j.WorkerGroup,
	}
	if sj := j.Secure; sj != nil {
		s.ConnectUser, s.ConnectPassword, s.ConnectCAFile = sj.ConnectUser, redact.Secret(sj.ConnectPassword), sj.CAFile
		s.SourceClient, s.TargetClient = sj.SourceClient, sj.TargetClient
	}
	return s.WithDefaults()
}

// measureSize sets up n partitions and runs the rounds.
func measureSize(ctx context.Context, h *held, o options, n int, log *slog.Logger) (sizeResult, error) {
	res := sizeResult{Partitions: n, Topics: o.topics, Rounds: o.rounds}
	per := int32(n / o.topics)
	var topics []string
	for i := range o.topics {
		topics = append(topics, fmt.Sprintf("%s-n%d-t%d", o.prefix, n, i))
	}
	group := fmt.Sprintf("%s-n%d", o.prefix, n)
	base := job{Source: h.sb.Source().Bootstrap(), Target: h.sb.Target().Bootstrap(), ConnectURL: h.sb.ConnectURL(),
		Group: group, Topics: topics, PerTopic: per, Window: o.window, Cutover: h.cutover, PropsFile: h.props, TasksMax: o.tasksMax,
		Secure: h.secure}
	if base.TasksMax == 0 { // what the cutover chooses: the pre-created connector, the library and the CLI agree
		base.TasksMax = connect.TasksFor(int(per) * len(topics))
	}
	res.TasksMax = base.TasksMax

	start := time.Now()
	log.Info("setting up", "partitions", n, "topics", len(topics))
	if err := setUp(ctx, h, base); err != nil {
		return res, fmt.Errorf("set up: %w", err)
	}
	log.Info("set up", "partitions", n, "took", time.Since(start).Round(time.Millisecond))
	if !o.keep {
		defer func() {
			if err := tearDown(context.WithoutCancel(ctx), h, base); err != nil {
				log.Warn("deleting the topics", "error", err)
			}
		}()
	}
	dir, err := os.MkdirTemp("", "scalebench-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	c, err := app.OpenConnect(cutoverSettings(base, nil))
	if err != nil {
		return res, err
	}

	var libT, libPlan, libApply, cliT, cliPlan, cliApply, rawT, statusT []time.Duration
	var libRuns, cliRuns, rawRuns []childResult
	for r := -o.warmup; r < o.rounds; r++ {
		modes := slices.Clone(o.paths)
		k := (r + o.warmup) % len(modes) // every path goes first, second and last in turn
		modes = append(modes[k:], modes[:k]...)
		for _, mode := range modes {
			j := base
			j.Mode = mode
			j.Connector = fmt.Sprintf("%s-n%d-r%d-%s", h.base, n, r+o.warmup, mode)
			if mode == "lib" || mode == "cli" {
				j.PlanFile = filepath.Join(dir, j.Connector+".plan.json")
			}
			if mode == "lib" {
				if o.profileDir != "" {
					j.CPUProfile = filepath.Join(o.profileDir, j.Connector+".cpu.pprof")
				}
			}
			if err := createStopped(ctx, c, j); err != nil {
				return res, err
			}
			cr, err := runJob(ctx, j)
			if err != nil {
				return res, err
			}
			log.Info("run", "partitions", n, "round", r, "warm-up", r < 0, "path", mode, "ok", cr.OK, "took", cr.Elapsed.Round(time.Millisecond),
				"rss_mib", cr.MaxRSS>>20, "error", cr.Error)
			switch {
			case r < 0:
				// A warm-up run: the worker's JVM compiles what the rounds use.
			case !cr.OK:
				res.Errors = append(res.Errors, fmt.Sprintf("round %d %s: %s", r, mode, cr.Error))
			case mode == "cli":
				res.CLIOK++
				cliT, cliPlan, cliApply = append(cliT, cr.Elapsed), append(cliPlan, cr.Plan), append(cliApply, cr.Apply)
				cliRuns = append(cliRuns, cr)
				res.CLIRSS = max(res.CLIRSS, cr.MaxRSS)
			case mode == "lib":
				res.LibOK++
				libT, libPlan, libApply = append(libT, cr.Elapsed), append(libPlan, cr.Plan), append(libApply, cr.Apply)
				libRuns = append(libRuns, cr)
				res.LibRSS = max(res.LibRSS, cr.MaxRSS)
				sj := j
				sj.Mode = "status"
				sr, err := runJob(ctx, sj)
				if err != nil {
					return res, err
				}
				if sr.OK {
					statusT = append(statusT, sr.Elapsed)
					res.StatusRSS = max(res.StatusRSS, sr.MaxRSS)
				} else {
					res.Errors = append(res.Errors, fmt.Sprintf("round %d status: %s", r, sr.Error))
				}
			default:
				res.RawOK++
				rawT = append(rawT, cr.Elapsed)
				rawRuns = append(rawRuns, cr)
				res.RawRSS = max(res.RawRSS, cr.MaxRSS)
			}
			if err := remove(ctx, c, j.Connector); err != nil {
				log.Warn("removing the connector", "connector", j.Connector, "error", err)
			}
		}
	}
	res.Lib, res.LibPlan, res.LibApply = median(libT), median(libPlan), median(libApply)
	res.Raw, res.Status = median(rawT), median(statusT)
	res.Ratio = ratio(res.Lib, res.Raw)
	res.CLI, res.CLIPlan, res.CLIApply = median(cliT), median(cliPlan), median(cliApply)
	res.CLIRatio = ratio(res.CLI, res.Raw)
	res.CLISteps, res.CLICosts = medianRun(cliRuns, res.CLI).Steps, medianRun(cliRuns, res.CLI).Costs
	res.RawCosts = medianRun(rawRuns, res.Raw).Costs
	res.Steps = medianRun(libRuns, res.Lib).Steps
	res.RawSteps = medianRun(rawRuns, res.Raw).Steps

	if o.pause > 0 {
		for _, tasks := range append([]int{base.TasksMax}, o.pauseTasks...) {
			j := base
			j.TasksMax = tasks
			pr, err := measurePause(ctx, c, o, j, h.base, log)
			if err != nil {
				return res, err
			}
			res.Pauses = append(res.Pauses, pr.pauseResult)
			res.Errors = append(res.Errors, pr.errors...)
			if h.eosURL == "" {
				continue
			}
			// The same pause, exactly-once, on the group with the support.
			eos, err := connect.New(h.eosURL)
			if err != nil {
				return res, err
			}
			j.ExactlyOnce, j.WorkerGroup, j.ConnectURL = true, h.eosGroup, h.eosURL
			if pr, err = measurePause(ctx, eos, o, j, h.base+"-eos", log); err != nil {
				return res, err
			}
			pr.ExactlyOnce = true
			res.Pauses = append(res.Pauses, pr.pauseResult)
			res.Errors = append(res.Errors, pr.errors...)
		}
	}
	return res, nil
}

// pauses is what measurePause found: the medians, and the errors of the
// runs that failed.
type pauses struct {
	pauseResult
	errors []string
}

// measurePause runs o.pause operator pauses of j's partitions with j's
// tasks.max, each on a connector of its own.
func measurePause(ctx context.Context, c *connect.Client, o options, j job, runBase string, log *slog.Logger) (pauses, error) {
	out := pauses{pauseResult: pauseResult{TasksMax: j.TasksMax, Runs: o.pause}}
	n := int(j.PerTopic) * len(j.Topics)
	var pause, toResume, firsts, verifies, catchUps, agains []time.Duration
	var runs []childResult
	for r := range o.pause {
		j.Mode = "pause"
		j.Connector = fmt.Sprintf("%s-n%d-t%d-p%d", runBase, n, j.TasksMax, r)
		if err := createStopped(ctx, c, j); err != nil {
			return out, err
		}
		cr, err := runJob(ctx, j)
		if err != nil {
			return out, err
		}
		log.Info("operator pause", "partitions", n, "tasks.max", j.TasksMax, "exactly_once", j.ExactlyOnce, "ok", cr.OK, "pause", cr.Elapsed.Round(time.Millisecond), "error", cr.Error)
		if cr.OK {
			out.OK++
			pause = append(pause, cr.Elapsed)
			toResume = append(toResume, cr.ToResume)
			firsts = append(firsts, cr.FirstRecord)
			verifies = append(verifies, cr.Verify)
			catchUps = append(catchUps, cr.CatchUp)
			agains = append(agains, cr.Again)
			out.VerifyOK = out.VerifyOK || cr.VerifyOK
			runs = append(runs, cr)
		} else {
			out.errors = append(out.errors, fmt.Sprintf("pause %d, tasks.max %d: %s", r, j.TasksMax, cr.Error))
		}
		if err := remove(ctx, c, j.Connector); err != nil {
			log.Warn("removing the connector", "connector", j.Connector, "error", err)
		}
	}
	out.Pause, out.ToResume, out.FirstRecord = median(pause), median(toResume), median(firsts)
	out.Verify, out.VerifyCatchUp, out.VerifyAgain = median(verifies), median(catchUps), median(agains)
	out.Steps = medianRun(runs, out.Pause).Steps
	return out, nil
}

// medianRun returns the run that took d (the median).
func medianRun(runs []childResult, d time.Duration) childResult {
	for _, r := range runs {
		if r.Elapsed == d {
			return r
		}
	}
	return childResult{}
}

// remove stops the connector, resets its offsets and deletes it. Connect
// keeps a deleted connector's offsets, and every worker holds all
// connectors' offsets in memory: with 10,000 left behind by every run, a
// held sandbox's worker (768 MB heap) ran out of memory after about ten
// full runs, and each GET of offsets, which reads the whole offsets topic,
// grew slower.
func remove(ctx context.Context, c *connect.Client, name string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := c.Stop(ctx, name); err != nil {
		return err
	}
	if _, err := c.WaitStopped(ctx, name); err != nil {
		return err
	}
	if _, err := c.ResetOffsets(ctx, name); err != nil {
		return err
	}
	return c.Delete(ctx, name)
}

// createStopped creates the job's connector STOPPED with the configuration
// the cutover would give it, and waits until it is STOPPED.
func createStopped(ctx context.Context, c *connect.Client, j job) error {
	cfg, err := cutoverSettings(j, nil).ConnectorConfig()
	if err != nil {
		return err
	}
	if _, err := c.Create(ctx, j.Connector, cfg, connect.InitialStopped); err != nil {
		return fmt.Errorf("create %s: %w", j.Connector, err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := c.WaitStopped(wctx, j.Connector); err != nil {
		return err
	}
	return nil
}

// runJob runs j in a child process of this binary and returns what it
// reported, its peak RSS included.
func runJob(ctx context.Context, j job) (childResult, error) {
	exe, err := os.Executable()
	if err != nil {
		return childResult{}, err
	}
	in, err := json.Marshal(j)
	if err != nil {
		return childResult{}, err
	}
	cmd := exec.CommandContext(ctx, exe, childArg)
	cmd.Stdin = bytes.NewReader(in)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	runErr := cmd.Run()
	var res childResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return res, fmt.Errorf("child %s: %v; %v\n%s", j.Mode, err, runErr, stderr.Bytes())
	}
	return res, nil
}

// setUp creates the topics on both clusters (if missing) with two records
// per source partition, and commits the group's offsets.
func setUp(ctx context.Context, h *held, j job) error {
	src, err := kafkaadmin.NewClient(j.kafkaConfig(j.Source, "scalebench-setup", true))
	if err != nil {
		return err
	}
	tgt, err := kafkaadmin.NewClient(j.kafkaConfig(j.Target, "scalebench-setup", false))
	if err != nil {
		return err
	}
	for _, side := range []struct {
		r  *kafkaadmin.Client
		sb *sandbox.Broker
	}{{src, h.sb.Source()}, {tgt, h.sb.Target()}} {
		have, err := side.r.Topics(ctx, j.Topics...)
		var ute *kafkaadmin.UnknownTopicsError
		if err != nil && !errors.As(err, &ute) {
			return err
		}
		for _, t := range j.Topics {
			n, ok := have[t]
			switch {
			case ok && n == j.PerTopic:
			case ok:
				return fmt.Errorf("topic %s exists with %d partitions, want %d", t, n, j.PerTopic)
			default:
				if err := side.sb.CreateTopic(ctx, t, j.PerTopic); err != nil {
					return err
				}
			}
		}
	}
	var tps []kafkaadmin.TopicPartition
	for _, t := range j.Topics {
		for p := range j.PerTopic {
			tps = append(tps, kafkaadmin.TopicPartition{Topic: t, Partition: p})
		}
	}
	bounds, err := src.LogBounds(ctx, tps)
	if err != nil {
		return err
	}
	var msgs []*sarama.ProducerMessage
	for _, tp := range tps {
		for i := bounds[tp].End; i < recordsPerPartition; i++ {
			msgs = append(msgs, &sarama.ProducerMessage{Topic: tp.Topic, Partition: tp.Partition, Value: sarama.StringEncoder("r" + fmt.Sprint(i))})
		}
	}
	if len(msgs) > 0 {
		if err := produce(h.sb.Source(), msgs); err != nil {
			return err
		}
	}
	offs := make(map[kafkaadmin.TopicPartition]int64, len(tps))
	for _, tp := range tps {
		offs[tp] = committed(tp.Partition)
	}
	return src.CommitOffsets(ctx, j.Group, offs)
}

func produce(b *sandbox.Broker, msgs []*sarama.ProducerMessage) error {
	cfg := b.SaramaConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Flush.MaxMessages = 5000
	p, err := sarama.NewSyncProducer(b.Addrs(), cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	return p.SendMessages(msgs)
}

// tearDown deletes the topics on both clusters and the group.
func tearDown(ctx context.Context, h *held, j job) error {
	var errs []error
	for _, b := range []*sandbox.Broker{h.sb.Source(), h.sb.Target()} {
		bootstrap := b.Bootstrap()
		admin, err := sarama.NewClusterAdmin(b.Addrs(), b.SaramaConfig())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, t := range j.Topics {
			if err := admin.DeleteTopic(t); err != nil && !errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
				errs = append(errs, err)
			}
		}
		if bootstrap == j.Source {
			if err := admin.DeleteConsumerGroup(j.Group); err != nil && !strings.Contains(err.Error(), "does not exist") {
				errs = append(errs, err)
			}
		}
		admin.Close()
	}
	return errors.Join(errs...)
}
