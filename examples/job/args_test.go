package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/examples/internal/app"
)

// TestJobBadInvocation: what no retry fixes exits 2 with its result line,
// before anything is contacted: a bad flag (exit 2 with no result line
// before), stray arguments (ignored before), a mounted plan that is a
// directory (exit 1 before, which the Job's podFailurePolicy retried).
func TestJobBadInvocation(t *testing.T) {
	for k, v := range map[string]string{"MM2CUTOVER_SOURCE_BOOTSTRAP": "127.0.0.1:1", "MM2CUTOVER_TARGET_BOOTSTRAP": "127.0.0.1:2",
		"MM2CUTOVER_CONNECT_URL": "http://127.0.0.1:3", "MM2CUTOVER_CONNECTOR": "c", "MM2CUTOVER_GROUP": "g", "MM2CUTOVER_TOPICS": "t"} {
		t.Setenv(k, v)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad flag", []string{"-nope"}, "flag provided but not defined: -nope"},
		{"stray arguments", []string{"apply", "now"}, `unexpected arguments ["apply" "now"]`},
		{"plan is a directory", []string{"-plan", t.TempDir()}, "is a directory"},
		{"plan is missing", []string{"-plan", t.TempDir() + "/none.json"}, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(tc.args, &out, &errb)
			var r result
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
				t.Fatalf("no result line: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
			}
			if code != app.ExitUsage || r.ExitStatus != code || r.Result != "error" || !strings.Contains(r.Error, tc.want) {
				t.Errorf("exit %d, result %+v; want exit 2 and an error saying %q", code, r, tc.want)
			}
		})
	}
}
