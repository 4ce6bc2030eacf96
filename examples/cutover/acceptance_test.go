//go:build sandbox

package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/flinklike"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// TestAcceptance is the proof of the mission, on real Kafka and a real
// Connect cluster of two workers:
//
//  1. a Flink-like job replicates 2 topics / 12 partitions and stops while
//     producers keep writing to the source;
//  2. the cutover runs through the CLI's own code (precheck, plan, apply,
//     resume with approval, verification after resume);
//  3. under continued traffic, a rolling restart of the Connect workers and
//     then a SIGKILL of the worker running the task (which comes back, as a
//     Pod would);
//  4. after lag 0, every source record is on the target: 0 lost; the rolling
//     restart duplicates nothing; the kill duplicates, per partition, at
//     most what MM2 copied since its last offset commit (one
//     offset.flush.interval.ms or less before the kill): the source's end at
//     the kill minus the committed next offset, read from Connect just
//     before it.
func TestAcceptance(t *testing.T) {
	sb := sandboxtest.Dedicated(t, sandbox.Config{Workers: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var out bytes.Buffer
	log := slog.New(slog.NewTextHandler(testWriter{t}, nil))
	sc, err := newScenario(sb, log, &out, false, "", "identity")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sc.dir)
	if err := sc.start(ctx); err != nil {
		t.Fatal(err)
	}
	defer sc.traffic.Stop()
	if err := sc.cutover(ctx); err != nil {
		t.Fatalf("cutover: %v\n%s", err, out.String())
	}
	// runAll returns an error unless the verification after resume passed.
	t.Logf("cutover report:\n%s", out.String())

	// Rolling restart: each worker in turn stops gracefully (tasks stop and
	// commit their offsets) and comes back.
	hung := false
	for i, w := range sb.Workers() {
		time.Sleep(3 * time.Second)
		t.Logf("rolling restart: worker %d (%s)", i, w.URL())
		if err := w.Stop(ctx); errors.Is(err, sandbox.ErrStopHung) {
			// Connect now and then hangs on SIGTERM (see sandbox.ErrStopHung)
			// and is killed, like a Pod at the end of its grace period.
			t.Logf("worker %d hung on SIGTERM and was killed: %v", i, err)
			hung = true
		} else if err != nil {
			t.Fatalf("stop worker %d: %v", i, err)
		}
		if err := w.Start(ctx); err != nil {
			t.Fatalf("start worker %d: %v", i, err)
		}
	}
	waitRunning(ctx, t, sc)
	// MM2 copies again after the restart (and would copy twice what a
	// stopping task had not committed).
	waitReplicatedPast(ctx, t, sc.cli.env.Connect, sc.connector, nextOffsets(ctx, t, sc), 1)
	// A graceful stop commits the task's offsets: no duplicates.
	before := duplicates(ctx, t, sc)
	graceful := 0
	for _, n := range before {
		graceful += n
	}
	t.Logf("after the rolling restart: %d duplicates", graceful)
	if graceful != 0 && !hung {
		t.Errorf("the rolling restart duplicated %d records: a stopping task must commit what it copied", graceful)
	}

	// SIGKILL the worker that runs the task: no task stop, no offset commit.
	// MM2 then replicates again what it copied since its last offset commit
	// (at most one offset.flush.interval.ms ago): per partition, at most the
	// source end at the kill minus the committed next offset.
	w := taskWorker(ctx, t, sc, sb)
	committed, err := sc.cli.env.Connect.MirrorOffsets(ctx, sc.connector)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("SIGKILL: worker %s runs the task", w.URL())
	killedAt := time.Now()
	if err := w.Kill(); err != nil {
		t.Fatal(err)
	}
	endsAtKill, err := flinklike.LogEnds(ctx, sb.Source().Bootstrap(), flinklike.All(sc.topics))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatalf("restart killed worker: %v", err)
	}
	waitRunning(ctx, t, sc)
	t.Logf("task RUNNING again %v after the kill", time.Since(killedAt).Round(time.Millisecond))
	waitReplicatedPast(ctx, t, sc.cli.env.Connect, sc.connector, nextOffsets(ctx, t, sc), 1)

	res, err := sc.finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	next := map[flinklike.Partition]int64{}
	for _, o := range committed {
		if m, ok := o.Offset.Get(); ok {
			next[flinklike.Partition{Topic: o.Partition.Topic, Partition: o.Partition.Partition}] = m + 1
		}
	}
	t.Logf("%d source records, %d lost, %d duplicated (%d of them before the kill)", res.Records, res.Lost, res.Duplicated, graceful)
	for _, r := range res.Partitions {
		if r.Lost != 0 || r.OutOfOrder != 0 || r.Foreign != 0 {
			t.Errorf("%s-%d: %+v", r.Topic, r.Partition, r)
		}
		p := flinklike.Partition{Topic: r.Topic, Partition: r.Partition}
		allowed := int(endsAtKill[p] - next[p])
		byKill := r.Duplicated - before[p]
		t.Logf("%s-%d: %d duplicates from the kill; since the last offset commit before it the source got %d records", r.Topic, r.Partition, byKill, allowed)
		if byKill > allowed {
			t.Errorf("%s-%d: %d duplicates from the kill, more than MM2 can have copied since its last offset commit (%d)", r.Topic, r.Partition, byKill, allowed)
		}
	}
	if res.Records < 5000 {
		t.Errorf("only %d source records: the traffic did not run through the faults", res.Records)
	}
}

// duplicates counts, per partition, target records that are a second copy
// of a source record.
func duplicates(ctx context.Context, t *testing.T, sc *scenario) map[flinklike.Partition]int {
	t.Helper()
	n := map[flinklike.Partition]int{}
	for _, p := range flinklike.All(sc.topics) {
		r, err := flinklike.Check(ctx, sc.sb.Source().Bootstrap(), sc.sb.Target().Bootstrap(), p.Topic, p.Partition, sc.targetTopic(p.Topic))
		if err != nil {
			t.Fatal(err)
		}
		n[p] = r.Duplicated
	}
	return n
}

// nextOffsets returns the next offset MM2 will copy per partition, from
// the offsets Connect stores for the connector (M+1).
func nextOffsets(ctx context.Context, t *testing.T, sc *scenario) map[offsets.SourcePartition]int64 {
	t.Helper()
	got, err := sc.cli.env.Connect.MirrorOffsets(ctx, sc.connector)
	if err != nil {
		t.Fatal(err)
	}
	next := map[offsets.SourcePartition]int64{}
	for _, o := range got {
		if m, ok := o.Offset.Get(); ok {
			next[o.Partition.Source()] = m + 1
		}
	}
	return next
}

func waitRunning(ctx context.Context, t *testing.T, sc *scenario) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()
	if _, err := sc.cli.env.Connect.WaitRunning(ctx, sc.connector); err != nil {
		t.Fatalf("connector not RUNNING: %v", err)
	}
}

// taskWorker finds the worker that runs task 0, from its status.
func taskWorker(ctx context.Context, t *testing.T, sc *scenario, sb *sandbox.Sandbox) *sandbox.Worker {
	t.Helper()
	st, err := sc.cli.env.Connect.Status(ctx, sc.connector)
	if err != nil || len(st.Tasks) == 0 {
		t.Fatalf("status: %v, %+v", err, st)
	}
	for _, w := range sb.Workers() {
		if strings.TrimPrefix(w.URL(), "http://") == st.Tasks[0].WorkerID {
			return w
		}
	}
	t.Fatalf("no worker is %q", st.Tasks[0].WorkerID)
	return nil
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
