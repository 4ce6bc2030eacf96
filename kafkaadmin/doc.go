// Package kafkaadmin reads what a cutover needs from a Kafka cluster, built
// on github.com/IBM/sarama: the cluster ID, topics and their partition
// counts, a consumer group's committed offsets and state, each partition's
// log bounds, records, configurations and permissions. Its [Client] writes
// one thing, a group's committed offsets ([Client.CommitOffsets]), for
// rolling a cutover back.
//
// # Values
//
// A partition is a [TopicPartition] (offsets.SourcePartition). The values
// are package offsets' own, so that what this package reads is keyed and
// typed exactly as plans and decisions are. A committed offset C is the
// next offset the group would read (Kafka's convention, and what Flink
// commits: lastRecord+1). An offsets.GroupOffsets holds C for the
// partitions that have a commit; a partition without a commit is absent
// from the map, never -1. An offsets.LogBounds holds a partition's log
// start offset, its high watermark (the end a read_uncommitted consumer
// sees) and its last stable offset (StableEnd, the end a read_committed
// consumer sees; lower than the high watermark while a transaction is
// open); [Client.LogBounds] reads all three with three ListOffsets requests
// per leader, [Client.EndOffsets] only the high watermarks, with one.
// [Topics] maps topic names to partition counts. A [Reading] is a
// group's commits and its partitions' log start and end offsets (two
// ListOffsets per leader; no last stable offset), read together.
//
// The rules over these values are pure functions on snapshots already read:
// [DiffCommitted] compares two readings of a group, [CheckTargets] compares
// source topics with target topics under an offsets.ReplicationPolicy. The
// [Client] methods only fetch (CommitOffsets only writes).
//
// # Records
//
// [Client.FirstRecords] and [Client.ReadSpans] read records, batched per
// partition leader, at an [Isolation] level. [ReadCommitted] sees what
// MirrorMaker 2 reads: records outside transactions and those of committed
// transactions, up to the last stable offset; records of aborted
// transactions are dropped using the fetch response's list of aborted
// transactions, and transaction markers (which hold an offset but no
// record) are skipped. An offset that holds no record — a marker, an
// aborted record, a record removed by compaction — yields the next record.
//
// # Configurations and permissions
//
// [Client.TopicConfigs] and [Client.BrokerConfigs] read effective
// configuration values with DescribeConfigs (one request for all the
// topics; one per broker, sent to that broker), with where each value
// comes from ([ConfigSource]): only the names asked for, so no secret is
// read. [Client.Access] asks the brokers what the principal the Client
// connects as may do to the cluster, to topics and to groups (their
// authorized operations), and whether they run an authorizer at all.
//
// # Partial failure
//
// Calls over many partitions return what they could read: a partition
// whose bounds or commit could not be read is left out of the result, and
// the call then also returns a [*PartitionErrors] that names it with its
// error ([Reading] keeps the same in its Errors field); nil means every
// partition was read. Whole-call failures (bad input, unknown topics, an
// active group, a cancelled context) return a typed error and no partial
// result. Configuration reads, over topics and brokers rather than
// partitions, carry a per-item Err instead ([Configs]).
//
// # Requests and batching
//
// Log bounds are read with ListOffsets requests grouped per partition
// leader: three requests per broker (earliest, latest read_uncommitted,
// latest read_committed) whatever the number of partitions, two for a
// [Reading]. Committed
// offsets are read with one OffsetFetch request to the group coordinator.
// Each call of a [Client] opens its own connections and reads its own
// metadata; a step client ([Client.Step]) keeps one connection per broker
// and one reading of the metadata for all the calls of one step of a tool.
// [Client.Requests] counts the requests a Client has sent, and
// [Client.Cost] the requests by kind and the connections opened: a cost
// meter, which the scale benchmark reads and tests pin.
//
// # Retries
//
// Transient errors (a leader that moved, a coordinator loading, a broker
// restarting, a refused or reset connection) are retried with backoff
// until Config.RetryTimeout has passed, refreshing metadata or the group
// coordinator first. Every wait selects on the context. Sarama's own
// retries are turned off so that sarama never sleeps on our behalf.
//
// # Cancellation
//
// sarama's ClusterAdmin and Broker calls take no context. Each Client call
// therefore opens its own connections through a dialer bound to the call's
// context and closes them before it returns: when the context is done, the
// sockets are closed, blocked reads fail at once, and the call returns the
// context's error with no goroutine left running. The cost is a connection
// setup (ApiVersions, and SASL if configured) per broker per call, which
// [Client.Requests] includes.
//
// # Flink groups
//
// Flink's KafkaSource assigns partitions itself (assign(), not group
// membership) and commits offsets when a checkpoint completes. Its group is
// therefore a "simple" group: [Client.DescribeGroup] reports it Empty, with
// protocol type "" and no members, even while the Flink job is running. An
// empty group proves nothing. The signal that Flink has stopped is that the
// group's committed offsets stay unchanged over a window:
// [Client.ReadCommitWindow] reads twice, a window apart, and reports every
// partition whose commit moved.
//
// # Group protocols
//
// A group runs the classic protocol or, from Kafka 4.0, the consumer
// protocol of KIP-848 (clients with group.protocol=consumer; the broker
// assigns partitions). The classic DescribeGroups does not show a group of
// the consumer protocol: a 4.x coordinator answers it as Dead or
// GROUP_ID_NOT_FOUND. [Client.DescribeGroup] then asks ConsumerGroupDescribe,
// over a connection opened for it, when the coordinator advertises that
// request (ApiVersions); Kafka 3.7 to 3.9 do not by default, and there the
// classic answer stands. [Group.Type] says which protocol a group runs, and
// [Client.CommitOffsets] refuses a group with members of either.
//
// # Security
//
// [Config] covers PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL with PLAIN,
// SCRAM-SHA-256 and SCRAM-SHA-512 (SCRAM by github.com/xdg-go/scram),
// OAUTHBEARER ([OAuthConfig]: a client credentials token endpoint, or
// Kafka's unsecured tokens) and GSSAPI ([KerberosConfig]: a principal with
// a keytab or a password, sarama's Kerberos client), TLS with PEM files or
// Kafka's truststores and keystores as PEM, JKS or PKCS12
// (TLSConfig.Stores). [ConfigFromProperties] reads all of it from the client
// properties file Kafka's tools take. Any other client setting — Kerberos
// from a ticket cache, a cloud provider's IAM mechanism, TLS built in code —
// goes in Config.Sarama, a function that completes each call's sarama
// configuration.
//
// A connection that fails for a reason no retry fixes returns a
// [*SecurityError] at once, without retries: credentials the broker
// rejected ([ErrAuthentication]; with GSSAPI also a Kerberos login the
// KDC rejected: an unknown principal, a stale keytab), a certificate that
// does not verify ([ErrTLS]), or TLS spoken to a plain listener or plain
// Kafka to a TLS
// listener ([ErrSecurityProtocol]). Kafka's SSL listeners close a plain
// client's connection after a TLS alert, and its plain listeners close a
// TLS client's connection without a word; the first shows as a TLS record
// where a response was due, the second as an EOF during the TLS handshake.
// An EOF on a plain connection before any answer is checked with one TLS
// handshake to the same address.
//
// # Secrets and logging
//
// The package never prints. It logs retries to Config.Logger (discarded
// when nil) and never logs or formats a password: redact.Secret and [Config]
// redact it. It does not touch sarama's global Logger.
package kafkaadmin
