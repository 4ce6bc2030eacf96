package flinkrest_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/flinkrest"
	"github.com/mm2cutover/mm2cutover/internal/flinkjob"
	"github.com/mm2cutover/mm2cutover/internal/flinklike"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/verify"
)

func TestMain(m *testing.M) { sandboxtest.Main(m) }

// TestAgainstFlink asks the REST API of a real Flink job's cluster
// (internal/flinkjob with its cluster kept after the job ends, as a session
// cluster keeps it) about the job while it runs and after `flink stop`, and
// pins what the cutover's flink-stopped check reads: RUNNING, then FINISHED
// with the savepoint the stop wrote as the last completed one.
func TestAgainstFlink(t *testing.T) {
	sb := sandboxtest.Dedicated(t, sandbox.Config{})
	for _, v := range flinkjob.Versions() {
		t.Run("flink-"+v, func(t *testing.T) { testAgainstFlink(t, sb, v) })
	}
}

func testAgainstFlink(t *testing.T, sb *sandbox.Sandbox, version string) {
	// A Flink job's start took 77 s in a loaded run (CPU burner beside
	// the whole suite): the budget assumes no idle machine.
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	topic := "rest-" + strconv.FormatInt(time.Now().UnixNano()%1_000_000, 36)
	for _, b := range []string{sb.Source().Bootstrap(), sb.Target().Bootstrap()} {
		if err := sandbox.CreateTopic(ctx, b, topic, 2); err != nil {
			t.Fatal(err)
		}
	}
	parts := flinklike.All(map[string]int32{topic: 2})
	if err := flinklike.Produce(ctx, sb.Source().Bootstrap(), parts, 10); err != nil {
		t.Fatal(err)
	}
	job, err := flinkjob.Start(ctx, flinkjob.Config{Version: version, Dir: t.TempDir(),
		Source: sb.Source().Bootstrap(), Target: sb.Target().Bootstrap(), Group: topic + "-group", Topics: []string{topic},
		CheckpointInterval: time.Second, KeepCluster: true, Logger: slog.New(slog.DiscardHandler)})
	if errors.Is(err, flinkjob.ErrNoFlink) && os.Getenv("CI") != "true" {
		t.Skipf("no Flink job here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer job.Kill()
	if !strings.HasPrefix(job.REST(), "http://127.0.0.1:") {
		t.Fatalf("REST at %q, want loopback", job.REST())
	}
	c, err := flinkrest.New(job.REST(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := job.WaitCheckpoint(ctx, 0); err != nil {
		t.Fatal(err)
	}
	running, err := verify.ReadFlinkJob(ctx, c, job.JobID())
	if err != nil {
		t.Fatal(err)
	}
	if running.Job.State != "RUNNING" || running.Checkpoints.Completed == nil || running.Checkpoints.Savepoint != nil {
		t.Errorf("while it runs: %+v, completed %+v, savepoint %+v; want RUNNING, a checkpoint, no savepoint", running.Job, running.Checkpoints.Completed, running.Checkpoints.Savepoint)
	}
	if _, err := c.Job(ctx, "00000000000000000000000000000000"); !errors.Is(err, flinkrest.ErrNotFound) {
		t.Errorf("an unknown job: %v, want ErrNotFound", err)
	}

	path, err := job.StopWithSavepoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := verify.OpenFlinkSavepoint(path, "")
	if err != nil {
		t.Fatal(err)
	}
	ch, st, err := verify.CheckFlinkStoppedNow(ctx, c, job.JobID(), sp, verify.FlinkSettle)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Verdict != verify.Pass {
		t.Errorf("flink-stopped with the job's savepoint: %+v", ch)
	}
	last := st.Checkpoints.Savepoint
	t.Logf("after flink stop: job %+v; latest completed %+v; latest savepoint %+v", st.Job, st.Checkpoints.Completed, last)
	if st.Job.State != flinkrest.StateFinished || last == nil || last.Status != "COMPLETED" || !last.IsSavepoint || last.ExternalPath != path {
		t.Fatalf("after flink stop: %+v, savepoint %+v; want FINISHED and %s COMPLETED", st.Job, last, path)
	}
	if ch := verify.CheckFlinkStopped(running, sp); ch.Verdict != verify.Fail || !strings.Contains(ch.Detail, "RUNNING") {
		t.Errorf("flink-stopped while it ran: %+v, want a failure naming RUNNING", ch)
	}
	other := st
	other.Checkpoints.Savepoint = &flinkrest.Snapshot{ID: last.ID + 1, Status: "COMPLETED", IsSavepoint: true, ExternalPath: path + "-later"}
	if ch := verify.CheckFlinkStopped(other, sp); ch.Verdict != verify.Fail {
		t.Errorf("flink-stopped with another last savepoint: %+v, want a failure", ch)
	}
	if err := job.Close(ctx); err != nil {
		t.Errorf("close: %v", err)
	}
}

// TestResponseError: Flink's error body is kept, a 404 matches ErrNotFound,
// and the context's error wins.
func TestResponseError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/base/jobs/nope":
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"errors":["Job nope not found"]}`))
		case "/base/jobs/j1":
			w.Write([]byte(`{"jid":"j1","name":"x","state":"CANCELED","end-time":5}`))
		case "/base/jobs/j1/checkpoints":
			w.Write([]byte(`{"latest":{"completed":{"id":3,"status":"COMPLETED","is_savepoint":false},"savepoint":null}}`))
		default:
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	c, err := flinkrest.New(srv.URL+"/base/", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Job(context.Background(), "nope")
	var re *flinkrest.ResponseError
	if !errors.As(err, &re) || !errors.Is(err, flinkrest.ErrNotFound) || !strings.Contains(err.Error(), "Job nope not found") {
		t.Errorf("404: %v", err)
	}
	st, err := verify.ReadFlinkJob(context.Background(), c, "j1")
	if err != nil || st.Job.State != flinkrest.StateCanceled || st.Checkpoints.Completed.ID != 3 || st.Checkpoints.Savepoint != nil {
		t.Errorf("j1: %+v, %v", st, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Job(ctx, "j1"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	for _, bad := range []string{"", "flink:8081", "ftp://x"} {
		if _, err := flinkrest.New(bad, nil); err == nil {
			t.Errorf("New(%q) accepted", bad)
		}
	}
}
