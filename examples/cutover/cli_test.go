package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/examples/internal/cutover"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
)

// props writes a properties file for the test and returns its path.
func props(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "connector.properties")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCLIUsage(t *testing.T) {
	t.Setenv("MM2CUTOVER_SOURCE_SASL_PASSWORD", "hunter2-not-shown")
	required := map[string]string{"MM2CUTOVER_SOURCE_BOOTSTRAP": "a:1", "MM2CUTOVER_TARGET_BOOTSTRAP": "b:1", "MM2CUTOVER_CONNECT_URL": "http://c:8088",
		"MM2CUTOVER_CONNECTOR": "x", "MM2CUTOVER_GROUP": "g", "MM2CUTOVER_TOPICS": "t"}
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
		{"connector properties change a key the cutover sets", []string{"-connector-properties", props(t, "topics=.*\nreplication.factor=1\n"), "precheck"}, required,
			"-connector-properties sets keys the cutover sets itself: topics"},
		{"connector properties set a cluster client key", []string{"-connector-properties", props(t, "source.cluster.security.protocol=SSL\n"), "precheck"}, required,
			"source.cluster.security.protocol (use -mm2-source-client"},
		{"unknown offsets source", []string{"-offsets-from", "dump.json", "precheck"}, required, `-offsets-from "dump.json": want group or csv:FILE`},
		{"override without a file", []string{"-offsets-file-overrides-group", "precheck"}, required, "needs -offsets-from csv:FILE"},
		{"offset-syncs replication factor alone", []string{"-offset-syncs-replication-factor", "1", "precheck"}, required, "needs -offset-syncs-location"},
		{"offset-syncs location unknown", []string{"-offset-syncs-location", "both", "precheck"}, required, `-offset-syncs-location "both"`},
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
