package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"
)

// Record is one record of a partition, as a consumer sees it.
type Record struct {
	Offset    int64
	Key       []byte // nil for a null key
	Value     []byte // nil for a null value (a tombstone)
	Headers   []Header
	Timestamp time.Time
}

// Header is one record header.
type Header struct {
	Key   string
	Value []byte
}

// ErrNoRecord means a partition holds no record at or after the offset
// asked for: the offset is at or beyond the partition's end.
var ErrNoRecord = errors.New("kafkaadmin: no record at or after the offset")

// ReadRecord returns the first record of the partition at or after offset,
// read with read_uncommitted from the partition's leader in one Fetch.
// Offsets of transaction markers and of records removed by compaction hold
// no record: the next one is returned. Errors: ErrNoRecord when the
// partition has none at or after offset yet (callers wait and retry),
// an *ArgumentError for a negative offset, the context's error, or a Kafka
// or connection error after retries (sarama.ErrOffsetOutOfRange when offset
// is below the log start).
func (r *Reader) ReadRecord(ctx context.Context, tp TopicPartition, offset int64) (Record, error) {
	if offset < 0 || tp.Topic == "" || tp.Partition < 0 {
		return Record{}, &ArgumentError{Op: "ReadRecord", Reason: fmt.Sprintf("read %s at %d: the topic must be named and offset and partition must not be negative", tp, offset)}
	}
	var rec Record
	err := r.do(ctx, "read record", func(s *session) error {
		return s.r.retry(ctx, "fetch", func(int) error {
			if _, err := s.metadata([]string{tp.Topic}); err != nil {
				return err
			}
			leader, ok := s.leaders[tp]
			if !ok {
				return fmt.Errorf("%s: %w", tp, sarama.ErrLeaderNotAvailable)
			}
			b, err := s.node(leader)
			if err != nil {
				return err
			}
			req := &sarama.FetchRequest{
				Version:      11,
				MaxWaitTime:  0,
				MinBytes:     0,
				MaxBytes:     4 << 20,
				Isolation:    sarama.ReadUncommitted,
				SessionID:    0,
				SessionEpoch: -1,
			}
			req.AddBlock(tp.Topic, tp.Partition, offset, 1<<20, -1)
			resp, err := b.Fetch(req)
			if err != nil {
				s.transportFailed(b)
				return err
			}
			block := resp.GetBlock(tp.Topic, tp.Partition)
			if block == nil {
				return fmt.Errorf("%s: no fetch response block: %w", tp, sarama.ErrIncompleteResponse)
			}
			if err := kerr(block.Err); err != nil {
				return fmt.Errorf("%s at %d: %w", tp, offset, err)
			}
			found, ok := firstRecord(block, offset)
			if !ok {
				return fmt.Errorf("%s at %d: %w", tp, offset, ErrNoRecord)
			}
			rec = found
			return nil
		})
	})
	return rec, err
}

// firstRecord returns the first data record at or after offset in a fetch
// response block.
func firstRecord(block *sarama.FetchResponseBlock, offset int64) (Record, bool) {
	for _, set := range block.RecordsSet {
		if set == nil || set.RecordBatch == nil {
			continue
		}
		batch := set.RecordBatch
		if batch.Control {
			continue
		}
		for _, r := range batch.Records {
			off := batch.FirstOffset + r.OffsetDelta
			if off < offset {
				continue
			}
			ts := batch.FirstTimestamp.Add(r.TimestampDelta)
			if batch.LogAppendTime {
				ts = batch.MaxTimestamp
			}
			rec := Record{Offset: off, Key: r.Key, Value: r.Value, Timestamp: ts}
			for _, h := range r.Headers {
				rec.Headers = append(rec.Headers, Header{Key: string(h.Key), Value: h.Value})
			}
			return rec, true
		}
	}
	return Record{}, false
}
