package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
	"github.com/mm2cutover/mm2cutover/internal/flinklike"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// TestMain runs the Job itself when the test binary is started as the Job
// (so a test can kill it like a Pod), and the tests otherwise.
func TestMain(m *testing.M) {
	if os.Getenv("MM2CUTOVER_JOB_TEST_AS_MAIN") == "1" {
		main()
		return
	}
	sandboxtest.Main(m)
}

// runJob starts the Job as a process with env and returns its exit status,
// its result line and its stderr.
func runJob(t *testing.T, env ...string) (int, result, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append([]string{"MM2CUTOVER_JOB_TEST_AS_MAIN=1", "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var r result
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); out.Len() > 0 {
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
			t.Fatalf("last stdout line is not the JSON result: %v\n%s", err, out.String())
		}
	}
	return code, r, errb.String()
}

// jobFixture is an old job that replicated two topics and stopped, and the
// environment of a Job that moves them to a connector.
type jobFixture struct {
	sb        *sandbox.Sandbox
	connector string
	env       []string
	want      []offsets.ConnectOffset // what Connect must hold after the Job
	client    *connect.Client
	topicA    string
	group     string
	topics    []string
}

func newJobFixture(ctx context.Context, t *testing.T, name string) *jobFixture {
	t.Helper()
	name += "-" + strconv.FormatInt(time.Now().UnixNano()%1_000_000_000, 36) // unique on a held sandbox
	sb := sandboxtest.Shared(t)
	a, b := name+"-a", name+"-b"
	for topic, n := range map[string]int32{a: 3, b: 2} {
		for _, br := range []*sandbox.Broker{sb.Source(), sb.Target()} {
			if err := sandbox.CreateTopic(ctx, br.Bootstrap(), topic, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	// b-1 stays empty: its committed offset is 0 and the plan clears it.
	parts := []flinklike.Partition{{Topic: a, Partition: 0}, {Topic: a, Partition: 1}, {Topic: a, Partition: 2}, {Topic: b, Partition: 0}}
	if err := flinklike.Produce(ctx, sb.Source().Bootstrap(), parts, 30); err != nil {
		t.Fatal(err)
	}
	group := name + "-flink"
	job, err := flinklike.Start(ctx, flinklike.Config{Source: sb.Source().Bootstrap(), Target: sb.Target().Bootstrap(),
		Group: group, Topics: []string{a, b}, Checkpoint: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	want := map[flinklike.Partition]int64{{Topic: b, Partition: 1}: 0}
	for _, p := range parts {
		want[p] = 30
	}
	if err := job.WaitCommitted(ctx, want); err != nil {
		t.Fatal(err)
	}
	if _, err := job.Stop(); err != nil {
		t.Fatal(err)
	}
	f := &jobFixture{sb: sb, connector: name + "-mm2", topicA: a, group: group, topics: []string{a, b}}
	f.env = []string{
		"MM2CUTOVER_SOURCE_BOOTSTRAP=" + sb.Source().Bootstrap(),
		"MM2CUTOVER_TARGET_BOOTSTRAP=" + sb.Target().Bootstrap(),
		// The second worker, so that writes are forwarded to the leader
		// whichever worker leads.
		"MM2CUTOVER_CONNECT_URL=" + sb.Workers()[len(sb.Workers())-1].URL(),
		"MM2CUTOVER_GROUP=" + group,
		"MM2CUTOVER_TOPICS=" + a + "," + b,
		"MM2CUTOVER_CONNECTOR=" + f.connector,
		"MM2CUTOVER_STABILITY_WINDOW=1s",
	}
	for _, p := range parts {
		f.want = append(f.want, offsets.ConnectOffset{
			Partition: offsets.ConnectPartition{Cluster: "source", Topic: p.Topic, Partition: p.Partition},
			Offset:    offsets.NewMirrorOffset(29),
		})
	}
	if f.client, err = connect.New(sb.ConnectURL()); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *jobFixture) offsets(ctx context.Context, t *testing.T) offsets.ReadBack {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	rb, err := f.client.WaitMirrorOffsets(ctx, f.connector, f.want)
	if err != nil {
		t.Fatalf("connector %s: %v", f.connector, err)
	}
	return rb
}

// TestJobConvergesAfterDyingAtEachStep kills the Job at each point of its
// work and runs it again, as Kubernetes retries a failed Job: the rerun
// succeeds, the connector holds the plan's offsets, and a third run finds
// them applied and writes nothing.
func TestJobConvergesAfterDyingAtEachStep(t *testing.T) {
	// The shared sandbox starts first: on a loaded machine its start takes
	// minutes, which are no part of a step's budget.
	sandboxtest.Shared(t)
	for _, step := range []string{"before-create", "after-create", "before-patch", "after-patch", "before-verify"} {
		t.Run(step, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			f := newJobFixture(ctx, t, "job-"+step)
			code, _, stderr := runJob(t, append(f.env, crashEnv+"="+step)...)
			if code != 137 {
				t.Fatalf("the Job did not die at %s: exit %d\n%s", step, code, stderr)
			}
			code, r, stderr := runJob(t, f.env...)
			if code != 0 || (r.Result != "applied" && r.Result != "already-applied") {
				t.Fatalf("rerun after dying at %s: exit %d, %+v\n%s", step, code, r, stderr)
			}
			if wantPatch := step == "before-create" || step == "after-create" || step == "before-patch"; r.Patched != wantPatch {
				t.Errorf("rerun after dying at %s: patched %v, want %v", step, r.Patched, wantPatch)
			}
			rb := f.offsets(ctx, t)
			t.Logf("after dying at %s and a rerun (%s): %s", step, r.Result, rb)
			code, r, stderr = runJob(t, f.env...)
			if code != 0 || r.Result != "already-applied" || r.Patched || r.Created {
				t.Fatalf("third run: exit %d, %+v, want already-applied with nothing written\n%s", code, r, stderr)
			}
		})
	}
}

// TestJobInterruptedIsWorthARetry sends SIGTERM, as Kubernetes does to a
// Pod it deletes or evicts, while the Job waits at each point where the step
// cut short would otherwise report a failed check (the read-back) or a
// refusal: the Job exits 1, which its podFailurePolicy retries, and a
// rerun converges.
func TestJobInterruptedIsWorthARetry(t *testing.T) {
	for _, step := range []string{"after-patch", "before-verify"} {
		t.Run(step, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			f := newJobFixture(ctx, t, "job-term-"+step)
			cmd := exec.Command(os.Args[0])
			cmd.Env = append([]string{"MM2CUTOVER_JOB_TEST_AS_MAIN=1", "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
				holdEnv + "=" + step}, f.env...)
			var out bytes.Buffer
			cmd.Stdout = &out
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(stderr)
			for sc.Scan() && !strings.Contains(sc.Text(), "holding on purpose") {
			}
			cmd.Process.Signal(syscall.SIGTERM)
			go io.Copy(io.Discard, stderr)
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(out.String(), "interrupted by a signal") {
				t.Fatalf("SIGTERM at %s: %v, stdout %s; want exit 1 (worth a retry), interrupted", step, err, out.String())
			}
			code, r, stderrOut := runJob(t, f.env...)
			if code != 0 || (r.Result != "applied" && r.Result != "already-applied") {
				t.Fatalf("rerun after SIGTERM at %s: exit %d, %+v\n%s", step, code, r, stderrOut)
			}
		})
	}
}

// planFor builds the plan the Job would build for f, as an operator would
// before mounting it, and writes it to a file.
func planFor(ctx context.Context, t *testing.T, f *jobFixture) (*plan.Plan, string) {
	t.Helper()
	s := settings.Settings{
		Source:     kafkaadmin.Config{BootstrapServers: []string{f.sb.Source().Bootstrap()}},
		Target:     kafkaadmin.Config{BootstrapServers: []string{f.sb.Target().Bootstrap()}},
		ConnectURL: f.sb.ConnectURL(), Connector: f.connector, Group: f.group, Topics: f.topics,
		StabilityWindow: time.Second,
	}.WithDefaults()
	env, err := app.Open(s)
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := app.MakePlan(ctx, env, s, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, path
}

// TestJobNeverRewindsAConnectorThatRan applies with the Job, lets MM2 run
// and replicate, stops it, and runs the Job again, building its plan and
// with the first plan mounted. Building, its precheck fails connector-name
// (exit 3): the connector of its name runs, or holds offsets the plan would
// not set. Mounted, the plan is refused (exit 4): the connector is not
// STOPPED, or its offsets moved on. Either way the connector's offsets stay
// where MM2 left them.
func TestJobNeverRewindsAConnectorThatRan(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	f := newJobFixture(ctx, t, "job-rewind")
	_, mounted := planFor(ctx, t, f)
	if code, r, stderr := runJob(t, append(f.env, "MM2CUTOVER_PLAN="+mounted)...); code != 0 {
		t.Fatalf("first run: exit %d, %+v\n%s", code, r, stderr)
	}
	f.offsets(ctx, t)
	if err := f.client.Resume(ctx, f.connector); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.WaitRunning(ctx, f.connector); err != nil {
		t.Fatal(err)
	}
	topic := f.topicA
	if err := flinklike.Produce(ctx, f.sb.Source().Bootstrap(), []flinklike.Partition{{Topic: topic, Partition: 0}}, 10); err != nil {
		t.Fatal(err)
	}
	// Running: the precheck says so, and the mounted plan is refused.
	if code, r, stderr := runJob(t, f.env...); code != 3 || r.Result != "check-failed" || !strings.Contains(r.Error, "connector-name") || !strings.Contains(r.Error, "is RUNNING") {
		t.Fatalf("run while RUNNING, building the plan: exit %d, %+v; want 3, check-failed naming connector-name\n%s", code, r, stderr)
	}
	if code, r, _ := runJob(t, append(f.env, "MM2CUTOVER_PLAN="+mounted)...); code != 4 || r.Result != "refused" {
		t.Fatalf("run while RUNNING, the plan mounted: exit %d, %+v; want 4, refused", code, r)
	}
	// Stopped after it replicated: its offsets moved on.
	part := []flinklike.Partition{{Topic: topic, Partition: 0}}
	for deadline := time.Now().Add(3 * time.Minute); ; {
		src, err := flinklike.LogEnds(ctx, f.sb.Source().Bootstrap(), part)
		if err != nil {
			t.Fatal(err)
		}
		dst, err := flinklike.LogEnds(ctx, f.sb.Target().Bootstrap(), part)
		if err != nil {
			t.Fatal(err)
		}
		if dst[part[0]] >= src[part[0]] {
			break // MM2 copied the 10 records; stopping commits its offsets
		}
		if time.Now().After(deadline) {
			t.Fatalf("MM2 did not copy %s: source ends at %d, target at %d", part[0].Topic, src[part[0]], dst[part[0]])
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err := f.client.Stop(ctx, f.connector); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.WaitStopped(ctx, f.connector); err != nil {
		t.Fatal(err)
	}
	before, err := f.client.MirrorOffsets(ctx, f.connector)
	if err != nil {
		t.Fatal(err)
	}
	moved := offsets.CompareReadBack(f.want, before)
	if moved.OK() {
		t.Fatalf("MM2 did not move the offsets: %s", moved)
	}
	code, r, stderr := runJob(t, f.env...)
	if code != 3 || r.Result != "check-failed" || !strings.Contains(r.Error, "holds offsets the plan would not set") {
		t.Fatalf("run after MM2 ran, building the plan: exit %d, %+v; want 3, check-failed\n%s", code, r, stderr)
	}
	t.Logf("building: %s", r.Error)
	code, r, stderr = runJob(t, append(f.env, "MM2CUTOVER_PLAN="+mounted)...)
	if code != 4 || r.Result != "refused" { // MM2 wrote to the target: the plan no longer describes it
		t.Fatalf("run after MM2 ran, the plan mounted: exit %d, %+v; want 4, refused\n%s", code, r, stderr)
	}
	t.Logf("mounted: %s", r.Error)
	after, err := f.client.MirrorOffsets(ctx, f.connector)
	if err != nil {
		t.Fatal(err)
	}
	if rb := offsets.CompareReadBack(before, after); !rb.OK() {
		t.Fatalf("the refused Job changed the offsets:\n%s", rb.Diff())
	}
}

// TestJobMountedPlan applies a plan mounted as a file, and refuses, before
// anything is created, a plan of an unknown schema version, a plan edited
// after it was fingerprinted, and a plan that is named but absent.
func TestJobMountedPlan(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	f := newJobFixture(ctx, t, "job-mounted")
	p, path := planFor(ctx, t, f)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	buf := bytes.NewBuffer(data)
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	edited := strings.Replace(buf.String(), `"log_end":30`, `"log_end":31`, 1)
	if edited == buf.String() {
		t.Fatalf("the plan has no log_end 30 to edit:\n%s", buf.String())
	}
	for _, tc := range []struct {
		name, path string
		code       int
		want       string
	}{
		{"unknown schema version", write("v99.json", `{"schema_version": 99}`), 4, "schema version"},
		{"edited after its fingerprint", write("edited.json", edited), 4, "fingerprint"},
		{"named but absent", filepath.Join(dir, "absent.json"), 2, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, r, stderr := runJob(t, append(f.env, "MM2CUTOVER_PLAN="+tc.path)...)
			if code != tc.code || !strings.Contains(r.Error, tc.want) {
				t.Fatalf("exit %d, %+v; want %d and %q\n%s", code, r, tc.code, tc.want, stderr)
			}
			if _, err := f.client.Connector(ctx, f.connector); !errors.Is(err, connect.ErrNotFound) {
				t.Fatalf("a connector was created: %v", err)
			}
		})
	}
	code, r, stderr := runJob(t, append(f.env, "MM2CUTOVER_PLAN="+write("plan.json", buf.String()))...)
	if code != 0 || r.Result != "applied" || r.PlanSource != "mounted" || r.Fingerprint != p.Fingerprint {
		t.Fatalf("valid mounted plan: exit %d, %+v\n%s", code, r, stderr)
	}
	f.offsets(ctx, t)
}
