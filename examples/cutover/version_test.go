package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
)

// versionDoc is the -json version document.
type versionDoc struct {
	Schema, Version, Commit, Go, Platform string
	Connect                               *connectInfo
}

// TestVersionStamped builds the binary as a release pipeline does, with
// -ldflags, and reads the version, commit and Go version back; without a
// worker in the settings the document has no connect part.
func TestVersionStamped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "cutover")
	build := exec.Command("go", "build", "-o", bin, "-ldflags", "-X main.version=v9.8.7 -X main.commit=0123abcd", ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-json", "version").Output()
	if err != nil {
		t.Fatalf("version: %v", err)
	}
	var doc versionDoc
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := versionDoc{Schema: "mm2cutover/version/v1", Version: "v9.8.7", Commit: "0123abcd", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if doc != want {
		t.Errorf("got %+v, want %+v", doc, want)
	}
	text, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(text), "cutover v9.8.7 (commit 0123abcd) "+runtime.Version()) {
		t.Errorf("version: %v %q", err, text)
	}
}

// TestVersionConnect: with a Connect URL in the settings, version shows
// the worker's Kafka version and cluster; an unreachable worker is named,
// and the step still exits 0.
func TestVersionConnect(t *testing.T) {
	sb := sandboxtest.Shared(t)
	var out bytes.Buffer
	if code := run([]string{"-json", "version", "-connect-url", sb.ConnectURL()}, &out, &bytes.Buffer{}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var doc versionDoc
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if doc.Connect == nil || doc.Connect.Version != sb.KafkaVersion() || doc.Connect.KafkaClusterID == "" || doc.Connect.Error != "" {
		t.Errorf("connect part %+v, want Kafka %s and a cluster ID", doc.Connect, sb.KafkaVersion())
	}
	out.Reset()
	if code := run([]string{"version", "-connect-url", "http://127.0.0.1:1", "-retry-timeout", "1s"}, &out, &bytes.Buffer{}); code != 0 ||
		!strings.Contains(out.String(), "connect http://127.0.0.1:1: no answer") {
		t.Errorf("unreachable worker: exit %d, %s", code, out.String())
	}
}
