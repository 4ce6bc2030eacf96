package kafkaadmin

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/offsets"
)

// MirrorSourceConnectorName is the connector name MirrorMaker 2's dedicated
// mode (connect-mirror-maker.sh, org.apache.kafka.connect.mirror.MirrorMaker)
// gives its MirrorSourceConnector: the class's simple name. Its offsets are
// stored under it in the offsets topic DedicatedOffsetsTopic names.
const MirrorSourceConnectorName = "MirrorSourceConnector"

// DedicatedOffsetsTopic returns the offsets topic of a dedicated-mode
// MirrorMaker 2 flow from the cluster aliased sourceAlias: the worker
// default offset.storage.topic "mm2-offsets.<source alias>.internal", on
// the flow's target cluster.
func DedicatedOffsetsTopic(sourceAlias string) string {
	return "mm2-offsets." + sourceAlias + ".internal"
}

// ErrMalformedOffsetRecord means a record of a Kafka Connect offsets topic
// is not one Connect writes for a MirrorSourceConnector: a key that is not
// the JSON array [connector name, source partition], or, for the connector
// asked for, a partition or an offset that is not MirrorSourceConnector's.
var ErrMalformedOffsetRecord = errors.New("kafkaadmin: malformed connect offset record")

// DecodeConnectOffsetKey decodes the key of a record of a Kafka Connect
// offsets topic (offset.storage.topic). Connect's internal JsonConverter
// (schemas.enable=false) writes it as the JSON array
//
//	["<connector name>", <source partition>]
//
// for example ["MirrorSourceConnector",{"cluster":"source","partition":0,"topic":"orders"}].
// It returns the connector name and the partition as raw JSON, undecoded:
// each connector class has its own partition shape. Errors match
// ErrMalformedOffsetRecord.
func DecodeConnectOffsetKey(key []byte) (connector string, partition json.RawMessage, err error) {
	var parts []json.RawMessage
	if err := json.Unmarshal(key, &parts); err != nil {
		return "", nil, fmt.Errorf("%w: key %q: %v", ErrMalformedOffsetRecord, key, err)
	}
	if len(parts) != 2 {
		return "", nil, fmt.Errorf("%w: key %q: %d elements, want [connector, partition]", ErrMalformedOffsetRecord, key, len(parts))
	}
	if err := json.Unmarshal(parts[0], &connector); err != nil || connector == "" {
		return "", nil, fmt.Errorf("%w: key %q: the first element is not a connector name", ErrMalformedOffsetRecord, key)
	}
	return connector, parts[1], nil
}

// DecodeMirrorOffset decodes the partition of a MirrorSourceConnector
// offset key (see DecodeConnectOffsetKey) and the record's value: the JSON
// object {"offset": M}, or a tombstone (a null value, or JSON null), which
// Connect reads as no offset and DecodeMirrorOffset returns as a null
// MirrorOffset. The partition must be exactly {"cluster": alias, "topic":
// name, "partition": int}, in any key order. Errors match
// ErrMalformedOffsetRecord and offsets.ErrMalformed.
func DecodeMirrorOffset(partition json.RawMessage, value []byte) (offsets.ConnectOffset, error) {
	if value == nil {
		value = []byte("null")
	}
	// The entry decoder of the REST API's offset list is strict about both
	// halves; each half must be one JSON value, so that neither can reach
	// into the other.
	if !json.Valid(partition) || !json.Valid(value) {
		return offsets.ConnectOffset{}, fmt.Errorf("%w: %w: not JSON", ErrMalformedOffsetRecord, offsets.ErrMalformed)
	}
	entry := slices.Concat([]byte(`{"partition":`), partition, []byte(`,"offset":`), value, []byte(`}`))
	var o offsets.ConnectOffset
	if err := o.UnmarshalJSON(entry); err != nil {
		return offsets.ConnectOffset{}, fmt.Errorf("%w: %w", ErrMalformedOffsetRecord, err)
	}
	return o, nil
}

// ReadConnectOffsets reads a Kafka Connect offsets topic from its log start
// to its last stable offset, as a worker does when it starts, and returns
// the offsets stored for the MirrorSourceConnector named connector: per
// source partition the latest value, in partition order. A tombstone
// removes the partition's offset. Records of other connectors (a dedicated
// MM2's MirrorCheckpointConnector and MirrorHeartbeatConnector, say) are
// skipped without being decoded; a malformed record of connector is an
// error. Records of aborted transactions (exactly-once source workers)
// are skipped, as read_committed consumers skip them.
//
// Like Connect, it keys offsets by the key's bytes: two records whose keys
// name the same partition with their JSON fields in another order are two
// entries, and both are returned (offsets.Reverse refuses such a list as
// ErrDuplicate).
//
// Errors: an *ArgumentError for an empty topic or connector, an
// *UnknownTopicsError when the topic does not exist, an error matching
// ErrMalformedOffsetRecord that names the record's partition and offset,
// the context's error, or a Kafka or connection error after retries.
func (r *Reader) ReadConnectOffsets(ctx context.Context, topic, connector string) ([]offsets.ConnectOffset, error) {
	if topic == "" || connector == "" {
		return nil, &ArgumentError{Op: "ReadConnectOffsets", Reason: "the offsets topic and the connector must be named"}
	}
	type entry struct {
		o   offsets.ConnectOffset
		pos string // where it was read, for errors
	}
	latest := map[string]entry{} // by key bytes, as Connect keys its offsets
	err := r.do(ctx, "read connect offsets", func(s *session) error {
		counts, err := s.topics([]string{topic})
		if err != nil {
			return err
		}
		parts := Topics(counts).Partitions()
		bounds, err := s.bounds(parts)
		if err != nil {
			return err
		}
		for _, tp := range parts {
			b := bounds[tp]
			if b.Err != nil {
				return fmt.Errorf("%s: %w", tp, b.Err)
			}
			err := s.readCommitted(tp, b.Start, b.StableEnd, func(off int64, key, value []byte) error {
				name, raw, err := DecodeConnectOffsetKey(key)
				if err != nil {
					return fmt.Errorf("%s at %d: %w", tp, off, err)
				}
				if name != connector {
					return nil
				}
				o, err := DecodeMirrorOffset(raw, value)
				if err != nil {
					return fmt.Errorf("%s at %d: %w", tp, off, err)
				}
				if o.Offset.Present() {
					latest[string(key)] = entry{o, fmt.Sprintf("%s at %d", tp, off)}
				} else {
					delete(latest, string(key))
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]offsets.ConnectOffset, 0, len(latest))
	for _, e := range latest {
		out = append(out, e.o)
	}
	slices.SortFunc(out, offsets.CompareConnectOffsets)
	return out, nil
}

// readCommitted fetches a partition from start up to end (its last stable
// offset) with read_committed and calls fn for every data record that is
// not part of an aborted transaction, in offset order.
func (s *session) readCommitted(tp TopicPartition, start, end int64, fn func(offset int64, key, value []byte) error) error {
	next := start
	for next < end {
		var block *sarama.FetchResponseBlock
		err := s.r.retry(s.ctx, "fetch", func(attempt int) error {
			if _, known := s.leaders[tp]; attempt > 1 || !known {
				if _, err := s.metadata([]string{tp.Topic}); err != nil {
					return err
				}
			}
			leader, ok := s.leaders[tp]
			if !ok {
				return fmt.Errorf("%s: %w", tp, sarama.ErrLeaderNotAvailable)
			}
			b, err := s.node(leader)
			if err != nil {
				return err
			}
			req := &sarama.FetchRequest{Version: 11, MaxWaitTime: 0, MinBytes: 0, MaxBytes: 8 << 20,
				Isolation: sarama.ReadCommitted, SessionID: 0, SessionEpoch: -1}
			req.AddBlock(tp.Topic, tp.Partition, next, 4<<20, -1)
			resp, err := b.Fetch(req)
			if err != nil {
				s.transportFailed(b)
				return err
			}
			if block = resp.GetBlock(tp.Topic, tp.Partition); block == nil {
				return fmt.Errorf("%s: no fetch response block: %w", tp, sarama.ErrIncompleteResponse)
			}
			return kerr(block.Err)
		})
		if err != nil {
			return fmt.Errorf("%s at %d: %w", tp, next, err)
		}
		progressed := false
		aborted := abortedTxns(block.AbortedTransactions)
		for _, set := range block.RecordsSet {
			if set == nil || set.RecordBatch == nil || set.RecordBatch.PartialTrailingRecord {
				continue
			}
			batch := set.RecordBatch
			if batch.LastOffset() < next {
				continue
			}
			skip := aborted.skip(batch)
			for _, rec := range batch.Records {
				off := batch.FirstOffset + rec.OffsetDelta
				if skip || off < next || off >= end {
					continue
				}
				if err := fn(off, rec.Key, rec.Value); err != nil {
					return err
				}
			}
			next = batch.LastOffset() + 1
			progressed = true
		}
		if !progressed {
			return fmt.Errorf("%s at %d: the fetch returned no complete record batch before the last stable offset %d: %w", tp, next, end, sarama.ErrIncompleteResponse)
		}
	}
	return nil
}

// abortedSet tracks aborted transactions while batches are read in order,
// as Kafka's consumer does under read_committed: a producer's transactional
// batches are skipped from the first offset of its aborted transaction
// until its next control batch (the abort marker).
type abortedSet struct {
	pending []*sarama.AbortedTransaction // by first offset
	active  map[int64]bool               // producer IDs inside an aborted transaction
}

func abortedTxns(list []*sarama.AbortedTransaction) *abortedSet {
	a := &abortedSet{pending: slices.Clone(list), active: map[int64]bool{}}
	slices.SortFunc(a.pending, func(x, y *sarama.AbortedTransaction) int { return cmp.Compare(x.FirstOffset, y.FirstOffset) })
	return a
}

// skip reports whether batch holds no record a read_committed consumer
// sees: a control batch, or a transactional batch of an aborted transaction.
func (a *abortedSet) skip(batch *sarama.RecordBatch) bool {
	for len(a.pending) > 0 && a.pending[0].FirstOffset <= batch.LastOffset() {
		a.active[a.pending[0].ProducerID] = true
		a.pending = a.pending[1:]
	}
	if batch.Control {
		if isAbortMarker(batch) {
			delete(a.active, batch.ProducerID)
		}
		return true
	}
	return batch.IsTransactional && a.active[batch.ProducerID]
}

// isAbortMarker reports whether a control batch is an abort marker: its
// record's key is version (int16) then type (int16), 0 for abort.
func isAbortMarker(batch *sarama.RecordBatch) bool {
	for _, r := range batch.Records {
		if len(r.Key) >= 4 && binary.BigEndian.Uint16(r.Key[2:4]) == 0 {
			return true
		}
	}
	return false
}
