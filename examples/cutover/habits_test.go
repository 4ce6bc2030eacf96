package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/examples/internal/app"
)

// requiredEnv sets the six required settings in the environment.
func requiredEnv(t *testing.T, connectURL string) {
	t.Helper()
	for k, v := range map[string]string{"MM2CUTOVER_SOURCE_BOOTSTRAP": "127.0.0.1:1", "MM2CUTOVER_TARGET_BOOTSTRAP": "127.0.0.1:2",
		"MM2CUTOVER_CONNECT_URL": connectURL, "MM2CUTOVER_CONNECTOR": "c", "MM2CUTOVER_GROUP": "g", "MM2CUTOVER_TOPICS": "t"} {
		t.Setenv(k, v)
	}
}

// TestCLIJSONOnFailure: with -json a step that fails before it printed its
// result prints a failure document on stdout (it printed nothing before),
// with the fields of the Job's result line; -json version is JSON too.
func TestCLIJSONOnFailure(t *testing.T) {
	requiredEnv(t, "http://127.0.0.1:1")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"bad settings", []string{"-json", "precheck", "-tasks-max", "-1"}, app.ExitUsage, "-tasks-max -1"},
		{"bad flag", []string{"-json", "precheck", "-nope"}, app.ExitUsage, "-nope"},
		{"unreachable Connect within the retry budget", []string{"-json", "precheck", "-retry-timeout", "1s", "-request-timeout", "1s"}, app.ExitError, "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(tc.args, &out, &errb)
			var doc struct {
				Schema, Step, Result, Error string
				ExitStatus                  int `json:"exit_status"`
			}
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
				t.Fatalf("stdout is not one JSON document: %v\n%s\nstderr:\n%s", err, out.String(), errb.String())
			}
			if code != tc.code || doc.Schema != "mm2cutover/failure/v1" || doc.Step != "precheck" || doc.ExitStatus != code ||
				doc.Result != app.ResultOf(code) || !strings.Contains(doc.Error, tc.want) {
				t.Errorf("exit %d, document %+v; want exit %d saying %q", code, doc, tc.code, tc.want)
			}
			// Before -retry-timeout an unreachable worker was retried for 113 s.
			if n := strings.Count(errb.String(), "retrying"); n > 8 {
				t.Errorf("%d retries within a 1 s budget:\n%s", n, errb.String())
			}
		})
	}
	var out bytes.Buffer
	if code := run([]string{"-json", "version"}, &out, &bytes.Buffer{}); code != 0 || !json.Valid(out.Bytes()) || !strings.Contains(out.String(), `"version": "`+version+`"`) {
		t.Errorf("-json version: exit %d, %s", code, out.String())
	}
}

// TestCLIEnvTypo: a typo in an MM2CUTOVER_* variable is refused as the same
// typo in -config is (it was ignored before).
func TestCLIEnvTypo(t *testing.T) {
	requiredEnv(t, "http://127.0.0.1:1")
	t.Setenv("MM2CUTOVER_STABILITY_WINDOWS", "1m")
	var errb bytes.Buffer
	if code := run([]string{"precheck"}, &bytes.Buffer{}, &errb); code != app.ExitUsage || !strings.Contains(errb.String(), "MM2CUTOVER_STABILITY_WINDOWS") {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}

// TestCompletion: the bash script completes steps, a step's own flags,
// the steps after help and the shells after completion, the values of the
// flags that have a fixed set, files and directories, from the flag set;
// the zsh script does the same and, where zsh is installed, parses.
func TestCompletion(t *testing.T) {
	var bashScript, zshScript bytes.Buffer
	if code := run([]string{"completion", "bash"}, &bashScript, os.Stderr); code != 0 {
		t.Fatalf("completion bash: exit %d", code)
	}
	if code := run([]string{"completion", "zsh"}, &zshScript, os.Stderr); code != 0 {
		t.Fatalf("completion zsh: exit %d", code)
	}
	if code := run([]string{"completion", "fish"}, &bytes.Buffer{}, &bytes.Buffer{}); code != app.ExitUsage {
		t.Errorf("completion fish: exit %d, want 2", code)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "cutover.bash")
	if err := os.WriteFile(script, bashScript.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"plan-a.json", "savepoint-notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "savepoint-1"), 0o700); err != nil {
		t.Fatal(err)
	}
	complete := func(words ...string) string {
		t.Helper()
		cmd := exec.Command("bash", "-c", `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _cutover; printf '%s\n' "${COMPREPLY[@]}"`, "bash", script)
		cmd.Args = append(cmd.Args, words...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"cutover", "pre"}, "precheck"},
		{[]string{"cutover", "apply", "-dry"}, "-dry-run"},
		{[]string{"cutover", "apply", "-plan", "plan-"}, "plan-a.json"},
		{[]string{"cutover", "resume", "-ye"}, "-yes"},
		{[]string{"cutover", "precheck", "-source-client"}, "-source-client-config"},
		{[]string{"cutover", "precheck", "-worker-storage"}, "-worker-storage-replication-factor"},
		{[]string{"cutover", "ver"}, "verify\nversion"},
		{[]string{"cutover", "opt"}, "options"},
		// After help, the steps; after completion, the shells.
		{[]string{"cutover", "help", "ap"}, "apply"},
		{[]string{"cutover", "help", "comp"}, "completion"},
		{[]string{"cutover", "completion", "z"}, "zsh"},
		// The values of the flags that have a fixed set.
		{[]string{"cutover", "precheck", "-source-security-protocol", "SASL_"}, "SASL_PLAINTEXT\nSASL_SSL"},
		{[]string{"cutover", "plan", "-target-sasl-mechanism", "SCRAM"}, "SCRAM-SHA-256\nSCRAM-SHA-512"},
		{[]string{"cutover", "plan", "-policy", "d"}, "default"},
		{[]string{"cutover", "plan", "-offset-syncs-location", "t"}, "target"},
		{[]string{"cutover", "-log-level", "w"}, "warn"},
		{[]string{"cutover", "status", "-o", "j"}, "json"},
		{[]string{"cutover", "status", "-output", "t"}, "text"},
		{[]string{"cutover", "plan", "-offsets-from", "cs"}, "csv:"},
		// Files after a path flag, directories after -savepoint, nothing
		// after a flag whose value has no fixed set.
		{[]string{"cutover", "verify", "-strimzi-offsets", "plan-"}, "plan-a.json"},
		{[]string{"cutover", "plan", "-savepoint", "sav"}, "savepoint-1"},
		{[]string{"cutover", "plan", "-group", ""}, ""},
		{[]string{"cutover", "plan", "-stability-window", ""}, ""},
	} {
		if got := complete(tc.words...); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.words, got, tc.want)
		}
	}
	if got := complete("cutover", "precheck", "-ye"); got != "" {
		t.Errorf("precheck offers %q: -yes is not its flag", got)
	}
	for _, f := range []string{"-dry-run", "-source-client-config", "-retry-timeout", "'precheck:read-only", "'options:",
		"(-source-security-protocol) compadd -- 'PLAINTEXT' 'SSL' 'SASL_PLAINTEXT' 'SASL_SSL'", "(-output|-o) compadd -- 'text' 'json'",
		"compadd -S '' -- 'flink-savepoint:' 'csv:' 'mm2:'", "(-savepoint) _files -/", "_describe -t steps step steps; return"} {
		if !strings.Contains(zshScript.String(), f) {
			t.Errorf("the zsh script does not name %s", f)
		}
	}
	if zsh, err := exec.LookPath("zsh"); err == nil {
		zf := filepath.Join(dir, "_cutover")
		os.WriteFile(zf, zshScript.Bytes(), 0o600)
		if out, err := exec.Command(zsh, "-n", zf).CombinedOutput(); err != nil {
			t.Errorf("zsh -n: %v\n%s", err, out)
		}
	}
}
