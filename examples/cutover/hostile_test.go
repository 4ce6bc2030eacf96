package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/cutover"
	"github.com/mm2cutover/mm2cutover/examples/internal/app"
)

// TestF11StrimziReplicasRefused: -strimzi-replicas 0 or a negative number
// was rendered as a KafkaMirrorMaker2 of one worker. It is refused as
// settings (exit 2) before anything is read.
func TestF11StrimziReplicasRefused(t *testing.T) {
	requiredEnv(t, "http://127.0.0.1:3")
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"strimzi", "-strimzi-cluster", "mm2", "-strimzi-replicas", "0"}, "", "-strimzi-replicas 0"},
		{[]string{"strimzi", "-strimzi-cluster", "mm2", "-strimzi-replicas=-3"}, "", "-strimzi-replicas -3"},
		{[]string{"strimzi", "-strimzi-cluster", "mm2"}, "0", "-strimzi-replicas 0"},
	} {
		t.Setenv("MM2CUTOVER_STRIMZI_REPLICAS", tc.env)
		if tc.env == "" {
			t.Setenv("MM2CUTOVER_STRIMZI_REPLICAS", "1")
		}
		var out, errb bytes.Buffer
		args := append([]string{"-plan", t.TempDir() + "/none.json"}, tc.args...)
		if code := run(args, &out, &errb); code != app.ExitUsage || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%q (MM2CUTOVER_STRIMZI_REPLICAS=%s): exit %d, want %d saying %q; stderr:\n%s", tc.args, tc.env, code, app.ExitUsage, tc.want, errb.String())
		}
	}
}

// TestF6JSONFailures: with -json asked for in any way the settings
// accept, every failure prints its JSON document on stdout; some printed
// none: a step unknown to help, no step, MM2CUTOVER_JSON=1 (only "true"
// counted), json set only in the -config file.
func TestF6JSONFailures(t *testing.T) {
	requiredEnv(t, "http://127.0.0.1:1")
	jsonFile := filepath.Join(t.TempDir(), "cutover.env")
	if err := os.WriteFile(jsonFile, []byte("MM2CUTOVER_JSON=true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"help of an unknown step", []string{"-json", "help", "bogus"}, nil},
		{"no step", []string{"-json"}, nil},
		{"MM2CUTOVER_JSON=1", []string{"precheck", "-tasks-max", "-1"}, map[string]string{"MM2CUTOVER_JSON": "1"}},
		{"json only in -config", []string{"-config", jsonFile, "precheck", "-tasks-max", "-1"}, nil},
		{"json only in MM2CUTOVER_CONFIG's file, an environment typo", []string{"precheck"}, map[string]string{"MM2CUTOVER_CONFIG": jsonFile, "MM2CUTOVER_GRUOP": "g"}},
		{"a bad flag before -json", []string{"-nope", "-json", "precheck"}, nil},
		{"-secure without -sandbox", []string{"-json", "-secure", "precheck"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var out, errb bytes.Buffer
			code := run(tc.args, &out, &errb)
			var doc struct {
				Schema     string `json:"schema"`
				ExitStatus int    `json:"exit_status"`
				Error      string `json:"error"`
			}
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.Schema != "mm2cutover/failure/v1" || doc.ExitStatus != code || code != app.ExitUsage || doc.Error == "" {
				t.Errorf("exit %d, stdout not the failure document (%v):\n%s\nstderr:\n%s", code, err, out.String(), errb.String())
			}
		})
	}
	// -json=false on the command line wins over the environment.
	t.Setenv("MM2CUTOVER_JSON", "true")
	var out bytes.Buffer
	if code := run([]string{"-json=false", "precheck", "-tasks-max", "-1"}, &out, &bytes.Buffer{}); code != app.ExitUsage || out.Len() != 0 {
		t.Errorf("-json=false: exit %d, stdout %q", code, out.String())
	}
}

// TestT43ApplyTableAfterFailedPatch: apply's table printed "read-back
// 0 match" after a PATCH that failed, when no read-back ran.
func TestT43ApplyTableAfterFailedPatch(t *testing.T) {
	var b bytes.Buffer
	writeApply(&b, &cutover.ApplyResult{Connector: "c", Guard: "apply"}, "a.jsonl")
	if out := b.String(); strings.Contains(out, "match") || !strings.Contains(out, "read-back\tnot run") {
		t.Errorf("after a failed PATCH:\n%s", out)
	}
	b.Reset()
	writeApply(&b, &cutover.ApplyResult{Connector: "c", Guard: "apply", Patched: true, ReadBackRan: true, Unread: true}, "a.jsonl")
	if out := b.String(); !strings.Contains(out, "read-back\tnot read") {
		t.Errorf("a read-back that read nothing:\n%s", out)
	}
}
