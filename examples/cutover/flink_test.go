//go:build sandbox

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/cutover"
	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/internal/flinkjob"
	"github.com/mm2cutover/mm2cutover/internal/flinklike"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// The proofs on real Flink drive the CLI as an operator does: each step is
// run(args) with the flags of a real cli. Flink runs in local mode as a
// process (internal/flinkjob); MM2 on the sandbox's two Connect workers.

// flinkVersion is the Flink line a proof runs on: MM2CUTOVER_FLINK_VERSION
// when set, else the proof's own default (so that CI runs both lines).
func flinkVersion(def string) string {
	if v := os.Getenv(flinkjob.VersionEnv); v != "" {
		return v
	}
	return def
}

// flinkCase is one proof's topics, group, connector and traffic.
type flinkCase struct {
	t         *testing.T
	sb        *sandbox.Sandbox
	dir       string
	version   string
	group     string
	connector string
	topics    map[string]int32
	parts     []flinklike.Partition
	traffic   *flinklike.Traffic
	src, tgt  *kafkaadmin.Client
	log       *slog.Logger
	lastErr   string // the stderr of the last cli call
}

// newFlinkCase creates two topics (4 and 2 partitions) on both clusters,
// writes 20 records to every partition (Flink commits nothing for a
// partition it never read a record from: see internal/flinkjob TestLifecycle),
// and starts traffic on every partition: 20 records a second each.
func newFlinkCase(t *testing.T, ctx context.Context, name, version string) *flinkCase {
	t.Helper()
	sb := sandboxtest.Shared(t)
	prefix := name + strconv.FormatInt(time.Now().UnixNano()%1_000_000, 36) + "-"
	fc := &flinkCase{t: t, sb: sb, dir: t.TempDir(), version: version,
		group: prefix + "flink-replicator", connector: prefix + "mm2",
		topics: map[string]int32{prefix + "orders": 4, prefix + "payments": 2},
		log:    slog.New(slog.NewTextHandler(testWriter{t}, nil))}
	fc.parts = flinklike.All(fc.topics)
	for topic, n := range fc.topics {
		for _, b := range []string{sb.Source().Bootstrap(), sb.Target().Bootstrap()} {
			if err := sandbox.CreateTopic(ctx, b, topic, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := flinklike.Produce(ctx, sb.Source().Bootstrap(), fc.parts, 20); err != nil {
		t.Fatal(err)
	}
	var err error
	if fc.src, err = kafkaadmin.NewClient(kafkaadmin.Config{BootstrapServers: []string{sb.Source().Bootstrap()}}); err != nil {
		t.Fatal(err)
	}
	if fc.tgt, err = kafkaadmin.NewClient(kafkaadmin.Config{BootstrapServers: []string{sb.Target().Bootstrap()}}); err != nil {
		t.Fatal(err)
	}
	if fc.traffic, err = flinklike.StartTraffic(ctx, sb.Source().Bootstrap(), fc.parts, 2, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fc.traffic.Stop() })
	return fc
}

func (fc *flinkCase) topicNames() []string {
	var names []string
	for n := range fc.topics {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (fc *flinkCase) tps() []offsets.SourcePartition {
	var out []offsets.SourcePartition
	for _, p := range fc.parts {
		out = append(out, offsets.SourcePartition{Topic: p.Topic, Partition: p.Partition})
	}
	return out
}

// startFlink starts the real Flink job: from savepoint, or from the
// group's committed offsets without state when savepoint is "".
func (fc *flinkCase) startFlink(ctx context.Context, savepoint string) *flinkjob.Job {
	return fc.startFlinkKeep(ctx, savepoint, false)
}

// startFlinkKeep is startFlink; keep keeps the job's cluster and its REST
// API after the job stopped, until job.Close.
func (fc *flinkCase) startFlinkKeep(ctx context.Context, savepoint string, keep bool) *flinkjob.Job {
	fc.t.Helper()
	job, err := flinkjob.Start(ctx, flinkjob.Config{Version: fc.version, Dir: filepath.Join(fc.dir, "flink"),
		Source: fc.sb.Source().Bootstrap(), Target: fc.sb.Target().Bootstrap(), Group: fc.group, Topics: fc.topicNames(),
		CheckpointInterval: 2 * time.Second, FromSavepoint: savepoint, KeepCluster: keep, Logger: fc.log})
	if errors.Is(err, flinkjob.ErrNoFlink) && os.Getenv("CI") != "true" {
		fc.t.Skipf("no Flink job here: %v", err) // CI=true fails instead
	}
	if err != nil {
		fc.t.Fatal(err)
	}
	fc.t.Cleanup(func() {
		job.Kill()
		if fc.t.Failed() {
			fc.t.Logf("flink job log (%s):\n%s", job.LogPath(), job.LogTail(40))
		}
	})
	return job
}

// waitCheckpoints waits until n more checkpoints completed that cover
// every partition.
func (fc *flinkCase) waitCheckpoints(ctx context.Context, job *flinkjob.Job, n int) flinkjob.Checkpoint {
	fc.t.Helper()
	cp, _ := job.LastCheckpoint()
	for n > 0 {
		var err error
		if cp, err = job.WaitCheckpoint(ctx, cp.ID); err != nil {
			fc.t.Fatal(err)
		}
		if len(cp.Offsets) == len(fc.parts) {
			n--
		}
	}
	return cp
}

// cli runs the cutover CLI with the flags of this case and args.
func (fc *flinkCase) cli(args ...string) (code int, stdout string) {
	fc.t.Helper()
	base := []string{
		"-source-bootstrap", fc.sb.Source().Bootstrap(), "-target-bootstrap", fc.sb.Target().Bootstrap(),
		"-connect-url", fc.sb.ConnectURL(), "-connector", fc.connector, "-group", fc.group,
		"-topics", strings.Join(fc.topicNames(), ","), "-plan", filepath.Join(fc.dir, "plan.json"),
		"-stability-window", "5s", "-readback-timeout", "1m", "-catchup-timeout", "2m",
	}
	var out, errb bytes.Buffer
	code = run(append(base, args...), &out, &errb)
	fc.t.Logf("cutover %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
	fc.lastErr = errb.String()
	return code, out.String()
}

func (fc *flinkCase) committed(ctx context.Context) offsets.GroupOffsets {
	fc.t.Helper()
	g, err := fc.src.GroupOffsets(ctx, fc.group, fc.topicNames())
	if err != nil {
		fc.t.Fatal(err)
	}
	return g
}

func (fc *flinkCase) ends(ctx context.Context, r *kafkaadmin.Client) offsets.GroupOffsets {
	fc.t.Helper()
	b, err := r.LogBounds(ctx, fc.tps())
	if err != nil {
		fc.t.Fatal(err)
	}
	out := offsets.GroupOffsets{}
	for p, lb := range b {
		out[p] = lb.End
	}
	return out
}

// verifyReport runs `cutover -json verify` after resume and returns its report.
func (fc *flinkCase) verifyReport() cutover.Report {
	fc.t.Helper()
	code, out := fc.cli("-json", "verify")
	if code != app.ExitOK {
		fc.t.Fatalf("verify: exit %d", code)
	}
	var rep cutover.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		fc.t.Fatalf("verify -json: %v\n%s", err, out)
	}
	return rep
}

// finalCheck stops the traffic, waits until the target holds every source
// record (the replicator in charge caught up) and compares every partition.
func (fc *flinkCase) finalCheck(ctx context.Context) map[offsets.SourcePartition]flinklike.Result {
	fc.t.Helper()
	if _, err := fc.traffic.Stop(); err != nil {
		fc.t.Fatal(err)
	}
	out := map[offsets.SourcePartition]flinklike.Result{}
	deadline := time.Now().Add(2 * time.Minute)
	for _, p := range fc.parts {
		for {
			r, err := flinklike.Check(ctx, fc.sb.Source().Bootstrap(), fc.sb.Target().Bootstrap(), p.Topic, p.Partition, p.Topic)
			if err != nil {
				fc.t.Fatal(err)
			}
			if r.Lost == 0 || time.Now().After(deadline) {
				out[offsets.SourcePartition{Topic: p.Topic, Partition: p.Partition}] = r
				break
			}
			time.Sleep(time.Second)
		}
	}
	return out
}

// TestFlinkToMM2AndBack proves the cutover and its rollback on real Flink, under
// live traffic throughout:
//
//  1. Flink replicates; its group is Empty with no members while it runs,
//     and precheck's stability window catches it committing (exit 3).
//  2. Flink is stopped with a savepoint; the cutover runs (run -yes):
//     precheck sees the group settle, MM2 resumes from C.
//  3. MM2 replicates, then `rollback -rollback-group G -yes` commits
//     C' = M'+1, and Flink is started from the group's committed offsets
//     without restoring state (the rollback of docs/flink.md).
//  4. Every source record is on the target once, except the records Flink
//     wrote past its last group commit: Flink commits a savepoint's offsets
//     asynchronously while its sources shut down and often does not get to
//     it, so the group lags the savepoint by one checkpoint and MM2 copies
//     those records again. Their number is known before the cutover (the
//     savepoint's offsets minus C, as the job reports them), verify's
//     boundary report says the same number, and the rollback adds none.
//     The precheck, given the savepoint, warns with that number
//     (group-vs-savepoint).
//
// TestFlinkToMM2AndBackFromSavepoint is the same with C from the savepoint
// (-offsets-from flink-savepoint:DIR): 0 duplicated in both directions. The
// rollback's reverse plan is still the group (C' = M'+1 committed to it),
// from which Flink restarts without state. Before it, the precheck refuses a
// group ahead of the savepoint.
func TestFlinkToMM2AndBack(t *testing.T) {
	testFlinkToMM2AndBack(t, "f2m-", flinkVersion("1.20"), false)
}

func TestFlinkToMM2AndBackFromSavepoint(t *testing.T) {
	testFlinkToMM2AndBack(t, "f2s-", flinkVersion("2.2"), true)
}

func testFlinkToMM2AndBack(t *testing.T, name, version string, fromSavepoint bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	fc := newFlinkCase(t, ctx, name, version)

	job := fc.startFlinkKeep(ctx, "", fromSavepoint)
	fc.waitCheckpoints(ctx, job, 2)
	// Flink commits a completed checkpoint's offsets asynchronously: on a
	// loaded machine the group may not exist yet (Dead) two checkpoints in.
	waitFor(ctx, t, "Flink's first commit on every partition", 3*time.Minute, 500*time.Millisecond, func(ctx context.Context) error {
		if got, want := len(fc.committed(ctx)), len(fc.tps()); got != want {
			return fmt.Errorf("the group has commits on %d of %d partitions", got, want)
		}
		return nil
	})
	g, err := fc.src.DescribeGroup(ctx, fc.group)
	if err != nil {
		t.Fatal(err)
	}
	if g.State != kafkaadmin.GroupEmpty || len(g.Members) != 0 || g.ProtocolType != "" {
		t.Errorf("while Flink %s runs its group is %s, protocol %q, %d members; want Empty, \"\", none", job.FlinkVersion(), g.State, g.ProtocolType, len(g.Members))
	}
	if code, out := fc.cli("precheck"); code != app.ExitCheckFailed || !strings.Contains(out, "offsets-stable") {
		t.Errorf("precheck while Flink runs: exit %d, want %d with offsets-stable failing", code, app.ExitCheckFailed)
	}

	savepoint, err := job.StopWithSavepoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cps := job.Checkpoints()
	sp := cps[len(cps)-1]
	c := fc.committed(ctx)
	written := fc.ends(ctx, fc.tgt)
	past := map[offsets.SourcePartition]int64{}
	lagging := 0
	for _, p := range fc.tps() {
		if written[p] != sp.Offsets[p] {
			t.Fatalf("%s: the target ends at %d, want the savepoint's offset %d", p, written[p], sp.Offsets[p])
		}
		past[p] = written[p] - c[p]
		if past[p] > 0 {
			lagging++
		}
	}
	t.Logf("stopped with savepoint %s: savepoint offsets %v, group %v: %d of %d partitions' commits lag the savepoint", savepoint, sp.Offsets, c, lagging, len(fc.parts))
	var lag int64
	for _, n := range past {
		lag += n
	}

	from := []string{"-savepoint", savepoint}
	if fromSavepoint {
		// With Flink's word that the job stopped at this savepoint, the
		// precheck shortens the stability window (5 s here) to 2 s by itself.
		from = []string{"-offsets-from", "flink-savepoint:" + savepoint, "-flink-rest", job.REST(), "-flink-job", job.JobID()}
		past = map[offsets.SourcePartition]int64{} // none
		// A group ahead of the savepoint is refused, as the input and beside it.
		ahead := fc.group + "-ahead"
		commits := offsets.GroupOffsets{}
		for _, p := range fc.tps() {
			commits[p] = sp.Offsets[p] + 1
		}
		if err := fc.src.CommitOffsets(ctx, ahead, commits); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"-group", ahead, "-savepoint", savepoint, "precheck"}, {"-group", ahead, "-offsets-from", "flink-savepoint:" + savepoint, "precheck"}} {
			if code, out := fc.cli(args...); code != app.ExitCheckFailed || !strings.Contains(out, "is ahead of savepoint") {
				t.Errorf("precheck %v with the group past the savepoint: exit %d, want %d with group-vs-savepoint failing", args, code, app.ExitCheckFailed)
			}
		}
	} else {
		code, out := fc.cli(append(from, "precheck")...)
		want := "equals savepoint"
		if lag > 0 {
			want = "MM2 will copy those " + strconv.FormatInt(lag, 10) + " records again"
		}
		if code != app.ExitOK || !strings.Contains(out, want) {
			t.Errorf("precheck with the savepoint: exit %d, want %d and group-vs-savepoint saying %q", code, app.ExitOK, want)
		}
	}
	if fromSavepoint {
		code, out := fc.cli(append(from, "precheck")...)
		if code != app.ExitOK || !strings.Contains(out, "its last completed savepoint is the one given") {
			t.Errorf("precheck with Flink's REST API: exit %d, want %d with flink-stopped passing", code, app.ExitOK)
		}
		if want := "no window: C is the savepoint's, and Flink proved the job stopped there"; !strings.Contains(out, want) {
			t.Errorf("precheck with Flink's proof of the stop: offsets-stable does not say %q:\n%s", want, out)
		}
		// The re-check before apply reads the savepoint the plan names again:
		// gone, the plan is refused before anything is written.
		if code, _ := fc.cli(append(from, "plan")...); code != app.ExitOK {
			t.Fatalf("plan: exit %d", code)
		}
		dir := strings.TrimPrefix(savepoint, "file:")
		if err := os.Rename(dir, dir+".moved"); err != nil {
			t.Fatal(err)
		}
		if code, out := fc.cli("apply"); code != app.ExitRefused || !strings.Contains(out+fc.lastErr, "missing state file") {
			t.Errorf("apply with the plan's savepoint gone: exit %d, want %d naming it", code, app.ExitRefused)
		}
		if err := os.Rename(dir+".moved", dir); err != nil {
			t.Fatal(err)
		}
	}
	if code, _ := fc.cli(append(from, "-yes", "run")...); code != app.ExitOK {
		t.Fatalf("cutover run: exit %d", code)
	}
	if p, err := os.ReadFile(filepath.Join(fc.dir, "plan.json")); err != nil || fromSavepoint != strings.Contains(string(p), `"kind":"flink-savepoint"`) {
		t.Errorf("the plan does not record where C came from (from the savepoint: %v): %v\n%s", fromSavepoint, err, p)
	}
	if fromSavepoint {
		if err := job.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range fc.verifyReport().Boundary {
		if !b.OK() || b.Duplicates != past[b.Partition] {
			t.Errorf("%s: verify says %+v; want the record at C, and %d duplicates from Flink", b.Partition, b, past[b.Partition])
		}
	}

	// MM2 replicates under traffic: past Flink's duplicates somewhere.
	copiedFrom := map[offsets.SourcePartition]int64{}
	for _, p := range fc.tps() {
		copiedFrom[p] = c[p] + past[p]
	}
	mm2, err := connect.New(fc.sb.ConnectURL())
	if err != nil {
		t.Fatal(err)
	}
	waitReplicatedPast(ctx, t, mm2, fc.connector, copiedFrom, 1)
	if code, _ := fc.cli("-rollback-group", fc.group, "-yes", "rollback"); code != app.ExitOK {
		t.Fatalf("rollback: exit %d", code)
	}
	cPrime := fc.committed(ctx)
	mm2End := fc.ends(ctx, fc.tgt)
	for _, p := range fc.tps() {
		if cPrime[p] != mm2End[p]-past[p] {
			t.Errorf("%s: C' = %d; MM2 stopped with the target at %d, of which %d are Flink's duplicates: want %d", p, cPrime[p], mm2End[p], past[p], mm2End[p]-past[p])
		}
	}

	job = fc.startFlink(ctx, "") // from the group, without state
	fc.waitCheckpoints(ctx, job, 1)
	if _, err := fc.traffic.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := job.WaitRead(ctx, fc.ends(ctx, fc.src)); err != nil {
		t.Fatal(err)
	}
	if _, err := job.StopWithSavepoint(ctx); err != nil {
		t.Fatal(err)
	}
	total, dups := 0, 0
	for p, r := range fc.finalCheck(ctx) {
		total += r.Source
		dups += r.Duplicated
		if r.Lost != 0 || r.OutOfOrder != 0 || r.Foreign != 0 || int64(r.Duplicated) != past[p] {
			t.Errorf("%s: %+v; want 0 lost and the %d records Flink wrote past its last commit duplicated", p, r, past[p])
		}
	}
	if fromSavepoint {
		t.Logf("Flink %s -> MM2 -> Flink with C from the savepoint: %d source records, 0 lost, %d duplicated (the group lagged the savepoint by %d records)", fc.version, total, dups, lag)
		return
	}
	t.Logf("Flink %s -> MM2 -> Flink: %d source records, 0 lost, %d duplicated (all at the Flink -> MM2 boundary, from the savepoint's lost commit)", fc.version, total, dups)
}

// TestFlinkCancelled proves the cutover after a crash on real Flink: Flink is
// cancelled without a savepoint (as a crash ends it) while traffic flows.
// Its sink wrote records past the last completed checkpoint, whose offsets
// are the group's C (or lag them by one commit); the cutover from C copies
// those records again. Per partition the duplicates are exactly the target's
// end minus C, none is lost, and verify's boundary report says the number
// before anyone counts.
func TestFlinkCancelled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	fc := newFlinkCase(t, ctx, "fcx-", flinkVersion("2.2"))

	job := fc.startFlink(ctx, "")
	fc.waitCheckpoints(ctx, job, 2)
	time.Sleep(time.Second) // cancel between two checkpoints
	if err := job.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	cps := job.Checkpoints()
	last, prev := cps[len(cps)-1], cps[len(cps)-2]
	c := fc.committed(ctx)
	written := fc.ends(ctx, fc.tgt)
	past := map[offsets.SourcePartition]int64{}
	var total, afterCheckpoint int64
	for _, p := range fc.tps() {
		if c[p] > last.Offsets[p] || c[p] < prev.Offsets[p] {
			t.Errorf("%s: C = %d, want the last checkpoint's %d or the one before's %d", p, c[p], last.Offsets[p], prev.Offsets[p])
		}
		if written[p] < last.Offsets[p] {
			t.Errorf("%s: the target ends at %d, before the last checkpoint's %d", p, written[p], last.Offsets[p])
		}
		past[p] = written[p] - c[p]
		total += past[p]
		afterCheckpoint += written[p] - last.Offsets[p]
	}
	t.Logf("Flink %s cancelled after checkpoint %d: C %v, target ends %v: %d records written past C (%d past the last checkpoint)",
		job.FlinkVersion(), last.ID, c, written, total, afterCheckpoint)
	if total == 0 {
		t.Errorf("no record was written past the last commit: the crash case did not happen")
	}

	if code, _ := fc.cli("-yes", "run"); code != app.ExitOK {
		t.Fatalf("cutover run: exit %d", code)
	}
	for _, b := range fc.verifyReport().Boundary {
		if !b.OK() || b.Duplicates != past[b.Partition] {
			t.Errorf("%s: verify says %+v; want the record at C and %d duplicates", b.Partition, b, past[b.Partition])
		}
	}
	var dups int64
	for p, r := range fc.finalCheck(ctx) {
		dups += int64(r.Duplicated)
		if r.Lost != 0 || r.OutOfOrder != 0 || r.Foreign != 0 || int64(r.Duplicated) != past[p] {
			t.Errorf("%s: %+v; want 0 lost and %d duplicated", p, r, past[p])
		}
	}
	t.Logf("after the cutover: 0 lost, %d duplicated, as predicted", dups)
}

// TestSandboxDemoRealFlink runs the demo's scenario as `cutover -sandbox`
// does by default, with the real Flink job as the old job and C from its
// savepoint, here under MM2's DefaultReplicationPolicy (Flink writes to
// "source.<topic>"): the demo passes when nothing is lost and nothing is
// duplicated, and says by how much the group lagged the savepoint. (The
// group path, -from-group, is TestFlinkToMM2AndBack's, with exactly the
// records Flink wrote past its last commit duplicated.)
func TestSandboxDemoRealFlink(t *testing.T) {
	if os.Getenv(flinkjob.VersionEnv) == "" {
		t.Setenv(flinkjob.VersionEnv, "1.20")
	}
	sb := sandboxtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var out bytes.Buffer
	prefix := "demo" + strconv.FormatInt(time.Now().UnixNano()%1_000_000, 36) + "-"
	sc, err := newScenario(sb, slog.New(slog.NewTextHandler(testWriter{t}, nil)), &out, false, prefix, "default")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sc.dir)
	sc.realFlink = true
	if err := sc.start(ctx); errors.Is(err, flinkjob.ErrNoFlink) && os.Getenv("CI") != "true" {
		t.Skipf("no Flink job here: %v", err) // CI=true fails instead
	} else if err != nil {
		t.Fatal(err)
	}
	defer sc.traffic.Stop()
	if err := sc.cutover(ctx); err != nil {
		t.Fatalf("cutover: %v\n%s", err, out.String())
	}
	res, err := sc.finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sc.printFinal(res, 0)
	t.Logf("demo:\n%s", out.String())
	if err := res.err(); err != nil || res.Duplicated != 0 || res.Expected != 0 {
		t.Fatalf("%v: %d duplicated, %d expected; want none from the savepoint", err, res.Duplicated, res.Expected)
	}
	if !strings.Contains(out.String(), "0 lost, 0 duplicated: C came from Flink's savepoint") {
		t.Errorf("the demo's last line does not say it:\n%s", out.String())
	}
}

// TestDedicatedMM2ToConnect proves the cutover from dedicated mode: real
// MirrorMaker 2 in dedicated mode (org.apache.kafka.connect.mirror.MirrorMaker)
// replicates under live traffic and is stopped; the cutover to a
// MirrorSourceConnector on the Connect cluster takes C from the old
// MirrorMaker's offsets topic (-offsets-from mm2:TOPIC, M stored there
// becomes C = M+1), under another source alias than the old one. While the
// old MirrorMaker runs, precheck fails; a wrong -offsets-alias is refused.
// After the cutover every source record is on the target exactly once.
func TestDedicatedMM2ToConnect(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	fc := newFlinkCase(t, ctx, "dmm-", "")
	alias := strings.TrimSuffix(fc.group, "-flink-replicator") + "old"
	mm2, err := fc.sb.StartDedicatedMM2(ctx, sandbox.DedicatedConfig{Topics: fc.topicNames(), SourceAlias: alias})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("dedicated MirrorMaker log (%s):\n%s", mm2.Log(), mm2.LogTail(40))
		}
		mm2.Close()
	})
	topic := kafkaadmin.DedicatedOffsetsTopic(alias)
	from := []string{"-offsets-from", "mm2:" + topic, "-offsets-alias", alias}
	// Wait until it copied every partition's seed and stored offsets for them.
	for {
		got, err := fc.tgt.ReadConnectOffsets(ctx, topic, kafkaadmin.MirrorSourceConnectorName)
		if err == nil && len(got) == len(fc.parts) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("dedicated MirrorMaker stored no offsets for every partition: %v, %v", got, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if code, out := fc.cli(append(from, "precheck")...); code != app.ExitCheckFailed || !strings.Contains(out, "input-stable") {
		t.Errorf("precheck while the old MirrorMaker runs: exit %d, want %d with input-stable failing", code, app.ExitCheckFailed)
	}
	if err := mm2.Stop(ctx); err != nil {
		t.Fatalf("stop dedicated MirrorMaker: %v", err)
	}
	if code, _ := fc.cli("-offsets-from", "mm2:"+topic, "-offsets-alias", "source", "plan"); code != app.ExitUsage {
		t.Errorf("a plan from the old MirrorMaker's offsets under the wrong alias: exit %d, want %d", code, app.ExitUsage)
	}

	if code, _ := fc.cli(append(from, "-yes", "run")...); code != app.ExitOK {
		t.Fatalf("cutover run: exit %d", code)
	}
	for _, b := range fc.verifyReport().Boundary {
		if !b.OK() || b.Duplicates != 0 {
			t.Errorf("%s: verify says %+v; want the record at C and no duplicates", b.Partition, b)
		}
	}
	total := 0
	for p, r := range fc.finalCheck(ctx) {
		total += r.Source
		if !r.OK() {
			t.Errorf("%s: %+v; want every record once", p, r)
		}
	}
	t.Logf("dedicated MirrorMaker -> MirrorSourceConnector on Connect: %d source records, 0 lost, 0 duplicated", total)
}
