package offsets

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/mm2cutover/mm2cutover/internal/jsonstr"
)

// ConnectPartition is the Connect source partition under which
// MirrorSourceConnector stores an offset: the JSON object
// {"cluster": <source.cluster.alias>, "topic": <source topic>, "partition": <int>}.
// Connect checks only its shape: a cluster alias that does not match the
// connector's configuration is accepted and silently never read.
type ConnectPartition struct {
	Cluster   string `json:"cluster"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// Source returns the source partition, dropping the cluster alias.
func (p ConnectPartition) Source() SourcePartition {
	return SourcePartition{Topic: p.Topic, Partition: p.Partition}
}

// String returns "alias/topic-partition", for example "source/orders-3".
func (p ConnectPartition) String() string {
	return p.Cluster + "/" + p.Source().String()
}

// Compare orders Connect partitions by cluster alias, topic and partition
// number; it returns -1, 0 or +1.
func (p ConnectPartition) Compare(q ConnectPartition) int {
	if c := cmp.Compare(p.Cluster, q.Cluster); c != 0 {
		return c
	}
	return p.Source().Compare(q.Source())
}

// ConnectOffset is one entry of the offset list that Kafka Connect's
// GET /connectors/{name}/offsets returns and PATCH /connectors/{name}/offsets
// takes for MirrorSourceConnector:
//
//	{"partition": {"cluster": "source", "topic": "orders", "partition": 3}, "offset": {"offset": 41}}
//
// A null Offset marshals as "offset": null, which in a PATCH deletes the
// partition's stored offset. ConnectOffset is comparable, so a list can be
// compared with another as a set (GET returns entries in arbitrary order).
type ConnectOffset struct {
	Partition ConnectPartition
	Offset    MirrorOffset
}

// CompareConnectOffsets orders entries by partition, then offset (null
// first); it suits [slices.SortFunc] for printing or comparing lists.
func CompareConnectOffsets(a, b ConnectOffset) int {
	if c := a.Partition.Compare(b.Partition); c != 0 {
		return c
	}
	am, aok := a.Offset.Get()
	bm, bok := b.Offset.Get()
	if aok != bok {
		if aok {
			return 1
		}
		return -1
	}
	return cmp.Compare(am, bm)
}

// AppendJSON appends the entry's JSON to buf: the partition object with keys
// in the order cluster, topic, partition, and the offset as a plain JSON
// integer or null.
func (o ConnectOffset) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"partition":{"cluster":`...)
	buf = jsonstr.Append(buf, o.Partition.Cluster)
	buf = append(buf, `,"topic":`...)
	buf = jsonstr.Append(buf, o.Partition.Topic)
	buf = append(buf, `,"partition":`...)
	buf = strconv.AppendInt(buf, int64(o.Partition.Partition), 10)
	buf = append(buf, `},"offset":`...)
	if m, ok := o.Offset.Get(); ok {
		buf = append(buf, `{"offset":`...)
		buf = strconv.AppendInt(buf, m, 10)
		buf = append(buf, '}')
	} else {
		buf = append(buf, "null"...)
	}
	return append(buf, '}')
}

// MarshalJSON implements [json.Marshaler] with [ConnectOffset.AppendJSON].
func (o ConnectOffset) MarshalJSON() ([]byte, error) {
	return o.AppendJSON(nil), nil
}

// UnmarshalJSON decodes one entry strictly: both "partition" and "offset"
// are required, the partition needs exactly "cluster", "topic" and an
// integer "partition", the offset is null or {"offset": <int64>}, and
// unknown keys are refused. Errors match [ErrMalformed].
func (o *ConnectOffset) UnmarshalJSON(data []byte) error {
	var w wireEntry
	if err := strictUnmarshal(data, &w); err != nil {
		return err
	}
	return w.to(o)
}

// ConnectOffsetList is the JSON body of Kafka Connect's
// GET and PATCH /connectors/{name}/offsets: {"offsets": [...]}. Marshalling
// keeps the order of Offsets; sort with [CompareConnectOffsets] first for a
// deterministic body.
type ConnectOffsetList struct {
	Offsets []ConnectOffset `json:"offsets"`
}

// UnmarshalJSON decodes the body strictly: "offsets" is required and is the
// only key, and every entry is decoded as [ConnectOffset.UnmarshalJSON]
// decodes one, in a single pass over the body (a GET of 10,000 partitions
// is about 1 MB). Errors match [ErrMalformed].
func (l *ConnectOffsetList) UnmarshalJSON(data []byte) error {
	var w struct {
		Offsets *[]wireEntry `json:"offsets"`
	}
	if err := strictUnmarshal(data, &w); err != nil {
		return err
	}
	if w.Offsets == nil {
		return fmt.Errorf("%w: body without \"offsets\"", ErrMalformed)
	}
	out := make([]ConnectOffset, len(*w.Offsets))
	for i, e := range *w.Offsets {
		if err := e.to(&out[i]); err != nil {
			return err
		}
	}
	l.Offsets = out
	return nil
}

// wireEntry is one entry of an offsets body as decoded, before the checks
// of [ConnectOffset.UnmarshalJSON]: pointers tell a missing key from a zero.
type wireEntry struct {
	Partition *struct {
		Cluster   *string `json:"cluster"`
		Topic     *string `json:"topic"`
		Partition *int32  `json:"partition"`
	} `json:"partition"`
	Offset wireOffset `json:"offset"`
}

// to checks the entry and stores it in o.
func (w wireEntry) to(o *ConnectOffset) error {
	switch {
	case w.Partition == nil:
		return fmt.Errorf("%w: entry without \"partition\"", ErrMalformed)
	case w.Partition.Cluster == nil:
		return fmt.Errorf("%w: partition without \"cluster\"", ErrMalformed)
	case w.Partition.Topic == nil:
		return fmt.Errorf("%w: partition without \"topic\"", ErrMalformed)
	case w.Partition.Partition == nil:
		return fmt.Errorf("%w: partition without \"partition\"", ErrMalformed)
	case !w.Offset.seen:
		return fmt.Errorf("%w: entry without \"offset\"", ErrMalformed)
	}
	*o = ConnectOffset{Partition: ConnectPartition{
		Cluster:   *w.Partition.Cluster,
		Topic:     *w.Partition.Topic,
		Partition: *w.Partition.Partition,
	}, Offset: w.Offset.m}
	return nil
}

// wireOffset is the "offset" of an entry: null or {"offset": <int64>}.
// encoding/json calls its UnmarshalJSON for a null too, so seen tells a
// null from a missing key.
type wireOffset struct {
	seen bool
	m    MirrorOffset
}

// UnmarshalJSON takes Connect's own form, {"offset":N}, without a decoder
// of its own; any other form (spaces, escaped keys) goes through the strict
// decoder, which also refuses unknown keys.
func (w *wireOffset) UnmarshalJSON(data []byte) error {
	w.seen = true
	if bytes.Equal(data, []byte("null")) {
		return nil
	}
	if n, ok := bytes.CutPrefix(data, []byte(`{"offset":`)); ok {
		if n, ok := bytes.CutSuffix(n, []byte("}")); ok {
			if v, err := strconv.ParseInt(string(n), 10, 64); err == nil {
				w.m = NewMirrorOffset(v)
				return nil
			}
		}
	}
	var off struct {
		Offset *int64 `json:"offset"`
	}
	if err := strictUnmarshal(data, &off); err != nil {
		return err
	}
	if off.Offset == nil {
		return fmt.Errorf("%w: offset without \"offset\"", ErrMalformed)
	}
	w.m = NewMirrorOffset(*off.Offset)
	return nil
}

func ParseConnectOffsets(data []byte) ([]ConnectOffset, error) {
	var l ConnectOffsetList
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, malformed(err)
	}
	return l.Offsets, nil
}

// Reverse turns the Connect offsets of a MirrorSourceConnector whose
// source.cluster.alias is alias into consumer group offsets, for a rollback
// after MM2 has run or for a cutover from another MM2 connector: each M
// becomes C = M+1, and a null offset gives no position (the partition is left
// out of the result). It returns the first problem as a [*ConnectPartitionError]: an
// entry under another alias ([ErrAliasMismatch]), an invalid partition
// ([ErrInvalidPartition]), a partition listed twice ([ErrDuplicate]) or an
// offset that has no next offset (an [*OffsetError]).
func Reverse(alias string, list []ConnectOffset) (GroupOffsets, error) {
	out := make(GroupOffsets, len(list))
	seen := make(map[SourcePartition]bool, len(list))
	for _, e := range list {
		if e.Partition.Cluster != alias {
			return nil, &ConnectPartitionError{Partition: e.Partition, Err: fmt.Errorf("%w: want %q", ErrAliasMismatch, alias)}
		}
		p := e.Partition.Source()
		if p.Validate() != nil {
			return nil, &ConnectPartitionError{Partition: e.Partition, Err: ErrInvalidPartition}
		}
		if seen[p] {
			return nil, &ConnectPartitionError{Partition: e.Partition, Err: ErrDuplicate}
		}
		seen[p] = true
		c, err := e.Offset.GroupOffset()
		if err != nil {
			return nil, &ConnectPartitionError{Partition: e.Partition, Err: err}
		}
		if v, ok := c.Get(); ok {
			out[p] = v
		}
	}
	return out, nil
}

func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return malformed(err)
	}
	if dec.More() {
		return fmt.Errorf("%w: trailing data", ErrMalformed)
	}
	return nil
}

// malformed wraps a decoding error so that it matches ErrMalformed, unless it
// already does.
func malformed(err error) error {
	if errors.Is(err, ErrMalformed) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrMalformed, err)
}

// PatchBody returns the body of Kafka Connect's PATCH
// /connectors/{name}/offsets that writes list, in its order:
// {"offsets":[...]} with each entry as [ConnectOffset.AppendJSON] writes
// it. It is the one encoding of that body: plan.Plan.PatchBody and
// connect.Client.AlterMirrorOffsets both send these bytes.
func PatchBody(list []ConnectOffset) []byte {
	b := make([]byte, 0, 16+len(list)*96)
	b = append(b, `{"offsets":[`...)
	for i, o := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = o.AppendJSON(b)
	}
	return append(b, "]}"...)
}
