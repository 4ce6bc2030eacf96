package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
)

// TestMain lets the test binary serve as the benchmark's child process.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == childArg {
		os.Exit(runChild(os.Stdin, os.Stdout))
	}
	sandboxtest.Main(m)
}

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{nil, true},
		{[]string{"-sizes", "100,200", "-topics", "4"}, true},
		{[]string{"-sizes", "1001"}, false},                   // not a multiple of -topics
		{[]string{"-sizes", "20000"}, true},                   // two brokers per cluster
		{[]string{"-sizes", "20000", "-brokers", "1"}, false}, // more than a sandbox broker holds
		{[]string{"-sizes", "50000", "-brokers", "4"}, true},
		{[]string{"-brokers", "-1"}, false},
		{[]string{"-sizes", "x"}, false},      // not a number
		{[]string{"-rounds", "0"}, false},     // nothing to measure
		{[]string{"-warmup", "-1"}, false},    // negative
		{[]string{"-tasks-max", "0"}, true},   // the cutover's choice
		{[]string{"-tasks-max", "-1"}, false}, // negative
		{[]string{"-pause-tasks", "20, 40"}, true},
		{[]string{"-pause-tasks", "20,0"}, false}, // not a tasks.max
		{[]string{"-pause-tasks", "20,"}, false},  // empty
		{[]string{"-sizes", "0", "-topics", "1"}, false},
	} {
		_, err := parseFlags(tc.args, &bytes.Buffer{})
		if (err == nil) != tc.ok {
			t.Errorf("parseFlags(%q) = %v, want ok %v", tc.args, err, tc.ok)
		}
	}
}

func TestBrokersFor(t *testing.T) {
	for n, want := range map[int]int{0: 1, 1000: 1, 15000: 1, 15001: 2, 20000: 2, 50000: 4} {
		if got := brokersFor(n); got != want {
			t.Errorf("brokersFor(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestMedian(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		var out []time.Duration
		for _, x := range n {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	for _, tc := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{ms(5), 5 * time.Millisecond},
		{ms(9, 1, 5), 5 * time.Millisecond},
		{ms(4, 1, 3, 2), 3 * time.Millisecond},
	} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestSmallRun runs the whole benchmark at 20 partitions on the sandbox:
// the three paths, status and the operator pause succeed, and the table lists
// them. It measures nothing worth reading; it shows the command works.
func TestSmallRun(t *testing.T) {
	sb := sandboxtest.Shared(t)
	o, err := parseFlags([]string{"-sizes", "20", "-topics", "2", "-rounds", "1", "-warmup", "0", "-pause", "1", "-json"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	o.prefix = runBase("scalebench-test")
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(&stderr, nil))
	h := &held{sb: sb, base: o.prefix}
	if code := bench(ctx, h, o, &stdout, &stderr, log); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	var rep report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || len(rep.Sizes) != 1 {
		t.Fatalf("report %s: %v", stdout.Bytes(), err)
	}
	r := rep.Sizes[0]
	if r.LibOK != 1 || r.CLIOK != 1 || r.RawOK != 1 || r.CLI <= r.CLIPlan || r.CLIPlan <= 0 || r.Lib <= 0 || r.Raw <= 0 || r.Status <= 0 || len(r.Errors) > 0 || len(r.Pauses) != 1 {
		t.Errorf("result %+v; want one successful run of each path, a status and a pause", r)
	}
	for _, pr := range r.Pauses {
		if pr.TasksMax != 1 || pr.OK != 1 || pr.Pause <= pr.ToResume || pr.ToResume <= 0 || pr.FirstRecord <= pr.ToResume {
			t.Errorf("pause %+v; want tasks.max 1 (the cutover's), one successful run, a resume and a first record", pr)
		}
	}
	if (r.LibRSS <= 0 || r.CLIRSS <= 0) && runtime.GOOS == "linux" {
		t.Errorf("no peak RSS measured for the library run (%d) or the cli (%d)", r.LibRSS, r.CLIRSS)
	}
	var table bytes.Buffer
	printTable(&table, rep, o)
	for _, want := range []string{"ok: runs", "N=20 library", "plan built: 20 entries", "N=20 cli", "plan: plan written", "cutover apply exited", "apply: PATCH /connectors/", "operator pause, median", "operator pause, tasks.max 1", "GET 1:", "connector RUNNING"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	t.Logf("\n%s", table.String())
}

// TestPrintPauses: the pause table has a row per size, tasks.max and mode
// (at-least-once, exactly-once) measured, window, tool, Connect, first record and total in ms, and says
// when no run of a tasks.max succeeded.
func TestPrintPauses(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	rs := []sizeResult{{Partitions: 10000, Pauses: []pauseResult{
		{TasksMax: 10, Runs: 2, OK: 2, Pause: ms(9000), ToResume: ms(2500), FirstRecord: ms(11000)},
		{TasksMax: 20, Runs: 2, OK: 2, Pause: ms(7000), ToResume: ms(2400), FirstRecord: ms(8000)},
		{TasksMax: 40, Runs: 2},
		{TasksMax: 20, Runs: 2, OK: 2, Pause: ms(7500), ToResume: ms(2400), FirstRecord: ms(8700), ExactlyOnce: true},
	}}}
	var b strings.Builder
	printPauses(&b, rs, ms(1))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := [][]string{
		{"N", "tasks", "mode", "ok", "window", "tool", "connect", "record", "total"},
		{"10000", "10", "at-least-once", "2/2", "1ms", "2499ms", "6500ms", "8500ms", "11000ms"},
		{"10000", "20", "at-least-once", "2/2", "1ms", "2399ms", "4600ms", "5600ms", "8000ms"},
		{"10000", "40", "at-least-once", "0/2"},
		{"10000", "20", "exactly-once", "2/2", "1ms", "2399ms", "5100ms", "6300ms", "8700ms"},
	}
	if len(lines) != 3+len(want) {
		t.Fatalf("table:\n%s\nwant %d lines", b.String(), 3+len(want))
	}
	for i, w := range want {
		if got := strings.Fields(lines[3+i]); !cmp.Equal(got, w) {
			t.Errorf("line %d = %q, want %q", 3+i, got, w)
		}
	}
}

func TestParseLogLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		want map[string]string // nil: not a log line
	}{
		{`time=2026-12-03T14:00:00.123Z level=INFO msg="plan written" file=p.json partitions=20`,
			map[string]string{"time": "2026-12-03T14:00:00.123Z", "level": "INFO", "msg": "plan written", "file": "p.json", "partitions": "20"}},
		{`time=2026-12-03T14:00:00.123Z level=DEBUG msg="kafka connect request" method=GET path=/connectors/x/offsets status=200 duration=12.5ms`,
			map[string]string{"time": "2026-12-03T14:00:00.123Z", "level": "DEBUG", "msg": "kafka connect request", "method": "GET",
				"path": "/connectors/x/offsets", "status": "200", "duration": "12.5ms"}},
		{`time=2026-12-03T14:00:00.123Z level=WARN msg=retrying error="a \"quoted\" cause"`,
			map[string]string{"time": "2026-12-03T14:00:00.123Z", "level": "WARN", "msg": "retrying", "error": `a "quoted" cause`}},
		{`cutover: connector x is RUNNING, not STOPPED`, nil}, // the error line
		{`cutover: what to do: a=b`, nil},
		{`time=2026-12-03T14:00:00.123Z level=INFO`, nil}, // no message
		{`time=2026-12-03T14:00:00.123Z msg="unterminated`, nil},
	} {
		got, ok := parseLogLine(tc.line)
		if ok != (tc.want != nil) || (ok && !cmp.Equal(got, tc.want)) {
			t.Errorf("parseLogLine(%q) = %v, %v; want %v", tc.line, got, ok, tc.want)
		}
	}
}

// TestSmallRunSecureLatency runs the command line and the raw floor at 20
// partitions on a sandbox of SASL_SSL brokers (SCRAM-SHA-512) and HTTPS
// workers behind 20 ms of added round trip, and reports them side by
// side: requests, connections and wall time. The connections are pinned
// (one per broker of each cluster for each step, one for the floor); the
// times only logged.
func TestSmallRunSecureLatency(t *testing.T) {
	sb := sandboxtest.Dedicated(t, sandbox.Config{Secure: true, Latency: 20 * time.Millisecond, Workers: 1})
	o, err := parseFlags([]string{"-sizes", "20", "-topics", "2", "-rounds", "1", "-warmup", "0", "-pause", "0", "-paths", "cli,raw", "-json"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	o.prefix, o.secure, o.latency = runBase("scalebench-secure"), true, 20*time.Millisecond
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(&stderr, nil))
	h := &held{sb: sb, base: o.prefix}
	if code := bench(ctx, h, o, &stdout, &stderr, log); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	var rep report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || len(rep.Sizes) != 1 {
		t.Fatalf("report %s: %v", stdout.Bytes(), err)
	}
	r := rep.Sizes[0]
	if r.CLIOK != 1 || r.RawOK != 1 || !rep.Secure || rep.Latency != 20*time.Millisecond {
		t.Fatalf("result %+v; want one successful cli and raw run, secure, 20ms", r)
	}
	conns := map[string]int64{}
	for _, c := range append(r.CLICosts, r.RawCosts...) {
		conns[c.Step] = c.Connections
		if c.Step != "raw" && (!strings.Contains(c.Source, "SaslAuthenticate") || !strings.Contains(c.Target, "SaslAuthenticate")) {
			t.Errorf("%s: %+v; want SASL on both clusters", c.Step, c)
		}
	}
	if want := map[string]int64{"plan": 2, "apply": 2, "raw": 1}; !cmp.Equal(conns, want) {
		t.Errorf("connections per step %v, want %v", conns, want)
	}
	var table bytes.Buffer
	printTable(&table, rep, o)
	if !strings.Contains(table.String(), "SASL_SSL (SCRAM-SHA-512) and HTTPS, 20ms round trip added") {
		t.Errorf("table does not say the network:\n%s", table.String())
	}
	t.Logf("\n%s", table.String())
}
