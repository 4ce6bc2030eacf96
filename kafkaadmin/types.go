package kafkaadmin

import (
	"maps"
	"slices"

	"github.com/mm2cutover/mm2cutover/offsets"
)

// TopicPartition names one partition of a Kafka topic, on either cluster.
// It is offsets.SourcePartition under this package's name, so that what
// the Reader returns is keyed exactly as plans and decisions are: comparable,
// a map key, printed "topic-partition", ordered by Compare.
type TopicPartition = offsets.SourcePartition

// SortPartitions sorts partitions by topic, then partition number, in place.
func SortPartitions(tps []TopicPartition) {
	slices.SortFunc(tps, TopicPartition.Compare)
}

// Topics maps topic names to their partition counts, as the cluster
// reported them. Partitions of a topic are numbered 0 to count-1.
type Topics map[string]int32

// Names returns the topic names in sorted order.
func (t Topics) Names() []string {
	return slices.Sorted(maps.Keys(t))
}

// Partitions returns every partition of every topic, sorted: the full
// partition set a cutover must cover.
func (t Topics) Partitions() []TopicPartition {
	n := 0
	for _, c := range t {
		n += int(c)
	}
	out := make([]TopicPartition, 0, n)
	for _, name := range t.Names() {
		for p := range t[name] {
			out = append(out, TopicPartition{Topic: name, Partition: p})
		}
	}
	return out
}

// Commit is a group's committed offset for one partition.
type Commit struct {
	// Offset is the committed offset C: the next offset the group reads.
	Offset int64
	// Metadata is the free-form string stored with the commit.
	Metadata string
}

// GroupOffsets is a consumer group's committed offsets over a full
// partition set.
type GroupOffsets struct {
	// Group is the consumer group ID.
	Group string
	// Partitions is the full partition set that was asked for, sorted.
	Partitions []TopicPartition
	// Committed holds the commit of every partition that has one. A
	// partition without a commit is absent; a partition whose commit could
	// not be read is absent here and present in Errors.
	Committed map[TopicPartition]Commit
	// Errors holds, per partition, why its commit could not be read. It is
	// nil when every partition was read.
	Errors map[TopicPartition]error
}

// Lookup returns the committed offset of a partition and whether it has one.
func (g GroupOffsets) Lookup(topic string, partition int32) (int64, bool) {
	c, ok := g.Committed[TopicPartition{Topic: topic, Partition: partition}]
	return c.Offset, ok
}

// Offsets returns the committed offsets as a plain map, without metadata.
func (g GroupOffsets) Offsets() map[TopicPartition]int64 {
	out := make(map[TopicPartition]int64, len(g.Committed))
	for tp, c := range g.Committed {
		out[tp] = c.Offset
	}
	return out
}

// Missing returns, sorted, the partitions of the set that have no commit
// and no read error: the partitions a cutover must block on.
func (g GroupOffsets) Missing() []TopicPartition {
	var out []TopicPartition
	for _, tp := range g.Partitions {
		if _, ok := g.Committed[tp]; ok {
			continue
		}
		if _, failed := g.Errors[tp]; failed {
			continue
		}
		out = append(out, tp)
	}
	return out
}

// LogBounds are the offsets that bound one partition's log.
type LogBounds struct {
	// Start is the log start offset: the earliest offset still stored.
	// It is above 0 once retention or DeleteRecords removed records.
	Start int64
	// End is the high watermark: the offset after the last record
	// replicated to all in-sync replicas, the end a read_uncommitted
	// consumer sees.
	End int64
	// StableEnd is the last stable offset: the end a read_committed
	// consumer sees. It equals End unless a transaction is open on the
	// partition, in which case it is the first offset of that transaction.
	StableEnd int64
	// Err is why the bounds could not be read; the offsets are then zero.
	Err error
}

// GroupState is a consumer group's state as the group coordinator reports
// it, for example "Empty", "Stable", "PreparingRebalance",
// "CompletingRebalance" or "Dead".
type GroupState string

// Group states the coordinator reports.
const (
	GroupEmpty               GroupState = "Empty"
	GroupStable              GroupState = "Stable"
	GroupPreparingRebalance  GroupState = "PreparingRebalance"
	GroupCompletingRebalance GroupState = "CompletingRebalance"
	GroupDead                GroupState = "Dead"
)

// Group describes a consumer group.
type Group struct {
	// ID is the group ID.
	ID string
	// State is the coordinator's view of the group. A group that does not
	// exist is reported Dead, as Kafka does.
	State GroupState
	// ProtocolType is "consumer" for a subscribing consumer group,
	// "connect" for Kafka Connect workers, and "" for a simple group that
	// only commits offsets, as Flink's KafkaSource does.
	ProtocolType string
	// Protocol is the assignor chosen for the current generation, if any.
	Protocol string
	// Members are the group's current members, sorted by member ID.
	Members []Member
}

// Member is one member of a consumer group.
type Member struct {
	// ID is the member ID the coordinator assigned.
	ID string
	// InstanceID is the static group.instance.id, or "" if none.
	InstanceID string
	// ClientID is the member's client.id.
	ClientID string
	// ClientHost is the address the member connected from.
	ClientHost string
}

// Active reports whether the group has members. A group with members owns
// its offsets: a simple commit from outside is refused by the broker.
// Note that a Flink job's group is never active, even while it runs.
func (g Group) Active() bool {
	return len(g.Members) > 0
}
