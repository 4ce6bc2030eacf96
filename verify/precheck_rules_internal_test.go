package verify

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// TestOffsetRules: the precheck's rules on the group and its offsets, on
// facts made here (no cluster): each real problem fails its own check, and
// the legitimate shapes — a stopped job's stable commits, a group that
// lost its commits beside a file that keeps them, an accepted loss — pass.
func TestOffsetRules(t *testing.T) {
	o0, o1 := offsets.SourcePartition{Topic: "orders", Partition: 0}, offsets.SourcePartition{Topic: "orders", Partition: 1}
	reading := func(c offsets.GroupOffsets) kafkaadmin.Reading {
		return kafkaadmin.Reading{At: time.Unix(1, 0), Topics: kafkaadmin.Topics{"orders": 2}, Committed: c,
			Bounds: map[offsets.SourcePartition]offsets.LogBounds{o0: {Start: 10, End: 100}, o1: {Start: 0, End: 50}}}
	}
	stable := func(c offsets.GroupOffsets) kafkaadmin.CommitWindow {
		return kafkaadmin.CommitWindow{Group: "flink", Window: time.Second, First: reading(c), Second: reading(c)}
	}
	empty := kafkaadmin.Group{ID: "flink", State: kafkaadmin.GroupEmpty}
	csv := []byte("orders,0,42\norders,1,7\n")
	for _, tc := range []struct {
		name string
		spec PrecheckSpec
		f    offsetFacts
		fail []string // the checks that must fail; every other passes or warns
		from plan.OffsetsKind
		want offsets.GroupOffsets
	}{
		{name: "a stopped job's stable commits", f: offsetFacts{group: empty, snap: stable(offsets.GroupOffsets{o0: 42, o1: 7})},
			from: plan.FromGroup, want: offsets.GroupOffsets{o0: 42, o1: 7}},
		{name: "commits that moved", f: offsetFacts{group: empty, snap: func() kafkaadmin.CommitWindow {
			s := stable(offsets.GroupOffsets{o0: 42, o1: 7})
			s.Second = reading(offsets.GroupOffsets{o0: 43, o1: 7})
			s.Moved = []kafkaadmin.OffsetChange{{TopicPartition: o0, Before: offsets.NewGroupOffset(42), After: offsets.NewGroupOffset(43)}}
			return s
		}()}, fail: []string{"offsets-stable"}, from: plan.FromGroup, want: offsets.GroupOffsets{o0: 43, o1: 7}},
		{name: "a partition without a commit", f: offsetFacts{group: empty, snap: stable(offsets.GroupOffsets{o0: 42})},
			fail: []string{"offsets-complete"}, from: plan.FromGroup, want: offsets.GroupOffsets{o0: 42}},
		{name: "a group that does not exist", f: offsetFacts{group: kafkaadmin.Group{ID: "flnk", State: kafkaadmin.GroupDead}, snap: stable(offsets.GroupOffsets{})},
			fail: []string{"group-exists", "offsets-complete"}, from: plan.FromGroup, want: offsets.GroupOffsets{}},
		{name: "C below the log start", f: offsetFacts{group: empty, snap: stable(offsets.GroupOffsets{o0: 5, o1: 7})},
			fail: []string{"offsets-in-range"}, from: plan.FromGroup, want: offsets.GroupOffsets{o0: 5, o1: 7}},
		{name: "C below the log start, the loss accepted", spec: PrecheckSpec{AcceptExpired: []plan.ExpiredAcceptance{{Partition: o0, By: "jane"}}},
			f: offsetFacts{group: empty, snap: stable(offsets.GroupOffsets{o0: 5, o1: 7})}, from: plan.FromGroup, want: offsets.GroupOffsets{o0: 5, o1: 7}},
		{name: "a partition that could not be read", f: offsetFacts{group: empty, snap: stable(offsets.GroupOffsets{o0: 42, o1: 7}),
			unread: &kafkaadmin.PartitionErrors{Op: "read", Total: 2, Errs: map[kafkaadmin.TopicPartition]error{o1: kafkaadmin.ErrUnknownTopic}}},
			fail: []string{"offsets-readable"}, from: plan.FromGroup, want: offsets.GroupOffsets{o0: 42, o1: 7}},
		{name: "a file where the group lost its commits", spec: PrecheckSpec{Input: FileOffsets{Data: csv}},
			f: offsetFacts{group: kafkaadmin.Group{ID: "flink", State: kafkaadmin.GroupDead}, snap: stable(offsets.GroupOffsets{}),
				inputFirst: offsets.GroupOffsets{o0: 42, o1: 7}, inputNow: offsets.GroupOffsets{o0: 42, o1: 7}},
			from: plan.FromFile, want: offsets.GroupOffsets{o0: 42, o1: 7}},
		{name: "a file the group contradicts", spec: PrecheckSpec{Input: FileOffsets{Data: csv}},
			f: offsetFacts{group: empty, snap: stable(offsets.GroupOffsets{o0: 50, o1: 7}),
				inputFirst: offsets.GroupOffsets{o0: 42, o1: 7}, inputNow: offsets.GroupOffsets{o0: 42, o1: 7}},
			fail: []string{"offsets-file"}, from: plan.FromFile, want: offsets.GroupOffsets{o0: 42, o1: 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Group, tc.spec.Topics, tc.spec.StabilityWindow = "flink", []string{"orders"}, time.Second
			var cs Checks
			r := &PrecheckReport{}
			committed := offsetRules(&cs, tc.spec, tc.f, r)
			var failed []string
			for _, c := range cs.Failed() {
				failed = append(failed, c.Name)
			}
			if strings.Join(failed, ",") != strings.Join(tc.fail, ",") {
				t.Errorf("failed %v, want %v; checks:\n%s", failed, tc.fail, dumpChecks(cs))
			}
			if r.OffsetsFrom.Kind != tc.from || len(r.Group) != len(tc.want) {
				t.Errorf("offsets %v from %s, want %v from %s", r.Group, r.OffsetsFrom.Kind, tc.want, tc.from)
			}
			for p, c := range tc.want {
				if r.Group[p] != c {
					t.Errorf("C of %s = %d, want %d", p, r.Group[p], c)
				}
			}
			if len(committed) != len(tc.f.snap.Second.Committed) || len(r.Bounds) != 2 {
				t.Errorf("committed %v, bounds %v: want the second reading's", committed, r.Bounds)
			}
		})
	}
}

// TestOffsetRulesNoWindow: once Flink's proof removed the window
// (FlinkStoppedWindow), offsets-stable passes saying why, on the one
// reading that stands for both.
func TestOffsetRulesNoWindow(t *testing.T) {
	o0 := offsets.SourcePartition{Topic: "orders", Partition: 0}
	rd := kafkaadmin.Reading{At: time.Unix(1, 0), Topics: kafkaadmin.Topics{"orders": 1}, Committed: offsets.GroupOffsets{o0: 42},
		Bounds: map[offsets.SourcePartition]offsets.LogBounds{o0: {Start: 0, End: 100}}}
	spec := PrecheckSpec{Group: "flink", Topics: []string{"orders"}, StabilityWindow: FlinkStoppedWindow}
	f := offsetFacts{group: kafkaadmin.Group{ID: "flink", State: kafkaadmin.GroupEmpty},
		snap: kafkaadmin.CommitWindow{Group: "flink", First: rd, Second: rd}, shortened: true}
	var cs Checks
	offsetRules(&cs, spec, f, &PrecheckReport{})
	for _, c := range cs {
		if c.Name == "offsets-stable" {
			if c.Verdict != Pass || !strings.Contains(c.Detail, "no window") || !strings.Contains(c.Detail, "flink-stopped") {
				t.Errorf("offsets-stable %s: %s; want a pass that says there is no window and why", c.Verdict, c.Detail)
			}
			return
		}
	}
	t.Errorf("no offsets-stable check:\n%s", dumpChecks(cs))
}

// TestWorkerTargetLintRules: the rules on the Connect worker, the target
// topics and the lint, on facts made here: each failure on its real
// cause, and quiet on a worker, topics and configuration fit for a cutover.
func TestWorkerTargetLintRules(t *testing.T) {
	mirror := []connect.PluginInfo{{Class: connect.MirrorSourceConnectorClass}}
	verdicts := func(cs Checks) string {
		var s []string
		for _, c := range cs {
			s = append(s, c.Name+"="+string(c.Verdict))
		}
		return strings.Join(s, " ")
	}
	for _, tc := range []struct {
		name string
		run  func(cs *Checks)
		want string
	}{
		{"a 4.3 worker with MM2", func(cs *Checks) {
			workerRules(cs, "w", workerFacts{info: &connect.ServerInfo{Version: "4.3.1"}, plugins: mirror})
		},
			"connect-version=ok connect-plugin=ok"},
		{"a worker that does not answer", func(cs *Checks) { workerRules(cs, "w", workerFacts{infoErr: errors.New("connection refused")}) },
			"connect-reachable=fail"},
		{"a 3.6 worker, before STOPPED creation", func(cs *Checks) {
			workerRules(cs, "w", workerFacts{info: &connect.ServerInfo{Version: "3.6.2"}, plugins: mirror})
		}, "connect-version=fail connect-plugin=ok"},
		{"a worker without connect-mirror", func(cs *Checks) {
			workerRules(cs, "w", workerFacts{info: &connect.ServerInfo{Version: "4.3.1"}, plugins: []connect.PluginInfo{{Class: "x.Y"}}})
		}, "connect-version=ok connect-plugin=fail"},
		{"target topics fit", func(cs *Checks) {
			targetRules(cs, []kafkaadmin.TargetCheck{{Source: "a", SourcePartitions: 3, Target: "a", Exists: true, TargetPartitions: 3}})
		}, "target-topics=ok"},
		{"a target missing, one with fewer partitions", func(cs *Checks) {
			targetRules(cs, []kafkaadmin.TargetCheck{{Source: "a", SourcePartitions: 3, Target: "a"}, {Source: "b", SourcePartitions: 3, Target: "b", Exists: true, TargetPartitions: 2}})
		}, "target-topic=fail target-topic=fail"},
		{"10,000 partitions in one task", func(cs *Checks) { taskStartRule(cs, 10_000, "1") }, "task-start=warn"},
		{"10,000 partitions in four tasks", func(cs *Checks) { taskStartRule(cs, 10_000, "4") }, ""},
		{"10,001 partitions in four tasks", func(cs *Checks) { taskStartRule(cs, 10_001, "4") }, "task-start=warn"},
		{"a small flow in one task", func(cs *Checks) { taskStartRule(cs, 12, "1") }, ""},
		{"a tasks.max the lint refuses counts as one", func(cs *Checks) { taskStartRule(cs, 3_000, "x") }, "task-start=warn"},
		{"50,000 partitions in the cutover's 10 tasks", func(cs *Checks) { taskStartRule(cs, 50_000, "10") }, ""},
		{"50,000 partitions in 4 tasks", func(cs *Checks) { taskStartRule(cs, 50_000, "4") }, "task-start=warn"},
		{"50,000 partitions in 50 tasks", func(cs *Checks) { taskStartRule(cs, 50_000, "50") }, "task-heap=warn"},
		{"10,000 partitions in 40 tasks", func(cs *Checks) { taskStartRule(cs, 10_000, "40") }, ""},
		{"10,000 partitions in 60 tasks", func(cs *Checks) { taskStartRule(cs, 10_000, "60") }, "task-heap=warn"},
		{"a small flow in many tasks", func(cs *Checks) { taskStartRule(cs, 12, "8") }, ""},
		{"a clean lint", func(cs *Checks) { lintRules(cs, nil, nil) }, "connector-config=ok"},
		{"a lint warning", func(cs *Checks) {
			lintRules(cs, []connect.Finding{{Severity: connect.SeverityWarning, Key: "tasks.max", Message: "1"}}, nil)
		}, "connector-config=warn connector-config=ok"},
		{"a lint error and a failed validation", func(cs *Checks) {
			lintRules(cs, []connect.Finding{{Severity: connect.SeverityError, Key: "topics", Message: "x"}}, errors.New("500"))
		}, "connector-config=fail connector-config=fail"},
	} {
		var cs Checks
		tc.run(&cs)
		if got := verdicts(cs); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func dumpChecks(cs Checks) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString("  " + c.Name + " " + string(c.Verdict) + ": " + c.Detail + "\n")
	}
	return b.String()
}

// TestWindowAfterStop: Flink's proof that the job stopped at the savepoint
// C is read from shortens the window to FlinkStoppedWindow (or the spec's
// StoppedWindow); without the proof, or with the group's commits as C, the
// window is the spec's.
func TestWindowAfterStop(t *testing.T) {
	pass, fail := Check{Name: "flink-stopped", Verdict: Pass}, Check{Name: "flink-stopped", Verdict: Fail}
	sp := &FlinkSavepoint{}
	for _, tc := range []struct {
		name  string
		spec  PrecheckSpec
		check Check
		want  time.Duration
	}{
		{"stop proved, C from the savepoint", PrecheckSpec{StabilityWindow: 30 * time.Second, Input: sp}, pass, FlinkStoppedWindow},
		{"the spec's window after the proof", PrecheckSpec{StabilityWindow: 30 * time.Second, Input: sp, StoppedWindow: 5 * time.Second}, pass, 5 * time.Second},
		{"stop proved, C from the group", PrecheckSpec{StabilityWindow: 30 * time.Second, Savepoint: sp}, pass, 30 * time.Second},
		{"not proved: Flink says RUNNING", PrecheckSpec{StabilityWindow: 30 * time.Second, Input: sp}, fail, 30 * time.Second},
		{"not proved: Flink cannot be asked", PrecheckSpec{StabilityWindow: 30 * time.Second, Input: sp}, Check{Name: "flink-stopped", Verdict: Warn}, 30 * time.Second},
	} {
		if got := windowAfterStop(tc.spec, tc.check); got != tc.want {
			t.Errorf("%s: window %v, want %v", tc.name, got, tc.want)
		}
	}
}
