package kafkaadmin

import (
	"maps"
	"slices"

	"github.com/mm2cutover/mm2cutover/offsets"
)

// TopicPartition names one partition of a Kafka topic, on either cluster.
// It is offsets.SourcePartition under this package's name, so that what
// the Client returns is keyed exactly as plans and decisions are: comparable,
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

// GroupState is a consumer group's state as the group coordinator reports
// it, for example "Empty", "Stable", "PreparingRebalance",
// "CompletingRebalance" or "Dead" for a classic group, "Empty",
// "Assigning", "Reconciling", "Stable" or "Dead" for a group of the
// consumer protocol (KIP-848).
type GroupState string

// Group states the coordinator reports.
const (
	GroupEmpty               GroupState = "Empty"
	GroupStable              GroupState = "Stable"
	GroupPreparingRebalance  GroupState = "PreparingRebalance"
	GroupCompletingRebalance GroupState = "CompletingRebalance"
	GroupAssigning           GroupState = "Assigning"   // consumer protocol: a new target assignment is computed
	GroupReconciling         GroupState = "Reconciling" // consumer protocol: members move to the target assignment
	GroupDead                GroupState = "Dead"
)

// GroupType is the group protocol a group's coordinator runs it with.
type GroupType string

// Group types.
const (
	// GroupTypeClassic: the classic protocol (JoinGroup/SyncGroup), which
	// every Kafka version runs, and the only one before Kafka 4.0 by
	// default. A group that only receives commits (Flink's) is classic.
	GroupTypeClassic GroupType = "classic"
	// GroupTypeConsumer: the consumer protocol of KIP-848 (a client with
	// group.protocol=consumer, generally available from Kafka 4.0), where
	// the broker assigns partitions. The classic DescribeGroups does not
	// show such a group; [Client.DescribeGroup] asks ConsumerGroupDescribe.
	GroupTypeConsumer GroupType = "consumer"
)

// Group describes a consumer group.
type Group struct {
	// ID is the group ID.
	ID string
	// State is the coordinator's view of the group. A group that does not
	// exist is reported Dead, as Kafka does.
	State GroupState
	// Type is the group's protocol; "" for a group that does not exist.
	Type GroupType
	// ProtocolType is "consumer" for a subscribing consumer group,
	// "connect" for Kafka Connect workers, and "" for a simple group that
	// only commits offsets, as Flink's KafkaSource does. A group of the
	// consumer protocol is "consumer".
	ProtocolType string
	// Protocol is the assignor chosen for the current generation (the
	// classic protocol), or the broker's assignor (the consumer protocol),
	// if any.
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
	// Metadata is the member's metadata for the group's protocol, as the
	// coordinator holds it (classic groups only): for a Kafka Connect
	// worker, its advertised REST URL among others (ConnectWorkerURL).
	Metadata []byte `json:"-"`
}

// Active reports whether the group has members. A group with members owns
// its offsets: a simple commit from outside is refused by the broker.
// Note that a Flink job's group is never active, even while it runs.
func (g Group) Active() bool {
	return len(g.Members) > 0
}
