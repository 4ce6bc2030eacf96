package connectfake_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/connect/connectfake"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// A consumer's test of its own migration tool: the tool creates the
// connector STOPPED, sets where it starts reading, and reads that back, here
// with this repository's connect.Client. The fake refuses the first PATCH
// with the rebalance 409 a real worker gives after a concurrent change; the
// client retries it.
func Example() {
	fake := connectfake.New()
	defer fake.Close()
	fake.FailNext("PATCH", "/connectors/flink-to-mm2/offsets", 1, connectfake.Rebalance)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := connect.New(fake.URL())
	if err != nil {
		log.Fatal(err)
	}
	cfg, err := connect.MirrorSource{
		Name:            "flink-to-mm2",
		SourceBootstrap: "source-kafka:9092",
		TargetBootstrap: "target-kafka:9092",
		Topics:          []string{"orders"},
	}.Config()
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.Create(ctx, "flink-to-mm2", cfg, connect.InitialStopped); err != nil {
		log.Fatal(err)
	}
	if _, err := c.WaitStopped(ctx, "flink-to-mm2"); err != nil {
		log.Fatal(err)
	}

	// The Flink group committed C = 1000 on orders-0 and C = 0 on orders-1.
	plan := []offsets.ConnectOffset{
		{Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: 0}, Offset: offsets.NewMirrorOffset(999)},
		{Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: 1}}, // null: from the start
	}
	if _, err := c.AlterMirrorOffsets(ctx, "flink-to-mm2", plan); err != nil {
		log.Fatal(err)
	}
	// Read back until GET lists what was written: a cleared partition is
	// absent, not null, and that is what the null in plan expects.
	if _, err := c.WaitMirrorOffsets(ctx, "flink-to-mm2", plan); err != nil {
		log.Fatal(err)
	}
	got, err := c.MirrorOffsets(ctx, "flink-to-mm2")
	if err != nil {
		log.Fatal(err)
	}
	for _, o := range got {
		m, _ := o.Offset.Get()
		fmt.Printf("%s %s-%d: last replicated %d, MirrorMaker 2 starts at %d\n", o.Partition.Cluster, o.Partition.Topic, o.Partition.Partition, m, m+1)
	}
	// Output:
	// source orders-0: last replicated 999, MirrorMaker 2 starts at 1000
}

// After the resume, the test makes the fake's MirrorMaker 2 progress, as its
// task's offset commits would, and checks what the tool reads.
func ExampleServer_Advance() {
	fake := connectfake.New()
	defer fake.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := connect.New(fake.URL())
	if err != nil {
		log.Fatal(err)
	}
	cfg := map[string]string{
		"connector.class":                  connect.MirrorSourceConnectorClass,
		"source.cluster.alias":             "source",
		"source.cluster.bootstrap.servers": "source-kafka:9092",
		"target.cluster.bootstrap.servers": "target-kafka:9092",
		"topics":                           "orders",
	}
	if _, err := c.Create(ctx, "mm2", cfg, connect.InitialRunning); err != nil {
		log.Fatal(err)
	}
	if _, err := c.WaitRunning(ctx, "mm2"); err != nil {
		log.Fatal(err)
	}
	if err := fake.Advance("mm2", "source", "orders", 0, 1499); err != nil {
		log.Fatal(err)
	}
	got, err := c.MirrorOffsets(ctx, "mm2")
	if err != nil {
		log.Fatal(err)
	}
	m, _ := got[0].Offset.Get()
	fmt.Printf("%s-%d: %d\n", got[0].Partition.Topic, got[0].Partition.Partition, m)
	// Output:
	// orders-0: 1499
}
