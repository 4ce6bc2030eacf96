package flinksavepoint_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/flinksavepoint"
	"github.com/mm2cutover/mm2cutover/internal/flinkjob"
	"github.com/mm2cutover/mm2cutover/internal/flinklike"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/offsets"
)

var update = flag.Bool("update", false, "copy the savepoints of TestAgainstFlink into testdata, with Flink's answers")

func TestMain(m *testing.M) { sandboxtest.Main(m) }

// The second source of the test job, beside flinkjob.SourceUID.
const secondUID = "second-source"

// TestAgainstFlink runs the real Flink job of internal/flinkjob, for each
// supported Flink line, with two KafkaSources (uids "kafka-source" and
// "second-source") under live traffic, one of them with a partition that
// never received a record, stops it with a savepoint, and reads the
// savepoint twice: with this package and with Flink's own State Processor
// API (flinkjob.ReadPositions). Both must give the same split on every
// partition, the same OperatorID for each uid, and the positions the job
// itself reported for the savepoint's checkpoint. With -update the
// savepoints and Flink's answers are copied to testdata, where
// TestRecordedSavepoints reads them without Flink.
func TestAgainstFlink(t *testing.T) {
	sb := sandboxtest.Dedicated(t, sandbox.Config{})
	for _, v := range flinkjob.Versions() {
		for _, files := range []bool{false, true} {
			name := "flink-" + v + "/inline"
			if files {
				name = "flink-" + v + "/files"
			}
			t.Run(name, func(t *testing.T) { testAgainstFlink(t, sb, v, files) })
		}
	}
}

func testAgainstFlink(t *testing.T, sb *sandbox.Sandbox, version string, files bool) {
	// A Flink job and the State Processor API's JVM: in loaded run L the
	// job took 77 s to start and the State Processor API over 3 minutes
	// (killed then by a cap of its own, now gone).
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	suffix := strconv.FormatInt(time.Now().UnixNano()%1_000_000, 36)
	main, idle, second := "orders-"+suffix, "idle-"+suffix, "payments-"+suffix
	for _, b := range []string{sb.Source().Bootstrap(), sb.Target().Bootstrap()} {
		for topic, n := range map[string]int32{main: 3, idle: 1, second: 2} {
			if err := sandbox.CreateTopic(ctx, b, topic, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	parts := flinklike.All(map[string]int32{main: 3, second: 2})
	if err := flinklike.Produce(ctx, sb.Source().Bootstrap(), parts, 20); err != nil {
		t.Fatal(err)
	}
	traffic, err := flinklike.StartTraffic(ctx, sb.Source().Bootstrap(), parts, 2, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer traffic.Stop()

	log := slog.New(slog.NewTextHandler(testWriter{t}, nil))
	job, err := flinkjob.Start(ctx, flinkjob.Config{Version: version, Dir: t.TempDir(),
		Source: sb.Source().Bootstrap(), Target: sb.Target().Bootstrap(), Group: "group-" + suffix,
		Topics: []string{main, idle}, ExtraSource: flinkjob.ExtraSource{UID: secondUID, Topics: []string{second}},
		CheckpointInterval: time.Second, StateFiles: files, Logger: log})
	if errors.Is(err, flinkjob.ErrNoFlink) && os.Getenv("CI") != "true" {
		t.Skipf("no Flink job here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer job.Kill()
	var cp flinkjob.Checkpoint
	for n := 0; n < 2; {
		if cp, err = job.WaitCheckpoint(ctx, cp.ID); err != nil {
			t.Fatal(err)
		}
		if len(cp.Offsets) == len(parts) {
			n++
		}
	}
	path, err := job.StopWithSavepoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	final, _ := job.LastCheckpoint()

	sp, err := flinksavepoint.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("savepoint %s: metadata version %d, checkpoint %d, %+v, %d operators", path, sp.Version, sp.CheckpointID, sp.Properties, len(sp.Operators))
	if sp.CheckpointID != final.ID {
		t.Errorf("checkpoint %d, the job's last reported %d", sp.CheckpointID, final.ID)
	}
	if want := (flinksavepoint.Properties{Savepoint: true, Type: "Suspend Savepoint", PostCheckpointAction: "SUSPEND", Format: "CANONICAL"}); sp.Properties != want || !sp.Properties.Stopped() {
		t.Errorf("properties %+v, want %+v (flink stop)", sp.Properties, want)
	}
	ref, err := flinkjob.ReadPositions(ctx, version, "", path, flinkjob.SourceUID, secondUID, "positions", "no-such-operator")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*flinksavepoint.Source{}
	for _, r := range ref[:2] {
		src, err := sp.KafkaSource(r.UID)
		if err != nil {
			t.Fatalf("uid %s: %v", r.UID, err)
		}
		got[r.UID] = src
		if r.Error != "" {
			t.Fatalf("Flink could not read uid %s: %s", r.UID, r.Error)
		}
		if id := flinksavepoint.OperatorIDFromUID(r.UID); id.String() != r.OperatorID || src.Operator.ID != id {
			t.Errorf("uid %s: OperatorIDFromUID %s, the operator's %s, Flink's %s", r.UID, id, src.Operator.ID, r.OperatorID)
		}
		if version != "1.20" && src.Operator.UID != r.UID {
			t.Errorf("uid %s: metadata version %d records uid %q", r.UID, sp.Version, src.Operator.UID)
		}
		if d := cmp.Diff(sortRef(r.Splits), asRef(src.Splits)); d != "" {
			t.Errorf("uid %s: this package's splits differ from the State Processor API's (-flink +go):\n%s", r.UID, d)
		}
	}
	// Flink reads an operator without a SourceReaderState as an empty list:
	// this package refuses it, as it refuses a uid of no operator (which
	// Flink refuses too).
	if ref[2].Error != "" || len(ref[2].Splits) != 0 {
		t.Errorf("Flink on the map operator: %+v, want no splits", ref[2])
	}
	if _, err := sp.KafkaSource("positions"); !errors.Is(err, flinksavepoint.ErrNoSource) {
		t.Errorf("the map operator as a source: %v, want ErrNoSource", err)
	}
	if ref[3].Error == "" {
		t.Errorf("Flink read a uid of no operator: %+v", ref[3])
	}
	if _, err := sp.KafkaSource("no-such-operator"); !errors.Is(err, flinksavepoint.ErrNoSource) {
		t.Errorf("a uid of no operator: %v, want ErrNoSource (Flink: %s)", err, ref[3].Error)
	} else {
		t.Logf("a uid of no operator: %v; Flink: %s", err, ref[3].Error)
	}
	if _, err := sp.KafkaSource(""); !errors.Is(err, flinksavepoint.ErrAmbiguous) {
		t.Errorf("no uid with two sources: %v, want ErrAmbiguous", err)
	}

	// The positions are the job's own for the savepoint's checkpoint, and
	// the idle partition's split has read nothing: it starts at the group's commit.
	all := offsets.GroupOffsets{}
	for _, src := range got {
		for p, c := range src.Positions() {
			all[p] = c
		}
	}
	if d := cmp.Diff(final.Offsets, all); d != "" {
		t.Errorf("positions differ from the job's last checkpoint event (-job +savepoint):\n%s", d)
	}
	unread := got[flinkjob.SourceUID].Unread()
	if len(unread) != 1 || unread[0].Partition != (offsets.SourcePartition{Topic: idle}) || unread[0].StartingOffset != flinksavepoint.CommittedOffset {
		t.Errorf("unread splits %+v, want %s-0 at the committed-offset marker", unread, idle)
	}
	t.Logf("uid %s: %d splits, uid %s: %d splits, all equal to Flink's", flinkjob.SourceUID, len(got[flinkjob.SourceUID].Splits), secondUID, len(got[secondUID].Splits))

	if *update {
		record(t, version, files, path, sp, ref[:2], final.Offsets)
	}
}

// recorded is what testdata keeps of a savepoint beside its files: Flink's
// answers and the job's positions.
type recorded struct {
	Flink     string                        `json:"flink"`
	Version   int32                         `json:"metadata_version"`
	Reference []flinkjob.ReferencePositions `json:"state_processor_api"`
	Job       map[string]map[string]int64   `json:"job_positions"`
}

func record(t *testing.T, version string, files bool, path string, sp *flinksavepoint.Savepoint, ref []flinkjob.ReferencePositions, job offsets.GroupOffsets) {
	name := "flink-" + version
	if files {
		name += "-files"
	}
	dir := filepath.Join("testdata", name)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dir, os.DirFS(sp.Location)); err != nil {
		t.Fatal(err)
	}
	r := recorded{Flink: version, Version: sp.Version, Reference: ref, Job: map[string]map[string]int64{}}
	for p, c := range job {
		if r.Job[p.Topic] == nil {
			r.Job[p.Topic] = map[string]int64{}
		}
		r.Job[p.Topic][strconv.Itoa(int(p.Partition))] = c
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", name+".json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %s into %s", path, dir)
}

func asRef(splits []flinksavepoint.Split) []flinkjob.ReferenceSplit {
	out := []flinkjob.ReferenceSplit{}
	for _, s := range splits {
		out = append(out, flinkjob.ReferenceSplit{Topic: s.Partition.Topic, Partition: s.Partition.Partition, StartingOffset: s.StartingOffset, StoppingOffset: s.StoppingOffset})
	}
	return out
}

func sortRef(in []flinkjob.ReferenceSplit) []flinkjob.ReferenceSplit {
	out := append([]flinkjob.ReferenceSplit{}, in...)
	slices.SortFunc(out, func(a, b flinkjob.ReferenceSplit) int {
		return offsets.SourcePartition{Topic: a.Topic, Partition: a.Partition}.Compare(offsets.SourcePartition{Topic: b.Topic, Partition: b.Partition})
	})
	return out
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
