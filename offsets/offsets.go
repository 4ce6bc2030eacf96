package offsets

import (
	"cmp"
	"strconv"
)

// SourcePartition is one partition of a topic on the source cluster. The zero
// value is not a valid partition (its topic is empty).
type SourcePartition struct {
	Topic     string
	Partition int32
}

// String returns the partition as Kafka's tools print a TopicPartition:
// "orders-3".
func (p SourcePartition) String() string {
	return p.Topic + "-" + strconv.FormatInt(int64(p.Partition), 10)
}

// Compare orders partitions by topic, then by partition number; it returns
// -1, 0 or +1 like [cmp.Compare] and suits [slices.SortFunc].
func (p SourcePartition) Compare(q SourcePartition) int {
	if c := cmp.Compare(p.Topic, q.Topic); c != 0 {
		return c
	}
	return cmp.Compare(p.Partition, q.Partition)
}

// Validate reports whether p can name a Kafka partition: the topic is a legal
// Kafka topic name (1 to 249 characters of [a-zA-Z0-9._-], not "." or "..")
// and the partition number is not negative. It returns nil or an error
// matching [ErrInvalidPartition].
func (p SourcePartition) Validate() error {
	if !ValidTopic(p.Topic) || p.Partition < 0 {
		return &DecisionError{Partition: p, Err: ErrInvalidPartition}
	}
	return nil
}

// Connect returns the Connect source partition under which
// MirrorSourceConnector, configured with source.cluster.alias = alias, stores
// the offset of p.
func (p SourcePartition) Connect(alias string) ConnectPartition {
	return ConnectPartition{Cluster: alias, Topic: p.Topic, Partition: p.Partition}
}

// ValidTopic reports whether t is a name Kafka accepts for a topic
// (Topic.validate): 1 to 249 characters of a-z, A-Z, 0-9, '.', '_' and '-',
// and not "." or "..". It is the one topic-name rule of the module.
func ValidTopic(t string) bool {
	if t == "" || len(t) > 249 || t == "." || t == ".." {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// GroupOffset is a consumer group's committed offset C for one partition: the
// next offset the group would read. It is present or absent; the zero value
// is absent (the group has committed nothing). A present value may still be
// out of range (negative, beyond the log end): [Decide] judges it.
// GroupOffset is comparable.
type GroupOffset struct {
	c  int64
	ok bool
}

// NewGroupOffset returns the present committed offset c.
func NewGroupOffset(c int64) GroupOffset { return GroupOffset{c: c, ok: true} }

// Get returns C and true, or 0 and false when the group has no committed offset.
func (g GroupOffset) Get() (int64, bool) { return g.c, g.ok }

// Present reports whether the group has a committed offset.
func (g GroupOffset) Present() bool { return g.ok }

// Equal reports whether g and h are both absent or both the same offset. It
// is g == h, and lets github.com/google/go-cmp compare values holding a
// GroupOffset.
func (g GroupOffset) Equal(h GroupOffset) bool { return g == h }

// String returns the decimal offset, or "none" when absent.
func (g GroupOffset) String() string {
	if !g.ok {
		return "none"
	}
	return strconv.FormatInt(g.c, 10)
}

// GroupOffsets is a snapshot of one consumer group's committed offsets: C per
// source partition, as kafkaadmin.Client.GroupOffsets reads them. A partition
// without a key has no committed offset; there is no in-band value for
// "missing".
type GroupOffsets map[SourcePartition]int64

// Lookup returns the committed offset of p, absent when the group has none.
func (g GroupOffsets) Lookup(p SourcePartition) GroupOffset {
	c, ok := g[p]
	if !ok {
		return GroupOffset{}
	}
	return NewGroupOffset(c)
}

// LogBounds are a partition's log start offset (the first offset not
// yet deleted by retention) and log end offset (the high watermark, the
// offset the next produced record will get). A consumer may be positioned
// anywhere in [Start, End]. The zero value is an empty partition that never
// held a record.
//
// StableEnd is the last stable offset: the end a read_committed consumer
// (MirrorMaker 2's source consumer) sees. It equals End unless a transaction
// is open on the partition, in which case it is the first offset of that
// transaction. It is 0 when whoever read the bounds did not read it (a plan
// does not record it). The decisions of this package ([Decide],
// [LogBounds.Validate]) use Start and End only.
type LogBounds struct {
	Start     int64 `json:"log_start"`
	End       int64 `json:"log_end"`
	StableEnd int64 `json:"stable_end,omitempty"`
}

// Validate reports whether b can be a partition's bounds: 0 <= Start <= End.
// StableEnd is not checked. The error, if any, matches [ErrInvalidBounds].
func (b LogBounds) Validate() error {
	if b.Start < 0 || b.End < b.Start {
		return &DecisionError{Bounds: b, Err: ErrInvalidBounds}
	}
	return nil
}

// MirrorOffset is the Connect source offset MirrorSourceTask stores for one
// source partition: the offset M of the last source record it replicated
// (JSON {"offset": M}), or null. On start MM2 seeks to M+1; with null it lets
// the source consumer's auto.offset.reset decide. The zero value is null.
// MirrorOffset is comparable.
type MirrorOffset struct {
	m  int64
	ok bool
}

// NewMirrorOffset returns the Connect offset {"offset": m}.
func NewMirrorOffset(m int64) MirrorOffset { return MirrorOffset{m: m, ok: true} }

// Get returns M and true, or 0 and false when the offset is null.
func (o MirrorOffset) Get() (int64, bool) { return o.m, o.ok }

// Present reports whether the offset is not null.
func (o MirrorOffset) Present() bool { return o.ok }

// Equal reports whether o and q are both null or both the same offset. It is
// o == q, and lets github.com/google/go-cmp compare values holding a
// MirrorOffset.
func (o MirrorOffset) Equal(q MirrorOffset) bool { return o == q }

// String returns the decimal offset, or "null".
func (o MirrorOffset) String() string {
	if !o.ok {
		return "null"
	}
	return strconv.FormatInt(o.m, 10)
}

// GroupOffset is the reverse conversion used for rollback: the consumer group
// offset C = M+1 from which a consumer continues where MM2 stopped. A null
// offset gives an absent GroupOffset (no position) and a nil error. It returns
// an [*OffsetError] matching [ErrNegative] when M < 0 and [ErrOverflow] when
// M is math.MaxInt64.
func (o MirrorOffset) GroupOffset() (GroupOffset, error) {
	if !o.ok {
		return GroupOffset{}, nil
	}
	if o.m < 0 {
		return GroupOffset{}, &OffsetError{Offset: o.m, Err: ErrNegative}
	}
	if o.m == 1<<63-1 {
		return GroupOffset{}, &OffsetError{Offset: o.m, Err: ErrOverflow}
	}
	return NewGroupOffset(o.m + 1), nil
}
