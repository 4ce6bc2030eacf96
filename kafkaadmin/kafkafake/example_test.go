package kafkafake_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/kafkaadmin/kafkafake"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// A consumer's test seeds the source cluster as the old Flink job left
// it, and runs its tool's reads against it: here the group's commits and
// the log bounds, read as *kafkaadmin.Client reads them.
func Example() {
	orders0 := kafkaadmin.TopicPartition{Topic: "orders", Partition: 0}
	source := kafkafake.New("source-id")
	source.SeedTopic("orders", 2)
	source.Produce(orders0, 0, 20, nil) // records 0..19
	source.SeedCommits("flink", offsets.GroupOffsets{orders0: 12})

	ctx := context.Background()
	r, err := source.ReadGroup(ctx, "flink", []string{"orders"})
	if err != nil {
		log.Fatal(err)
	}
	for _, tp := range r.Topics.Partitions() {
		fmt.Printf("%s: commit %s, end %d\n", tp, r.Committed.Lookup(tp), r.Bounds[tp].End)
	}
	g, _ := source.DescribeGroup(ctx, "flink")
	fmt.Println("group:", g.State)
	_, err = source.Topics(ctx, "orders", "refunds")
	fmt.Println(errors.Is(err, kafkaadmin.ErrUnknownTopic), err)
	// Output:
	// orders-0: commit 12, end 20
	// orders-1: commit none, end 0
	// group: Empty
	// true kafkaadmin: unknown topics: refunds
}

// The world changes between steps: the old job comes back into its group,
// and a rollback's commit is refused with nothing written, as Kafka
// refuses it.
func ExampleCluster_SetMembers() {
	orders0 := kafkaadmin.TopicPartition{Topic: "orders", Partition: 0}
	source := kafkafake.New("source-id")
	source.Produce(orders0, 0, 20, nil)
	source.SeedCommits("flink", offsets.GroupOffsets{orders0: 12})

	source.SetMembers("flink", 1) // the old job is back
	ctx := context.Background()
	err := source.CommitOffsets(ctx, "flink", map[kafkaadmin.TopicPartition]int64{orders0: 10})
	fmt.Println(errors.Is(err, kafkaadmin.ErrGroupActive), err)
	fmt.Println("commits written:", len(source.CommitLog()))
	// Output:
	// true kafkaadmin: group "flink" is active (state Stable, 1 members): stop its consumers before writing its offsets
	// commits written: 0
}

// An Interceptor lets the coordinator write a commit and then loses the
// answer, as a connection that drops after the write does: the test
// checks that the tool treats the outcome as unknown, and what was
// written.
func ExampleCluster_Intercept() {
	orders0 := kafkaadmin.TopicPartition{Topic: "orders", Partition: 0}
	source := kafkafake.New("source-id")
	source.Produce(orders0, 0, 20, nil)
	lost := errors.New("connection reset by peer")
	source.Intercept(func(ctx context.Context, call kafkafake.Call, next func() error) error {
		if !call.Writes() {
			return next()
		}
		if err := next(); err != nil {
			return err
		}
		return lost
	})

	ctx := context.Background()
	err := source.CommitOffsets(ctx, "flink", map[kafkaadmin.TopicPartition]int64{orders0: 10})
	fmt.Println("answer:", err)
	for _, c := range source.CommitLog() {
		fmt.Println("written:", c.Group, c.Offsets)
	}
	// Output:
	// answer: connection reset by peer
	// written: flink map[orders-0:10]
}

// FailNext gives the next calls of a method an error the real cluster
// gives now and then; the calls received show what the tool did, and
// that it wrote nothing.
func ExampleCluster_FailNext() {
	orders0 := kafkaadmin.TopicPartition{Topic: "orders", Partition: 0}
	source := kafkafake.New("source-id")
	source.Produce(orders0, 0, 20, nil)
	source.FailNext(kafkafake.OpLogBounds, 1, fmt.Errorf("kafkaadmin: log bounds: %w", sarama.ErrOutOfBrokers))

	ctx := context.Background()
	tps := []kafkaadmin.TopicPartition{orders0}
	if _, err := source.LogBounds(ctx, tps); err != nil {
		fmt.Println("first:", err)
	}
	b, err := source.LogBounds(ctx, tps) // the tool's retry
	fmt.Println("second:", b[orders0].End, err)

	for _, c := range source.Calls() {
		fmt.Println(c.Op, c.Partitions, c.Writes(), c.Err != nil)
	}
	// Output:
	// first: kafkaadmin: log bounds: kafka: client has run out of available brokers to talk to
	// second: 20 <nil>
	// LogBounds [orders-0] false true
	// LogBounds [orders-0] false false
}

// A worker's offsets topic holds what MirrorMaker 2 stored: offsets
// outlive the connector, and ReadConnectOffsets decodes them as the client
// does.
func ExampleCluster_StoreConnectOffsets() {
	target := kafkafake.New("target-id")
	p := offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: 0}
	target.StoreConnectOffsets("mm2-offsets.source.internal", "mm2",
		offsets.ConnectOffset{Partition: p, Offset: offsets.NewMirrorOffset(41)},
		offsets.ConnectOffset{Partition: p, Offset: offsets.NewMirrorOffset(47)})

	list, err := target.ReadConnectOffsets(context.Background(), "mm2-offsets.source.internal", "mm2")
	if err != nil {
		log.Fatal(err)
	}
	for _, o := range list {
		m, _ := o.Offset.Get()
		fmt.Printf("%s: last copied %d\n", o.Partition, m)
	}
	// Output:
	// source/orders-0: last copied 47
}

// DuringWindow is what happens while a commit window runs: here the old
// job commits once more, which the window reports.
func ExampleCluster_DuringWindow() {
	orders0 := kafkaadmin.TopicPartition{Topic: "orders", Partition: 0}
	source := kafkafake.New("source-id")
	source.Produce(orders0, 0, 20, nil)
	source.SeedCommits("flink", offsets.GroupOffsets{orders0: 12})
	source.DuringWindow(func() { source.SeedCommits("flink", offsets.GroupOffsets{orders0: 15}) })

	w, err := source.ReadCommitWindow(context.Background(), "flink", []string{"orders"}, time.Millisecond)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("stable:", w.Stable(), w.Moved)
	// Output:
	// stable: false [orders-0 12->15]
}
