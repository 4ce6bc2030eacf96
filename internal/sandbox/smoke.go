package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/internal/kafkaretry"
)

// SmokeReport is what Smoke checked.
type SmokeReport struct {
	KafkaVersion string
	Topic        string
	Records      int // produced per cluster, and replicated by MirrorMaker 2
	Replicated   time.Duration
}

// Smoke proves the sandbox usable end to end: it produces records with keys
// and headers to a new topic on each cluster and reads them back, then
// creates a MirrorSourceConnector (IdentityReplicationPolicy,
// ByteArrayConverter) that copies the source topic to the same-named target
// topic, checks every replicated record byte for byte (key, value, headers),
// and deletes the connector. It needs at least one Connect worker.
func Smoke(ctx context.Context, s *Sandbox, records int) (SmokeReport, error) {
	rep := SmokeReport{KafkaVersion: s.version, Records: records}
	if len(s.workers) == 0 {
		return rep, fmt.Errorf("smoke: the sandbox has no connect worker")
	}
	rep.Topic = fmt.Sprintf("smoke-%d", time.Now().UnixNano())
	src := newTestRecords(rep.Topic, records)
	for _, b := range []*Broker{s.source, s.target} {
		if err := b.CreateTopic(ctx, rep.Topic, 1); err != nil {
			return rep, err
		}
	}
	if err := s.source.Produce(ctx, src); err != nil {
		return rep, fmt.Errorf("smoke: produce to source: %w", err)
	}
	if err := compareTopic(ctx, s.source, rep.Topic, src); err != nil {
		return rep, fmt.Errorf("smoke: source cluster: %w", err)
	}
	own := newTestRecords(rep.Topic+"-own", records)
	if err := s.target.CreateTopic(ctx, rep.Topic+"-own", 1); err != nil {
		return rep, err
	}
	if err := s.target.Produce(ctx, own); err != nil {
		return rep, fmt.Errorf("smoke: produce to target: %w", err)
	}
	if err := compareTopic(ctx, s.target, rep.Topic+"-own", own); err != nil {
		return rep, fmt.Errorf("smoke: target cluster: %w", err)
	}

	name := rep.Topic + "-mirror"
	cfg := map[string]string{
		"connector.class":                   mirrorSource,
		"source.cluster.alias":              "source",
		"target.cluster.alias":              "target",
		"source.cluster.bootstrap.servers":  strings.Join(s.source.Addrs(), ","),
		"target.cluster.bootstrap.servers":  s.target.bootstrap,
		"topics":                            rep.Topic,
		"tasks.max":                         "1",
		"replication.policy.class":          "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
		"key.converter":                     "org.apache.kafka.connect.converters.ByteArrayConverter",
		"value.converter":                   "org.apache.kafka.connect.converters.ByteArrayConverter",
		"header.converter":                  "org.apache.kafka.connect.converters.ByteArrayConverter",
		"sync.topic.configs.enabled":        "false",
		"sync.topic.acls.enabled":           "false",
		"emit.offset-syncs.enabled":         "false",
		"replication.factor":                "1",
		"source.consumer.auto.offset.reset": "earliest",
	}
	maps.Copy(cfg, s.MirrorClientConfig())
	body, _ := json.Marshal(map[string]any{"name": name, "config": cfg})
	start := time.Now()
	w := s.workers[0]
	if err := w.restCall(ctx, http.MethodPost, "/connectors", body, http.StatusCreated); err != nil {
		return rep, fmt.Errorf("smoke: create connector: %w", err)
	}
	defer w.restCall(context.WithoutCancel(ctx), http.MethodDelete, "/connectors/"+name, nil, http.StatusNoContent)
	if err := compareTopic(ctx, s.target, rep.Topic, src); err != nil {
		return rep, fmt.Errorf("smoke: replicated records: %w", err)
	}
	rep.Replicated = time.Since(start)
	return rep, nil
}

func newTestRecords(topic string, n int) []*sarama.ProducerMessage {
	msgs := make([]*sarama.ProducerMessage, n)
	for i := range msgs {
		msgs[i] = &sarama.ProducerMessage{
			Topic: topic,
			Key:   sarama.ByteEncoder("key-" + strconv.Itoa(i)),
			Value: sarama.ByteEncoder(bytes.Repeat([]byte{byte(i)}, 1+i%7)),
			Headers: []sarama.RecordHeader{
				{Key: []byte("seq"), Value: []byte(strconv.Itoa(i))},
				{Key: []byte("bin"), Value: []byte{0, 255, byte(i)}},
			},
		}
	}
	return msgs
}

// compareTopic reads partition 0 of topic from the start until it holds as
// many records as want, and compares them byte for byte.
func compareTopic(ctx context.Context, b *Broker, topic string, want []*sarama.ProducerMessage) error {
	got, err := b.Consume(ctx, topic, 0, 0, len(want))
	if err != nil {
		return err
	}
	for i, w := range want {
		g := got[i]
		wk, _ := w.Key.Encode()
		wv, _ := w.Value.Encode()
		if !bytes.Equal(g.Key, wk) || !bytes.Equal(g.Value, wv) {
			return fmt.Errorf("%s offset %d: got key %q value %x, want key %q value %x", topic, g.Offset, g.Key, g.Value, wk, wv)
		}
		if len(g.Headers) != len(w.Headers) {
			return fmt.Errorf("%s offset %d: got %d headers, want %d", topic, g.Offset, len(g.Headers), len(w.Headers))
		}
		for j, h := range w.Headers {
			if !bytes.Equal(g.Headers[j].Key, h.Key) || !bytes.Equal(g.Headers[j].Value, h.Value) {
				return fmt.Errorf("%s offset %d: header %d differs", topic, g.Offset, j)
			}
		}
	}
	return nil
}

// NewSaramaConfig returns the client configuration the sandbox's helpers use.
func NewSaramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = "mm2cutover-sandbox"
	cfg.Version = sarama.V3_6_0_0
	cfg.Metadata.AllowAutoTopicCreation = false
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Idempotent = false
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	return cfg
}

// CreateTopic creates topic on the PLAINTEXT cluster at bootstrap (see
// Broker.CreateTopic).
func CreateTopic(ctx context.Context, bootstrap, topic string, partitions int32) error {
	return CreateTopicWithConfig(ctx, bootstrap, topic, partitions, nil)
}

// CreateTopicWithConfig is CreateTopic with topic-level configuration, such
// as cleanup.policy=compact.
func CreateTopicWithConfig(ctx context.Context, bootstrap, topic string, partitions int32, config map[string]string) error {
	return createTopic(ctx, []string{bootstrap}, NewSaramaConfig(), topic, partitions, config)
}

// Produce sends msgs to the PLAINTEXT cluster at bootstrap (see Broker.Produce).
func Produce(ctx context.Context, bootstrap string, msgs []*sarama.ProducerMessage) error {
	return produce(ctx, []string{bootstrap}, NewSaramaConfig(), msgs)
}

// ProduceToPartitions is Produce to the partitions the messages name
// (Produce lets its partitioner choose them from the keys).
func ProduceToPartitions(ctx context.Context, bootstrap string, msgs []*sarama.ProducerMessage) error {
	cfg := NewSaramaConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	return produce(ctx, []string{bootstrap}, cfg, msgs)
}

// Consume reads from the PLAINTEXT cluster at bootstrap (see Broker.Consume).
func Consume(ctx context.Context, bootstrap, topic string, partition int32, from int64, n int) ([]*sarama.ConsumerMessage, error) {
	return consume(ctx, []string{bootstrap}, NewSaramaConfig(), topic, partition, from, n)
}

// CreateTopic creates topic with the given number of partitions and the
// cluster's default replication factor (1, or every node of a cluster of
// several), and waits until its metadata shows a leader for every
// partition. Retriable errors are retried (kafkaretry.Do); a topic that a
// retried request finds already there was created by the first attempt.
func (b *Broker) CreateTopic(ctx context.Context, topic string, partitions int32) error {
	return createTopic(ctx, b.Addrs(), b.SaramaConfig(), topic, partitions, nil)
}

// CreateTopicWithConfig is CreateTopic with topic-level configuration.
func (b *Broker) CreateTopicWithConfig(ctx context.Context, topic string, partitions int32, config map[string]string) error {
	return createTopic(ctx, b.Addrs(), b.SaramaConfig(), topic, partitions, config)
}

// Produce sends msgs synchronously, acknowledged by all in-sync replicas,
// sending again what fails for a retriable reason (kafkaretry.SendMessages).
func (b *Broker) Produce(ctx context.Context, msgs []*sarama.ProducerMessage) error {
	return produce(ctx, b.Addrs(), b.SaramaConfig(), msgs)
}

// Consume reads n records of one partition starting at offset from, or
// returns an error when ctx ends first.
func (b *Broker) Consume(ctx context.Context, topic string, partition int32, from int64, n int) ([]*sarama.ConsumerMessage, error) {
	return consume(ctx, b.Addrs(), b.SaramaConfig(), topic, partition, from, n)
}

func createTopic(ctx context.Context, addrs []string, cfg *sarama.Config, topic string, partitions int32, config map[string]string) error {
	var admin sarama.ClusterAdmin
	if err := kafkaretry.Do(ctx, func() error {
		var err error
		admin, err = sarama.NewClusterAdmin(addrs, cfg)
		return err
	}); err != nil {
		return err
	}
	defer admin.Close()
	entries := make(map[string]*string, len(config))
	for k, v := range config {
		entries[k] = &v
	}
	attempt := 0
	err := kafkaretry.Do(ctx, func() error {
		attempt++
		err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: -1, ConfigEntries: entries}, false)
		if attempt > 1 && errors.Is(err, sarama.ErrTopicAlreadyExists) {
			return nil // an earlier attempt that timed out created it
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("create topic %s on %s: %w", topic, addrs[0], err)
	}
	for {
		md, err := admin.DescribeTopics([]string{topic})
		if err == nil && len(md) == 1 && md[0].Err == sarama.ErrNoError && len(md[0].Partitions) == int(partitions) && allLed(md[0].Partitions) {
			return nil
		}
		if err := sleep(ctx, pollInterval); err != nil {
			return fmt.Errorf("topic %s not visible: %w", topic, err)
		}
	}
}

// allLed reports whether every partition has a leader.
func allLed(ps []*sarama.PartitionMetadata) bool {
	for _, p := range ps {
		if p.Err != sarama.ErrNoError || p.Leader < 0 {
			return false
		}
	}
	return true
}

func produce(ctx context.Context, addrs []string, cfg *sarama.Config, msgs []*sarama.ProducerMessage) error {
	var p sarama.SyncProducer
	if err := kafkaretry.Do(ctx, func() error {
		var err error
		p, err = sarama.NewSyncProducer(addrs, cfg)
		return err
	}); err != nil {
		return err
	}
	defer p.Close()
	return kafkaretry.SendMessages(ctx, p, msgs)
}

func consume(ctx context.Context, addrs []string, cfg *sarama.Config, topic string, partition int32, from int64, n int) ([]*sarama.ConsumerMessage, error) {
	var c sarama.Consumer
	var pc sarama.PartitionConsumer
	if err := kafkaretry.Do(ctx, func() error {
		var err error
		if c == nil {
			if c, err = sarama.NewConsumer(addrs, cfg); err != nil {
				return err
			}
		}
		pc, err = c.ConsumePartition(topic, partition, from)
		return err
	}); err != nil {
		if c != nil {
			c.Close()
		}
		return nil, err
	}
	defer c.Close()
	defer pc.AsyncClose()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var got []*sarama.ConsumerMessage
	for len(got) < n {
		select {
		case m := <-pc.Messages():
			got = append(got, m)
		case err := <-pc.Errors():
			if kafkaretry.Retriable(err.Err) {
				continue // the partition consumer finds the new leader itself
			}
			return got, err
		case <-ctx.Done():
			return got, fmt.Errorf("%s-%d: read %d of %d records: %w", topic, partition, len(got), n, ctx.Err())
		}
	}
	return got, nil
}

// restCall sends one REST request to the worker (with the shared
// basic-auth user in a secure sandbox) and expects status want.
func (w *Worker) restCall(ctx context.Context, method, path string, body []byte, want int) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	url := w.url + path
	for {
		req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		if w.auth.Name != "" {
			req.SetBasicAuth(w.auth.Name, w.auth.Password)
		}
		resp, err := w.client.Do(req)
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		if resp.StatusCode == want {
			return nil
		}
		// 409 while the worker group rebalances (a worker just joined).
		if resp.StatusCode != http.StatusConflict || bytes.Contains(b, []byte("already exists")) {
			return fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, b)
		}
		if err := sleep(ctx, time.Second); err != nil {
			return fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, b)
		}
	}
}
