package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/examples/internal/cutover"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
)

func TestCLIUsage(t *testing.T) {
	t.Setenv("MM2CUTOVER_SOURCE_SASL_PASSWORD", "hunter2-not-shown")
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no step", nil, nil, "usage: cutover"},
		{"missing settings", []string{"precheck"}, nil, "missing connect URL, connector name, group, source bootstrap servers, target bootstrap servers, topics"},
		{"unknown step", []string{"-source-bootstrap", "a:1", "-target-bootstrap", "b:1", "-connect-url", "http://c:8088",
			"-connector", "x", "-group", "g", "-topics", "t", "launch"}, nil, `unknown step "launch"`},
		{"bad env value", []string{"precheck"}, map[string]string{"MM2CUTOVER_TASKS_MAX": "many"}, "MM2CUTOVER_TASKS_MAX"},
		{"bad policy", []string{"-policy", "mirror", "precheck"}, map[string]string{"MM2CUTOVER_SOURCE_BOOTSTRAP": "a:1",
			"MM2CUTOVER_TARGET_BOOTSTRAP": "b:1", "MM2CUTOVER_CONNECT_URL": "http://c:8088", "MM2CUTOVER_CONNECTOR": "x",
			"MM2CUTOVER_GROUP": "g", "MM2CUTOVER_TOPICS": "t"}, `replication policy "mirror"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var out, errb bytes.Buffer
			if code := run(tc.args, &out, &errb); code != cutover.ExitUsage {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, cutover.ExitUsage, errb.String())
			}
			if !strings.Contains(errb.String(), tc.want) {
				t.Errorf("stderr does not say %q:\n%s", tc.want, errb.String())
			}
			if strings.Contains(out.String()+errb.String(), "hunter2") {
				t.Errorf("a password was printed")
			}
		})
	}
}

// TestCLIStatusJSON runs the status step against the real Connect cluster for
// a connector that does not exist, with -json.
func TestCLIStatusJSON(t *testing.T) {
	sb := sandboxtest.Shared(t)
	var out, errb bytes.Buffer
	code := run([]string{"-json", "-plan", t.TempDir() + "/none.json",
		"-source-bootstrap", sb.Source().Bootstrap(), "-target-bootstrap", sb.Target().Bootstrap(),
		"-connect-url", sb.ConnectURL(), "-connector", "cli-status-none", "-group", "g", "-topics", "t", "status"}, &out, &errb)
	if code != cutover.ExitOK {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	var rep cutover.StatusReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("stdout is not the JSON report: %v\n%s", err, out.String())
	}
	if rep.Exists || rep.Connector != "cli-status-none" {
		t.Fatalf("report %+v", rep)
	}
}
