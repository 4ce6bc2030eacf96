package kafkaadmin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mm2cutover/mm2cutover/errkind"
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
var ErrMalformedOffsetRecord = errkind.New(errkind.CheckFailed, "kafkaadmin: malformed connect offset record")

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
func (r *Client) ReadConnectOffsets(ctx context.Context, topic, connector string) ([]offsets.ConnectOffset, error) {
	if topic == "" || connector == "" {
		return nil, &ArgumentError{Op: "ReadConnectOffsets", Reason: "the offsets topic and the connector must be named"}
	}
	counts, err := r.Topics(ctx, topic)
	if err != nil {
		return nil, err
	}
	parts := counts.Partitions()
	bounds, err := r.LogBounds(ctx, parts)
	if err != nil {
		return nil, err
	}
	// Connect keys offsets by the key's bytes; each key lives in one
	// partition of the topic (the producer's default partitioner), so the
	// order between partitions does not matter.
	latest := map[string]offsets.ConnectOffset{}
	pos := make(map[TopicPartition]int64, len(parts))
	for _, tp := range parts {
		pos[tp] = bounds[tp].Start
	}
	for {
		// A bounded span of every unfinished partition per round keeps
		// memory bounded however long the topic is.
		spans := make(map[TopicPartition]Span, len(parts))
		for _, tp := range parts {
			if end := bounds[tp].StableEnd; pos[tp] < end {
				spans[tp] = Span{From: pos[tp], Until: min(pos[tp]+connectOffsetsChunk, end)}
			}
		}
		if len(spans) == 0 {
			break
		}
		recs, err := r.ReadSpans(ctx, spans, ReadCommitted)
		if err != nil {
			return nil, err
		}
		for _, tp := range parts {
			for _, rec := range recs[tp] {
				name, raw, err := DecodeConnectOffsetKey(rec.Key)
				if err != nil {
					return nil, fmt.Errorf("%s at %d: %w", tp, rec.Offset, err)
				}
				if name != connector {
					continue
				}
				o, err := DecodeMirrorOffset(raw, rec.Value)
				if err != nil {
					return nil, fmt.Errorf("%s at %d: %w", tp, rec.Offset, err)
				}
				if o.Offset.Present() {
					latest[string(rec.Key)] = o
				} else {
					delete(latest, string(rec.Key))
				}
			}
			if sp, ok := spans[tp]; ok {
				pos[tp] = sp.Until
			}
		}
	}
	out := make([]offsets.ConnectOffset, 0, len(latest))
	for _, o := range latest {
		out = append(out, o)
	}
	slices.SortFunc(out, offsets.CompareConnectOffsets)
	return out, nil
}

// connectOffsetsChunk is how many offsets of each partition of an offsets
// topic ReadConnectOffsets reads per round.
const connectOffsetsChunk = 5000
