package kafkaadmin

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/errkind"
)

// Record is one record of a partition, as a consumer sees it.
type Record struct {
	Offset    int64
	Key       []byte // nil for a null key
	Value     []byte // nil for a null value (a tombstone)
	Headers   []Header
	Timestamp time.Time
	// Transactional is true for a record written in a transaction (by a
	// transactional producer: an exactly-once sink, Kafka Streams, an
	// exactly-once MirrorMaker 2).
	Transactional bool
}

// Header is one record header.
type Header struct {
	Key   string
	Value []byte
}

// ErrNoRecord means a partition holds no record at or after the offset
// asked for, as the read's isolation level sees it: the offset is at or
// beyond the partition's end (the last stable offset for ReadCommitted, the
// high watermark for ReadUncommitted), or only transaction markers and
// aborted records lie between it and the end.
var ErrNoRecord = errkind.New(errkind.CheckFailed, "kafkaadmin: no record at or after the offset")

// Isolation is the isolation level of a read: which records it sees.
type Isolation int8

const (
	// ReadCommitted sees what MirrorMaker 2 reads with
	// source.consumer.isolation.level=read_committed: records written outside
	// transactions and those of committed transactions, up to the last
	// stable offset. Records of aborted transactions are skipped, as are
	// transaction markers (control records), which no consumer ever sees.
	ReadCommitted Isolation = iota
	// ReadUncommitted sees every data record up to the high watermark,
	// records of aborted and open transactions included. Markers are skipped.
	ReadUncommitted
)

func (i Isolation) String() string {
	if i == ReadUncommitted {
		return "read_uncommitted"
	}
	return "read_committed"
}

func (i Isolation) sarama() sarama.IsolationLevel {
	if i == ReadUncommitted {
		return sarama.ReadUncommitted
	}
	return sarama.ReadCommitted
}

// Fetch sizes. A fetch asks each partition for at most partitionFetchBytes
// and the response for at most responseFetchBytes; a partition whose first
// batch is larger than its limit is fetched again in the next round with a
// limit four times higher (see scanState.advance), up to maxFetchBytes (the
// broker's default message.max.bytes is 1 MiB; topics may allow more).
const (
	partitionFetchBytes = 64 << 10
	responseFetchBytes  = 32 << 20
	maxFetchBytes       = 128 << 20
)

// FirstRecords returns, for each partition of from, the first data record
// at or after the partition's offset that a consumer with isolation iso
// sees. A partition that has none yet is absent from the result: its offset
// is at or beyond the end, or only markers and (for ReadCommitted) aborted
// records lie before the end. Offsets of transaction markers and of records
// removed by compaction hold no record: the next record is returned.
//
// Reads are batched: one Fetch request per partition leader and round,
// leaders in parallel; a round moves every partition past what it skipped,
// so a partition behind many aborted transactions takes several rounds.
//
// Errors: an *ArgumentError for an empty topic or a negative partition or
// offset; the context's error; a connection or Kafka error after retries;
// and a *PartitionErrors, with the records of the other partitions, when
// some partitions failed (sarama.ErrOffsetOutOfRange when the offset is
// below the log start, ErrUnknownTopic for a partition that does not exist).
func (r *Client) FirstRecords(ctx context.Context, from map[TopicPartition]int64, iso Isolation) (map[TopicPartition]Record, error) {
	for tp, off := range from {
		if off < 0 || tp.Topic == "" || tp.Partition < 0 {
			return nil, &ArgumentError{Op: "FirstRecords", Reason: fmt.Sprintf("read %s at %d: the topic must be named and offset and partition must not be negative", tp, off)}
		}
	}
	out := make(map[TopicPartition]Record, len(from))
	var perr *PartitionErrors
	err := r.do(ctx, "read records", func(s *session) error {
		spans := make(map[TopicPartition]Span, len(from))
		for tp, off := range from {
			spans[tp] = Span{From: off, Until: math.MaxInt64}
		}
		found, errs, err := s.scan(spans, iso, 1)
		if err != nil {
			return err
		}
		for tp, recs := range found {
			out[tp] = recs[0]
		}
		if len(errs) > 0 {
			perr = &PartitionErrors{Op: "FirstRecords", Total: len(from), Errs: errs}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if perr != nil {
		return out, perr
	}
	return out, nil
}

// ReadRecord returns the first record of the partition at or after offset
// that a consumer with isolation iso sees (see [Client.FirstRecords]).
// Errors: ErrNoRecord when the partition has none at or after offset yet
// (callers wait and retry), an *ArgumentError for a negative offset, the
// context's error, or a Kafka or connection error after retries
// (sarama.ErrOffsetOutOfRange when offset is below the log start).
func (r *Client) ReadRecord(ctx context.Context, tp TopicPartition, offset int64, iso Isolation) (Record, error) {
	got, err := r.FirstRecords(ctx, map[TopicPartition]int64{tp: offset}, iso)
	var pe *PartitionErrors
	if errors.As(err, &pe) {
		return Record{}, fmt.Errorf("%s at %d: %w", tp, offset, pe.Errs[tp])
	}
	if err != nil {
		return Record{}, err
	}
	rec, ok := got[tp]
	if !ok {
		return Record{}, fmt.Errorf("%s at %d: %w", tp, offset, ErrNoRecord)
	}
	return rec, nil
}

// Span is a range of offsets [From, Until) of one partition.
type Span struct {
	From, Until int64
}

// ReadSpans returns, for each partition of spans, the data records with
// offsets in its span that a consumer with isolation iso sees, in offset
// order. A span is read until its Until or the partition's end (the last
// stable offset for ReadCommitted, the high watermark for ReadUncommitted),
// whichever comes first; a partition with no record in its span is absent
// from the result. Reads are batched as in [Client.FirstRecords]. It holds
// every record in memory: it is meant for bounded spans, such as the last
// few offsets before a position.
//
// Errors: as [Client.FirstRecords]; an empty span (Until <= From) is no
// error and gives no records.
func (r *Client) ReadSpans(ctx context.Context, spans map[TopicPartition]Span, iso Isolation) (map[TopicPartition][]Record, error) {
	todo := make(map[TopicPartition]Span, len(spans))
	for tp, sp := range spans {
		if sp.From < 0 || tp.Topic == "" || tp.Partition < 0 {
			return nil, &ArgumentError{Op: "ReadSpans", Reason: fmt.Sprintf("read %s in [%d, %d): the topic must be named, offsets and partition must not be negative", tp, sp.From, sp.Until)}
		}
		if sp.Until > sp.From {
			todo[tp] = sp
		}
	}
	out := make(map[TopicPartition][]Record, len(todo))
	if len(todo) == 0 {
		return out, nil
	}
	var perr *PartitionErrors
	err := r.do(ctx, "read records", func(s *session) error {
		found, errs, err := s.scan(todo, iso, math.MaxInt)
		if err != nil {
			return err
		}
		out = found
		if len(errs) > 0 {
			perr = &PartitionErrors{Op: "ReadSpans", Total: len(spans), Errs: errs}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if perr != nil {
		return out, perr
	}
	return out, nil
}

// scanState is where the scan of one partition stands.
type scanState struct {
	pos   int64    // next offset to fetch
	limit int32    // partition fetch bytes
	found []Record // data records seen so far
	want  int      // how many records to collect
	until int64    // collect offsets below this
	done  bool
}

// scan reads each partition's span until it has want data records, reached
// the end of its span or of the partition, or failed. It returns the records
// found, the per-partition errors, and an error for the whole call.
func (s *session) scan(spans map[TopicPartition]Span, iso Isolation, want int) (map[TopicPartition][]Record, map[TopicPartition]error, error) {
	state := make(map[TopicPartition]*scanState, len(spans))
	for tp, sp := range spans {
		state[tp] = &scanState{pos: sp.From, limit: partitionFetchBytes, want: want, until: sp.Until}
	}
	errs := make(map[TopicPartition]error)
	topics := make([]string, 0)
	for tp := range spans {
		if !slices.Contains(topics, tp.Topic) {
			topics = append(topics, tp.Topic)
		}
	}
	err := s.r.retry(s.ctx, "fetch", func(attempt int) error {
		refresh := attempt > 1
		for {
			pending := make(map[TopicPartition]*scanState)
			for tp, st := range state {
				if !st.done {
					pending[tp] = st
				}
			}
			if len(pending) == 0 {
				return nil
			}
			if refresh || s.leaders == nil {
				if _, err := s.metadataFresh(topics, refresh); err != nil {
					return err
				}
				refresh = false
			}
			byLeader := make(map[int32][]TopicPartition)
			for tp, st := range pending {
				leader, ok := s.leaders[tp]
				if !ok {
					if tp.Partition < s.counts[tp.Topic] {
						return fmt.Errorf("%s: %w", tp, sarama.ErrLeaderNotAvailable)
					}
					errs[tp], st.done = errUnknownPartition, true
					continue
				}
				byLeader[leader] = append(byLeader[leader], tp)
			}
			type result struct {
				resp *sarama.FetchResponse
				err  error
				b    *sarama.Broker
			}
			results := make(map[int32]*result, len(byLeader))
			for leader := range byLeader {
				b, err := s.node(leader)
				if err != nil {
					return err
				}
				results[leader] = &result{b: b}
			}
			var wg sync.WaitGroup
			for leader, res := range results {
				wg.Go(func() {
					req := &sarama.FetchRequest{Version: 11, MaxBytes: responseFetchBytes, Isolation: iso.sarama(), SessionEpoch: -1}
					for _, tp := range byLeader[leader] {
						st := state[tp]
						req.AddBlock(tp.Topic, tp.Partition, st.pos, st.limit, -1)
					}
					res.resp, res.err = res.b.Fetch(req)
				})
			}
			wg.Wait()
			moved := false
			for leader, res := range results {
				if res.err != nil {
					s.transportFailed(res.b)
					return res.err
				}
				room := responseFetchBytes - responseBytes(res.resp)
				for _, tp := range byLeader[leader] {
					st := state[tp]
					block := res.resp.GetBlock(tp.Topic, tp.Partition)
					if block == nil {
						return fmt.Errorf("%s: no fetch response block: %w", tp, sarama.ErrIncompleteResponse)
					}
					if err := kerr(block.Err); err != nil {
						if retriable(err) {
							refresh = true
							continue
						}
						errs[tp], st.done = err, true
						continue
					}
					if st.advance(block, iso, room) {
						moved = true
					}
				}
			}
			if !moved && !refresh {
				// Every pending partition was starved by the response size
				// limit of its leader; the first partition a broker reads is
				// always served, so this cannot repeat forever, but guard.
				return fmt.Errorf("fetch made no progress: %w", sarama.ErrIncompleteResponse)
			}
			if err := s.ctx.Err(); err != nil {
				return err
			}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	found := make(map[TopicPartition][]Record, len(state))
	for tp, st := range state {
		if len(st.found) > 0 {
			found[tp] = st.found
		}
	}
	return found, errs, nil
}

// advance consumes one fetch response block: it collects the data records
// at or after st.pos, moves st.pos past the batches it read, and marks the
// partition done when enough records were found or the end was reached.
// It reports whether the partition moved (or finished), or its limit grew.
//
// A block with no records short of the end is one of two things. From
// fetch version 3 a broker answers a partition whose first batch is larger
// than what it may still return with no records at all, not a partial
// batch (only the first partition it reads gets a whole batch however
// large): when room, what the response left of its limit, covers the
// partition's own limit, the batch is larger than that limit, which grows.
// Otherwise the response ran out first, and the partition is fetched again
// as it was. Without the growth, partitions whose first batches all exceed
// the limit were served one a round: 1,000 of them took 803 requests.
func (st *scanState) advance(block *sarama.FetchResponseBlock, iso Isolation, room int64) bool {
	end := block.HighWaterMarkOffset
	if iso == ReadCommitted {
		end = block.LastStableOffset
	}
	aborted := slices.Clone(block.AbortedTransactions)
	slices.SortFunc(aborted, func(a, b *sarama.AbortedTransaction) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	abortedBy := make(map[int64]bool)
	read := false
	for _, set := range block.RecordsSet {
		if set == nil || set.RecordBatch == nil {
			continue
		}
		batch := set.RecordBatch
		if batch.PartialTrailingRecord {
			break // the rest of this batch did not fit: fetch again from st.pos
		}
		read = true
		last := batch.FirstOffset + int64(batch.LastOffsetDelta)
		for len(aborted) > 0 && aborted[0].FirstOffset <= last {
			abortedBy[aborted[0].ProducerID] = true
			aborted = aborted[1:]
		}
		next := last + 1
		switch {
		case batch.Control:
			if len(batch.Records) > 0 && isAbortMarker(batch.Records[0].Key) {
				delete(abortedBy, batch.ProducerID)
			}
		case iso == ReadCommitted && batch.IsTransactional && abortedBy[batch.ProducerID]:
			// a record of an aborted transaction: MM2 never sees it
		default:
			for _, r := range batch.Records {
				off := batch.FirstOffset + r.OffsetDelta
				if off < st.pos || off >= st.until {
					continue
				}
				st.found = append(st.found, toRecord(batch, r, off))
				if len(st.found) >= st.want {
					st.done = true
					return true
				}
			}
		}
		if next > st.pos {
			st.pos = next
		}
	}
	if st.pos >= st.until || st.pos >= end {
		st.done = true
		return true
	}
	if !read {
		if block.Partial || partialFirst(block) || room >= int64(st.limit) {
			if st.limit >= maxFetchBytes {
				return false
			}
			st.limit = min(st.limit*4, maxFetchBytes)
			return true
		}
		return false // starved by the response limit: fetch again
	}
	return true
}

// responseBytes is at least what the broker counted against a fetch
// response's limit: the record batches it returned, estimated from their
// decoded records with the most a batch and a record header take on the
// wire (a compressed batch's decoded records are larger than its bytes).
// An estimate too high only lets a partition wait a round where its limit
// could have grown.
func responseBytes(resp *sarama.FetchResponse) int64 {
	const batchOverhead, recordOverhead = 61, 40
	var n int64
	for _, parts := range resp.Blocks {
		for _, block := range parts {
			for _, set := range block.RecordsSet {
				if set == nil || set.RecordBatch == nil {
					continue
				}
				n += batchOverhead
				for _, r := range set.RecordBatch.Records {
					n += recordOverhead + int64(len(r.Key)+len(r.Value))
					for _, h := range r.Headers {
						n += int64(len(h.Key)+len(h.Value)) + 10
					}
				}
			}
		}
	}
	return n
}

// partialFirst reports whether the block's only record set is a batch that
// did not fit in the partition's fetch limit.
func partialFirst(block *sarama.FetchResponseBlock) bool {
	return len(block.RecordsSet) > 0 && block.RecordsSet[0] != nil && block.RecordsSet[0].RecordBatch != nil &&
		block.RecordsSet[0].RecordBatch.PartialTrailingRecord
}

// isAbortMarker reads a control record's key: version (int16), then type
// (int16): 0 is ABORT, 1 is COMMIT.
func isAbortMarker(key []byte) bool {
	return len(key) >= 4 && binary.BigEndian.Uint16(key[2:4]) == 0
}

func toRecord(batch *sarama.RecordBatch, r *sarama.Record, off int64) Record {
	ts := batch.FirstTimestamp.Add(r.TimestampDelta)
	if batch.LogAppendTime {
		ts = batch.MaxTimestamp
	}
	rec := Record{Offset: off, Key: r.Key, Value: r.Value, Timestamp: ts, Transactional: batch.IsTransactional}
	for _, h := range r.Headers {
		rec.Headers = append(rec.Headers, Header{Key: string(h.Key), Value: h.Value})
	}
	return rec
}
