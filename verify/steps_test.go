package verify_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect/connectfake"
	"github.com/mm2cutover/mm2cutover/kafkaadmin/kafkafake"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

func stepsCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// exampleWorld is what the step examples run against: a fake Connect
// worker, the source and target clusters in memory, as connectorPlan's plan
// saw them (group flink at orders.eu-0 10 and payments-0 3), the plan, and
// the connector configuration it was built with.
func exampleWorld() (*connectfake.Server, *kafkafake.Cluster, *kafkafake.Cluster, *plan.Plan, map[string]string) {
	p, config, err := buildConnectorPlan()
	if err != nil {
		panic(err)
	}
	o, p0 := offsets.SourcePartition{Topic: "orders.eu", Partition: 0}, offsets.SourcePartition{Topic: "payments", Partition: 0}
	source := kafkafake.New("src-id")
	source.Commits["flink"] = offsets.GroupOffsets{o: 10, p0: 3}
	source.Produce(o, 0, 20, nil)
	source.Produce(p0, 0, 3, nil)
	target := kafkafake.New("tgt-id")
	policy, err := offsets.PolicyOf(config())
	if err != nil {
		panic(err)
	}
	for tp, end := range map[offsets.SourcePartition]int64{o: 10, p0: 3} {
		tt, err := policy.TargetTopic(tp.Topic)
		if err != nil {
			panic(err)
		}
		target.Partitions[tt] = 1
		target.Bounds[offsets.SourcePartition{Topic: tt}] = offsets.LogBounds{End: end, StableEnd: end}
	}
	return connectfake.New(), source, target, p, config()
}

// TestRecheckRecent: an observation moments old serves again with the
// group's members read anew; an older one is not used.
func TestRecheckRecent(t *testing.T) {
	worker, source, target, p, _ := exampleWorld()
	defer worker.Close()
	ctx := stepsCtx(t)
	obs, err := verify.Observe(ctx, source, target, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if reused, err := verify.RecheckRecent(ctx, source, p, nil, time.Now()); reused || err != nil {
		t.Errorf("RecheckRecent without an observation = %v, %v; want not reused", reused, err)
	}
	if reused, err := verify.RecheckRecent(ctx, source, p, &obs, obs.At.Add(verify.ObservationReuse)); reused || err != nil {
		t.Errorf("RecheckRecent of an old observation = %v, %v; want not reused", reused, err)
	}
	if reused, err := verify.RecheckRecent(ctx, source, p, &obs, obs.At.Add(time.Second)); !reused || err != nil {
		t.Errorf("RecheckRecent a second later = %v, %v; want reused, nil", reused, err)
	}
	source.Members["flink"] = 1 // the old job came back
	if reused, err := verify.RecheckRecent(ctx, source, p, &obs, obs.At.Add(time.Second)); !reused || !errors.Is(err, verify.ErrStalePlan) {
		t.Errorf("RecheckRecent with a member in the group = %v, %v; want reused, ErrStalePlan", reused, err)
	}
}
