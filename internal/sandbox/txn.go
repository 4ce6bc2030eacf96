package sandbox

import (
	"context"
	"fmt"
	"sync"

	"github.com/IBM/sarama"
)

// TxnProducer writes records in Kafka transactions, as a transactional
// producer (exactly-once sink, Kafka Streams) does: every transaction ends
// with a control record (a commit or abort marker) that takes an offset of
// its own on every partition it wrote, and a read_committed consumer never
// sees the records of an aborted one.
// Send is safe for concurrent use: transactions are sent one at a time.
type TxnProducer struct {
	mu sync.Mutex
	p  sarama.SyncProducer
}

// NewTxnProducer returns a producer with transactional ID id.
func NewTxnProducer(bootstrap, id string) (*TxnProducer, error) {
	c := NewSaramaConfig()
	c.Producer.Idempotent = true
	c.Producer.Transaction.ID = id
	c.Producer.Partitioner = sarama.NewManualPartitioner
	c.Net.MaxOpenRequests = 1
	p, err := sarama.NewSyncProducer([]string{bootstrap}, c)
	if err != nil {
		return nil, fmt.Errorf("transactional producer %s: %w", id, err)
	}
	return &TxnProducer{p: p}, nil
}

// Send writes msgs in one transaction and commits it, or aborts it when
// commit is false.
func (t *TxnProducer) Send(ctx context.Context, commit bool, msgs ...*sarama.ProducerMessage) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := t.p.BeginTxn(); err != nil {
		return err
	}
	if err := t.p.SendMessages(msgs); err != nil {
		_ = t.p.AbortTxn()
		return err
	}
	if commit {
		return t.p.CommitTxn()
	}
	return t.p.AbortTxn()
}

// Close closes the producer.
func (t *TxnProducer) Close() error { return t.p.Close() }
