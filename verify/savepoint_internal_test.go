package verify

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/flinkrest"
	"github.com/mm2cutover/mm2cutover/flinksavepoint"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// TestCheckSavepoint: the group against the savepoint, with the group as
// the input (behind warns with the count, ahead, missing or unknown fail) and
// with the savepoint as the input (behind and missing are Flink's lost last
// commit).
func TestCheckSavepoint(t *testing.T) {
	p := func(n int32) offsets.SourcePartition { return offsets.SourcePartition{Topic: "orders", Partition: n} }
	scope := []offsets.SourcePartition{p(0), p(1), p(2)}
	split := func(n int32, at int64) flinksavepoint.Split {
		return flinksavepoint.Split{Partition: p(n), StartingOffset: at, StoppingOffset: flinksavepoint.NoStoppingOffset}
	}
	stopped := flinksavepoint.Properties{Savepoint: true, Type: "Suspend Savepoint", PostCheckpointAction: "SUSPEND", Format: "CANONICAL"}
	f := func(props flinksavepoint.Properties, splits ...flinksavepoint.Split) *FlinkSavepoint {
		return &FlinkSavepoint{dir: "/sp/savepoint-1", sp: &flinksavepoint.Savepoint{CheckpointID: 9, Properties: props},
			src: &flinksavepoint.Source{Splits: splits}}
	}
	full := f(stopped, split(0, 100), split(1, 50), split(2, 0))
	for _, tc := range []struct {
		name    string
		f       *FlinkSavepoint
		group   offsets.GroupOffsets
		asInput bool
		want    Verdict // the worst verdict
		detail  string
	}{
		{"equal", full, offsets.GroupOffsets{p(0): 100, p(1): 50, p(2): 0}, false, Pass, "equals"},
		{"behind", full, offsets.GroupOffsets{p(0): 90, p(1): 48, p(2): 0}, false, Warn, "lags savepoint /sp/savepoint-1 (checkpoint 9, source 00000000000000000000000000000000) by 12 records on 2 partitions (orders-0 (group 90, savepoint 100: 10 records), orders-1 (group 48, savepoint 50: 2 records)): MM2 will copy those 12 records again"},
		{"ahead", full, offsets.GroupOffsets{p(0): 101, p(1): 50, p(2): 0}, false, Fail, "ahead of savepoint"},
		{"missing from the group", full, offsets.GroupOffsets{p(0): 100, p(1): 50}, false, Fail, "no commit on 1 partitions"},
		{"a commit of no split", f(stopped, split(0, 100), split(1, 50)), offsets.GroupOffsets{p(0): 100, p(1): 50, p(2): 3}, false, Fail, "cannot vouch for"},
		{"a commit where the split starts at earliest", f(stopped, split(0, 100), split(1, 50), split(2, flinksavepoint.EarliestOffset)), offsets.GroupOffsets{p(0): 100, p(1): 50, p(2): 3}, false, Fail, "earliest"},
		{"a commit where the split starts at the commit", f(stopped, split(0, 100), split(1, 50), split(2, flinksavepoint.CommittedOffset)), offsets.GroupOffsets{p(0): 100, p(1): 50, p(2): 3}, false, Warn, "never read a record"},
		{"not a stop-with-savepoint", f(flinksavepoint.Properties{Savepoint: true, Type: "Savepoint", PostCheckpointAction: "NONE"}, split(0, 100), split(1, 50), split(2, 0)), offsets.GroupOffsets{p(0): 100, p(1): 50, p(2): 0}, false, Warn, "not the savepoint of a stop-with-savepoint"},
		{"input: behind", full, offsets.GroupOffsets{p(0): 90, p(1): 48, p(2): 0}, true, Pass, "MM2 copies none of them again"},
		{"input: no commits", full, offsets.GroupOffsets{}, true, Pass, "the plan takes them from the savepoint"},
		{"input: ahead", full, offsets.GroupOffsets{p(0): 101}, true, Fail, "ahead"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cs Checks
			checkSavepoint(&cs, tc.f, "flink", tc.group, scope, tc.asInput)
			worst, text := Pass, ""
			for _, c := range cs {
				if c.Verdict == Fail || (c.Verdict == Warn && worst == Pass) {
					worst = c.Verdict
				}
				text += c.Name + " " + string(c.Verdict) + ": " + c.Detail + "\n"
			}
			if worst != tc.want || !strings.Contains(text, tc.detail) {
				t.Errorf("got %s:\n%s\nwant %s naming %q", worst, text, tc.want, tc.detail)
			}
		})
	}
}

// TestFlinkSavepointInput reads a savepoint real Flink 2.2 wrote as an
// input, records it in a plan's offsets source and opens it again from
// there.
func TestFlinkSavepointInput(t *testing.T) {
	dir := filepath.Join("..", "flinksavepoint", "testdata", "flink-2.2-files")
	f, err := OpenFlinkSavepoint(dir, "kafka-source")
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Read(context.Background())
	if err != nil || len(got) != 3 {
		t.Fatalf("Read: %v, %v; want the 3 positions", got, err)
	}
	src := f.Source()
	if src.Kind != plan.FromFlinkSavepoint || !strings.Contains(src.Ref, `uid="kafka-source" operator=61252f73469d3ffba207c548d29a0267`) || !strings.Contains(src.Ref, "metadata=sha256:") {
		t.Errorf("source %+v", src)
	}
	again, err := FlinkSavepointOfPlan(&plan.Plan{OffsetsFrom: src})
	if err != nil {
		t.Fatal(err)
	}
	if again.Source() != src {
		t.Errorf("opened from the plan: %+v, want %+v", again.Source(), src)
	}
	for _, bad := range []plan.OffsetsSource{
		{Kind: plan.FromGroup},
		{Kind: plan.FromFlinkSavepoint, Ref: "dir=/sp uid=x"},
		{Kind: plan.FromFlinkSavepoint, Ref: `dir="/sp"`},
	} {
		if _, err := FlinkSavepointOfPlan(&plan.Plan{OffsetsFrom: bad}); !errors.Is(err, plan.ErrInvalidField) {
			t.Errorf("%+v: %v, want ErrInvalidField", bad, err)
		}
	}
	if _, err := OpenFlinkSavepoint(dir, "no-such-source"); !errors.Is(err, flinksavepoint.ErrNoSource) {
		t.Errorf("unknown uid: %v", err)
	}
	if _, err := OpenFlinkSavepoint(filepath.Join(dir, "missing"), ""); !errors.Is(err, flinksavepoint.ErrMissingFile) {
		t.Errorf("no savepoint: %v", err)
	}
}

// TestCheckFlinkStopped: Flink's word that the job ended at the savepoint
// given, and each answer that is not that.
func TestCheckFlinkStopped(t *testing.T) {
	sp := &FlinkSavepoint{dir: "/sp/savepoint-1a2b", sp: &flinksavepoint.Savepoint{CheckpointID: 8}, src: &flinksavepoint.Source{}}
	saved := &flinkrest.Snapshot{ID: 8, Status: "COMPLETED", IsSavepoint: true, ExternalPath: "file:/sp/savepoint-1a2b"}
	before := &flinkrest.Snapshot{ID: 7, Status: "COMPLETED"}
	st := func(state string, completed, savepoint *flinkrest.Snapshot) FlinkJobStatus {
		return FlinkJobStatus{Job: flinkrest.Job{ID: "j1", State: state}, Checkpoints: flinkrest.Checkpoints{Completed: completed, Savepoint: savepoint}}
	}
	with := func(f func(s *flinkrest.Snapshot)) *flinkrest.Snapshot { c := *saved; f(&c); return &c }
	for _, tc := range []struct {
		name string
		st   FlinkJobStatus
		ok   bool
		says string
	}{
		{"finished at the savepoint", st("FINISHED", before, saved), true, "FINISHED"},
		{"cancelled after the savepoint", st("CANCELED", before, with(func(s *flinkrest.Snapshot) { s.ExternalPath = "/sp/savepoint-1a2b/" })), true, "CANCELED"},
		{"running", st("RUNNING", before, saved), false, "RUNNING"},
		{"failed", st("FAILED", before, saved), false, "FAILED"},
		{"no savepoint", st("FINISHED", before, nil), false, "no savepoint"},
		{"savepoint in progress", st("FINISHED", before, with(func(s *flinkrest.Snapshot) { s.Status = "IN_PROGRESS" })), false, "IN_PROGRESS"},
		{"another savepoint", st("FINISHED", before, with(func(s *flinkrest.Snapshot) { s.ID, s.ExternalPath = 9, "file:/sp/savepoint-9" })), false, "checkpoint 9"},
		{"the same path elsewhere", st("FINISHED", before, with(func(s *flinkrest.Snapshot) { s.ExternalPath = "s3://b/sp/savepoint-1a2b" })), false, "s3://"},
		{"a checkpoint after it", st("CANCELED", &flinkrest.Snapshot{ID: 10, Status: "COMPLETED"}, saved), false, "ran on past"},
	} {
		ch := CheckFlinkStopped(tc.st, sp)
		if (ch.Verdict == Pass) != tc.ok || !strings.Contains(ch.Detail, tc.says) || ch.Name != "flink-stopped" {
			t.Errorf("%s: %+v, want pass %v naming %q", tc.name, ch, tc.ok, tc.says)
		}
	}
}
