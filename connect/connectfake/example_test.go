package connectfake_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"slices"
	"sync"
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

// mm2Config is a MirrorSourceConnector configuration for the examples.
func mm2Config() map[string]string {
	return map[string]string{
		"connector.class":                  connect.MirrorSourceConnectorClass,
		"source.cluster.alias":             "source",
		"source.cluster.bootstrap.servers": "source-kafka:9092",
		"target.cluster.bootstrap.servers": "target-kafka:9092",
		"topics":                           "orders",
	}
}

// A test starts from a worker that already holds a STOPPED connector with
// stored offsets, and offsets under a name no connector has yet: the world
// a resume, or a rerun after a failed apply, finds.
func ExampleWithConnectors() {
	last := func(p int32, m int64) offsets.ConnectOffset {
		return offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: p}, Offset: offsets.NewMirrorOffset(m)}
	}
	fake := connectfake.New(
		connectfake.WithConnectors(connectfake.Connector{Name: "mm2", Config: mm2Config(), State: connectfake.StateStopped}),
		connectfake.WithOffsets("mm2", last(0, 999), last(1, 41)),
		connectfake.WithOffsets("mm2-old", last(0, 500)), // offsets outlive connectors
	)
	defer fake.Close()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := connect.New(fake.URL())
	if err != nil {
		log.Fatal(err)
	}
	st, err := c.Status(ctx, "mm2")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("mm2:", st.Connector.State, len(st.Tasks), "tasks")
	got, err := c.MirrorOffsets(ctx, "mm2")
	if err != nil {
		log.Fatal(err)
	}
	slices.SortFunc(got, offsets.CompareConnectOffsets)
	for _, o := range got {
		m, _ := o.Offset.Get()
		fmt.Printf("%s: %d\n", o.Partition, m)
	}
	old, _ := fake.Offsets("mm2-old")
	fmt.Println("stored for mm2-old:", len(old))
	// Output:
	// mm2: STOPPED 0 tasks
	// source/orders-0: 999
	// source/orders-1: 41
	// stored for mm2-old: 1
}

// An Interceptor answers the tool's first PATCH with a rebalance's 409,
// for that request only, and lets every other request through; the tool
// (here connect.Client) retries it. Requests shows the writes it sent.
func ExampleServer_Intercept() {
	fake := connectfake.New(connectfake.WithConnectors(connectfake.Connector{Name: "mm2", Config: mm2Config(), State: connectfake.StateStopped}))
	defer fake.Close()
	var once sync.Once
	fake.Intercept(func(ctx context.Context, w http.ResponseWriter, req connectfake.Request, next func(http.ResponseWriter)) {
		failed := false
		if req.Method == http.MethodPatch {
			once.Do(func() {
				connectfake.Rebalance.Answer(w, req.Path)
				failed = true
			})
		}
		if !failed {
			next(w)
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := connect.New(fake.URL())
	if err != nil {
		log.Fatal(err)
	}
	plan := []offsets.ConnectOffset{{Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: 0}, Offset: offsets.NewMirrorOffset(999)}}
	if _, err := c.AlterMirrorOffsets(ctx, "mm2", plan); err != nil {
		log.Fatal(err)
	}
	for _, r := range fake.Requests() {
		if r.Writes() {
			fmt.Println(r.Method, r.Path, r.Status)
		}
	}
	// Output:
	// PATCH /connectors/mm2/offsets 409
	// PATCH /connectors/mm2/offsets 200
}

// After the tool ran, the test reads what the worker holds — the
// connector's configuration, state and tasks, its stored offsets — and
// checks that a read-only step sent no write.
func ExampleServer_Requests() {
	fake := connectfake.New(connectfake.WithStatusLag(0))
	defer fake.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := connect.New(fake.URL())
	if err != nil {
		log.Fatal(err)
	}
	// The tool's apply: create STOPPED, then set where MM2 starts.
	if _, err := c.Create(ctx, "mm2", mm2Config(), connect.InitialStopped); err != nil {
		log.Fatal(err)
	}
	plan := []offsets.ConnectOffset{{Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: 0}, Offset: offsets.NewMirrorOffset(999)}}
	if _, err := c.AlterMirrorOffsets(ctx, "mm2", plan); err != nil {
		log.Fatal(err)
	}
	mm2, _ := fake.Connector("mm2")
	stored, _ := fake.Offsets("mm2")
	fmt.Println(mm2.State, mm2.Tasks, mm2.Config["topics"], stored[0].Partition, stored[0].Offset)

	// The tool's status step must only read.
	before := len(fake.Requests())
	if _, err := c.Status(ctx, "mm2"); err != nil {
		log.Fatal(err)
	}
	if _, err := c.MirrorOffsets(ctx, "mm2"); err != nil {
		log.Fatal(err)
	}
	writes := 0
	for _, r := range fake.Requests()[before:] {
		if r.Writes() {
			writes++
		}
	}
	fmt.Println("writes by the status step:", writes)
	// Output:
	// STOPPED 0 orders source/orders-0 999
	// writes by the status step: 0
}
