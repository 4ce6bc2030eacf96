package kafkaadmin

import (
	"context"
	"fmt"
	"testing"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/internal/kafkaretry"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
)

// produceLargeBatches writes one batch of five 16 KiB records to each of
// the topic's n partitions: 80 KiB, more than a fetch's partition limit.
func produceLargeBatches(t testing.TB, bootstrap, topic string, n int32) {
	t.Helper()
	p, err := sarama.NewSyncProducer([]string{bootstrap}, clusterSarama(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	value := make([]byte, 16<<10)
	var msgs []*sarama.ProducerMessage
	for part := range n {
		for range 5 {
			msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Partition: part, Value: sarama.ByteEncoder(value)})
		}
		if len(msgs) >= 1000 || part == n-1 {
			// A partition just created can still refuse records for a
			// moment on a loaded machine.
			if err := kafkaretry.Do(context.Background(), func() error { return p.SendMessages(msgs) }); err != nil {
				t.Fatal(err)
			}
			msgs = msgs[:0]
		}
	}
}

// Partitions whose first batch exceeds the fetch's partition limit are
// read a response's worth at a time, not one a fetch: 200 such partitions
// (16 MB) took 200 requests, one a partition, before the limit grew on an
// empty answer; 4 after.
func TestSandboxFirstRecordsLargeBatches(t *testing.T) {
	sb := sandboxtest.Shared(t)
	bs := sb.Source().Bootstrap()
	a := testAdmin(t, bs)
	const n = 200
	topic := uniq(t, "t")
	createTopic(t, a, bs, topic, n)
	produceLargeBatches(t, bs, topic, n)
	r := newTestClient(t, bs)
	from := make(map[TopicPartition]int64, n)
	for part := range int32(n) {
		from[tp(topic, part)] = 0
	}
	before := r.Requests()
	got, err := r.FirstRecords(testCtx(t), from, ReadCommitted)
	if err != nil || len(got) != n {
		t.Fatalf("FirstRecords: %d of %d records, %v", len(got), n, err)
	}
	for tp, rec := range got {
		if rec.Offset != 0 || len(rec.Value) != 16<<10 {
			t.Errorf("%s: record at %d of %d bytes, want the first, of 16 KiB", tp, rec.Offset, len(rec.Value))
		}
	}
	// On one broker: a connection, metadata, a fetch for all, one more after
	// the limits grew (the 16 MB fit one response of 32 MiB): 4. Before,
	// one partition a fetch. The bound leaves room for more brokers.
	reqs := r.Requests() - before
	t.Logf("%d requests for %d partitions", reqs, n)
	if reqs > n/10 {
		t.Errorf("FirstRecords of %d partitions with 80 KiB first batches sent %d requests, want at most %d", n, reqs, n/10)
	}
}

// BenchmarkSandboxFirstRecordsFull reads the first record of every
// partition of one topic whose partitions each hold more than a fetch's
// per-partition limit (5 records of 16 KiB): a verify's reads of the source
// at C and of the target at MM2's first copy, on a cluster where traffic
// went on. Each fetch response then fills its limit long before it reaches
// the last partition of the request; what the other partitions cost grows
// with the partitions a request carries.
func BenchmarkSandboxFirstRecordsFull(b *testing.B) {
	sb := sandboxtest.Dedicated(b, sandbox.Config{Workers: 0})
	bs := sb.Source().Bootstrap()
	a := testAdmin(b, bs)
	ctx := context.Background()
	for _, n := range []int32{1000, 4000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			topic := uniq(b, "t")
			createTopic(b, a, bs, topic, n)
			produceLargeBatches(b, bs, topic, n)
			r := newTestClient(b, bs)
			from := make(map[TopicPartition]int64, n)
			for part := range n {
				from[TopicPartition{Topic: topic, Partition: part}] = 0
			}
			before := r.Requests()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				got, err := r.FirstRecords(ctx, from, ReadCommitted)
				if err != nil || len(got) != int(n) {
					b.Fatalf("FirstRecords: %d of %d records, %v", len(got), n, err)
				}
			}
			b.ReportMetric(float64(r.Requests()-before)/float64(b.N), "requests/op")
		})
	}
}
