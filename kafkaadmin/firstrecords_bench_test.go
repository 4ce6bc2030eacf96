package kafkaadmin

import (
	"context"
	"fmt"
	"testing"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
)

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
			p, err := sarama.NewSyncProducer([]string{bs}, saramaConf())
			if err != nil {
				b.Fatal(err)
			}
			value := make([]byte, 16<<10)
			var msgs []*sarama.ProducerMessage
			for part := range n {
				for range 5 {
					msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Partition: part, Value: sarama.ByteEncoder(value)})
				}
				if len(msgs) >= 1000 || part == n-1 {
					if err := p.SendMessages(msgs); err != nil {
						b.Fatal(err)
					}
					msgs = msgs[:0]
				}
			}
			_ = p.Close()
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
