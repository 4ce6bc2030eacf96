package verify_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// unchanged is what the clusters hold for testPlan when nothing changed:
// a-0 committed at 10, a-1 at 0, a-2 without a commit (blocked).
func unchanged() verify.Observation {
	a0, a1, a2 := offsets.SourcePartition{Topic: "a", Partition: 0}, offsets.SourcePartition{Topic: "a", Partition: 1}, offsets.SourcePartition{Topic: "a", Partition: 2}
	return verify.Observation{
		SourceClusterID: "src-id", TargetClusterID: "tgt-id",
		Group:        kafkaadmin.Group{ID: "flink", State: kafkaadmin.GroupEmpty},
		Committed:    map[offsets.SourcePartition]int64{a0: 10, a1: 0},
		SourceTopics: kafkaadmin.Topics{"a": 3},
		Bounds:       map[offsets.SourcePartition]offsets.LogBounds{a0: {End: 20}, a1: {End: 8}, a2: {End: 5}},
		TargetTopics: kafkaadmin.Topics{"a": 3},
		TargetEnds:   map[offsets.SourcePartition]int64{a0: 10, a1: 0, a2: 5},
	}
}

// TestRecheck changes one fact at a time: each change is refused with the
// check that names it, and the legitimate shapes pass.
func TestRecheck(t *testing.T) {
	a0, a1 := offsets.SourcePartition{Topic: "a", Partition: 0}, offsets.SourcePartition{Topic: "a", Partition: 1}
	group := testPlan(t)
	file := testPlan(t)
	file.OffsetsFrom = plan.OffsetsSource{Kind: plan.FromFile, Ref: "sha256:ab"}
	chosen := testPlan(t)
	chosen.OffsetsFrom = plan.OffsetsSource{Kind: plan.FromFile, Ref: "sha256:ab", OverridesGroup: true}
	v1 := testPlan(t)
	v1.OffsetsFrom = plan.OffsetsSource{}
	mm2 := testPlan(t)
	mm2.OffsetsFrom = plan.OffsetsSource{Kind: plan.FromConnectorOffsets, Ref: "mm2:mm2-offsets.dc1.internal"}
	sp := testPlan(t)
	sp.OffsetsFrom = plan.OffsetsSource{Kind: plan.FromFlinkSavepoint, Ref: `dir="/sp/savepoint-1" uid="kafka-source" metadata=sha256:ab`}
	for _, tc := range []struct {
		name string
		p    *plan.Plan
		edit func(o *verify.Observation)
		want []string // checks, sorted; nil means the plan holds
	}{
		{"nothing changed", group, nil, nil},
		{"another source cluster", group, func(o *verify.Observation) { o.SourceClusterID = "x" }, []string{"source-cluster"}},
		{"another target cluster", group, func(o *verify.Observation) { o.TargetClusterID = "x" }, []string{"target-cluster"}},
		{"a member joined the group", group, func(o *verify.Observation) {
			o.Group.State, o.Group.Members = kafkaadmin.GroupStable, []kafkaadmin.Member{{ID: "m1"}}
		}, []string{"group-members"}},
		{"a commit moved", group, func(o *verify.Observation) { o.Committed[a0] = 12 }, []string{"group-commit"}},
		{"a commit disappeared from a group plan", group, func(o *verify.Observation) { delete(o.Committed, a0) }, []string{"group-commit"}},
		{"a commit disappeared from a version 1 plan", v1, func(o *verify.Observation) { delete(o.Committed, a0) }, []string{"group-commit"}},
		{"a commit appeared on a blocked partition", group, func(o *verify.Observation) { o.Committed[offsets.SourcePartition{Topic: "a", Partition: 2}] = 3 }, []string{"group-commit"}},
		{"a file plan without the group's commits holds", file, func(o *verify.Observation) { o.Committed = nil }, nil},
		{"a file plan whose group moved", file, func(o *verify.Observation) { o.Committed[a0] = 12 }, []string{"group-commit"}},
		{"a file plan that overrides the group", chosen, func(o *verify.Observation) { o.Committed[a0] = 12 }, nil},
		{"a file plan still refuses members", chosen, func(o *verify.Observation) { o.Group.Members = []kafkaadmin.Member{{ID: "m1"}} }, []string{"group-members"}},
		{"a connector-offsets plan ignores the group", mm2, func(o *verify.Observation) { o.Committed = nil }, nil},
		{"the old connector's offsets unchanged", mm2, func(o *verify.Observation) { o.Input = offsets.GroupOffsets{a0: 10, a1: 0} }, nil},
		{"the old connector's offsets moved", mm2, func(o *verify.Observation) { o.Input = offsets.GroupOffsets{a0: 14, a1: 0} }, []string{"input-moved"}},
		{"a savepoint plan whose group lags it (Flink's lost commit)", sp, func(o *verify.Observation) { o.Committed[a0] = 7 }, nil},
		{"a savepoint plan whose group has no commits", sp, func(o *verify.Observation) { o.Committed = nil }, nil},
		{"a savepoint plan whose group passed it", sp, func(o *verify.Observation) { o.Committed[a0] = 12 }, []string{"group-commit"}},
		{"the savepoint read again unchanged", sp, func(o *verify.Observation) {
			o.Input, o.InputRef = offsets.GroupOffsets{a0: 10, a1: 0}, sp.OffsetsFrom.Ref
		}, nil},
		{"the savepoint replaced by one with other positions", sp, func(o *verify.Observation) {
			o.Input, o.InputRef = offsets.GroupOffsets{a0: 11, a1: 0}, sp.OffsetsFrom.Ref
		}, []string{"input-moved"}},
		{"the savepoint's _metadata replaced", sp, func(o *verify.Observation) {
			o.Input, o.InputRef = offsets.GroupOffsets{a0: 10, a1: 0}, `dir="/sp/savepoint-1" uid="kafka-source" metadata=sha256:cd`
		}, []string{"input-moved"}},
		{"partitions added", group, func(o *verify.Observation) { o.SourceTopics["a"] = 4 }, []string{"source-partitions"}},
		{"source topic deleted", group, func(o *verify.Observation) { delete(o.SourceTopics, "a") }, []string{"source-partitions"}},
		{"retention passed M+1", group, func(o *verify.Observation) { o.Bounds[a0] = offsets.LogBounds{Start: 11, End: 20} }, []string{"log-start"}},
		{"retention at M+1 is fine", group, func(o *verify.Observation) { o.Bounds[a0] = offsets.LogBounds{Start: 10, End: 20} }, nil},
		{"retention passed a cleared partition's start", group, func(o *verify.Observation) { o.Bounds[a1] = offsets.LogBounds{Start: 1, End: 8} }, []string{"log-start"}},
		{"topic truncated below C", group, func(o *verify.Observation) { o.Bounds[a0] = offsets.LogBounds{End: 9} }, []string{"log-end"}},
		{"target topic deleted", group, func(o *verify.Observation) { delete(o.TargetTopics, "a"); delete(o.TargetEnds, a0) }, []string{"target-topic"}},
		{"target written", group, func(o *verify.Observation) { o.TargetEnds[a1] = 3 }, []string{"target-end"}},
		{"the workers' cluster is the target", group, func(o *verify.Observation) {
			o.Writers = &verify.Writers{WorkerClusterID: "tgt-id", ProducerClusterID: "tgt-id"}
		}, nil},
		{"the workers write to a third cluster", group, func(o *verify.Observation) {
			o.Writers = &verify.Writers{WorkerClusterID: "third", ProducerClusterID: "third"}
		}, []string{"worker-cluster"}},
		{"the producer override reaches a third cluster", group, func(o *verify.Observation) {
			o.Writers = &verify.Writers{WorkerClusterID: "tgt-id", ProducerClusterID: "third", ProducerOverride: "third:9092"}
		}, []string{"producer-cluster"}},
		{"the producer override reaches the target", group, func(o *verify.Observation) {
			o.Writers = &verify.Writers{WorkerClusterID: "third", ProducerClusterID: "tgt-id", ProducerOverride: "tgt:9092"}
		}, nil},
		{"several at once", group, func(o *verify.Observation) { o.Committed[a0] = 11; o.TargetEnds[a0] = 11 }, []string{"group-commit", "target-end"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := unchanged()
			if tc.edit != nil {
				tc.edit(&o)
			}
			err := verify.Recheck(tc.p, o)
			var se *verify.StalePlanError
			switch {
			case tc.want == nil && err != nil:
				t.Fatalf("Recheck = %v, want nil", err)
			case tc.want == nil:
				return
			case !errors.As(err, &se) || !errors.Is(err, verify.ErrStalePlan):
				t.Fatalf("Recheck = %v, want a *StalePlanError", err)
			}
			var got []string
			for _, p := range se.Problems {
				got = append(got, p.Check)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("problems %v, want %v\n%v", got, tc.want, err)
			}
		})
	}
}

// TestCheckRollbackGroup: the rollback may write C' over absent commits, the
// old job's untouched commits (its own group only) and C' itself (a retry);
// any other commit is someone else's position and refuses.
func TestCheckRollbackGroup(t *testing.T) {
	forward := testPlan(t) // group "flink": a-0 at 10, a-1 at 0, a-2 none
	a0, a1, a2 := offsets.SourcePartition{Topic: "a", Partition: 0}, offsets.SourcePartition{Topic: "a", Partition: 1}, offsets.SourcePartition{Topic: "a", Partition: 2}
	reverse := offsets.GroupOffsets{a0: 25, a1: 3, a2: 4}
	for _, tc := range []struct {
		name    string
		group   string
		current offsets.GroupOffsets
		reverse offsets.GroupOffsets
		stale   bool
	}{
		{"the old job's commits, before C' is known", "flink", offsets.GroupOffsets{a0: 10, a1: 0}, nil, false},
		{"no commits", "flink-restart", offsets.GroupOffsets{}, reverse, false},
		{"a retried rollback", "flink", offsets.GroupOffsets{a0: 25, a1: 3, a2: 4}, reverse, false},
		{"the old job's C in another group", "flink-restart", offsets.GroupOffsets{a0: 10}, reverse, true},
		{"a commit that moved", "flink", offsets.GroupOffsets{a0: 12}, reverse, true},
	} {
		err := verify.CheckRollbackGroup(forward, tc.group, tc.current, tc.reverse)
		if tc.stale != errors.Is(err, verify.ErrGroupOffsets) {
			t.Errorf("%s: %v, want refused %v", tc.name, err, tc.stale)
		}
	}
	// From a savepoint, the old job's commits may lag the plan's C.
	sp := testPlan(t)
	sp.OffsetsFrom = plan.OffsetsSource{Kind: plan.FromFlinkSavepoint, Ref: `dir="/sp" uid=""`}
	if err := verify.CheckRollbackGroup(sp, "flink", offsets.GroupOffsets{a0: 8, a1: 0}, reverse); err != nil {
		t.Errorf("a savepoint plan's group lagging it: %v", err)
	}
	if err := verify.CheckRollbackGroup(sp, "flink", offsets.GroupOffsets{a0: 11}, reverse); !errors.Is(err, verify.ErrGroupOffsets) {
		t.Errorf("a savepoint plan's group past it: %v, want refused", err)
	}
	if err := verify.CheckRollbackGroup(testPlan(t), "flink", offsets.GroupOffsets{a0: 8}, reverse); !errors.Is(err, verify.ErrGroupOffsets) {
		t.Errorf("a group plan's group lagging it: %v, want refused", err)
	}
}
