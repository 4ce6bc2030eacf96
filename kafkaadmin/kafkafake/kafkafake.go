package kafkafake

import (
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// Cluster is one Kafka cluster in memory: per partition its bounds and its
// data records in offset order, the partition count of each topic, and the
// consumer groups' commits and member counts (see the package doc for the
// rules they follow). Fill the fields before the first call, or while
// holding the lock (Lock, Unlock); the methods take it while they read or
// write. A Cluster is safe for concurrent use, as *kafkaadmin.Client is.
// Make one with New.
type Cluster struct {
	sync.Mutex
	// ID is the cluster ID that ClusterID returns.
	ID string
	// Partitions is the partition count of each topic (see the package doc
	// for topics that Bounds alone makes exist).
	Partitions kafkaadmin.Topics
	// Bounds holds each online partition's log start offset, high
	// watermark (End) and last stable offset (StableEnd). A partition of an
	// existing topic with no entry is offline.
	Bounds map[kafkaadmin.TopicPartition]offsets.LogBounds
	// Records holds each partition's data records, in offset order. An
	// offset without a record is a marker, an aborted record or one
	// removed by compaction.
	Records map[kafkaadmin.TopicPartition][]kafkaadmin.Record
	// Commits holds each consumer group's committed offsets: per
	// partition, the next offset the group will read.
	Commits map[string]offsets.GroupOffsets
	// Members is how many members each consumer group has; absent or 0
	// means none.
	Members map[string]int

	hooks hooks
}

// New returns a cluster with that ID and nothing in it.
func New(id string) *Cluster {
	return &Cluster{
		ID:         id,
		Partitions: kafkaadmin.Topics{},
		Bounds:     map[kafkaadmin.TopicPartition]offsets.LogBounds{},
		Records:    map[kafkaadmin.TopicPartition][]kafkaadmin.Record{},
		Commits:    map[string]offsets.GroupOffsets{},
		Members:    map[string]int{},
	}
}

// SeedTopic creates the topic with that many partitions, each online and
// empty (log start, high watermark and last stable offset 0), or adds
// partitions to an existing topic up to that count, as a partition
// increase does. It never removes partitions; see DeleteTopic.
func (c *Cluster) SeedTopic(name string, partitions int32) {
	c.Lock()
	defer c.Unlock()
	c.seedTopic(name, partitions)
}

// seedTopic is SeedTopic; the caller holds the lock.
func (c *Cluster) seedTopic(name string, partitions int32) {
	for p := range partitions {
		tp := kafkaadmin.TopicPartition{Topic: name, Partition: p}
		if _, ok := c.Bounds[tp]; !ok {
			c.Bounds[tp] = offsets.LogBounds{}
		}
	}
	if c.Partitions[name] < partitions {
		c.Partitions[name] = partitions
	}
}

// DeleteTopic removes the topic, its partitions' bounds and records, as a
// topic deletion does. The groups' commits on it stay, as Kafka keeps them
// until they expire; reads of them name the topic unknown.
func (c *Cluster) DeleteTopic(name string) {
	c.Lock()
	defer c.Unlock()
	delete(c.Partitions, name)
	for tp := range c.Bounds {
		if tp.Topic == name {
			delete(c.Bounds, tp)
		}
	}
	for tp := range c.Records {
		if tp.Topic == name {
			delete(c.Records, tp)
		}
	}
}

// Produce appends a record per offset of [from, until) to tp, the copies
// of src's records when src is not nil (src[0] at from), else records
// with key "k<offset>" and value "v<offset>" and a timestamp of
// 1,700,000,000 s plus the offset; it moves the partition's high watermark
// and last stable offset to until, and gives the topic at least
// tp.Partition+1 partitions. Produce from the partition's current end:
// records must stay in offset order. To leave an offset without a record
// (a transaction's commit marker, say), set Bounds after producing.
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

// SeedCommits sets the group's committed offsets of the partitions given,
// as a committer would, without CommitOffsets' checks and without an
// entry in CommitLog: the world as the test starts it.
func (c *Cluster) SeedCommits(group string, o offsets.GroupOffsets) {
	c.Lock()
	defer c.Unlock()
	if c.Commits[group] == nil {
		c.Commits[group] = offsets.GroupOffsets{}
	}
	maps.Copy(c.Commits[group], o)
}

// SetMembers gives the group n members (0: none), as consumers joining or
// leaving it do. A group with members is Stable and refuses commits from
// outside; see the package doc.
func (c *Cluster) SetMembers(group string, n int) {
	c.Lock()
	defer c.Unlock()
	if n <= 0 {
		delete(c.Members, group)
		return
	}
	c.Members[group] = n
}

// topics returns each existing topic's partition count: Partitions, grown
// by the partitions Bounds holds. The caller holds the lock.
func (c *Cluster) topics() kafkaadmin.Topics {
	out := maps.Clone(c.Partitions)
	if out == nil {
		out = kafkaadmin.Topics{}
	}
	for tp := range c.Bounds {
		if out[tp.Topic] <= tp.Partition {
			out[tp.Topic] = tp.Partition + 1
		}
	}
	return out
}

// where is where a partition stands.
type where int

const (
	unknown where = iota // its topic does not exist, or it is beyond the count
	offline              // it exists without a leader
	online
)

// locate says where tp stands in counts (c.topics()). The caller holds
// the lock.
func (c *Cluster) locate(counts kafkaadmin.Topics, tp kafkaadmin.TopicPartition) where {
	if tp.Partition < 0 || tp.Partition >= counts[tp.Topic] {
		return unknown
	}
	if _, ok := c.Bounds[tp]; !ok {
		return offline
	}
	return online
}
