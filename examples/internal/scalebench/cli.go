package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/examples/internal/app"
)

// stepCost is what one step cost the Kafka clusters: requests and
// connections in all, and per cluster the requests by kind.
type stepCost struct {
	Step        string `json:"step"`
	Requests    int64  `json:"requests"`
	Connections int64  `json:"connections"`
	Source      string `json:"source"`
	Target      string `json:"target,omitempty"`
}

// addRawCost adds the raw floor's cost.
func (t *tracer) addRawCost(c stepCost) {
	t.mu.Lock()
	t.costs = append(t.costs, c)
	t.mu.Unlock()
}

// addCost adds the cost a process logged (app.CostMessage) for its step.
func (t *tracer) addCost(step string, attrs map[string]string) {
	n := func(k string) int64 {
		v, _ := strconv.ParseInt(attrs[k], 10, 64)
		return v
	}
	c := stepCost{Step: step, Requests: n("source_requests") + n("target_requests"),
		Connections: n("source_connections") + n("target_connections"), Source: attrs["source"], Target: attrs["target"]}
	t.mu.Lock()
	t.costs = append(t.costs, c)
	t.mu.Unlock()
}

// cliRun does what an operator does: `cutover plan`, then `cutover apply`,
// two processes of the command line (j.Cutover), with the flags the
// library run's settings come from. It runs in a child of its own, so that
// the rusage of the two processes it starts is theirs: Linux carries the
// peak of the process that starts a child into the child's ru_maxrss at
// exec (see peakRSS), and this child is small. Steps are the processes and
// the lines they logged, at the times the log lines carry.
func cliRun(ctx context.Context, j job) childResult {
	tr := newTracer()
	var rss int64
	common := []string{
		"-source-bootstrap", j.Source, "-target-bootstrap", j.Target, "-connect-url", j.ConnectURL,
		"-connector", j.Connector, "-group", j.Group, "-topics", strings.Join(j.Topics, ","),
		"-stability-window", j.Window.String(), "-connector-properties", j.PropsFile,
		"-plan", j.PlanFile, "-readback-timeout", "2m", "-log-level", "debug",
		"-tasks-max", strconv.Itoa(max(j.TasksMax, 1)),
	}
	secFlags, secEnv := j.cliFlags()
	common = append(common, secFlags...)
	var planned time.Duration
	err := func() error {
		for _, step := range []string{"plan", "apply"} {
			tr.mark("cutover " + step + " starts")
			cmd := exec.CommandContext(ctx, j.Cutover, append([]string{step}, common...)...)
			cmd.Env = append(os.Environ(), secEnv...)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = nil, &stderr // stdout: the plan summary or the apply table
			err := cmd.Run()
			tr.addLogLines(stderr.Bytes(), step)
			if cmd.ProcessState != nil {
				rss = max(rss, processRSS(cmd.ProcessState))
			}
			if err != nil {
				return fmt.Errorf("cutover %s: %v: %s", step, err, lastLines(stderr.Bytes(), 3))
			}
			tr.mark("cutover " + step + " exited")
			if step == "plan" {
				planned = tr.since()
			}
		}
		return nil
	}()
	res := tr.result(err)
	res.Plan, res.Apply = planned, res.Elapsed-planned
	res.MaxRSS = rss
	return res
}

// addLogLines adds the lines a process logged (slog's text format, as
// the command line writes them on stderr with -log-level debug) as steps,
// at their own times; a Connect request as the library run shows it.
func (t *tracer) addLogLines(b []byte, prefix string) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		attrs, ok := parseLogLine(sc.Text())
		if !ok {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, attrs["time"])
		if err != nil {
			continue
		}
		if attrs["msg"] == app.CostMessage {
			t.addCost(prefix, attrs)
			continue
		}
		s := step{At: at.Sub(t.start), What: prefix + ": " + attrs["msg"]}
		if attrs["msg"] == "kafka connect request" {
			s.Took, _ = time.ParseDuration(attrs["duration"])
			s.At -= s.Took
			s.What = fmt.Sprintf("%s: %s %s -> %s", prefix, attrs["method"], attrs["path"], attrs["status"])
		}
		t.mu.Lock()
		t.steps = append(t.steps, s)
		t.mu.Unlock()
	}
}

// parseLogLine returns the attributes of a line of slog's text handler
// (time=... level=... msg=... key=value ...), values unquoted; ok is
// false for a line without time and msg.
func parseLogLine(line string) (map[string]string, bool) {
	attrs := make(map[string]string)
	for line != "" {
		key, rest, found := strings.Cut(line, "=")
		if !found || key == "" || strings.ContainsAny(key, " \"") {
			return nil, false
		}
		var val string
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return nil, false
			}
			val, _ = strconv.Unquote(q)
			rest = rest[len(q):]
		} else {
			val, rest, _ = strings.Cut(rest, " ")
			rest = " " + rest
		}
		attrs[key] = val
		line = strings.TrimPrefix(rest, " ")
	}
	_, hasTime := attrs["time"]
	_, hasMsg := attrs["msg"]
	return attrs, hasTime && hasMsg
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}

// buildCutover builds the command line into dir and returns its path.
func buildCutover(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "cutover")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/mm2cutover/mm2cutover/examples/cutover")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build examples/cutover: %w", err)
	}
	return bin, nil
}
