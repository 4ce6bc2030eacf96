package kafkafake_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/kafkaadmin/kafkafake"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/verify"
)

// Client is every method of *kafkaadmin.Client that a Cluster answers: the
// assertions below keep their signatures the same.
type Client interface {
	ClusterID(ctx context.Context) (string, error)
	Topics(ctx context.Context, names ...string) (kafkaadmin.Topics, error)
	TopicsMatching(ctx context.Context, pattern string) (kafkaadmin.Topics, error)
	CheckTargets(ctx context.Context, source kafkaadmin.Topics, policy offsets.ReplicationPolicy) ([]kafkaadmin.TargetCheck, error)
	LogBounds(ctx context.Context, partitions []kafkaadmin.TopicPartition) (map[kafkaadmin.TopicPartition]offsets.LogBounds, error)
	EndOffsets(ctx context.Context, partitions []kafkaadmin.TopicPartition) (map[kafkaadmin.TopicPartition]int64, error)
	FirstRecords(ctx context.Context, from map[kafkaadmin.TopicPartition]int64, iso kafkaadmin.Isolation) (map[kafkaadmin.TopicPartition]kafkaadmin.Record, error)
	ReadRecord(ctx context.Context, tp kafkaadmin.TopicPartition, offset int64, iso kafkaadmin.Isolation) (kafkaadmin.Record, error)
	ReadSpans(ctx context.Context, spans map[kafkaadmin.TopicPartition]kafkaadmin.Span, iso kafkaadmin.Isolation) (map[kafkaadmin.TopicPartition][]kafkaadmin.Record, error)
	DescribeGroup(ctx context.Context, group string) (kafkaadmin.Group, error)
	GroupOffsets(ctx context.Context, group string, topics []string) (offsets.GroupOffsets, error)
	CommitOffsets(ctx context.Context, group string, offsets map[kafkaadmin.TopicPartition]int64) error
	ReadGroup(ctx context.Context, group string, topics []string) (kafkaadmin.Reading, error)
	ReadCommitWindow(ctx context.Context, group string, topics []string, window time.Duration) (kafkaadmin.CommitWindow, error)
	ReadConnectOffsets(ctx context.Context, topic, connector string) ([]offsets.ConnectOffset, error)
}

var (
	_ Client = (*kafkaadmin.Client)(nil)
	_ Client = (*kafkafake.Cluster)(nil)

	// Every interface of package verify that *kafkaadmin.Client satisfies.
	_ verify.BoundsReader         = (*kafkafake.Cluster)(nil)
	_ verify.EndsReader           = (*kafkafake.Cluster)(nil)
	_ verify.FirstRecordReader    = (*kafkafake.Cluster)(nil)
	_ verify.RecordReader         = (*kafkafake.Cluster)(nil)
	_ verify.BoundarySource       = (*kafkafake.Cluster)(nil)
	_ verify.LagSource            = (*kafkafake.Cluster)(nil)
	_ verify.ClusterReader        = (*kafkafake.Cluster)(nil)
	_ verify.ConnectOffsetsReader = (*kafkafake.Cluster)(nil)
	_ verify.ClusterIDReader      = (*kafkafake.Cluster)(nil)
	_ verify.GroupDescriber       = (*kafkafake.Cluster)(nil)
	_ verify.GroupReader          = (*kafkafake.Cluster)(nil)
	_ verify.GroupCommitter       = (*kafkafake.Cluster)(nil)
)

func tp(topic string, p int32) kafkaadmin.TopicPartition {
	return kafkaadmin.TopicPartition{Topic: topic, Partition: p}
}

func mirror(topic string, p int32, m int64) offsets.ConnectOffset {
	return offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "source", Topic: topic, Partition: p}, Offset: offsets.NewMirrorOffset(m)}
}

// world is the cluster every case starts from:
//   - orders, 2 partitions: orders-0 holds records 2..9 (0 and 1 deleted,
//     log start 2), a commit marker at 10 (high watermark and last stable
//     offset 11); orders-1 is empty;
//   - payments, 3 partitions: payments-0 holds 0..2 and an open
//     transaction's 3..4 (last stable offset 3, high watermark 5),
//     payments-1 is empty, payments-2 is offline;
//   - group flink committed orders-0 5 and has no member; group busy has
//     two members and committed orders-1 0;
//   - the Connect offsets topic mm2-offsets holds mm2's offsets and
//     another connector's.
func world() *kafkafake.Cluster {
	c := kafkafake.New("cluster-1")
	c.Produce(tp("orders", 0), 0, 10, nil)
	c.SeedTopic("orders", 2)
	c.Lock()
	c.Records[tp("orders", 0)] = c.Records[tp("orders", 0)][2:]
	c.Bounds[tp("orders", 0)] = offsets.LogBounds{Start: 2, End: 11, StableEnd: 11}
	c.Unlock()
	c.Produce(tp("payments", 0), 0, 5, nil)
	c.SeedTopic("payments", 3)
	c.Lock()
	c.Bounds[tp("payments", 0)] = offsets.LogBounds{End: 5, StableEnd: 3}
	delete(c.Bounds, tp("payments", 2))
	c.Unlock()
	c.SeedCommits("flink", offsets.GroupOffsets{tp("orders", 0): 5})
	c.SeedCommits("busy", offsets.GroupOffsets{tp("orders", 1): 0})
	c.SetMembers("busy", 2)
	c.StoreConnectOffsets("mm2-offsets", "mm2", mirror("orders", 0, 4), mirror("orders", 1, 7))
	c.StoreConnectOffsets("mm2-offsets", "other", mirror("orders", 0, 99))
	c.StoreConnectOffsets("mm2-offsets", "mm2", offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: 1}})
	return c
}

func rec(off int64) kafkaadmin.Record {
	return kafkaadmin.Record{Offset: off, Key: fmt.Appendf(nil, "k%d", off), Value: fmt.Appendf(nil, "v%d", off), Timestamp: time.Unix(1_700_000_000+off, 0)}
}

// TestCalls pins each method's answer and error on one world: what a
// *kafkaadmin.Client returns there (the conformance test compares the two
// on a real cluster).
func TestCalls(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func(context.Context, *kafkafake.Cluster) (any, error)
		want any
		err  error  // errors.Is
		text string // the error's text, when it is pinned
	}{
		{"cluster id", func(ctx context.Context, c *kafkafake.Cluster) (any, error) { return c.ClusterID(ctx) }, "cluster-1", nil, ""},

		{"topics", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.Topics(ctx, "orders", "payments", "orders")
		},
			kafkaadmin.Topics{"orders": 2, "payments": 3}, nil, ""},
		{"topics with unknown ones, the others returned", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.Topics(ctx, "zz", "orders", "aa")
		}, kafkaadmin.Topics{"orders": 2}, kafkaadmin.ErrUnknownTopic, "kafkaadmin: unknown topics: aa, zz"},
		{"topics: none asked", func(ctx context.Context, c *kafkafake.Cluster) (any, error) { return c.Topics(ctx) },
			kafkaadmin.Topics(nil), kafkaadmin.ErrInvalidArgument, "kafkaadmin: Topics: invalid argument: no topics"},
		{"topics: an empty name", func(ctx context.Context, c *kafkafake.Cluster) (any, error) { return c.Topics(ctx, "orders", "") },
			kafkaadmin.Topics(nil), kafkaadmin.ErrInvalidArgument, "kafkaadmin: Topics: invalid argument: empty topic name"},
		{"topics matching", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.TopicsMatching(ctx, "ord.*|pay.*")
		},
			kafkaadmin.Topics{"orders": 2, "payments": 3}, nil, ""},
		{"topics matching nothing", func(ctx context.Context, c *kafkafake.Cluster) (any, error) { return c.TopicsMatching(ctx, "nothing") },
			kafkaadmin.Topics{}, nil, ""},
		{"topics matching a bad pattern", func(ctx context.Context, c *kafkafake.Cluster) (any, error) { return c.TopicsMatching(ctx, "(") },
			kafkaadmin.Topics(nil), kafkaadmin.ErrInvalidArgument, `kafkaadmin: TopicsMatching: invalid argument: bad pattern "("`},
		{"check targets", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.CheckTargets(ctx, kafkaadmin.Topics{"orders": 2, "payments": 2, "refunds": 1}, offsets.ReplicationPolicy{Kind: offsets.IdentityPolicy})
		}, []kafkaadmin.TargetCheck{
			{Source: "orders", SourcePartitions: 2, Target: "orders", Exists: true, TargetPartitions: 2},
			{Source: "payments", SourcePartitions: 2, Target: "payments", Exists: true, TargetPartitions: 3},
			{Source: "refunds", SourcePartitions: 1, Target: "refunds"},
		}, nil, ""},

		{"log bounds", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.LogBounds(ctx, []kafkaadmin.TopicPartition{tp("orders", 0), tp("orders", 1), tp("payments", 0)})
		}, map[kafkaadmin.TopicPartition]offsets.LogBounds{tp("orders", 0): {Start: 2, End: 11, StableEnd: 11}, tp("orders", 1): {}, tp("payments", 0): {End: 5, StableEnd: 3}}, nil, ""},
		{"log bounds of partitions that do not exist", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.LogBounds(ctx, []kafkaadmin.TopicPartition{tp("orders", 0), tp("orders", 2), tp("nope", 0)})
		}, map[kafkaadmin.TopicPartition]offsets.LogBounds{tp("orders", 0): {Start: 2, End: 11, StableEnd: 11}}, kafkaadmin.ErrUnknownTopic,
			"kafkaadmin: LogBounds: 2 of 3 partitions failed; nope-0: kafkaadmin: unknown topic: partition not in metadata; orders-2: kafkaadmin: unknown topic: partition not in metadata"},
		{"log bounds of an offline partition", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.LogBounds(ctx, []kafkaadmin.TopicPartition{tp("payments", 1), tp("payments", 2)})
		}, map[kafkaadmin.TopicPartition]offsets.LogBounds{tp("payments", 1): {}}, sarama.ErrLeaderNotAvailable, ""},
		{"log bounds of nothing", func(ctx context.Context, c *kafkafake.Cluster) (any, error) { return c.LogBounds(ctx, nil) },
			map[kafkaadmin.TopicPartition]offsets.LogBounds(nil), kafkaadmin.ErrInvalidArgument, "kafkaadmin: LogBounds: invalid argument: no partitions"},
		{"end offsets", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.EndOffsets(ctx, []kafkaadmin.TopicPartition{tp("orders", 0), tp("payments", 0), tp("payments", 5)})
		}, map[kafkaadmin.TopicPartition]int64{tp("orders", 0): 11, tp("payments", 0): 5}, kafkaadmin.ErrPartial, ""},

		{"first records", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.FirstRecords(ctx, map[kafkaadmin.TopicPartition]int64{tp("orders", 0): 3, tp("orders", 1): 0, tp("payments", 0): 3}, kafkaadmin.ReadCommitted)
		}, map[kafkaadmin.TopicPartition]kafkaadmin.Record{tp("orders", 0): rec(3)}, nil, ""},
		{"first records read uncommitted see the open transaction", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.FirstRecords(ctx, map[kafkaadmin.TopicPartition]int64{tp("payments", 0): 3}, kafkaadmin.ReadUncommitted)
		}, map[kafkaadmin.TopicPartition]kafkaadmin.Record{tp("payments", 0): rec(3)}, nil, ""},
		{"first record at a marker: none", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.FirstRecords(ctx, map[kafkaadmin.TopicPartition]int64{tp("orders", 0): 10}, kafkaadmin.ReadCommitted)
		}, map[kafkaadmin.TopicPartition]kafkaadmin.Record{}, nil, ""},
		{"first records out of range", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.FirstRecords(ctx, map[kafkaadmin.TopicPartition]int64{tp("orders", 0): 1, tp("orders", 1): 1, tp("payments", 0): 0}, kafkaadmin.ReadCommitted)
		}, map[kafkaadmin.TopicPartition]kafkaadmin.Record{tp("payments", 0): rec(0)}, sarama.ErrOffsetOutOfRange, ""},
		{"first records of a partition that does not exist", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.FirstRecords(ctx, map[kafkaadmin.TopicPartition]int64{tp("orders", 2): 0}, kafkaadmin.ReadCommitted)
		}, map[kafkaadmin.TopicPartition]kafkaadmin.Record{}, kafkaadmin.ErrUnknownTopic, ""},
		{"first records of an offline partition fail the call", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.FirstRecords(ctx, map[kafkaadmin.TopicPartition]int64{tp("orders", 0): 3, tp("payments", 2): 0}, kafkaadmin.ReadCommitted)
		}, map[kafkaadmin.TopicPartition]kafkaadmin.Record(nil), sarama.ErrLeaderNotAvailable, ""},
		{"first records at a negative offset", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.FirstRecords(ctx, map[kafkaadmin.TopicPartition]int64{tp("orders", 0): -1}, kafkaadmin.ReadCommitted)
		}, map[kafkaadmin.TopicPartition]kafkaadmin.Record(nil), kafkaadmin.ErrInvalidArgument, ""},
		{"read record", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.ReadRecord(ctx, tp("orders", 0), 9, kafkaadmin.ReadCommitted)
		}, rec(9), nil, ""},
		{"read record at the end", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.ReadRecord(ctx, tp("orders", 0), 11, kafkaadmin.ReadCommitted)
		}, kafkaadmin.Record{}, kafkaadmin.ErrNoRecord, "orders-0 at 11: kafkaadmin: no record at or after the offset"},
		{"read record below the log start", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.ReadRecord(ctx, tp("orders", 0), 0, kafkaadmin.ReadCommitted)
		}, kafkaadmin.Record{}, sarama.ErrOffsetOutOfRange, ""},
		{"read spans", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.ReadSpans(ctx, map[kafkaadmin.TopicPartition]kafkaadmin.Span{tp("orders", 0): {From: 8, Until: 100}, tp("orders", 1): {From: 0, Until: 0}, tp("payments", 0): {From: 1, Until: 3}}, kafkaadmin.ReadCommitted)
		}, map[kafkaadmin.TopicPartition][]kafkaadmin.Record{tp("orders", 0): {rec(8), rec(9)}, tp("payments", 0): {rec(1), rec(2)}}, nil, ""},
		{"read spans beyond the end", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.ReadSpans(ctx, map[kafkaadmin.TopicPartition]kafkaadmin.Span{tp("orders", 0): {From: 12, Until: 13}, tp("orders", 1): {From: 0, Until: 5}}, kafkaadmin.ReadCommitted)
		}, map[kafkaadmin.TopicPartition][]kafkaadmin.Record{}, sarama.ErrOffsetOutOfRange,
			"kafkaadmin: ReadSpans: 1 of 2 partitions failed; orders-0: kafka server: The requested offset is outside the range of offsets maintained by the server for the given topic/partition"},
		{"read spans with a negative offset", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.ReadSpans(ctx, map[kafkaadmin.TopicPartition]kafkaadmin.Span{tp("orders", 0): {From: -1, Until: 3}}, kafkaadmin.ReadCommitted)
		}, map[kafkaadmin.TopicPartition][]kafkaadmin.Record(nil), kafkaadmin.ErrInvalidArgument, ""},

		{"a group that commits without members (Flink's)", func(ctx context.Context, c *kafkafake.Cluster) (any, error) { return c.DescribeGroup(ctx, "flink") },
			kafkaadmin.Group{ID: "flink", State: kafkaadmin.GroupEmpty, Type: kafkaadmin.GroupTypeClassic}, nil, ""},
		{"a group with members", func(ctx context.Context, c *kafkafake.Cluster) (any, error) { return c.DescribeGroup(ctx, "busy") },
			kafkaadmin.Group{ID: "busy", State: kafkaadmin.GroupStable, Type: kafkaadmin.GroupTypeClassic, ProtocolType: "consumer", Protocol: "range",
				Members: []kafkaadmin.Member{{ID: "kafkafake-busy-1", ClientID: "kafkafake", ClientHost: "/127.0.0.1"}, {ID: "kafkafake-busy-2", ClientID: "kafkafake", ClientHost: "/127.0.0.1"}}}, nil, ""},
		{"a group that does not exist is Dead", func(ctx context.Context, c *kafkafake.Cluster) (any, error) { return c.DescribeGroup(ctx, "nobody") },
			kafkaadmin.Group{ID: "nobody", State: kafkaadmin.GroupDead}, nil, ""},
		{"describe no group", func(ctx context.Context, c *kafkafake.Cluster) (any, error) { return c.DescribeGroup(ctx, "") },
			kafkaadmin.Group{}, kafkaadmin.ErrInvalidArgument, "kafkaadmin: DescribeGroup: invalid argument: empty group"},
		{"group offsets", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.GroupOffsets(ctx, "flink", []string{"orders", "payments"})
		},
			offsets.GroupOffsets{tp("orders", 0): 5}, nil, ""},
		{"group offsets of a group without commits", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.GroupOffsets(ctx, "nobody", []string{"orders"})
		}, offsets.GroupOffsets{}, nil, ""},
		{"group offsets of a topic that does not exist", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.GroupOffsets(ctx, "flink", []string{"orders", "nope"})
		}, offsets.GroupOffsets(nil), kafkaadmin.ErrUnknownTopic, "kafkaadmin: unknown topics: nope"},
		{"commit", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			err := c.CommitOffsets(ctx, "flink", map[kafkaadmin.TopicPartition]int64{tp("orders", 1): 0})
			if err != nil {
				return nil, err
			}
			return c.GroupOffsets(ctx, "flink", []string{"orders"})
		}, offsets.GroupOffsets{tp("orders", 0): 5, tp("orders", 1): 0}, nil, ""},
		{"commit to a new group", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			err := c.CommitOffsets(ctx, "new", map[kafkaadmin.TopicPartition]int64{tp("orders", 1): 0})
			if err != nil {
				return nil, err
			}
			return c.DescribeGroup(ctx, "new")
		}, kafkaadmin.Group{ID: "new", State: kafkaadmin.GroupEmpty, Type: kafkaadmin.GroupTypeClassic}, nil, ""},
		{"commit to a group with members", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return nil, c.CommitOffsets(ctx, "busy", map[kafkaadmin.TopicPartition]int64{tp("orders", 1): 3})
		}, nil, kafkaadmin.ErrGroupActive, `kafkaadmin: group "busy" is active (state Stable, 2 members): stop its consumers before writing its offsets`},
		{"commit beyond the partitions", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return nil, c.CommitOffsets(ctx, "flink", map[kafkaadmin.TopicPartition]int64{tp("orders", 0): 3, tp("orders", 2): 3})
		}, nil, kafkaadmin.ErrUnknownTopic, "kafkaadmin: unknown topics: orders-2"},
		{"commit to a topic that does not exist", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return nil, c.CommitOffsets(ctx, "flink", map[kafkaadmin.TopicPartition]int64{tp("nope", 0): 3})
		}, nil, kafkaadmin.ErrUnknownTopic, "kafkaadmin: unknown topics: nope"},
		{"commit a negative offset", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return nil, c.CommitOffsets(ctx, "flink", map[kafkaadmin.TopicPartition]int64{tp("orders", 0): -1})
		}, nil, kafkaadmin.ErrInvalidArgument, "kafkaadmin: CommitOffsets: invalid argument: bad entry orders-0=-1"},
		{"commit nothing", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return nil, c.CommitOffsets(ctx, "flink", nil)
		}, nil, kafkaadmin.ErrInvalidArgument, "kafkaadmin: CommitOffsets: invalid argument: no offsets"},

		{"read group", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.ReadGroup(ctx, "flink", []string{"orders"})
		},
			kafkaadmin.Reading{Topics: kafkaadmin.Topics{"orders": 2}, Committed: offsets.GroupOffsets{tp("orders", 0): 5},
				Bounds: map[kafkaadmin.TopicPartition]offsets.LogBounds{tp("orders", 0): {Start: 2, End: 11}, tp("orders", 1): {}}}, nil, ""},
		{"read group with an offline partition", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.ReadGroup(ctx, "flink", []string{"payments"})
		}, kafkaadmin.Reading{Topics: kafkaadmin.Topics{"payments": 3}, Committed: offsets.GroupOffsets{},
			Bounds: map[kafkaadmin.TopicPartition]offsets.LogBounds{tp("payments", 0): {End: 5}, tp("payments", 1): {}},
			Errors: map[kafkaadmin.TopicPartition]error{tp("payments", 2): sarama.ErrLeaderNotAvailable}}, sarama.ErrLeaderNotAvailable, ""},
		{"read group of a topic that does not exist", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.ReadGroup(ctx, "flink", []string{"nope"})
		}, kafkaadmin.Reading{}, kafkaadmin.ErrUnknownTopic, ""},
		{"commit window", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			w, err := c.ReadCommitWindow(ctx, "flink", []string{"orders"}, time.Millisecond)
			return w.Moved, err
		}, []kafkaadmin.OffsetChange(nil), nil, ""},
		{"commit window that is not positive", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.ReadCommitWindow(ctx, "flink", []string{"orders"}, 0)
		}, kafkaadmin.CommitWindow{}, kafkaadmin.ErrInvalidArgument, "kafkaadmin: ReadCommitWindow: invalid argument: window must be positive"},

		{"connect offsets", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.ReadConnectOffsets(ctx, "mm2-offsets", "mm2")
		},
			[]offsets.ConnectOffset{mirror("orders", 0, 4)}, nil, ""},
		{"connect offsets of a connector without any", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.ReadConnectOffsets(ctx, "mm2-offsets", "nobody")
		}, []offsets.ConnectOffset{}, nil, ""},
		{"connect offsets in a topic that does not exist", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			return c.ReadConnectOffsets(ctx, "nope", "mm2")
		}, []offsets.ConnectOffset(nil), kafkaadmin.ErrUnknownTopic, "kafkaadmin: unknown topics: nope"},
		{"a malformed connect offset", func(ctx context.Context, c *kafkafake.Cluster) (any, error) {
			c.Produce(tp("mm2-offsets", 0), 4, 5, []kafkaadmin.Record{{Key: []byte(`["mm2",{"cluster":"source","topic":"orders","partition":"x"}]`), Value: []byte(`{"offset":1}`)}})
			return c.ReadConnectOffsets(ctx, "mm2-offsets", "mm2")
		}, []offsets.ConnectOffset(nil), kafkaadmin.ErrMalformedOffsetRecord, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			got, err := tc.call(ctx, world())
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if tc.text != "" && err.Error() != tc.text {
				t.Errorf("error text\n%s\nwant\n%s", err, tc.text)
			}
			if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(kafkaadmin.Reading{}, "At"), cmpopts.EquateErrors()); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestContextDone: a done context fails every call with its error, as
// the client wraps it.
func TestContextDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := world()
	for _, tc := range []struct {
		call func() error
		text string
	}{
		{func() error { _, err := c.ClusterID(ctx); return err }, "kafkaadmin: cluster id: context canceled"},
		{func() error { _, err := c.Topics(ctx, "orders"); return err }, "kafkaadmin: topics: context canceled"},
		{func() error { _, err := c.LogBounds(ctx, []kafkaadmin.TopicPartition{tp("orders", 0)}); return err }, "kafkaadmin: log bounds: context canceled"},
		{func() error {
			_, err := c.FirstRecords(ctx, map[kafkaadmin.TopicPartition]int64{tp("orders", 0): 2}, kafkaadmin.ReadCommitted)
			return err
		}, "kafkaadmin: read records: context canceled"},
		{func() error { _, err := c.DescribeGroup(ctx, "flink"); return err }, "kafkaadmin: describe group: context canceled"},
		{func() error {
			return c.CommitOffsets(ctx, "flink", map[kafkaadmin.TopicPartition]int64{tp("orders", 0): 1})
		}, "kafkaadmin: commit offsets: context canceled"},
		{func() error { _, err := c.ReadGroup(ctx, "flink", []string{"orders"}); return err }, "kafkaadmin: read group: context canceled"},
		{func() error { _, err := c.ReadConnectOffsets(ctx, "mm2-offsets", "mm2"); return err }, "kafkaadmin: topics: context canceled"},
	} {
		err := tc.call()
		if !errors.Is(err, context.Canceled) || err.Error() != tc.text {
			t.Errorf("%v, want %q matching context.Canceled", err, tc.text)
		}
	}
	if len(c.CommitLog()) != 0 {
		t.Errorf("a commit with a done context wrote: %v", c.CommitLog())
	}
}

// TestCommitWindowSeesAMove: a commit made during the window is reported
// as moved; a partition added during it is a TopicsChangedError.
func TestCommitWindowSeesAMove(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range []struct {
		name   string
		change func(c *kafkafake.Cluster)
		moved  []kafkaadmin.OffsetChange
		err    error
	}{
		{"nothing moves", func(*kafkafake.Cluster) {}, nil, nil},
		{"the old job commits", func(c *kafkafake.Cluster) { c.SeedCommits("flink", offsets.GroupOffsets{tp("orders", 0): 7}) },
			[]kafkaadmin.OffsetChange{{TopicPartition: tp("orders", 0), Before: offsets.NewGroupOffset(5), After: offsets.NewGroupOffset(7)}}, nil},
		{"a partition is added", func(c *kafkafake.Cluster) { c.SeedTopic("orders", 3) }, nil, kafkaadmin.ErrTopicsChanged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := world()
			c.DuringWindow(func() { tc.change(c) })
			w, err := c.ReadCommitWindow(ctx, "flink", []string{"orders"}, time.Millisecond)
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if d := cmp.Diff(tc.moved, w.Moved); d != "" {
				t.Errorf("moved (-want +got):\n%s", d)
			}
		})
	}
}

// TestFailNextAndIntercept: a fault fails the next calls of its method
// with nothing written; an Interceptor sees every call, may delay it, or
// let it write and lose the answer.
func TestFailNextAndIntercept(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := world()
	commit := map[kafkaadmin.TopicPartition]int64{tp("orders", 0): 8}
	c.FailNext(kafkafake.OpCommitOffsets, 2, sarama.ErrNotCoordinatorForConsumer)
	for range 2 {
		if err := c.CommitOffsets(ctx, "flink", commit); !errors.Is(err, sarama.ErrNotCoordinatorForConsumer) {
			t.Fatalf("CommitOffsets with a fault = %v", err)
		}
	}
	if got := c.CommitLog(); len(got) != 0 {
		t.Fatalf("faulted commits wrote: %v", got)
	}
	if b, err := c.LogBounds(ctx, []kafkaadmin.TopicPartition{tp("orders", 1)}); err != nil || len(b) != 1 {
		t.Fatalf("another method after the fault: %v, %v", b, err)
	}

	// Commit, then lose the answer.
	lost := errors.New("connection reset after the write")
	c.Intercept(func(ctx context.Context, call kafkafake.Call, next func() error) error {
		if call.Writes() {
			if err := next(); err != nil {
				return err
			}
			return lost
		}
		return next()
	})
	if err := c.CommitOffsets(ctx, "flink", commit); !errors.Is(err, lost) {
		t.Fatalf("CommitOffsets = %v, want the lost answer", err)
	}
	if d := cmp.Diff([]kafkafake.Commit{{Group: "flink", Offsets: commit}}, c.CommitLog()); d != "" {
		t.Errorf("commit log (-want +got):\n%s", d)
	}
	// An answer replaced: zero results, as the client gives with an error.
	c.Intercept(func(ctx context.Context, call kafkafake.Call, next func() error) error {
		_ = next()
		return lost
	})
	if got, err := c.GroupOffsets(ctx, "flink", []string{"orders"}); got != nil || !errors.Is(err, lost) {
		t.Errorf("GroupOffsets with a replaced answer = %v, %v; want nil, the error", got, err)
	}
	// A delay that waits on the context.
	c.Intercept(func(ctx context.Context, call kafkafake.Call, next func() error) error {
		<-ctx.Done()
		return ctx.Err()
	})
	short, stop := context.WithTimeout(ctx, 10*time.Millisecond)
	defer stop()
	if _, err := c.ClusterID(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ClusterID held past its deadline = %v", err)
	}
	c.Intercept(nil)

	var ops []kafkafake.Op
	var errs []bool
	for _, call := range c.Calls() {
		ops = append(ops, call.Op)
		errs = append(errs, call.Err != nil)
	}
	wantOps := []kafkafake.Op{kafkafake.OpCommitOffsets, kafkafake.OpCommitOffsets, kafkafake.OpLogBounds, kafkafake.OpCommitOffsets, kafkafake.OpGroupOffsets, kafkafake.OpClusterID}
	if d := cmp.Diff(wantOps, ops); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]bool{true, true, false, true, true, true}, errs); d != "" {
		t.Errorf("calls that failed (-want +got):\n%s", d)
	}
	if got := c.Calls()[0]; got.Group != "flink" || !slices.Equal(got.Partitions, []kafkaadmin.TopicPartition{tp("orders", 0)}) || got.Offsets[tp("orders", 0)] != 8 {
		t.Errorf("the first call = %+v; want the commit's arguments", got)
	}
}

// TestOfflineAndDeleted: a partition whose bounds are removed is offline,
// a deleted topic unknown; the groups' commits on it stay but cannot be
// read.
func TestOfflineAndDeleted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := world()
	c.Lock()
	delete(c.Bounds, tp("orders", 1))
	c.Unlock()
	if _, err := c.LogBounds(ctx, []kafkaadmin.TopicPartition{tp("orders", 1)}); !errors.Is(err, sarama.ErrLeaderNotAvailable) {
		t.Errorf("LogBounds of an offline partition = %v", err)
	}
	if err := c.CommitOffsets(ctx, "flink", map[kafkaadmin.TopicPartition]int64{tp("orders", 1): 0}); err != nil {
		t.Errorf("a commit does not need the partition's leader: %v", err)
	}
	c.DeleteTopic("orders")
	if _, err := c.GroupOffsets(ctx, "flink", []string{"orders"}); !errors.Is(err, kafkaadmin.ErrUnknownTopic) {
		t.Errorf("GroupOffsets of a deleted topic = %v", err)
	}
	if g, err := c.DescribeGroup(ctx, "flink"); err != nil || g.State != kafkaadmin.GroupEmpty {
		t.Errorf("the group after its topic's deletion = %+v, %v; want Empty", g, err)
	}
}

// TestConcurrentUse: the Cluster is safe for concurrent use, as Observe
// reads both clusters at once (run with -race).
func TestConcurrentUse(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := world()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for j := range 50 {
				_, _ = c.ReadGroup(ctx, "flink", []string{"orders"})
				_ = c.CommitOffsets(ctx, "flink", map[kafkaadmin.TopicPartition]int64{tp("orders", 0): int64(i*100 + j)})
				c.Produce(tp("race", int32(i)), int64(j), int64(j+1), nil)
			}
		})
	}
	wg.Wait()
	if n := len(c.CommitLog()); n != 200 {
		t.Errorf("%d commits logged, want 200", n)
	}
}
