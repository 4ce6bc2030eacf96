// Package kafkafake is a Kafka cluster in memory for the tests of tools
// built on this module: a [Cluster] answers the read and commit methods of
// [*kafkaadmin.Client] — cluster ID, topics, log bounds, records as a
// read_committed or read_uncommitted consumer sees them, a consumer group's
// description and commits, commit windows, a Kafka Connect offsets topic —
// with the same results and the same errors, from maps a test fills and
// changes between steps. It satisfies every interface of package verify
// that *kafkaadmin.Client satisfies, so a test passes it where the tool
// passes a client.
//
//	source := kafkafake.New("source-cluster-id")
//	source.Produce(kafkaadmin.TopicPartition{Topic: "orders"}, 0, 20, nil) // orders-0: offsets 0..19
//	source.SeedCommits("flink", offsets.GroupOffsets{{Topic: "orders"}: 10})
//	// pass source where the tool takes a *kafkaadmin.Client's methods
//
// # Seeding
//
// A Cluster holds, per partition, its log bounds (Bounds: log start, high
// watermark, last stable offset) and its data records in offset order
// (Records); per topic, its partition count (Partitions); per consumer
// group, its commits (Commits) and how many members it has (Members).
// [Cluster.SeedTopic] creates empty partitions, [Cluster.Produce] appends
// records and moves a partition's ends, [Cluster.SeedCommits] and
// [Cluster.SetMembers] shape a group, and [Cluster.StoreConnectOffsets]
// writes a MirrorSourceConnector's offsets into a Connect offsets topic as
// a worker does. A test may also fill or change the exported maps
// directly, before the first call or while it holds the Cluster's lock
// (Lock, Unlock); the methods hold it while they read.
//
// The rules the maps follow are the cluster's:
//
//   - A topic exists when Partitions names it or Bounds holds one of its
//     partitions; its partitions are numbered from 0 to its count - 1, the
//     count being the larger of Partitions[topic] and one more than the
//     highest partition of the topic in Bounds.
//   - A partition of an existing topic is online when Bounds holds it. One
//     without an entry has no leader: reads of it fail as the real
//     client's do after their retries (sarama.ErrLeaderNotAvailable), so
//     deleting a partition's Bounds entry makes it unreadable.
//   - An offset below a partition's last stable offset (or, read
//     uncommitted, below its high watermark) that holds no record in
//     Records is a transaction marker, an aborted record or a record
//     removed by compaction: readers skip it, as consumers do. Records of
//     aborted transactions are not modelled: both isolation levels see
//     every record of Records, up to their end.
//   - A group with members is Stable (the classic protocol, protocol type
//     "consumer", assignor "range"); a group with commits and no member is
//     Empty with protocol type "", as a Flink job's group is; a group with
//     neither is Dead, as Kafka reports a group that does not exist.
//
// # Errors
//
// Every method returns the error a *kafkaadmin.Client returns in the same
// situation, with the same sentinels and typed errors, and, except where
// noted, the same text: an [*kafkaadmin.ArgumentError] for arguments the
// client refuses before sending anything; an [*kafkaadmin.UnknownTopicsError]
// for a topic that does not exist (Topics also returns the topics that do);
// a [*kafkaadmin.PartitionErrors] with the partitions read when some
// partitions fail (kafkaadmin.ErrUnknownTopic for a partition beyond its
// topic's count, sarama.ErrOffsetOutOfRange for a read below the log start
// or beyond the high watermark, sarama.ErrLeaderNotAvailable for an offline
// partition); a [*kafkaadmin.GroupActiveError] for a commit to a group with
// members, with nothing written; [kafkaadmin.ErrNoRecord] from ReadRecord;
// and the context's error, wrapped as the client wraps it, when the
// context is done. A group with no commits is no error: its commits are
// empty. The package's conformance test runs one script of calls against a
// real cluster through *kafkaadmin.Client and against a Cluster seeded
// alike, and compares each result and error, text included.
//
// # Faults and interception
//
// [Cluster.FailNext] makes the next calls of a method fail with an error
// the test chooses, with nothing read or written: a broker error the real
// cluster gives only now and then, such as a coordinator that moved.
// [Cluster.Intercept] installs a function that sees every call first,
// with its arguments, and decides: it may run the call (next), delay it,
// change the cluster before or after it, or answer an error instead —
// for example, commit and then lose the answer, as a connection that
// drops after the coordinator wrote does.
//
// # Inspection
//
// [Cluster.Calls] lists the calls received, in order, with the error each
// returned: a test asserts that no write was sent ([Call.Writes]).
// [Cluster.CommitLog] lists the commits that were written; Commits, read
// under the lock, or GroupOffsets hold what the group has now.
//
// # Where the fake is simpler
//
// Calls fail at once where the real client retries transient errors for
// kafkaadmin.Config.RetryTimeout; the text of such an error differs (it
// does not say how many attempts were made). The methods that read a
// cluster's configuration, layout and permissions for a precheck (Access,
// Brokers, TopicLayouts, TopicConfigs, BrokerConfigs, WithBootstrap) are
// not implemented: a fake answer to them would prove nothing about the
// cluster a cutover will write to. A group has no consumer-protocol
// (KIP-848) form, its members no client IDs or hosts of their own, and a
// group whose members left is Empty with protocol type "", where Kafka
// may still report the members' "consumer" (the conformance test does not
// compare that case).
package kafkafake
