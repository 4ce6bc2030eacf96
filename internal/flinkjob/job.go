// Package flinkjob runs the job being replaced for real: a Flink DataStream
// job, KafkaSource -> KafkaSink, in Flink's local (MiniCluster) mode, as a
// JVM process controlled from Go. Tests and the demo use it to prove the
// cutover against Flink itself rather than an imitation.
//
// The job (src/, built by pom.xml on first use into the jar cache, like the
// sandbox's Kafka jars) copies the given topics byte for byte: key, value,
// headers, timestamp and partition. Its KafkaSource has a group id,
// commit.offsets.on.checkpoint=true and, when it starts without state, the
// group's committed offsets as its start (EARLIEST where the group has
// none): what docs/flink.md tells operators to do on a rollback. Its KafkaSink
// writes at least once, flushing on every checkpoint. Checkpoints run every
// CheckpointInterval with Parallelism subtasks (2 by default).
//
// Control: Start (from the group, or from a savepoint), StopWithSavepoint
// (the graceful stop), Cancel (no savepoint: the crash case) and Kill
// (SIGKILL). The job reports, as JSON lines on its stdout, every completed
// checkpoint with the offsets it commits and the path of a savepoint;
// Checkpoints and WaitCheckpoint give them to the caller.
//
// The job runs on a MiniCluster of its own whose Flink REST API listens on a
// free port of 127.0.0.1 (Job.REST). With Config.KeepCluster the cluster, its
// REST API and the ended job's status and checkpoint history stay up after
// the job stopped, as a session cluster's JobManager keeps them, until Close.
// Config.ExtraSource adds a second KafkaSource under a uid of its own, for a
// savepoint with two sources. ReadPositions reads a savepoint's KafkaSource
// splits with Flink's own State Processor API: the reference the Go reader of
// savepoints is tested against.
//
// Two Flink lines are supported: 1.20 (flink-connector-kafka 3.4.0-1.20) and
// 2.2 (5.0.0-2.2), chosen by Config.Version or MM2CUTOVER_FLINK_VERSION.
package flinkjob

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/jvmcds"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// Config says what the job replicates and how it starts.
type Config struct {
	// Version is the Flink line: "1.20" or "2.2" ("" means the
	// MM2CUTOVER_FLINK_VERSION environment variable, else DefaultVersion).
	Version string
	// CacheDir holds built jobs ("" means DefaultCacheDir).
	CacheDir string
	// Dir receives the job's log, its client property files, its
	// temporary files and its savepoints. Required.
	Dir string

	Source, Target string   // bootstrap servers
	Group          string   // the KafkaSource's group.id
	Topics         []string // source topics
	// TargetPrefix is put before a source topic's name to name its target
	// topic ("" for IdentityReplicationPolicy, "source." for MM2's default
	// policy with source alias "source").
	TargetPrefix string
	// SourceProperties and TargetProperties are extra client properties
	// (security settings), written to files only the job reads.
	SourceProperties, TargetProperties map[string]string

	// Parallelism is the number of source and sink subtasks (default 2).
	Parallelism int
	// CheckpointInterval is the time between checkpoints (default 2 s).
	CheckpointInterval time.Duration
	// FromSavepoint restores the job from a savepoint (a path StopWithSavepoint
	// returned); "" starts it without state, from the group's committed offsets.
	FromSavepoint string
	// ExtraSource, when its UID is set, adds a second KafkaSource with that
	// uid, reading its own topics with the same group, unioned into the same
	// sink. The first source's uid is SourceUID.
	ExtraSource ExtraSource
	// StateFiles keeps checkpoints on the file system (under Dir) with no
	// state inline in the metadata: a savepoint then holds every operator's
	// state in files beside its _metadata, as with checkpoints on S3 or HDFS.
	// Without it, checkpoints are in the JobManager's memory and a
	// savepoint's state is inline in its _metadata.
	StateFiles bool
	// KeepCluster keeps the MiniCluster and its REST API running after the
	// job stopped (StopWithSavepoint or Cancel return once the job ended, not
	// the process), until Close.
	KeepCluster bool

	// ExactlyOnce makes the job's KafkaSink exactly-once
	// (DeliveryGuarantee.EXACTLY_ONCE): each checkpoint's records are
	// written in Kafka transactions (transactional ID prefix <group>-sink)
	// committed when the checkpoint completes, so that a read_committed
	// reader of the target never sees a record twice.
	ExactlyOnce bool

	// HeapMax is the JVM's -Xmx (default "384m").
	HeapMax string
	// Logger receives progress; nil discards it.
	Logger *slog.Logger
}

// SourceUID is the uid of the job's KafkaSource operator, whose OperatorID in
// a savepoint is the hash of it.
const SourceUID = "kafka-source"

// ExtraSource is a second KafkaSource of the job: its operator uid and topics.
type ExtraSource struct {
	UID    string
	Topics []string
}

const (
	startTimeout = 3 * time.Minute
	stopTimeout  = 3 * time.Minute
)

// jvmFlags fit the job beside the sandbox on two cores: a small heap, the
// serial collector and the client compiler; and the --add-opens that Flink
// needs on Java 17 (from Flink's own config.yaml).
var jvmFlags = []string{
	"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:+ExitOnOutOfMemoryError", "-Djava.awt.headless=true",
	"--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.net=ALL-UNNAMED",
	"--add-opens=java.base/java.io=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED",
	"--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
	"--add-opens=java.base/java.text=ALL-UNNAMED", "--add-opens=java.base/java.time=ALL-UNNAMED",
	"--add-opens=java.base/java.util=ALL-UNNAMED", "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
	"--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED", "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED",
}

// ErrJobEnded is returned by a wait when the job's process ended first.
var ErrJobEnded = errors.New("flink job ended")

// Job is a running (or ended) Flink job process.
type Job struct {
	cfg   Config
	dist  Dist
	cmd   *exec.Cmd
	stdin io.WriteCloser
	log   string
	// cdsDone ends the JVM's use of its class data sharing archive
	// (jvmcds) once it exited.
	cdsDone func(exited bool)

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every state change
	running   Event
	cps       checkpoints
	savepoint string
	failure   string
	cancelled bool
	finished  bool
	done      chan struct{} // closed when the process has exited
	exitErr   error
}

// Start builds the job if needed (see Build), starts it and waits until
// Flink runs it. Errors match ErrNoFlink when the job cannot be built, and
// carry the tail of the job's log when it does not start.
func Start(ctx context.Context, cfg Config) (*Job, error) {
	if cfg.Version == "" {
		cfg.Version = os.Getenv(VersionEnv)
	}
	if cfg.Parallelism <= 0 {
		cfg.Parallelism = 2
	}
	if cfg.CheckpointInterval <= 0 {
		cfg.CheckpointInterval = 2 * time.Second
	}
	if cfg.HeapMax == "" {
		cfg.HeapMax = "384m"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Dir == "" || cfg.Source == "" || cfg.Target == "" || cfg.Group == "" || len(cfg.Topics) == 0 {
		return nil, errors.New("flinkjob: Dir, Source, Target, Group and Topics are required")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("%w: java is not installed (Java 17 or newer is needed)", ErrNoFlink)
	}
	dist, err := Build(ctx, cfg.Version, cfg.CacheDir, cfg.Logger)
	if err != nil {
		return nil, err
	}
	tmp := filepath.Join(cfg.Dir, "tmp")
	savepoints := filepath.Join(cfg.Dir, "savepoints")
	for _, d := range []string{tmp, savepoints} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	args := []string{
		"--source", cfg.Source, "--target", cfg.Target, "--group", cfg.Group,
		"--topics", strings.Join(cfg.Topics, ","), "--target-prefix", cfg.TargetPrefix,
		"--parallelism", strconv.Itoa(cfg.Parallelism),
		"--checkpoint-interval-ms", strconv.FormatInt(cfg.CheckpointInterval.Milliseconds(), 10),
		"--savepoint-dir", "file://" + savepoints,
		"--from-savepoint", cfg.FromSavepoint,
		"--keep-cluster", strconv.FormatBool(cfg.KeepCluster),
		"--exactly-once", strconv.FormatBool(cfg.ExactlyOnce),
	}
	if cfg.StateFiles {
		args = append(args, "--state-files", "file://"+filepath.Join(cfg.Dir, "checkpoints"))
	}
	if cfg.ExtraSource.UID != "" {
		if len(cfg.ExtraSource.Topics) == 0 || strings.ContainsAny(cfg.ExtraSource.UID, "=") {
			return nil, errors.New("flinkjob: ExtraSource needs a uid without '=' and topics")
		}
		args = append(args, "--extra-source", cfg.ExtraSource.UID+"="+strings.Join(cfg.ExtraSource.Topics, ","))
	}
	for _, p := range []struct {
		flag  string
		props map[string]string
	}{{"--source-properties", cfg.SourceProperties}, {"--target-properties", cfg.TargetProperties}} {
		if len(p.props) == 0 {
			continue
		}
		path, err := writeProperties(cfg.Dir, p.props)
		if err != nil {
			return nil, err
		}
		args = append(args, p.flag, path)
	}
	logf, err := os.CreateTemp(cfg.Dir, "flink-*.log")
	if err != nil {
		return nil, err
	}
	argv := append([]string{"-Xms64m", "-Xmx" + cfg.HeapMax, "-Djava.io.tmpdir=" + tmp}, jvmFlags...)
	argv = append(argv, "-cp", dist.classpath(), "io.github.mm2cutover.flinkjob.Replicator")
	// The job's JVM starts a whole Flink mini cluster: its classes come
	// from the archive the first job wrote, in the jar cache.
	cdsOpts, cdsDone := jvmcds.New(filepath.Dir(dist.Dir), java, dist.classpath(), "flink-replicator").Options()
	argv = append(cdsOpts, argv...)
	cmd := exec.Command(java, append(argv, args...)...)
	cmd.Env = baseEnv()
	cmd.Dir = cfg.Dir
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		logf.Close()
		cdsDone(false)
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		cdsDone(false)
		return nil, err
	}
	j := &Job{cfg: cfg, dist: dist, cmd: cmd, stdin: stdin, log: logf.Name(), cdsDone: cdsDone,
		changed: make(chan struct{}), done: make(chan struct{}), cps: checkpoints{parallelism: cfg.Parallelism}}
	fmt.Fprintf(logf, "=== flinkjob: starting flink %s at %s: %s\n", dist.Version.Flink, time.Now().Format(time.RFC3339Nano), strings.Join(cmd.Args, " "))
	started := time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		cdsDone(false)
		return nil, fmt.Errorf("start flink job: %w", err)
	}
	go j.read(stdout, logf)

	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if err := j.waitFor(ctx, func() bool { return j.running.JobID != "" }); err != nil {
		j.Kill()
		return nil, fmt.Errorf("flink job did not start: %w\n%s", err, j.LogTail(40))
	}
	cfg.Logger.Info("flink job running", "flink", j.running.Flink, "job", j.running.JobID,
		"group", cfg.Group, "restored", cfg.FromSavepoint, "took", time.Since(started).Round(time.Millisecond))
	return j, nil
}

// baseEnv is the job's environment: enough to find java and nothing of the
// caller's Flink or Java options.
func baseEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "JAVA_HOME", "LANG"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func writeProperties(dir string, props map[string]string) (string, error) {
	f, err := os.CreateTemp(dir, "client-*.properties")
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := f.Chmod(0o600); err != nil {
		return "", err
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(f, "%s=%s\n", escapeProperty(k), escapeProperty(props[k]))
	}
	return f.Name(), f.Close()
}

// escapeProperty escapes a key or value for java.util.Properties.load.
func escapeProperty(s string) string {
	r := strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`, "=", `\=`, ":", `\:`, "#", `\#`, "!", `\!`)
	s = r.Replace(s)
	if strings.HasPrefix(s, " ") {
		s = `\` + s
	}
	return s
}

// read consumes the job's stdout: events update the job's state, every line
// also goes to the log. When stdout ends, it waits for the process.
func (j *Job) read(stdout io.Reader, logf *os.File) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		fmt.Fprintf(logf, "event: %s\n", line)
		e, err := ParseEvent(line)
		if err != nil {
			fmt.Fprintf(logf, "flinkjob: %v\n", err)
			continue
		}
		j.update(func() {
			switch e.Kind {
			case "running":
				j.running = e
			case "checkpoint":
				if cp, ok := j.cps.add(e); ok {
					j.cfg.Logger.Debug("flink checkpoint completed", "id", cp.ID)
				}
			case "savepoint":
				j.savepoint = e.Path
			case "cancelled":
				j.cancelled = true
			case "finished":
				j.finished = true
			case "failed":
				j.failure = e.Error
			}
		})
	}
	err := j.cmd.Wait()
	j.cdsDone(jvmcds.ExitedByItself(err))
	fmt.Fprintf(logf, "=== flinkjob: exited at %s: %v\n", time.Now().Format(time.RFC3339Nano), err)
	logf.Close()
	j.update(func() { j.exitErr = err })
	close(j.done)
}

func (j *Job) update(f func()) {
	j.mu.Lock()
	defer j.mu.Unlock()
	f()
	close(j.changed)
	j.changed = make(chan struct{})
}

// waitFor waits until cond (called with j.mu held) holds, the process ends
// (ErrJobEnded) or ctx ends.
func (j *Job) waitFor(ctx context.Context, cond func() bool) error {
	for {
		j.mu.Lock()
		ok, ch := cond(), j.changed
		j.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-j.done:
			j.mu.Lock()
			ok := cond()
			j.mu.Unlock()
			if ok {
				return nil
			}
			return fmt.Errorf("%w: %v", ErrJobEnded, j.Err())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// JobID returns Flink's ID of the job.
func (j *Job) JobID() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.running.JobID
}

// REST returns the base URL of the Flink REST API of the job's cluster, on
// 127.0.0.1 (e.g. http://127.0.0.1:40123).
func (j *Job) REST() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.running.REST
}

// FlinkVersion returns the Flink version the job runs on, as Flink reports it.
func (j *Job) FlinkVersion() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.running.Flink
}

// Checkpoints returns the checkpoints and savepoints completed so far, by ID.
func (j *Job) Checkpoints() []Checkpoint {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.cps.list()
}

// LastCheckpoint returns the checkpoint (or savepoint) that completed last.
func (j *Job) LastCheckpoint() (Checkpoint, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.cps.last()
}

// WaitCheckpoint waits for a checkpoint with an ID above after to complete
// and returns it.
func (j *Job) WaitCheckpoint(ctx context.Context, after int64) (Checkpoint, error) {
	var cp Checkpoint
	err := j.waitFor(ctx, func() bool {
		var ok bool
		cp, ok = j.cps.last()
		return ok && cp.ID > after
	})
	return cp, err
}

// WaitRead waits until a completed checkpoint holds, for every partition of
// want, at least that next offset: the job has read (and, the sink being
// flushed on checkpoints, written) everything before it.
func (j *Job) WaitRead(ctx context.Context, want offsets.GroupOffsets) (Checkpoint, error) {
	var cp Checkpoint
	err := j.waitFor(ctx, func() bool {
		var ok bool
		if cp, ok = j.cps.last(); !ok {
			return false
		}
		for p, n := range want {
			if cp.Offsets[p] < n {
				return false
			}
		}
		return true
	})
	return cp, err
}

// StopWithSavepoint stops the job the graceful way an operator does with
// `flink stop`: a synchronous savepoint, after which the sources stop and the
// sinks flush. It returns the savepoint's path once the process has exited
// (with Config.KeepCluster: once the job has finished). When ctx ends first,
// the process is killed.
func (j *Job) StopWithSavepoint(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, stopTimeout)
	defer cancel()
	if _, err := io.WriteString(j.stdin, "savepoint\n"); err != nil {
		return "", fmt.Errorf("stop flink job: %w", err)
	}
	var path string
	if err := j.waitFor(ctx, func() bool { path = j.savepoint; return path != "" }); err != nil {
		j.Kill()
		return "", fmt.Errorf("stop-with-savepoint: %w\n%s", err, j.LogTail(40))
	}
	if j.cfg.KeepCluster {
		if err := j.waitFor(ctx, func() bool { return j.finished }); err != nil {
			j.Kill()
			return path, fmt.Errorf("stop-with-savepoint: the job did not finish: %w\n%s", err, j.LogTail(40))
		}
	} else if err := j.waitExit(ctx); err != nil {
		return path, err
	}
	j.cfg.Logger.Info("flink job stopped with a savepoint", "savepoint", path)
	return path, nil
}

// Cancel cancels the job without a savepoint, as a crash or `flink cancel`
// would end it: records the sink wrote after the last completed checkpoint
// are on the target, but the group's offsets are those of that checkpoint.
func (j *Job) Cancel(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, stopTimeout)
	defer cancel()
	if _, err := io.WriteString(j.stdin, "cancel\n"); err != nil {
		return fmt.Errorf("cancel flink job: %w", err)
	}
	if err := j.waitFor(ctx, func() bool { return j.cancelled }); err != nil {
		j.Kill()
		return fmt.Errorf("cancel: %w\n%s", err, j.LogTail(40))
	}
	if !j.cfg.KeepCluster {
		if err := j.waitExit(ctx); err != nil {
			return err
		}
	}
	j.cfg.Logger.Info("flink job cancelled without a savepoint")
	return nil
}

// Close ends the process of a job whose cluster was kept (Config.KeepCluster)
// after it stopped, and waits until it exited; when ctx ends first, or the
// job still runs, the process is killed. It returns the process's error.
func (j *Job) Close(ctx context.Context) error {
	j.mu.Lock()
	ended := j.finished || j.cancelled || j.failure != ""
	j.mu.Unlock()
	if !ended {
		return j.Kill()
	}
	if _, err := io.WriteString(j.stdin, "exit\n"); err != nil {
		return j.Kill()
	}
	ctx, cancel := context.WithTimeout(ctx, stopTimeout)
	defer cancel()
	return j.waitExit(ctx)
}

func (j *Job) waitExit(ctx context.Context) error {
	select {
	case <-j.done:
	case <-ctx.Done():
		j.Kill()
		return fmt.Errorf("flink job did not exit: %w", ctx.Err())
	}
	if err := j.Err(); err != nil {
		return fmt.Errorf("flink job: %w\n%s", err, j.LogTail(40))
	}
	return nil
}

// Kill sends SIGKILL to the job's process group and waits until it exited.
func (j *Job) Kill() error {
	select {
	case <-j.done:
		return nil
	default:
	}
	if err := syscall.Kill(-j.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	<-j.done
	return nil
}

// Done is closed when the job's process has exited.
func (j *Job) Done() <-chan struct{} { return j.done }

// Err returns why the job ended badly: the failure it reported, or the
// process's exit error; nil while it runs or after a clean stop.
func (j *Job) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.failure != "" {
		return fmt.Errorf("job failed: %s", j.failure)
	}
	return j.exitErr
}

// LogPath returns the path of the job's log (Flink's logs and every event).
func (j *Job) LogPath() string { return j.log }

// LogTail returns the last n lines of the job's log.
func (j *Job) LogTail(n int) string {
	b, err := os.ReadFile(j.log)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return lastLines(string(b), n)
}
