package flinkjob_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/flinkjob"
	"github.com/mm2cutover/mm2cutover/internal/flinklike"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
)

func TestMain(m *testing.M) { sandboxtest.Main(m) }

// TestLifecycle runs the real Flink job, for each supported Flink line,
// through every way it starts and ends, under live traffic on a 4-partition
// topic, and pins what Flink does to the consumer group at each point:
//
//  1. started without state (from the group; EARLIEST as it has none): the
//     group is Empty with no members and protocol type "" while the job
//     runs, and its committed offsets move with the checkpoints; a partition
//     the job never read a record from gets no commit at all (KafkaSource
//     commits only splits whose position it knows), so a cutover's precheck
//     blocks it as missing until it receives a record;
//  2. stopped with a savepoint: the target holds exactly the source records
//     before the savepoint's offsets S, and the group's offsets C are S or
//     lag it by the last commit (Flink commits a savepoint's offsets
//     asynchronously while the sources shut down, and may not get to it);
//  3. restored from the savepoint, then cancelled without one (the crash
//     case): the sink wrote past the last completed checkpoint L, and C is L
//     or lags it by one commit;
//  4. started from the group without state, as docs/flink.md's rollback says:
//     it re-copies exactly the records written after C, so every source
//     record is on the target once plus those F-C duplicates, none lost.
func TestLifecycle(t *testing.T) {
	for _, v := range flinkjob.Versions() {
		t.Run("flink-"+v, func(t *testing.T) { testLifecycle(t, v) })
	}
}

func testLifecycle(t *testing.T, version string) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	f := newFixture(t, ctx, "lifecycle")
	f.startTraffic(t, ctx)

	// 1. From the group, which has nothing: every partition from offset 0.
	job := f.start(t, ctx, version, "")
	if got := job.FlinkVersion(); !strings.HasPrefix(got, version+".") {
		t.Errorf("the job runs Flink %s, want %s.x", got, version)
	}
	first := f.waitCheckpoints(t, ctx, job, 2)
	g, err := f.src.DescribeGroup(ctx, f.group)
	if err != nil {
		t.Fatal(err)
	}
	if g.State != kafkaadmin.GroupEmpty || len(g.Members) != 0 || g.ProtocolType != "" {
		t.Errorf("while Flink runs its group is %s, protocol %q, %d members; want Empty, \"\", 0 (KafkaSource uses assign())", g.State, g.ProtocolType, len(g.Members))
	}
	f.waitCommitted(t, ctx, first.Offsets)
	idle, err := f.src.GroupOffsets(ctx, f.group, []string{f.idle})
	if err != nil {
		t.Fatal(err)
	}
	if len(idle) != 0 {
		t.Errorf("Flink committed %v for a partition it never read a record from", idle)
	}
	t.Logf("while Flink runs: group %s, protocol %q, %d members; commits follow checkpoints", g.State, g.ProtocolType, len(g.Members))

	// 2. Stop with a savepoint.
	path, err := job.StopWithSavepoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cps := job.Checkpoints()
	sp, before := cps[len(cps)-1], cps[len(cps)-2]
	c1 := f.committed(t, ctx)
	lagging := 0
	for _, p := range f.tps() {
		if c1[p] > sp.Offsets[p] || c1[p] < before.Offsets[p] {
			t.Errorf("%s: committed %d after the savepoint, want between the last checkpoint's %d and the savepoint's %d", p, c1[p], before.Offsets[p], sp.Offsets[p])
		}
		if c1[p] < sp.Offsets[p] {
			lagging++
		}
	}
	t.Logf("stop-with-savepoint %d (%s): offsets %v; the group has %v (%d of %d partitions lag the savepoint)", sp.ID, path, sp.Offsets, c1, lagging, len(f.tps()))
	ends := f.targetEnds(t, ctx)
	for _, p := range f.tps() {
		if ends[p] != sp.Offsets[p] {
			t.Errorf("%s: the target ends at %d after the savepoint, want its offset %d (the sink flushes on it, the source stops after it)", p, ends[p], sp.Offsets[p])
		}
	}

	// 3. Restore from the savepoint, then cancel: the crash case.
	job = f.start(t, ctx, version, path)
	f.waitCheckpoints(t, ctx, job, 2)
	time.Sleep(time.Second) // the cancel falls between checkpoints
	if err := job.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	last, _ := job.LastCheckpoint()
	c2 := f.committed(t, ctx)
	written := f.targetEnds(t, ctx)
	past := 0
	for _, p := range f.tps() {
		if c2[p] > last.Offsets[p] {
			t.Errorf("%s: committed %d, past the last checkpoint's %d", p, c2[p], last.Offsets[p])
		}
		if written[p] < last.Offsets[p] {
			t.Errorf("%s: the target ends at %d, before the last checkpoint's %d: the sink did not flush on it", p, written[p], last.Offsets[p])
		}
		past += int(written[p] - c2[p])
	}
	t.Logf("cancel after checkpoint %d %v: the group has %v, the target ends at %v: %d records written past the commit", last.ID, last.Offsets, c2, written, past)

	// 4. From the group without state: re-copies what was written past C.
	job = f.start(t, ctx, version, "")
	if _, err := f.traffic.Stop(); err != nil {
		t.Fatal(err)
	}
	srcEnds := f.sourceEnds(t, ctx)
	if _, err := job.WaitRead(ctx, srcEnds); err != nil {
		t.Fatal(err)
	}
	if _, err := job.StopWithSavepoint(ctx); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, r := range f.check(t, ctx) {
		p := offsets.SourcePartition{Topic: r.Topic, Partition: r.Partition}
		total += r.Source
		if want := int(written[p] - c2[p]); r.Lost != 0 || r.Duplicated != want || r.OutOfOrder != 0 || r.Foreign != 0 {
			t.Errorf("%s: %+v; want 0 lost and the %d records written past the commit duplicated", p, r, want)
		}
	}
	f.checkBytes(t, ctx)
	t.Logf("%d source records; on the target once each, plus the %d written past the commit before the cancel", total, past)
}

// fixture is one topic on both clusters, seeded on every partition (Flink
// commits no offset for a partition it never read a record from), and
// traffic on every partition.
type fixture struct {
	sb      *sandbox.Sandbox
	topic   string
	idle    string // a topic without records, also replicated
	group   string
	parts   []flinklike.Partition
	traffic *flinklike.Traffic
	src     *kafkaadmin.Client
	log     *slog.Logger
}

func newFixture(t *testing.T, ctx context.Context, name string) *fixture {
	t.Helper()
	sb := sandboxtest.Shared(t)
	f := &fixture{sb: sb, log: slog.New(slog.NewTextHandler(testWriter{t}, nil))}
	suffix := strconv.FormatInt(time.Now().UnixNano()%1_000_000, 36)
	f.topic, f.idle, f.group = name+"-"+suffix, name+"-idle-"+suffix, name+"-group-"+suffix
	f.parts = flinklike.All(map[string]int32{f.topic: 4})
	for _, b := range []string{sb.Source().Bootstrap(), sb.Target().Bootstrap()} {
		for topic, n := range map[string]int32{f.topic: 4, f.idle: 1} {
			if err := sandbox.CreateTopic(ctx, b, topic, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := flinklike.Produce(ctx, sb.Source().Bootstrap(), f.parts, 50); err != nil {
		t.Fatal(err)
	}
	var err error
	if f.src, err = kafkaadmin.NewClient(kafkaadmin.Config{BootstrapServers: []string{sb.Source().Bootstrap()}}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) tps() []offsets.SourcePartition {
	var out []offsets.SourcePartition
	for _, p := range f.parts {
		out = append(out, offsets.SourcePartition{Topic: p.Topic, Partition: p.Partition})
	}
	return out
}

// startTraffic produces 20 records a second to each partition until the
// test ends or f.traffic.Stop.
func (f *fixture) startTraffic(t *testing.T, ctx context.Context) {
	t.Helper()
	var err error
	if f.traffic, err = flinklike.StartTraffic(ctx, f.sb.Source().Bootstrap(), f.parts, 2, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.traffic.Stop() })
}

func (f *fixture) start(t *testing.T, ctx context.Context, version, savepoint string) *flinkjob.Job {
	t.Helper()
	job, err := flinkjob.Start(ctx, flinkjob.Config{Version: version, Dir: t.TempDir(),
		Source: f.sb.Source().Bootstrap(), Target: f.sb.Target().Bootstrap(),
		Group: f.group, Topics: []string{f.topic, f.idle}, CheckpointInterval: 2 * time.Second,
		FromSavepoint: savepoint, Logger: f.log})
	if errors.Is(err, flinkjob.ErrNoFlink) && os.Getenv("CI") != "true" {
		t.Skipf("no Flink job here: %v", err) // CI=true fails instead
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		job.Kill()
		if t.Failed() {
			t.Logf("flink job log:\n%s", job.LogTail(60))
		}
	})
	return job
}

// waitCheckpoints waits for n more checkpoints that include every partition.
func (f *fixture) waitCheckpoints(t *testing.T, ctx context.Context, job *flinkjob.Job, n int) flinkjob.Checkpoint {
	t.Helper()
	var cp flinkjob.Checkpoint
	for n > 0 {
		var err error
		if cp, err = job.WaitCheckpoint(ctx, cp.ID); err != nil {
			t.Fatal(err)
		}
		if len(cp.Offsets) == len(f.parts) {
			n--
		}
	}
	return cp
}

func (f *fixture) committed(t *testing.T, ctx context.Context) offsets.GroupOffsets {
	t.Helper()
	g, err := f.src.GroupOffsets(ctx, f.group, []string{f.topic})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func (f *fixture) ends(t *testing.T, ctx context.Context, bootstrap string) offsets.GroupOffsets {
	t.Helper()
	ends, err := flinklike.LogEnds(ctx, bootstrap, f.parts)
	if err != nil {
		t.Fatal(err)
	}
	out := offsets.GroupOffsets{}
	for p, e := range ends {
		out[offsets.SourcePartition{Topic: p.Topic, Partition: p.Partition}] = e
	}
	return out
}

func (f *fixture) sourceEnds(t *testing.T, ctx context.Context) offsets.GroupOffsets {
	return f.ends(t, ctx, f.sb.Source().Bootstrap())
}

func (f *fixture) targetEnds(t *testing.T, ctx context.Context) offsets.GroupOffsets {
	return f.ends(t, ctx, f.sb.Target().Bootstrap())
}

func (f *fixture) check(t *testing.T, ctx context.Context) []flinklike.Result {
	t.Helper()
	var rs []flinklike.Result
	for _, p := range f.parts {
		r, err := flinklike.Check(ctx, f.sb.Source().Bootstrap(), f.sb.Target().Bootstrap(), p.Topic, p.Partition, p.Topic)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

// checkBytes compares the first copy of each source record on the target
// byte for byte, timestamp included (flinklike.Check matches key, value and
// headers).
func (f *fixture) checkBytes(t *testing.T, ctx context.Context) {
	t.Helper()
	for _, p := range f.parts {
		src, err := flinklike.ReadAll(ctx, f.sb.Source().Bootstrap(), p.Topic, p.Partition)
		if err != nil {
			t.Fatal(err)
		}
		dst, err := flinklike.ReadAll(ctx, f.sb.Target().Bootstrap(), p.Topic, p.Partition)
		if err != nil {
			t.Fatal(err)
		}
		byValue := map[string]int{}
		for i, m := range src {
			byValue[string(m.Value)] = i
		}
		for _, m := range dst {
			s := src[byValue[string(m.Value)]]
			if !bytes.Equal(m.Key, s.Key) || !m.Timestamp.Equal(s.Timestamp) {
				t.Fatalf("%s-%d: target record %q: key %q at %v, source has %q at %v", p.Topic, p.Partition, m.Value, m.Key, m.Timestamp, s.Key, s.Timestamp)
			}
		}
	}
}

// waitCommitted waits until the group has committed at least want.
func (f *fixture) waitCommitted(t *testing.T, ctx context.Context, want offsets.GroupOffsets) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c := f.committed(t, ctx)
		if geq(c, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the group has committed %v, not yet %v", c, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func geq(a, b offsets.GroupOffsets) bool {
	for p, n := range b {
		if a[p] < n {
			return false
		}
	}
	return true
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
