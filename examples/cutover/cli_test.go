package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/examples/internal/term"
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
	t.Setenv("MM2CUTOVER_SOURCE_SASL_USERNAME", "u")
	required := map[string]string{"MM2CUTOVER_SOURCE_BOOTSTRAP": "a:1", "MM2CUTOVER_TARGET_BOOTSTRAP": "b:1", "MM2CUTOVER_CONNECT_URL": "http://c:8088",
		"MM2CUTOVER_CONNECTOR": "x", "MM2CUTOVER_GROUP": "g", "MM2CUTOVER_TOPICS": "t"}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no step", nil, nil, "usage: cutover"},
		{"missing settings", []string{"precheck"}, nil, "missing settings: -source-bootstrap (MM2CUTOVER_SOURCE_BOOTSTRAP), -target-bootstrap (MM2CUTOVER_TARGET_BOOTSTRAP), -connect-url (MM2CUTOVER_CONNECT_URL), -connector (MM2CUTOVER_CONNECTOR), -group (MM2CUTOVER_GROUP), -topics (MM2CUTOVER_TOPICS)"},
		{"unknown step", []string{"-source-bootstrap", "a:1", "-target-bootstrap", "b:1", "-connect-url", "http://c:8088",
			"-connector", "x", "-group", "g", "-topics", "t", "launch"}, nil, `unknown step "launch"`},
		{"bad env value", []string{"precheck"}, map[string]string{"MM2CUTOVER_TASKS_MAX": "many"}, "MM2CUTOVER_TASKS_MAX"},
		{"bad policy", []string{"-policy", "mirror", "precheck"}, map[string]string{"MM2CUTOVER_SOURCE_BOOTSTRAP": "a:1",
			"MM2CUTOVER_TARGET_BOOTSTRAP": "b:1", "MM2CUTOVER_CONNECT_URL": "http://c:8088", "MM2CUTOVER_CONNECTOR": "x",
			"MM2CUTOVER_GROUP": "g", "MM2CUTOVER_TOPICS": "t"}, `replication policy "mirror"`},
		{"connector properties change a key the cutover sets", []string{"-connector-properties", props(t, "topics=.*\nreplication.factor=1\n"), "precheck"}, required,
			"change what the builder sets: topics"},
		{"connector properties set a cluster client key", []string{"-connector-properties", props(t, "source.cluster.security.protocol=SSL\n"), "precheck"}, required,
			"source.cluster.security.protocol (a client setting"},
		{"unknown offsets source", []string{"-offsets-from", "dump.json", "precheck"}, required, `-offsets-from "dump.json": want group, flink-savepoint:DIR, csv:FILE or mm2:TOPIC`},
		{"a source uid without a savepoint", []string{"-flink-source-uid", "kafka-source", "precheck"}, required, "-flink-source-uid needs -offsets-from flink-savepoint:DIR or -savepoint DIR"},
		{"two savepoints", []string{"-offsets-from", "flink-savepoint:/sp/a", "-savepoint", "/sp/b", "precheck"}, required, "name two savepoints"},
		{"flink REST without the job", []string{"-flink-rest", "http://jm:8081", "-savepoint", "/sp/a", "precheck"}, required, "-flink-rest and -flink-job go together"},
		{"flink REST without a savepoint", []string{"-flink-rest", "http://jm:8081", "-flink-job", "j1", "precheck"}, required, "-flink-rest needs the savepoint it is to confirm"},
		{"override without a file", []string{"-offsets-file-overrides-group", "precheck"}, required, "needs -offsets-from csv:FILE"},
		{"offset-syncs replication factor alone", []string{"-offset-syncs-replication-factor", "1", "precheck"}, required, "needs -offset-syncs-location"},
		{"offset-syncs location unknown", []string{"-offset-syncs-location", "both", "precheck"}, required, `-offset-syncs-location "both"`},
		// A password without its user would be dropped silently; a user
		// without its password would be sent with an empty one.
		{"connect password without user", []string{"precheck"}, with(required, "MM2CUTOVER_CONNECT_PASSWORD", "hunter2-connect"),
			"MM2CUTOVER_CONNECT_PASSWORD is set but -connect-user is not"},
		{"connect user without password", []string{"-connect-user", "operator", "precheck"}, required,
			`-connect-user "operator" needs its password in the environment, MM2CUTOVER_CONNECT_PASSWORD`},
		{"SASL password without user", []string{"-source-sasl-username=", "precheck"}, required,
			"MM2CUTOVER_SOURCE_SASL_PASSWORD is set but -source-sasl-username is not"},
		{"SASL user without password", []string{"-target-sasl-username", "mm2", "precheck"}, required,
			"needs its password in the environment, MM2CUTOVER_TARGET_SASL_PASSWORD"},
		{"Connect CA for plain HTTP", []string{"-connect-ca", "ca.pem", "precheck"}, required, "-connect-ca needs an https -connect-url"},
		{"GSSAPI from flags", []string{"-source-security-protocol", "SASL_SSL", "-source-sasl-mechanism", "GSSAPI", "precheck"}, required,
			"-source-sasl-mechanism GSSAPI: give Kerberos in a client properties file, -source-client-config"},
		{"-kerberos without the secure sandbox", []string{"-sandbox", "-kerberos"}, nil, "-kerberos goes with -sandbox -secure"},
		{"a topic name Kafka refuses", []string{"-topics", "orders,pay ments", "precheck"}, required, `-topics: "pay ments" is not a Kafka topic name`},
		{"a connector name with a control character", []string{"-connector", "mm2\x1b[2J", "precheck"}, required, `-connector "mm2\x1b[2J": a connector name may not hold control characters`},
		{"a topic name with a control character", []string{"-topics", "orders,\x1b[2J", "precheck"}, required, `-topics: "\x1b[2J" is not a Kafka topic name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var out, errb bytes.Buffer
			if code := run(tc.args, &out, &errb); code != app.ExitUsage {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, app.ExitUsage, errb.String())
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

// with returns a copy of env with key=value added.
func with(env map[string]string, key, value string) map[string]string {
	out := map[string]string{key: value}
	for k, v := range env {
		out[k] = v
	}
	return out
}

// TestCLIStatusJSON runs the status step against the real Connect cluster for
// a connector that does not exist, with -json.
func TestCLIStatusJSON(t *testing.T) {
	sb := sandboxtest.Shared(t)
	var out, errb bytes.Buffer
	code := run([]string{"-json", "-plan", t.TempDir() + "/none.json",
		"-source-bootstrap", sb.Source().Bootstrap(), "-target-bootstrap", sb.Target().Bootstrap(),
		"-connect-url", sb.ConnectURL(), "-connector", "cli-status-none", "-group", "g", "-topics", "t", "status"}, &out, &errb)
	if code != app.ExitOK {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	var rep app.StatusReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("stdout is not the JSON report: %v\n%s", err, out.String())
	}
	if rep.Exists || rep.Connector != "cli-status-none" {
		t.Fatalf("report %+v", rep)
	}
}

// TestCLIEscapesNames: a name with control characters (here a group named
// after escape sequences that clear the screen and set the window title,
// as a hand-edited plan or a cluster could carry) never reaches the
// terminal raw, in tables, -json or the audit file.
func TestCLIEscapesNames(t *testing.T) {
	sb := sandboxtest.Shared(t)
	dir := t.TempDir()
	const group = "evil\x1b[2J\x1b]0;owned\x07\u009b31m\u202e"
	for _, asJSON := range []bool{false, true} {
		var out, errb bytes.Buffer
		args := []string{"-plan", filepath.Join(dir, "none.json"), "-source-bootstrap", sb.Source().Bootstrap(), "-target-bootstrap", sb.Target().Bootstrap(),
			"-connect-url", sb.ConnectURL(), "-connector", "cli-escapes", "-group", group, "-topics", "cli-escapes-none", "precheck"}
		if asJSON {
			args = append([]string{"-json"}, args...)
		}
		if code := run(args, &out, &errb); code != app.ExitCheckFailed {
			t.Fatalf("exit %d, want %d (no such topic)\n%s", code, app.ExitCheckFailed, errb.String())
		}
		audit, err := os.ReadFile(filepath.Join(dir, "none.audit.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for what, text := range map[string]string{"stdout": out.String(), "stderr": errb.String(), "audit": string(audit)} {
			if i := strings.IndexFunc(text, term.Unsafe); i >= 0 {
				t.Errorf("-json=%v: %s holds %q raw:\n%s", asJSON, what, text[i:i+1], text)
			}
		}
		want := `evil\u001b[2J\u001b]0;owned\u0007\u009b31m\u202e`
		if !strings.Contains(out.String(), want) {
			t.Errorf("-json=%v: stdout does not name the group as %s:\n%s", asJSON, want, out.String())
		}
		if asJSON {
			var rep struct{ Checks []struct{ Detail string } }
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Checks) == 0 || !slices.ContainsFunc(rep.Checks, func(c struct{ Detail string }) bool {
				return strings.Contains(c.Detail, group)
			}) {
				t.Errorf("-json: no check detail decodes to the group's name (%v):\n%s", err, out.String())
			}
		}
	}
}

// TestCLIHabits: help and version exit 0 on stdout; flags may follow the
// step; a step's help shows its own flags; a settings file fills what flags
// and the environment leave; values out of their domain are usage errors
// before anything is read or written.
func TestCLIHabits(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cutover.env")
	if err := os.WriteFile(cfg, []byte("# the cutover of orders\nMM2CUTOVER_SOURCE_BOOTSTRAP=a:1\nMM2CUTOVER_TARGET_BOOTSTRAP=b:1\nMM2CUTOVER_CONNECT_URL=http://c:8088\nMM2CUTOVER_CONNECTOR=x\nMM2CUTOVER_GROUP=g\nMM2CUTOVER_TOPICS=t\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	withPassword := filepath.Join(dir, "secret.env")
	if err := os.WriteFile(withPassword, []byte("MM2CUTOVER_CONNECT_PASSWORD=hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		args       []string
		code       int
		stdout     string // substring of stdout
		stderr     string // substring of stderr
		notStdout  string
		mentionsIn string
	}{
		{name: "help", args: []string{"help"}, code: 0, stdout: "\nSteps:\n"},
		{name: "-h", args: []string{"-h"}, code: 0, stdout: "\nSteps:\n"},
		{name: "--help", args: []string{"--help"}, code: 0, stdout: "\nSteps:\n"},
		{name: "step help", args: []string{"plan", "-h"}, code: 0, stdout: "Usage:\n  cutover plan [flags]", notStdout: "-rollback-group"},
		{name: "help step", args: []string{"help", "rollback"}, code: 0, stdout: "-rollback-group"},
		{name: "version", args: []string{"version"}, code: 0, stdout: "cutover " + version},
		{name: "-version", args: []string{"-version"}, code: 0, stdout: "cutover " + version},
		{name: "unknown step before settings", args: []string{"bogus"}, code: 2, stderr: `unknown step "bogus"`},
		{name: "unknown flag after the step", args: []string{"plan", "-nope"}, code: 2, stderr: "run 'cutover help plan'"},
		{name: "-secure without -sandbox", args: []string{"-secure", "plan"}, code: 2, stderr: "-secure goes with -sandbox"},
		{name: "arguments after the step", args: []string{"plan", "extra"}, code: 2, stderr: "unexpected arguments"},
		{name: "flags after the step, settings from a file", args: []string{"precheck", "-config", cfg, "-stability-window", "-5s"}, code: 2,
			stderr: "-stability-window -5s: want a positive duration"},
		{name: "negative read-back timeout", args: []string{"-config", cfg, "apply", "-readback-timeout=-1m"}, code: 2, stderr: "-readback-timeout -1m0s"},
		{name: "no tasks", args: []string{"-config", cfg, "plan", "-tasks-max", "-1"}, code: 2, stderr: "-tasks-max -1"},
		{name: "a password in the settings file", args: []string{"-config", withPassword, "plan"}, code: 2, stderr: "passwords come from the environment only"},
		{name: "an unknown log level", args: []string{"-config", cfg, "plan", "-log-level", "loud"}, code: 2, stderr: "-log-level"},
		{name: "an unknown log level in the settings file", args: []string{"-config", props(t, "MM2CUTOVER_LOG_LEVEL=loud\n"), "plan"}, code: 2, stderr: "MM2CUTOVER_LOG_LEVEL: invalid value \"loud\": slog: level string \"loud\""},
		{name: "an unknown key in the settings file", args: []string{"-config", props(t, "MM2CUTOVER_COLOR=blue\n"), "plan"}, code: 2, stderr: "MM2CUTOVER_COLOR names no setting"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(tc.args, &out, &errb); code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), tc.stdout) {
				t.Errorf("stdout does not say %q:\n%s", tc.stdout, out.String())
			}
			if !strings.Contains(errb.String(), tc.stderr) {
				t.Errorf("stderr does not say %q:\n%s", tc.stderr, errb.String())
			}
			if tc.notStdout != "" && strings.Contains(out.String(), tc.notStdout) {
				t.Errorf("stdout shows %q:\n%s", tc.notStdout, out.String())
			}
			if strings.Contains(out.String()+errb.String(), "hunter2") {
				t.Error("a password was printed")
			}
		})
	}
}

func TestWriteFileAtomic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.json")
	if err := writeFileAtomic(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(path, []byte("two")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	entries, _ := os.ReadDir(filepath.Dir(path))
	if err != nil || string(b) != "two" || len(entries) != 1 {
		t.Errorf("after two writes: %q, %v, %d files", b, err, len(entries))
	}
	if err := writeFileAtomic(filepath.Join(path, "under-a-file"), []byte("x")); err == nil {
		t.Error("a write under a file succeeded")
	}
}
