package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

// JavaConsumerConfig says which group a JavaConsumer joins and how.
type JavaConsumerConfig struct {
	// Group is the consumer group; Topic the topic it subscribes to.
	Group, Topic string
	// Protocol is the consumer's group.protocol: "consumer" for the
	// protocol of KIP-848 (Kafka 4.0+; the broker assigns partitions) or
	// "classic" ("" means classic).
	Protocol string
}

// JavaConsumer is Apache Kafka's own Java KafkaConsumer (the console
// consumer of the sandbox's Kafka jars) running as a process: a member of
// its group under either group protocol, as an old job on a Kafka 4 client
// would be. It commits nothing (enable.auto.commit=false) and prints what
// it reads to its log.
type JavaConsumer struct {
	proc  *process
	cfg   JavaConsumerConfig
	boot  string
	rmDir string
}

// StartJavaConsumer starts a JavaConsumer on the source cluster and waits
// until the group's coordinator lists it as a member holding partitions
// (for the consumer protocol, read with ConsumerGroupDescribe; for the
// classic protocol, with DescribeGroups).
func (s *Sandbox) StartJavaConsumer(ctx context.Context, cfg JavaConsumerConfig) (*JavaConsumer, error) {
	if cfg.Group == "" || cfg.Topic == "" {
		return nil, errors.New("java consumer: a group and a topic are required")
	}
	if cfg.Protocol == "" {
		cfg.Protocol = "classic"
	}
	java, libs, err := s.javaAndLibs(ctx)
	if err != nil {
		return nil, err
	}
	parent, rmDir := s.workDir, ""
	if parent == "" {
		parent = os.TempDir()
	}
	dir, err := os.MkdirTemp(parent, "java-consumer-")
	if err != nil {
		return nil, err
	}
	if s.workDir == "" {
		rmDir = dir
	}
	log4j2 := filepath.Join(dir, "log4j2.properties")
	if err := os.WriteFile(log4j2, []byte(dedicatedLog4j2), 0o644); err != nil {
		return nil, err
	}
	argv := append([]string{java}, strings.Fields("-Xms32m -Xmx128m "+jvmFlags)...)
	argv = append(argv, "-Dlog4j2.configurationFile="+log4j2, "-cp", filepath.Join(libs, "*"),
		"org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", s.source.bootstrap,
		"--topic", cfg.Topic, "--group", cfg.Group,
		"--consumer-property", "group.protocol="+cfg.Protocol,
		"--consumer-property", "enable.auto.commit=false",
		"--consumer-property", "client.id=mm2cutover-java-consumer")
	c := &JavaConsumer{cfg: cfg, boot: s.source.bootstrap, rmDir: rmDir,
		proc: &process{name: "java consumer (" + cfg.Protocol + ")", argv: argv, env: baseEnv(), dir: dir, log: filepath.Join(dir, "consumer.log"),
			cds: s.classArchive(java, libs, "console-consumer")}}
	release, err := takeStartSlot(ctx, s.log, "java consumer")
	if err != nil {
		return nil, err
	}
	defer release()
	if err := c.proc.start(); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if err := waitUntil(wctx, c.proc, func(context.Context) error { return c.holdsPartitions() }); err != nil {
		c.Close()
		return nil, fmt.Errorf("java consumer did not join group %s: %w\n%s", cfg.Group, err, c.proc.tail(40))
	}
	s.log.Info("java consumer joined", "group", cfg.Group, "protocol", cfg.Protocol, "topic", cfg.Topic)
	return c, nil
}

// holdsPartitions asks the group's coordinator, with the request of the
// consumer's protocol, whether a member holds partitions.
func (c *JavaConsumer) holdsPartitions() error {
	conf := NewSaramaConfig()
	conf.Version = sarama.V4_0_0_0
	client, err := sarama.NewClient([]string{c.boot}, conf)
	if err != nil {
		return err
	}
	defer client.Close()
	coord, err := client.Coordinator(c.cfg.Group)
	if err != nil {
		return err
	}
	if c.cfg.Protocol == "consumer" {
		resp, err := coord.ConsumerGroupDescribe(&sarama.ConsumerGroupDescribeRequest{Version: 0, GroupIDs: []string{c.cfg.Group}})
		if err != nil {
			return err
		}
		for _, g := range resp.Groups {
			if g.ErrorCode != sarama.ErrNoError {
				return g.ErrorCode
			}
			for _, m := range g.Members {
				for _, tp := range m.Assignment.TopicPartitions {
					if len(tp.Partitions) > 0 {
						return nil
					}
				}
			}
		}
		return fmt.Errorf("no member of %s holds partitions yet", c.cfg.Group)
	}
	resp, err := coord.DescribeGroups(&sarama.DescribeGroupsRequest{Groups: []string{c.cfg.Group}})
	if err != nil {
		return err
	}
	for _, g := range resp.Groups {
		if g.State == "Stable" && len(g.Members) > 0 {
			return nil
		}
	}
	return fmt.Errorf("group %s is not Stable with members yet", c.cfg.Group)
}

// Stop stops the consumer (SIGTERM: it leaves the group) and waits for it
// to exit; after a minute it is killed.
func (c *JavaConsumer) Stop(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := c.proc.stop(ctx); err != nil && !isSignalExit(err) {
		return err
	}
	return nil
}

// Close kills the consumer if it still runs and removes its files unless
// they are in the sandbox's directory.
func (c *JavaConsumer) Close() error {
	err := c.proc.kill()
	if c.rmDir != "" {
		err = errors.Join(err, os.RemoveAll(c.rmDir))
	}
	return err
}

// LogTail returns the last n lines of the consumer's log.
func (c *JavaConsumer) LogTail(n int) string { return c.proc.tail(n) }
