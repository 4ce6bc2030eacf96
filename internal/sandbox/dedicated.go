package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/IBM/sarama"
)

// DedicatedConfig says what a dedicated-mode MirrorMaker 2 replicates, from
// the source cluster (alias SourceAlias) to the target cluster.
type DedicatedConfig struct {
	// Topics are the source topics to replicate, by name.
	Topics []string
	// Policy is "identity" (target topics keep their names) or "default"
	// (MM2's DefaultReplicationPolicy: "<source alias>.<topic>"); "" means
	// identity.
	Policy string
	// SourceAlias and TargetAlias are the cluster aliases ("" means
	// "source" and "target").
	SourceAlias, TargetAlias string
	// Extra are further mm2.properties lines, which win over the defaults.
	Extra map[string]string
}

// DedicatedMM2 is MirrorMaker 2 in dedicated mode (connect-mirror-maker.sh:
// org.apache.kafka.connect.mirror.MirrorMaker) running as a process of the
// sandbox: one source->target flow, with its Connect worker state in
// mm2-configs/-offsets/-status.<source alias>.internal on the target.
type DedicatedMM2 struct {
	proc        *process
	sourceAlias string
	props       string
	rmDir       string // removed by Close: the directory is not in the sandbox's
}

// dedicatedDefaults make the flow the one a cutover replaces: only the
// MirrorSourceConnector copies records; no checkpoints, heartbeats, group or
// topic-config syncing; replication factor 1 for the sandbox's one-broker
// clusters; and offsets flushed every second, as a Connect worker of the
// sandbox would.
var dedicatedDefaults = map[string]string{
	"tasks.max":                            "1",
	"emit.checkpoints.enabled":             "false",
	"emit.heartbeats.enabled":              "false",
	"sync.group.offsets.enabled":           "false",
	"sync.topic.configs.enabled":           "false",
	"sync.topic.acls.enabled":              "false",
	"refresh.topics.interval.seconds":      "5",
	"emit.offset-syncs.enabled":            "false", // Kafka 3.9+; older versions ignore it
	"replication.factor":                   "1",
	"checkpoints.topic.replication.factor": "1",
	"heartbeats.topic.replication.factor":  "1",
	"offset.storage.replication.factor":    "1",
	"config.storage.replication.factor":    "1",
	"status.storage.replication.factor":    "1",
	"target.offset.flush.interval.ms":      "1000",
}

// StartDedicatedMM2 starts MirrorMaker 2 in dedicated mode for the source ->
// target flow (with --clusters <target alias>, so only that herder runs) and
// waits until its worker has created its offsets topic on the target. The
// Kafka jars are the sandbox's, or the cache's for an attached sandbox.
func (s *Sandbox) StartDedicatedMM2(ctx context.Context, cfg DedicatedConfig) (*DedicatedMM2, error) {
	if cfg.SourceAlias == "" {
		cfg.SourceAlias = "source"
	}
	if cfg.TargetAlias == "" {
		cfg.TargetAlias = "target"
	}
	var policy string
	switch cfg.Policy {
	case "", "identity":
		policy = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
	case "default":
		policy = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
	default:
		return nil, fmt.Errorf("dedicated mm2: replication policy %q is not identity or default", cfg.Policy)
	}
	if len(cfg.Topics) == 0 {
		return nil, fmt.Errorf("dedicated mm2: no topics")
	}
	java, libs, err := s.javaAndLibs(ctx)
	if err != nil {
		return nil, err
	}
	parent, rmDir := s.workDir, ""
	if parent == "" { // attached: the sandbox's directory is another process's
		parent = os.TempDir()
	}
	dir, err := os.MkdirTemp(parent, "dedicated-mm2-")
	if err != nil {
		return nil, err
	}
	if s.workDir == "" {
		rmDir = dir
	}
	src, tgt := cfg.SourceAlias, cfg.TargetAlias
	topics := make([]string, len(cfg.Topics))
	for i, t := range cfg.Topics {
		topics[i] = regexp.QuoteMeta(t)
	}
	props := map[string]string{
		"clusters":                    src + ", " + tgt,
		src + ".bootstrap.servers":    s.source.bootstrap,
		tgt + ".bootstrap.servers":    s.target.bootstrap,
		src + "->" + tgt + ".enabled": "true",
		src + "->" + tgt + ".topics":  strings.Join(topics, ","),
		tgt + "->" + src + ".enabled": "false",
		"replication.policy.class":    policy,
	}
	for k, v := range dedicatedDefaults {
		props[strings.Replace(k, "target.", tgt+".", 1)] = v
	}
	for k, v := range cfg.Extra {
		props[k] = v
	}
	var lines []string
	for k, v := range props {
		lines = append(lines, k+" = "+strings.ReplaceAll(v, `\`, `\\`)) // Properties.load unescapes
	}
	slices.Sort(lines)
	propsPath := filepath.Join(dir, "mm2.properties")
	if err := os.WriteFile(propsPath, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	log4j2 := filepath.Join(dir, "log4j2.properties")
	log4j1 := filepath.Join(dir, "log4j.properties")
	if err := os.WriteFile(log4j2, []byte(dedicatedLog4j2), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(log4j1, []byte(dedicatedLog4j1), 0o644); err != nil {
		return nil, err
	}
	argv := append([]string{java}, strings.Fields(heapFlags+" "+jvmFlags)...)
	argv = append(argv, "-Dlog4j2.configurationFile="+log4j2, "-Dlog4j.configuration=file:"+log4j1,
		"-cp", filepath.Join(libs, "*"), "org.apache.kafka.connect.mirror.MirrorMaker", propsPath, "--clusters", tgt)
	m := &DedicatedMM2{sourceAlias: src, props: propsPath, rmDir: rmDir,
		proc: &process{name: "dedicated mm2", argv: argv, env: baseEnv(), dir: dir, log: filepath.Join(dir, "mm2.log"),
			cds: s.classArchive(java, libs, "dedicated-mm2")}}
	release, err := takeStartSlot(ctx, s.log, "dedicated mm2")
	if err != nil {
		return nil, err
	}
	defer release()
	if err := m.proc.start(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	topic := m.OffsetsTopic()
	if err := waitUntil(ctx, m.proc, func(ctx context.Context) error { return topicExists(s.target.bootstrap, topic) }); err != nil {
		m.proc.kill()
		return nil, fmt.Errorf("dedicated mm2 did not create %s: %w\n%s", topic, err, m.proc.tail(40))
	}
	s.log.Info("dedicated mm2 running", "flow", src+"->"+tgt, "offsets topic", topic)
	return m, nil
}

// javaAndLibs returns the java binary and the directory of the sandbox's
// Kafka jars, or, for an attached sandbox, of the same Kafka version from
// the cache.
func (s *Sandbox) javaAndLibs(ctx context.Context) (java, libs string, err error) {
	if java, err = exec.LookPath("java"); err != nil {
		return "", "", fmt.Errorf("%w: java is not installed", ErrNoKafka)
	}
	if s.libs != "" {
		return java, s.libs, nil
	}
	env := ConfigFromEnv()
	env.KafkaVersion = s.version
	if env.CacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return "", "", err
		}
		env.CacheDir = filepath.Join(dir, "mm2cutover")
	}
	dist, err := distribution(ctx, env, s.log)
	if err != nil {
		return "", "", err
	}
	return java, filepath.Join(dist, "libs"), nil
}

func topicExists(bootstrap, topic string) error {
	c, err := sarama.NewClient([]string{bootstrap}, NewSaramaConfig())
	if err != nil {
		return err
	}
	defer c.Close()
	parts, err := c.Partitions(topic)
	if err != nil {
		return err
	}
	if len(parts) == 0 {
		return fmt.Errorf("%s has no partitions yet", topic)
	}
	return nil
}

// OffsetsTopic is the topic on the target where the flow's worker stores
// its source offsets: mm2-offsets.<source alias>.internal.
func (m *DedicatedMM2) OffsetsTopic() string { return "mm2-offsets." + m.sourceAlias + ".internal" }

// ConnectorName is the name the dedicated mode gives the flow's
// MirrorSourceConnector, under which its offsets are keyed.
func (m *DedicatedMM2) ConnectorName() string { return "MirrorSourceConnector" }

// Stop stops MirrorMaker gracefully (SIGTERM: its tasks stop and commit
// their offsets) and waits for it to exit; after workerStopGrace it is
// killed and Stop returns an error matching ErrStopHung.
func (m *DedicatedMM2) Stop(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, workerStopGrace)
	defer cancel()
	if err := m.proc.stop(ctx); err != nil && !isSignalExit(err) {
		return err
	}
	return nil
}

// Kill sends SIGKILL: no task stop, no offset commit.
func (m *DedicatedMM2) Kill() error { return m.proc.kill() }

// Close kills MirrorMaker if it still runs and removes its files unless
// they are in the sandbox's directory (which Sandbox.Close removes).
func (m *DedicatedMM2) Close() error {
	err := m.proc.kill()
	if m.rmDir != "" {
		err = errors.Join(err, os.RemoveAll(m.rmDir))
	}
	return err
}

// Log returns the path of MirrorMaker's log.
func (m *DedicatedMM2) Log() string { return m.proc.logPath() }

// LogTail returns the last n lines of MirrorMaker's log.
func (m *DedicatedMM2) LogTail(n int) string { return m.proc.tail(n) }

// Properties returns the path of the mm2.properties it runs with.
func (m *DedicatedMM2) Properties() string { return m.props }

const dedicatedLog4j2 = `rootLogger.level = INFO
rootLogger.appenderRef.stdout.ref = stdout
appender.stdout.name = stdout
appender.stdout.type = Console
appender.stdout.layout.type = PatternLayout
appender.stdout.layout.pattern = [%d] %p %m (%c)%n
logger.kafka.name = org.apache.kafka.clients
logger.kafka.level = WARN
`

const dedicatedLog4j1 = `log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.org.apache.kafka.clients=WARN
`
