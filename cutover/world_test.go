package cutover_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/connect/connectfake"
	"github.com/mm2cutover/mm2cutover/cutover"
	"github.com/mm2cutover/mm2cutover/kafkaadmin/kafkafake"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// The partitions of the plan the tests and examples run: orders.eu-0 at
// C = 10 of 20, payments-0 at C = 3 of 3, group flink, connector
// mm2-orders copying from alias src.
var (
	orders   = offsets.SourcePartition{Topic: "orders.eu", Partition: 0}
	payments = offsets.SourcePartition{Topic: "payments", Partition: 0}
)

// connectorConfig is the configuration the plan is built with.
func connectorConfig() map[string]string {
	cfg, err := connect.MirrorSource{Name: "mm2-orders", SourceAlias: "src", SourceBootstrap: "src:9092", TargetBootstrap: "tgt:9092",
		Topics: []string{"orders.eu", "payments"}, SourceClient: map[string]string{"sasl.jaas.config": "secret-1"}}.Config()
	if err != nil {
		panic(err)
	}
	return cfg
}

// buildPlan builds the plan on the clusters of newWorld.
func buildPlan() *plan.Plan {
	p, err := plan.Build(plan.Spec{
		CreatedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), SourceClusterID: "src-id", TargetClusterID: "tgt-id",
		ConnectorName: "mm2-orders", SourceAlias: "src", GroupID: "flink", ConnectorConfig: connectorConfig(),
	}, plan.Snapshot{
		Group:     offsets.GroupOffsets{orders: 10, payments: 3},
		Source:    map[offsets.SourcePartition]offsets.LogBounds{orders: {End: 20, StableEnd: 20}, payments: {End: 3, StableEnd: 3}},
		TargetEnd: map[offsets.SourcePartition]int64{orders: 10, payments: 3},
	})
	if err != nil {
		panic(err)
	}
	return p
}

// world is a fake Connect worker and the source and target clusters in
// memory as the plan saw them.
type world struct {
	worker         *connectfake.Server
	source, target *kafkafake.Cluster
	p              *plan.Plan
}

func newWorld() *world {
	source := kafkafake.New("src-id")
	source.Commits["flink"] = offsets.GroupOffsets{orders: 10, payments: 3}
	source.Produce(orders, 0, 20, nil)
	source.Produce(payments, 0, 3, nil)
	target := kafkafake.New("tgt-id")
	for tp, end := range map[offsets.SourcePartition]int64{orders: 10, payments: 3} {
		target.Partitions[tp.Topic] = 1
		target.Bounds[offsets.SourcePartition{Topic: tp.Topic}] = offsets.LogBounds{End: end, StableEnd: end}
	}
	return &world{worker: connectfake.New(connectfake.WithKafkaClusterID("tgt-id")), source: source, target: target, p: buildPlan()}
}

// connect returns a client of the fake worker that tries each request at
// most twice.
func (w *world) connect(t testing.TB) *connect.Client {
	c, err := connect.New(w.worker.URL(), connect.WithRetry(connect.Retry{Attempts: 2}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (w *world) clients(t testing.TB) cutover.Clients {
	return cutover.Clients{Connect: w.connect(t), Source: w.source, Target: w.target}
}

// recorder keeps the entries of the record of the change, "step" or
// "step!" for an intent, and can fail the next record of a step.
type recorder struct {
	entries []string
	failAt  string
}

func (r *recorder) record(_ context.Context, e cutover.Event) error {
	name := e.Step
	if e.Intent {
		name += "!"
	}
	if name == r.failAt {
		return fmt.Errorf("the record of %s cannot be written", name)
	}
	r.entries = append(r.entries, name)
	return nil
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// buildPlanAt is buildPlan with orders.eu-0 at C = c of end records.
func buildPlanAt(c, end int64) *plan.Plan {
	p, err := plan.Build(plan.Spec{
		CreatedAt: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC), SourceClusterID: "src-id", TargetClusterID: "tgt-id",
		ConnectorName: "mm2-orders", SourceAlias: "src", GroupID: "flink", ConnectorConfig: connectorConfig(),
	}, plan.Snapshot{
		Group:     offsets.GroupOffsets{orders: c, payments: 3},
		Source:    map[offsets.SourcePartition]offsets.LogBounds{orders: {End: end, StableEnd: end}, payments: {End: 3, StableEnd: 3}},
		TargetEnd: map[offsets.SourcePartition]int64{orders: 10, payments: 3},
	})
	if err != nil {
		panic(err)
	}
	return p
}
