// Package flinklike plays the job being replaced: a replicator that copies
// topics from a source to a target cluster the way a Flink KafkaSource ->
// KafkaSink job does, for the sandbox demo and the acceptance tests.
//
// Like Flink's KafkaSource it uses manual assignment (no group membership),
// and on each "checkpoint" it commits, per partition, the offset of the next
// record to read with generation -1 and no member ID: a simple group that
// looks Empty even while the job runs. It commits only after every record
// read before the checkpoint is acknowledged by the target (acks=all), so
// committed offsets never run ahead of what the target holds. Stop ends the
// job like a stop-with-savepoint: a last checkpoint, then nothing more.
//
// Traffic produces records whose values are unique per partition and whose
// headers name their source position, and Check proves a target partition
// holds every source record exactly once, in order.
package flinklike

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/internal/kafkaretry"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
)

// Config says what to replicate.
type Config struct {
	Source, Target string   // bootstrap servers
	Group          string   // the consumer group that receives the commits
	Topics         []string // source topics; target topics have the same names
	// Checkpoint is the interval between checkpoints (default 1 s).
	Checkpoint time.Duration
	// TargetTopic names the target topic of a source topic (default: the
	// same name).
	TargetTopic func(source string) string
	// ReadCommitted reads the source read_committed, as a Flink KafkaSource
	// configured with isolation.level=read_committed does: records of
	// aborted transactions are never copied.
	ReadCommitted bool
	// ExactlyOnce writes each checkpoint's records in one Kafka
	// transaction committed before the checkpoint's offsets, as a Flink
	// KafkaSink with DeliveryGuarantee.EXACTLY_ONCE does: a read_committed
	// reader of the target never sees a record twice, and every
	// transaction ends with a commit marker on each partition it wrote.
	ExactlyOnce bool
}

// Stats counts what the replicator did.
type Stats struct {
	Records     int64
	Checkpoints int
	Committed   map[string]map[int32]int64 // topic -> partition -> next offset
}

// Replicator is a running Flink-like job.
type Replicator struct {
	cfg    Config
	cancel context.CancelFunc
	done   chan struct{}
	stats  Stats
	err    error
	mu     sync.Mutex
}

// Start starts replicating from the group's committed offsets, or from the
// earliest offset of partitions without a commit.
func Start(ctx context.Context, cfg Config) (*Replicator, error) {
	if cfg.Checkpoint <= 0 {
		cfg.Checkpoint = time.Second
	}
	if cfg.TargetTopic == nil {
		cfg.TargetTopic = func(s string) string { return s }
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &Replicator{cfg: cfg, cancel: cancel, done: make(chan struct{})}
	job, err := newJob(ctx, cfg)
	if err != nil {
		cancel()
		return nil, err
	}
	go func() {
		defer close(r.done)
		defer job.close()
		err := job.run(ctx, &r.mu, &r.stats)
		r.mu.Lock()
		r.err = err
		r.mu.Unlock()
	}()
	return r, nil
}

// Stats returns a copy of the counters so far.
func (r *Replicator) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	s.Committed = map[string]map[int32]int64{}
	for t, ps := range r.stats.Committed {
		s.Committed[t] = map[int32]int64{}
		for p, o := range ps {
			s.Committed[t][p] = o
		}
	}
	return s
}

// WaitCommitted waits until the job has committed, for every partition of
// want, exactly that offset (typically the log end: it has caught up), or
// ctx ends.
func (r *Replicator) WaitCommitted(ctx context.Context, want map[Partition]int64) error {
	for {
		st := r.Stats()
		done := true
		for p, o := range want {
			if c, ok := st.Committed[p.Topic][p.Partition]; !ok || c != o {
				done = false
				break
			}
		}
		if done {
			return nil
		}
		select {
		case <-r.done:
			r.mu.Lock()
			defer r.mu.Unlock()
			return fmt.Errorf("the job ended before it committed %v: %v", want, r.err)
		case <-ctx.Done():
			return fmt.Errorf("the job did not commit %v: %w (committed %v)", want, ctx.Err(), st.Committed)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// WaitCheckpoints waits until the job has completed at least n
// checkpoints (each wrote what it read and committed), the job ends (its
// error is returned), or ctx ends.
func (r *Replicator) WaitCheckpoints(ctx context.Context, n int) error {
	for {
		if st := r.Stats(); st.Checkpoints >= n {
			return nil
		}
		select {
		case <-r.done:
			r.mu.Lock()
			defer r.mu.Unlock()
			return fmt.Errorf("the job ended after %d of %d checkpoints: %v", r.stats.Checkpoints, n, r.err)
		case <-ctx.Done():
			return fmt.Errorf("the job completed %d of %d checkpoints: %w", r.Stats().Checkpoints, n, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// LogEnds returns the end offset of each partition.
func LogEnds(ctx context.Context, bootstrap string, parts []Partition) (map[Partition]int64, error) {
	client, err := newClient(ctx, bootstrap, saramaConfig("flinklike-ends"))
	if err != nil {
		return nil, err
	}
	defer client.Close()
	out := make(map[Partition]int64, len(parts))
	for _, p := range parts {
		end, err := getOffset(ctx, client, p.Topic, p.Partition, sarama.OffsetNewest)
		if err != nil {
			return nil, err
		}
		out[p] = end
	}
	return out, nil
}

// newClient connects to the cluster at bootstrap, retrying while no
// broker answers yet (kafkaretry.Do).
func newClient(ctx context.Context, bootstrap string, cfg *sarama.Config) (sarama.Client, error) {
	var client sarama.Client
	err := kafkaretry.Do(ctx, func() error {
		var err error
		client, err = sarama.NewClient([]string{bootstrap}, cfg)
		return err
	})
	return client, err
}

// getOffset is client.GetOffset, retried while the partition's leader is
// not known or has just moved.
func getOffset(ctx context.Context, client sarama.Client, topic string, partition int32, at int64) (int64, error) {
	var off int64
	err := kafkaretry.Do(ctx, func() error {
		var err error
		off, err = client.GetOffset(topic, partition, at)
		if err != nil {
			_ = client.RefreshMetadata(topic)
		}
		return err
	})
	return off, err
}

// Stop takes a final checkpoint and stops the job; it returns the job's
// error, if it failed.
func (r *Replicator) Stop() (Stats, error) {
	r.cancel()
	<-r.done
	r.mu.Lock()
	err := r.err
	r.mu.Unlock()
	return r.Stats(), err
}

type job struct {
	cfg      Config
	client   sarama.Client
	consumer sarama.Consumer
	producer sarama.SyncProducer // nil with ExactlyOnce
	txn      *sandbox.TxnProducer
}

func newJob(ctx context.Context, cfg Config) (*job, error) {
	sc := saramaConfig("flinklike-source")
	if cfg.ReadCommitted {
		sc.Consumer.IsolationLevel = sarama.ReadCommitted
	}
	client, err := newClient(ctx, cfg.Source, sc)
	if err != nil {
		return nil, err
	}
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		client.Close()
		return nil, err
	}
	j := &job{cfg: cfg, client: client, consumer: consumer}
	err = kafkaretry.Do(ctx, func() error {
		if cfg.ExactlyOnce {
			j.txn, err = sandbox.NewTxnProducer(cfg.Target, cfg.Group+"-sink")
		} else {
			j.producer, err = sarama.NewSyncProducer([]string{cfg.Target}, saramaConfig("flinklike-sink"))
		}
		return err
	})
	if err != nil {
		consumer.Close()
		client.Close()
		return nil, err
	}
	return j, nil
}

// write writes a checkpoint's records: in one committed transaction with
// ExactlyOnce (retried whole: an aborted attempt leaves nothing a
// read_committed reader sees), else as a batch.
func (j *job) write(ctx context.Context, msgs []*sarama.ProducerMessage) error {
	if j.txn == nil {
		return kafkaretry.SendMessages(ctx, j.producer, msgs)
	}
	return kafkaretry.Do(ctx, func() error { return j.txn.Send(ctx, true, msgs...) })
}

func (j *job) close() {
	if j.txn != nil {
		j.txn.Close()
	} else {
		j.producer.Close()
	}
	j.consumer.Close()
	j.client.Close()
}

func saramaConfig(clientID string) *sarama.Config {
	c := sarama.NewConfig()
	c.ClientID = clientID
	c.Version = sarama.V3_6_0_0
	c.Metadata.AllowAutoTopicCreation = false
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Producer.Return.Successes = true
	c.Producer.Idempotent = true
	c.Producer.Retry.Max = 10
	c.Producer.Retry.Backoff = 250 * time.Millisecond
	c.Metadata.Retry.Max = 10
	c.Metadata.Retry.Backoff = 250 * time.Millisecond
	c.Net.MaxOpenRequests = 1
	c.Producer.Partitioner = sarama.NewManualPartitioner
	c.Consumer.Return.Errors = true
	return c
}

type tp struct {
	topic     string
	partition int32
}

func (j *job) run(ctx context.Context, mu *sync.Mutex, stats *Stats) error {
	start, err := j.committed(ctx)
	if err != nil {
		return err
	}
	// The last checkpoint runs after ctx ended (Stop): its writes and
	// commits retry under kafkaretry's own bound instead.
	final := context.WithoutCancel(ctx)
	msgs := make(chan *sarama.ConsumerMessage, 4096)
	errs := make(chan error, 1)
	var pcs []sarama.PartitionConsumer
	defer func() {
		for _, pc := range pcs {
			pc.AsyncClose()
		}
	}()
	for p, from := range start {
		var pc sarama.PartitionConsumer
		err := kafkaretry.Do(ctx, func() error {
			var err error
			pc, err = j.consumer.ConsumePartition(p.topic, p.partition, from)
			return err
		})
		if err != nil {
			return fmt.Errorf("assign %s-%d at %d: %w", p.topic, p.partition, from, err)
		}
		pcs = append(pcs, pc)
		go func() {
			for {
				select {
				case m, ok := <-pc.Messages():
					if !ok {
						return
					}
					select {
					case msgs <- m:
					case <-ctx.Done():
						return
					}
				case e, ok := <-pc.Errors():
					if !ok {
						return
					}
					if kafkaretry.Retriable(e.Err) {
						continue // sarama finds the new leader and goes on
					}
					select {
					case errs <- e:
					default:
					}
				}
			}
		}()
	}

	// next is each assigned partition's position: the next offset to read.
	// Every checkpoint commits all of them, as Flink commits every split's
	// position, so a partition that never had a record is committed at 0.
	next := make(map[tp]int64, len(start))
	for p, from := range start {
		next[p] = from
	}
	var buf []*sarama.ProducerMessage
	ticker := time.NewTicker(j.cfg.Checkpoint)
	defer ticker.Stop()
	checkpoint := func() error {
		if len(buf) > 0 {
			if err := j.write(final, buf); err != nil {
				return fmt.Errorf("write to target: %w", err)
			}
		}
		if len(next) > 0 {
			if err := j.commit(final, next); err != nil {
				return err
			}
		}
		mu.Lock()
		stats.Records += int64(len(buf))
		stats.Checkpoints++
		if stats.Committed == nil {
			stats.Committed = map[string]map[int32]int64{}
		}
		for p, o := range next {
			if stats.Committed[p.topic] == nil {
				stats.Committed[p.topic] = map[int32]int64{}
			}
			stats.Committed[p.topic][p.partition] = o
		}
		mu.Unlock()
		buf = buf[:0]
		return nil
	}
	for {
		select {
		case <-ctx.Done():
			// Stop with savepoint: drain what was read, write it, commit.
		drain:
			for {
				select {
				case m := <-msgs:
					buf = append(buf, copyRecord(m, j.cfg.TargetTopic(m.Topic)))
					next[tp{m.Topic, m.Partition}] = m.Offset + 1
				default:
					break drain
				}
			}
			return checkpoint()
		case err := <-errs:
			return fmt.Errorf("read source: %w", err)
		case m := <-msgs:
			buf = append(buf, copyRecord(m, j.cfg.TargetTopic(m.Topic)))
			next[tp{m.Topic, m.Partition}] = m.Offset + 1
		case <-ticker.C:
			if err := checkpoint(); err != nil {
				return err
			}
		}
	}
}

// copyRecord writes the source record, bytes for bytes, to the same
// partition of the target topic, keeping its timestamp.
func copyRecord(m *sarama.ConsumerMessage, target string) *sarama.ProducerMessage {
	hs := make([]sarama.RecordHeader, len(m.Headers))
	for i, h := range m.Headers {
		hs[i] = *h
	}
	pm := &sarama.ProducerMessage{Topic: target, Partition: m.Partition, Headers: hs, Timestamp: m.Timestamp}
	if m.Key != nil {
		pm.Key = sarama.ByteEncoder(m.Key)
	}
	if m.Value != nil {
		pm.Value = sarama.ByteEncoder(m.Value)
	}
	return pm
}

// committed returns where each partition starts: the group's committed
// offset, or the log start offset when there is none.
func (j *job) committed(ctx context.Context) (map[tp]int64, error) {
	req := &sarama.OffsetFetchRequest{ConsumerGroup: j.cfg.Group, Version: 5}
	parts := map[tp]int64{}
	for _, t := range j.cfg.Topics {
		var ps []int32
		err := kafkaretry.Do(ctx, func() error {
			var err error
			ps, err = j.client.Partitions(t)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("partitions of %s: %w", t, err)
		}
		for _, p := range ps {
			req.AddPartition(t, p)
			oldest, err := getOffset(ctx, j.client, t, p, sarama.OffsetOldest)
			if err != nil {
				return nil, fmt.Errorf("log start of %s-%d: %w", t, p, err)
			}
			parts[tp{t, p}] = oldest
		}
	}
	err := j.withCoordinator(ctx, func(coord *sarama.Broker) error {
		resp, err := coord.FetchOffset(req)
		if err != nil {
			return err
		}
		if err := kerr(resp.Err); err != nil {
			return fmt.Errorf("fetch offsets of %s: %w", j.cfg.Group, err)
		}
		for p := range parts {
			b := resp.GetBlock(p.topic, p.partition)
			if b != nil && !errors.Is(b.Err, sarama.ErrNoError) {
				return fmt.Errorf("fetch offset of %s-%d for %s: %w", p.topic, p.partition, j.cfg.Group, b.Err)
			}
			if b != nil && b.Offset >= 0 {
				parts[p] = b.Offset
			}
		}
		return nil
	})
	return parts, err
}

// withCoordinator calls fn with the group's coordinator until it succeeds
// or fails for good (kafkaretry.Do), looking the coordinator up again
// after an error that says it moved or is still loading the group.
func (j *job) withCoordinator(ctx context.Context, fn func(*sarama.Broker) error) error {
	return kafkaretry.Do(ctx, func() error {
		coord, err := j.client.Coordinator(j.cfg.Group)
		if err == nil {
			err = fn(coord)
		}
		if kafkaretry.Retriable(err) { // NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, a dropped connection
			_ = j.client.RefreshCoordinator(j.cfg.Group)
		}
		return err
	})
}

func kerr(k sarama.KError) error {
	if k == sarama.ErrNoError {
		return nil
	}
	return k
}

// commit sends one OffsetCommit with generation -1 and no member, as Flink's
// KafkaSource does on checkpoint completion, retrying it while the group's
// coordinator moves or loads (the same offsets: safe to repeat).
func (j *job) commit(ctx context.Context, next map[tp]int64) error {
	req := &sarama.OffsetCommitRequest{
		Version:                 2,
		ConsumerGroup:           j.cfg.Group,
		ConsumerGroupGeneration: -1,
		RetentionTime:           -1,
	}
	keys := make([]tp, 0, len(next))
	for p := range next {
		keys = append(keys, p)
	}
	sort.Slice(keys, func(a, b int) bool {
		if keys[a].topic != keys[b].topic {
			return keys[a].topic < keys[b].topic
		}
		return keys[a].partition < keys[b].partition
	})
	for _, p := range keys {
		req.AddBlock(p.topic, p.partition, next[p], 0, "")
	}
	return j.withCoordinator(ctx, func(coord *sarama.Broker) error {
		resp, err := coord.CommitOffset(req)
		if err != nil {
			return fmt.Errorf("commit offsets of %s: %w", j.cfg.Group, err)
		}
		for t, ps := range resp.Errors {
			for p, kerr := range ps {
				if !errors.Is(kerr, sarama.ErrNoError) {
					return fmt.Errorf("commit %s-%d for %s: %w", t, p, j.cfg.Group, kerr)
				}
			}
		}
		return nil
	})
}
