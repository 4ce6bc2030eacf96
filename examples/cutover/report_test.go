package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/examples/internal/app"
)

// The demo's plan and audit file (see that directory's README), and the
// record the changereport package's golden files hold of them.
const reportTestdata = "../internal/changereport/testdata/"

// TestReportStep runs the report step on the demo's plan and audit file,
// with no cluster settings at all: it writes the page and the Markdown the
// package's golden files hold, and prints where and the verdict.
func TestReportStep(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "change-123.html")
	for _, asJSON := range []bool{false, true} {
		args := []string{"report", "-plan", reportTestdata + "demo.plan.json", "-audit", reportTestdata + "demo.audit.jsonl", "-report-out", out}
		if asJSON {
			args = append(args, "-json")
		}
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != app.ExitOK {
			t.Fatalf("exit %d\n%s", code, stderr.String())
		}
		if asJSON {
			var doc struct {
				Schema, HTML, Markdown string
				Verdict                struct{ Outcome string }
			}
			if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
				t.Fatalf("%v\n%s", err, stdout.String())
			}
			if doc.Schema != "mm2cutover/report/v1" || doc.HTML != out || doc.Markdown != filepath.Join(dir, "change-123.md") || doc.Verdict.Outcome != "passed" {
				t.Errorf("JSON %+v", doc)
			}
		} else if want := "verdict        PASSED\n               connector RUNNING"; !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout does not say %q:\n%s", want, stdout.String())
		}
	}
	for got, want := range map[string]string{out: "demo.html", filepath.Join(dir, "change-123.md"): "demo.md"} {
		g, err := os.ReadFile(got)
		if err != nil {
			t.Fatal(err)
		}
		w, err := os.ReadFile(reportTestdata + want)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(g, w) {
			t.Errorf("%s is not the package's golden %s", got, want)
		}
	}
}

// TestReportStepRefuses: an audit file of another cutover, or none, is a
// settings error (exit 2) and writes nothing.
func TestReportStepRefuses(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.audit.jsonl")
	if err := os.WriteFile(other, []byte(`{"at":"2026-12-05T10:00:00Z","step":"plan","connector":"mm2-orders","plan_fingerprint":"sha256:00"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.html")
	for audit, want := range map[string]string{
		other:                            "holds no entry of plan sha256:3a8dc3e3",
		filepath.Join(dir, "none.jsonl"): "read the audit file",
	} {
		var stdout, stderr bytes.Buffer
		code := run([]string{"report", "-plan", reportTestdata + "demo.plan.json", "-audit", audit, "-report-out", out}, &stdout, &stderr)
		if code == app.ExitOK || !strings.Contains(stderr.String(), want) {
			t.Errorf("-audit %s: exit %d, stderr %q, want it to say %q", filepath.Base(audit), code, stderr.String(), want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("a record was written")
		}
	}
}

// TestReportHelp: the step's help shows its own flags and none of the
// clusters' settings.
func TestReportHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"help", "report"}, &stdout, &stderr); code != app.ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	for _, want := range []string{"-plan", "-audit", "-report-out", "-json"} {
		if !strings.Contains(stdout.String(), "\n  "+want+" ") {
			t.Errorf("help does not show %s:\n%s", want, stdout.String())
		}
	}
	if strings.Contains(stdout.String(), "-source-bootstrap") {
		t.Errorf("help shows the clusters' settings:\n%s", stdout.String())
	}
}
