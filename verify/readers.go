package verify

import (
	"context"

	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// The I/O helpers of this package take the small interfaces below, not the
// clients, so that a tool's tests can drive them with fakes. Each is a
// subset of the methods of *kafkaadmin.Client or *connect.Client, which
// implement them; a fake must answer as they document (absent, never -1;
// a *kafkaadmin.PartitionErrors with the partitions read). Precheck and
// Acceptance read many kinds of facts and take the clients themselves.

// BoundsReader reads partitions' log bounds, as [kafkaadmin.Client.LogBounds].
type BoundsReader interface {
	LogBounds(ctx context.Context, partitions []kafkaadmin.TopicPartition) (map[kafkaadmin.TopicPartition]offsets.LogBounds, error)
}

// EndsReader reads partitions' end offsets (high watermarks), as
// [kafkaadmin.Client.EndOffsets]: one request per leader where LogBounds
// sends three.
type EndsReader interface {
	EndOffsets(ctx context.Context, partitions []kafkaadmin.TopicPartition) (map[kafkaadmin.TopicPartition]int64, error)
}

// FirstRecordReader reads, per partition, the first record at or after an
// offset, as [kafkaadmin.Client.FirstRecords].
type FirstRecordReader interface {
	FirstRecords(ctx context.Context, from map[kafkaadmin.TopicPartition]int64, iso kafkaadmin.Isolation) (map[kafkaadmin.TopicPartition]kafkaadmin.Record, error)
}

// RecordReader reads records of one cluster: the first at or after an
// offset, and the records of offset ranges ([kafkaadmin.Client.ReadSpans]).
// [CheckBoundary] reads the target through it.
type RecordReader interface {
	FirstRecordReader
	ReadSpans(ctx context.Context, spans map[kafkaadmin.TopicPartition]kafkaadmin.Span, iso kafkaadmin.Isolation) (map[kafkaadmin.TopicPartition][]kafkaadmin.Record, error)
}

// BoundarySource is what [CheckBoundary] reads from the source cluster:
// records, and the log ends that size its scan for duplicates.
type BoundarySource interface {
	RecordReader
	BoundsReader
}

// LagSource is what the lag reads from the source cluster: the log bounds,
// and the first committed record MM2 has yet to copy ([LagOf], [ReadLag],
// [WaitCaughtUp]).
type LagSource interface {
	BoundsReader
	FirstRecordReader
}

// MirrorOffsetsReader reads a MirrorSourceConnector's stored offsets, as
// connect.Client.MirrorOffsets.
type MirrorOffsetsReader interface {
	MirrorOffsets(ctx context.Context, connector string) ([]offsets.ConnectOffset, error)
}

// ClusterReader is what [Observe] reads from each cluster: its ID, topics,
// a group's description and its commits with the bounds (one ReadGroup),
// and, on the target, end offsets. Observe reads both clusters at once:
// an implementation must be safe for concurrent use, as
// *kafkaadmin.Client is.
type ClusterReader interface {
	EndsReader
	ClusterID(ctx context.Context) (string, error)
	Topics(ctx context.Context, names ...string) (kafkaadmin.Topics, error)
	DescribeGroup(ctx context.Context, group string) (kafkaadmin.Group, error)
	ReadGroup(ctx context.Context, group string, topics []string) (kafkaadmin.Reading, error)
}

// ConnectOffsetsReader reads a Connect offsets topic, as
// [kafkaadmin.Client.ReadConnectOffsets]; [ConnectorOffsets] reads through it.
type ConnectOffsetsReader interface {
	ReadConnectOffsets(ctx context.Context, topic, connector string) ([]offsets.ConnectOffset, error)
}

// TopicMatcher lists the topics whose names match a regular expression,
// as [kafkaadmin.Client.TopicsMatching]; [Acceptance] looks for
// MirrorMaker 2's offset-syncs topics through it.
type TopicMatcher interface {
	TopicsMatching(ctx context.Context, pattern string) (kafkaadmin.Topics, error)
}
