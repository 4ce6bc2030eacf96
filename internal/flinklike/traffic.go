package flinklike

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/internal/kafkaretry"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
)

// Traffic keeps producing to the given partitions until stopped: each
// record's value is unique in its partition ("<topic>/<partition>/<run>/<seq>",
// run being random per Traffic), its key is the sequence number, and headers
// "src-topic", "src-partition" and "seq" name where it was produced.
type Traffic struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	n      int64
	err    error
}

// Partition names a topic partition for Traffic and Produce.
type Partition struct {
	Topic     string
	Partition int32
}

// All lists every partition of the topics, sorted.
func All(topics map[string]int32) []Partition {
	var ps []Partition
	for t, n := range topics {
		for p := range n {
			ps = append(ps, Partition{t, p})
		}
	}
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].Topic != ps[j].Topic {
			return ps[i].Topic < ps[j].Topic
		}
		return ps[i].Partition < ps[j].Partition
	})
	return ps
}

// Produce writes n records to each partition, synchronously, retrying
// what fails for a retriable reason (kafkaretry.SendMessages).
func Produce(ctx context.Context, bootstrap string, parts []Partition, n int) error {
	p, err := newSyncProducer(ctx, bootstrap, "flinklike-produce")
	if err != nil {
		return err
	}
	defer p.Close()
	run := newRun()
	var msgs []*sarama.ProducerMessage
	for _, tp := range parts {
		for i := range n {
			msgs = append(msgs, Record(tp.Topic, tp.Partition, run, i))
		}
	}
	return kafkaretry.SendMessages(ctx, p, msgs)
}

// newSyncProducer connects a producer to the cluster at bootstrap,
// retrying while no broker answers yet.
func newSyncProducer(ctx context.Context, bootstrap, clientID string) (sarama.SyncProducer, error) {
	var p sarama.SyncProducer
	err := kafkaretry.Do(ctx, func() error {
		var err error
		p, err = sarama.NewSyncProducer([]string{bootstrap}, saramaConfig(clientID))
		return err
	})
	return p, err
}

func newRun() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// StartTraffic starts producing batches of batch records per partition
// every interval to the cluster at bootstrap. A batch that fails for a
// retriable reason is sent again (kafkaretry.SendMessages), even while
// Stop waits for it; any other failure stops the traffic, and Stop
// returns it.
func StartTraffic(ctx context.Context, bootstrap string, parts []Partition, batch int, interval time.Duration) (*Traffic, error) {
	p, err := newSyncProducer(ctx, bootstrap, "flinklike-traffic")
	if err != nil {
		return nil, err
	}
	send := context.WithoutCancel(ctx)
	ctx, cancel := context.WithCancel(ctx)
	t := &Traffic{cancel: cancel, done: make(chan struct{})}
	seq := map[Partition]int{}
	run := newRun()
	go func() {
		defer close(t.done)
		defer p.Close()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			var msgs []*sarama.ProducerMessage
			for _, k := range parts {
				for range batch {
					msgs = append(msgs, Record(k.Topic, k.Partition, run, seq[k]))
					seq[k]++
				}
			}
			if err := kafkaretry.SendMessages(send, p, msgs); err != nil {
				t.mu.Lock()
				t.err = err
				t.mu.Unlock()
				return
			}
			t.mu.Lock()
			t.n += int64(len(msgs))
			t.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return t, nil
}

// Stop stops producing and returns how many records were produced.
func (t *Traffic) Stop() (int64, error) {
	t.cancel()
	<-t.done
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n, t.err
}

// Produced returns how many records were produced so far.
func (t *Traffic) Produced() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// Record returns the seq-th test record of a partition for a producer run.
func Record(topic string, partition int32, run string, seq int) *sarama.ProducerMessage {
	s := strconv.Itoa(seq)
	return &sarama.ProducerMessage{
		Topic:     topic,
		Partition: partition,
		Key:       sarama.StringEncoder(s),
		Value:     sarama.StringEncoder(fmt.Sprintf("%s/%d/%s/%s", topic, partition, run, s)),
		Headers: []sarama.RecordHeader{
			{Key: []byte("src-topic"), Value: []byte(topic)},
			{Key: []byte("src-partition"), Value: []byte(strconv.Itoa(int(partition)))},
			{Key: []byte("seq"), Value: []byte(s)},
		},
	}
}

// Result is what Check found in one partition.
type Result struct {
	Topic      string
	Partition  int32
	Source     int // records in the source partition
	Target     int // records in the target partition
	Lost       int // source records absent from the target
	Duplicated int // target records beyond the first copy of a source record
	OutOfOrder int // target records that came before a record older than them
	Foreign    int // target records that are no source record
}

// OK reports whether the target holds every source record exactly once, in order.
func (r Result) OK() bool {
	return r.Lost == 0 && r.Duplicated == 0 && r.OutOfOrder == 0 && r.Foreign == 0
}

// Check reads a partition fully from the source and from the target and
// compares them: every source record must be on the target once, in order
// (records are matched by value, key and headers).
func Check(ctx context.Context, source, target, topic string, partition int32, targetTopic string) (Result, error) {
	res := Result{Topic: topic, Partition: partition}
	src, err := ReadAll(ctx, source, topic, partition)
	if err != nil {
		return res, fmt.Errorf("read source %s-%d: %w", topic, partition, err)
	}
	dst, err := ReadAll(ctx, target, targetTopic, partition)
	if err != nil {
		return res, fmt.Errorf("read target %s-%d: %w", targetTopic, partition, err)
	}
	res.Source, res.Target = len(src), len(dst)
	index := make(map[string]int, len(src))
	for i, m := range src {
		index[string(m.Value)] = i
	}
	seen := make([]int, len(src))
	last := -1
	for _, m := range dst {
		i, ok := index[string(m.Value)]
		if !ok || !bytes.Equal(m.Key, src[i].Key) || !sameHeaders(m.Headers, src[i].Headers) {
			res.Foreign++
			continue
		}
		seen[i]++
		if seen[i] > 1 {
			res.Duplicated++
			continue
		}
		if i < last {
			res.OutOfOrder++
		}
		last = i
	}
	for _, n := range seen {
		if n == 0 {
			res.Lost++
		}
	}
	return res, nil
}

func sameHeaders(a, b []*sarama.RecordHeader) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i].Key, b[i].Key) || !bytes.Equal(a[i].Value, b[i].Value) {
			return false
		}
	}
	return true
}

// ReadAll reads a partition from its log start to its current end as a
// read_committed consumer does: records of aborted transactions and
// transaction markers are skipped, so that a target written in
// transactions (an exactly-once sink, an exactly-once MirrorMaker 2) is
// counted as its readers see it.
func ReadAll(ctx context.Context, bootstrap, topic string, partition int32) ([]*sarama.ConsumerMessage, error) {
	r, err := kafkaadmin.NewClient(kafkaadmin.Config{BootstrapServers: []string{bootstrap}, ClientID: "flinklike-check"})
	if err != nil {
		return nil, err
	}
	tp := kafkaadmin.TopicPartition{Topic: topic, Partition: partition}
	var recs map[kafkaadmin.TopicPartition][]kafkaadmin.Record
	err = kafkaretry.Do(ctx, func() error {
		b, err := r.LogBounds(ctx, []kafkaadmin.TopicPartition{tp})
		if err != nil {
			return err
		}
		recs, err = r.ReadSpans(ctx, map[kafkaadmin.TopicPartition]kafkaadmin.Span{tp: {From: b[tp].Start, Until: b[tp].StableEnd}}, kafkaadmin.ReadCommitted)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tp, err)
	}
	out := make([]*sarama.ConsumerMessage, 0, len(recs[tp]))
	for _, rec := range recs[tp] {
		m := &sarama.ConsumerMessage{Topic: topic, Partition: partition, Offset: rec.Offset, Key: rec.Key, Value: rec.Value, Timestamp: rec.Timestamp}
		for _, h := range rec.Headers {
			m.Headers = append(m.Headers, &sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
		}
		out = append(out, m)
	}
	return out, nil
}
