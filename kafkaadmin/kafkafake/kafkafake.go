// Package kafkafake is a Kafka cluster in memory for tests that need no
// JVM: it answers the small interfaces of package verify (log bounds, end
// offsets, records read_committed, cluster ID, topics, a group's
// description, commits and one reading of them) as *kafkaadmin.Client
// does, from maps a test fills and changes between steps.
//
// It is a package of its own, not test code of verify, because the tests
// of verify and of the example CLI's steps (examples/internal/cutover)
// both drive the library's steps with it, and test files cannot be
// imported. It is internal: a tool of another team writes the few methods
// its own tests need against the interfaces verify documents.
package kafkafake

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// Cluster is one cluster: per partition its bounds and its committed data
// records in offset order, the partition count of each topic, and the
// consumer groups' commits and member counts. An offset below the last
// stable offset that holds no record is a transaction marker, an aborted
// record or a record removed by compaction, as a read_committed reader
// sees them. Fill the fields before the first call, or under Lock.
type Cluster struct {
	sync.Mutex
	ID         string
	Partitions kafkaadmin.Topics // partition count per topic
	Bounds     map[kafkaadmin.TopicPartition]offsets.LogBounds
	Records    map[kafkaadmin.TopicPartition][]kafkaadmin.Record
	Commits    map[string]offsets.GroupOffsets // per group
	Members    map[string]int                  // per group; absent means none
	// ConnectOffsets are what ReadConnectOffsets returns, per connector,
	// whatever the offsets topic named.
	ConnectOffsets map[string][]offsets.ConnectOffset
}

// New returns an empty cluster of that ID.
func New(id string) *Cluster {
	return &Cluster{ID: id, Partitions: kafkaadmin.Topics{}, Bounds: map[kafkaadmin.TopicPartition]offsets.LogBounds{},
		Records: map[kafkaadmin.TopicPartition][]kafkaadmin.Record{}, Commits: map[string]offsets.GroupOffsets{}, Members: map[string]int{},
		ConnectOffsets: map[string][]offsets.ConnectOffset{}}
}

// Produce appends a record per offset of [from, until) to tp, the copies
// of src's records when src is not nil (src[0] at from), else records
// with key "k<offset>" and value "v<offset>"; it moves the partition's end
// and last stable offset to until, and gives the topic at least
// tp.Partition+1 partitions.
func (c *Cluster) Produce(tp kafkaadmin.TopicPartition, from, until int64, src []kafkaadmin.Record) {
	c.Lock()
	defer c.Unlock()
	for off := from; off < until; off++ {
		r := kafkaadmin.Record{Offset: off, Key: fmt.Appendf(nil, "k%d", off), Value: fmt.Appendf(nil, "v%d", off), Timestamp: time.Unix(1_700_000_000+off, 0)}
		if src != nil {
			r = src[off-from]
			r.Offset = off
		}
		c.Records[tp] = append(c.Records[tp], r)
	}
	b := c.Bounds[tp]
	b.End, b.StableEnd = until, until
	c.Bounds[tp] = b
	if c.Partitions[tp.Topic] <= tp.Partition {
		c.Partitions[tp.Topic] = tp.Partition + 1
	}
}

// ClusterID returns ID.
func (c *Cluster) ClusterID(context.Context) (string, error) { return c.ID, nil }

// Topics returns the partition counts of the named topics that exist.
func (c *Cluster) Topics(_ context.Context, names ...string) (kafkaadmin.Topics, error) {
	c.Lock()
	defer c.Unlock()
	out := kafkaadmin.Topics{}
	for _, n := range names {
		if p, ok := c.Partitions[n]; ok {
			out[n] = p
		}
	}
	return out, nil
}

// LogBounds returns the bounds of each partition, and a
// *kafkaadmin.PartitionErrors (ErrUnknownTopic) naming those it has none
// of.
func (c *Cluster) LogBounds(_ context.Context, tps []kafkaadmin.TopicPartition) (map[kafkaadmin.TopicPartition]offsets.LogBounds, error) {
	c.Lock()
	defer c.Unlock()
	out := make(map[kafkaadmin.TopicPartition]offsets.LogBounds, len(tps))
	errs := make(map[kafkaadmin.TopicPartition]error)
	for _, tp := range tps {
		if b, ok := c.Bounds[tp]; ok {
			out[tp] = b
		} else {
			errs[tp] = kafkaadmin.ErrUnknownTopic
		}
	}
	if len(errs) > 0 {
		return out, &kafkaadmin.PartitionErrors{Op: "LogBounds", Total: len(tps), Errs: errs}
	}
	return out, nil
}

// EndOffsets is LogBounds' End.
func (c *Cluster) EndOffsets(ctx context.Context, tps []kafkaadmin.TopicPartition) (map[kafkaadmin.TopicPartition]int64, error) {
	bounds, err := c.LogBounds(ctx, tps)
	out := make(map[kafkaadmin.TopicPartition]int64, len(bounds))
	for tp, b := range bounds {
		out[tp] = b.End
	}
	return out, err
}

// errIsolation: the cluster reads read_committed only.
var errIsolation = errors.New("kafkafake: reads read_committed only")

// span returns the committed records of tp in [from, until), until capped
// at the last stable offset. The caller holds the lock.
func (c *Cluster) span(tp kafkaadmin.TopicPartition, from, until int64) []kafkaadmin.Record {
	until = min(until, c.Bounds[tp].StableEnd)
	var out []kafkaadmin.Record
	for _, r := range c.Records[tp] {
		if r.Offset >= from && r.Offset < until {
			out = append(out, r)
		}
	}
	return out
}

// FirstRecords returns, per partition, the first committed record at or
// after the offset; none for a partition without one.
func (c *Cluster) FirstRecords(_ context.Context, from map[kafkaadmin.TopicPartition]int64, iso kafkaadmin.Isolation) (map[kafkaadmin.TopicPartition]kafkaadmin.Record, error) {
	if iso != kafkaadmin.ReadCommitted {
		return nil, errIsolation
	}
	c.Lock()
	defer c.Unlock()
	out := make(map[kafkaadmin.TopicPartition]kafkaadmin.Record)
	for tp, off := range from {
		if recs := c.span(tp, off, 1<<62); len(recs) > 0 {
			out[tp] = recs[0]
		}
	}
	return out, nil
}

// ReadSpans returns the committed records of each span.
func (c *Cluster) ReadSpans(_ context.Context, spans map[kafkaadmin.TopicPartition]kafkaadmin.Span, iso kafkaadmin.Isolation) (map[kafkaadmin.TopicPartition][]kafkaadmin.Record, error) {
	if iso != kafkaadmin.ReadCommitted {
		return nil, errIsolation
	}
	c.Lock()
	defer c.Unlock()
	out := make(map[kafkaadmin.TopicPartition][]kafkaadmin.Record)
	for tp, sp := range spans {
		if recs := c.span(tp, sp.From, sp.Until); len(recs) > 0 {
			out[tp] = recs
		}
	}
	return out, nil
}

// DescribeGroup returns the group with Members[group] members: Stable
// with members, Empty without (a Flink job's group: it commits without
// joining).
func (c *Cluster) DescribeGroup(_ context.Context, group string) (kafkaadmin.Group, error) {
	c.Lock()
	defer c.Unlock()
	g := kafkaadmin.Group{ID: group, State: kafkaadmin.GroupEmpty}
	if c.Members[group] > 0 {
		g.State = kafkaadmin.GroupStable
	}
	for range c.Members[group] {
		g.Members = append(g.Members, kafkaadmin.Member{})
	}
	return g, nil
}

// GroupOffsets returns a copy of the group's commits (empty, not nil, for
// a group without any).
func (c *Cluster) GroupOffsets(_ context.Context, group string, _ []string) (offsets.GroupOffsets, error) {
	c.Lock()
	defer c.Unlock()
	out := offsets.GroupOffsets{}
	maps.Copy(out, c.Commits[group])
	return out, nil
}

// CommitOffsets sets the group's commits of the partitions given.
func (c *Cluster) CommitOffsets(_ context.Context, group string, o map[kafkaadmin.TopicPartition]int64) error {
	c.Lock()
	defer c.Unlock()
	if c.Commits[group] == nil {
		c.Commits[group] = offsets.GroupOffsets{}
	}
	maps.Copy(c.Commits[group], o)
	return nil
}

// ReadGroup is one reading of the group's commits on the topics given,
// with the topics' partition counts and every partition's bounds.
func (c *Cluster) ReadGroup(ctx context.Context, group string, topics []string) (kafkaadmin.Reading, error) {
	r := kafkaadmin.Reading{At: time.Now(), Topics: kafkaadmin.Topics{}, Bounds: map[kafkaadmin.TopicPartition]offsets.LogBounds{}}
	r.Committed, _ = c.GroupOffsets(ctx, group, topics)
	c.Lock()
	defer c.Unlock()
	for _, t := range topics {
		r.Topics[t] = c.Partitions[t]
		for i := range c.Partitions[t] {
			tp := kafkaadmin.TopicPartition{Topic: t, Partition: i}
			r.Bounds[tp] = c.Bounds[tp]
		}
	}
	return r, nil
}

// ReadConnectOffsets returns ConnectOffsets[connector].
func (c *Cluster) ReadConnectOffsets(_ context.Context, _, connector string) ([]offsets.ConnectOffset, error) {
	c.Lock()
	defer c.Unlock()
	return slices.Clone(c.ConnectOffsets[connector]), nil
}
