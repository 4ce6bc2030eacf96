package verify

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/flinkrest"
)

// FlinkJobStatus is what Flink's REST API says of the old job
// (ReadFlinkJob): its state and its latest checkpoints.
type FlinkJobStatus struct {
	Job         flinkrest.Job
	Checkpoints flinkrest.Checkpoints
}

// ReadFlinkJob reads the job's state and checkpoint statistics. Errors are
// the client's.
func ReadFlinkJob(ctx context.Context, c *flinkrest.Client, jobID string) (FlinkJobStatus, error) {
	j, err := c.Job(ctx, jobID)
	if err != nil {
		return FlinkJobStatus{}, err
	}
	cps, err := c.Checkpoints(ctx, jobID)
	if err != nil {
		return FlinkJobStatus{}, err
	}
	return FlinkJobStatus{Job: j, Checkpoints: cps}, nil
}

// FlinkSettle is how long CheckFlinkStoppedNow asks again while Flink's
// answer fails the check: Flink's REST API serves a job's details and its
// checkpoint statistics from caches refreshed every web.refresh-interval (3 s
// by default), each on its own, so a job that just finished reads as RUNNING,
// or FINISHED without its last savepoint, for a few seconds.
const FlinkSettle = 10 * time.Second

// CheckFlinkStoppedNow asks Flink (ReadFlinkJob) and checks the answer
// (CheckFlinkStopped), asking again every second while it fails, for up to
// within; it returns the last check and status. A job that still runs
// takes the whole of within to fail. Errors are the client's and the
// context's.
func CheckFlinkStoppedNow(ctx context.Context, c *flinkrest.Client, jobID string, sp *FlinkSavepoint, within time.Duration) (Check, FlinkJobStatus, error) {
	deadline := time.Now().Add(within)
	wait := newPoll(time.Second, time.Second)
	for {
		st, err := ReadFlinkJob(ctx, c, jobID)
		if err != nil {
			return Check{}, st, err
		}
		ch := CheckFlinkStopped(st, sp)
		if ch.Verdict == Pass || !time.Now().Before(deadline) {
			return ch, st, nil
		}
		if err := wait.next(ctx); err != nil {
			return ch, st, err
		}
	}
}

// CheckFlinkStopped is Flink's own stop signal, the "flink-stopped" check:
// it passes when the job has ended (FINISHED, or CANCELED) and the
// savepoint given is the last one it completed, with no checkpoint completed
// after it. The job's sources then stopped at that savepoint: this job can
// neither commit to its group nor write to the target again, which is what
// the stability window otherwise infers from commits that stay unchanged.
// Any other answer fails and says what Flink said. It is pure.
func CheckFlinkStopped(st FlinkJobStatus, sp *FlinkSavepoint) Check {
	fail := func(format string, args ...any) Check {
		return Check{Name: "flink-stopped", Verdict: Fail, Detail: fmt.Sprintf(format, args...)}
	}
	j, last := st.Job, st.Checkpoints.Savepoint
	switch j.State {
	case flinkrest.StateFinished, flinkrest.StateCanceled:
	default:
		return fail("Flink says job %s is %s: stop it with a savepoint (flink stop) first", j.ID, j.State)
	}
	switch {
	case last == nil:
		return fail("Flink says job %s (%s) completed no savepoint", j.ID, j.State)
	case last.Status != "COMPLETED":
		return fail("Flink says job %s's last savepoint, checkpoint %d, is %s, not COMPLETED", j.ID, last.ID, last.Status)
	case last.ID != sp.sp.CheckpointID || !samePath(last.ExternalPath, sp.dir):
		return fail("Flink says job %s's last completed savepoint is checkpoint %d at %s; the one given is checkpoint %d at %s", j.ID, last.ID, last.ExternalPath, sp.sp.CheckpointID, sp.dir)
	}
	if c := st.Checkpoints.Completed; c != nil && c.ID > last.ID {
		return fail("Flink says job %s completed checkpoint %d after its savepoint %d: the job ran on past the savepoint", j.ID, c.ID, last.ID)
	}
	return Check{Name: "flink-stopped", Verdict: Pass, Detail: fmt.Sprintf(
		"Flink says job %s is %s and its last completed savepoint is the one given (checkpoint %d): its sources stopped there", j.ID, j.State, last.ID)}
}

// samePath compares a Flink path (a file: URI or a path) with a local one.
func samePath(flink, local string) bool {
	p := flink
	if u, err := url.Parse(flink); err == nil && u.Scheme == "file" {
		p = u.Path
	} else if err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		return false // another file system: not the local directory given
	}
	clean := func(s string) string {
		return strings.TrimSuffix(filepath.Clean(s), string(filepath.Separator)+"_metadata")
	}
	return clean(p) == clean(local)
}
