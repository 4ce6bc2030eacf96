package main

import (
	"slices"
	"strings"
	"testing"
)

func TestFailureLines(t *testing.T) {
	var logs []string
	for range 50 {
		logs = append(logs, "        alerts_test.go:690: time=... level=INFO msg=\"a logger line\"\n")
	}
	for _, tc := range []struct {
		name   string
		output []string
		n      int
		want   []string
	}{
		{"errors among logger lines", append(append([]string{"=== RUN   TestX\n"}, logs...),
			"    alerts_test.go:612: MM2TaskFailed: not firing within 6m0s (pending seen: false)\n",
			"        second line of a message\n",
			"    alerts_test.go:612: MM2Slow: not firing within 6m0s (pending seen: true)\n",
			"--- FAIL: TestX (12.00s)\n"), 10,
			[]string{"alerts_test.go:612: MM2TaskFailed: not firing within 6m0s (pending seen: false)",
				"  second line of a message",
				"alerts_test.go:612: MM2Slow: not firing within 6m0s (pending seen: true)"}},
		{"the last n", []string{"a_test.go:1: one\n", "a_test.go:2: two\n", "    two's second line\n", "a_test.go:3: three\n"}, 2,
			[]string{"a_test.go:2: two", "  two's second line", "a_test.go:3: three"}},
		{"only logs", logs, 10, nil},
		{"no located line", []string{"=== RUN   TestX\n", "boom\n"}, 10, nil},
		{"a panic", []string{"=== RUN   TestX\n", "panic: test timed out after 1m0s\n", "\trunning tests:\n"}, 10,
			[]string{"panic: test timed out after 1m0s"}},
		{"a command's stderr: its last lines", []string{"=== RUN   TestY\n",
			"    realistic_test.go:307: cutover apply: exit 1\n", "        \n",
			"        progress 1\n", "        progress 2\n", "        progress 3\n", "        error: the read-back timed out\n",
			"    sandboxtest.go:163: sandbox logs:\n", "--- FAIL: TestY (1.00s)\n"}, 10,
			[]string{"realistic_test.go:307: cutover apply: exit 1", "  progress 2", "  progress 3", "  error: the read-back timed out"}},
		{"a helper's dump of process logs is left out", []string{"=== RUN   TestZ\n",
			"    exactlyonce_test.go:539: exactly-once after (c): not caught up in 10m0s\n",
			"    flink_test.go:136: flink job log (testrun/job.log):\n", "        [2026-12-06 06:44:32,451] INFO job\n",
			"    sandboxtest.go:193: sandbox logs:\n", "        == source broker 1\n", "        [2026-12-06 06:44:32,451] INFO [GroupCoordinator 1]: ...\n",
			"--- FAIL: TestZ (900.00s)\n"}, 10,
			[]string{"exactlyonce_test.go:539: exactly-once after (c): not caught up in 10m0s"}},
		{"a logger line ends a message", append([]string{"    a_test.go:5: failed:\n", "        why\n"}, logs[:3]...), 10,
			[]string{"a_test.go:5: failed:", "  why"}},
		{"a long line is cut", []string{"b_test.go:9: " + strings.Repeat("x", 600) + "\n"}, 10,
			[]string{"b_test.go:9: " + strings.Repeat("x", 500-len("b_test.go:9: ")) + " ..."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := failureLines(tc.output, tc.n, 3); !slices.Equal(got, tc.want) {
				t.Errorf("failureLines:\ngot  %q\nwant %q", got, tc.want)
			}
		})
	}
}
