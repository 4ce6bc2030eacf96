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

// TestF2JobResultLineShowsNoKey: a private key pasted into a mounted client
// properties file without a '\' at the end of each line made each line a
// key, and the result line (the Pod's log) listed them as unknown keys. The
// Job refuses the file (exit 2) and shows no line of the key anywhere.
func TestF2JobResultLineShowsNoKey(t *testing.T) {
	for k, v := range map[string]string{"MM2CUTOVER_SOURCE_BOOTSTRAP": "127.0.0.1:1", "MM2CUTOVER_TARGET_BOOTSTRAP": "127.0.0.1:2",
		"MM2CUTOVER_CONNECT_URL": "http://127.0.0.1:3", "MM2CUTOVER_CONNECTOR": "c", "MM2CUTOVER_GROUP": "g", "MM2CUTOVER_TOPICS": "t"} {
		t.Setenv(k, v)
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "clientconf", "testdata", "client.pem"))
	if err != nil {
		t.Fatal(err)
	}
	key := string(b[:bytes.Index(b, []byte("-----END PRIVATE KEY-----"))+len("-----END PRIVATE KEY-----")])
	for _, env := range []string{"MM2CUTOVER_SOURCE_CLIENT_CONFIG", "MM2CUTOVER_TARGET_CLIENT_CONFIG", "MM2CUTOVER_MM2_SOURCE_CLIENT", "MM2CUTOVER_CONNECTOR_PROPERTIES"} {
		t.Run(env, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "client.properties")
			if err := os.WriteFile(file, []byte("security.protocol=SSL\nssl.keystore.type=PEM\nssl.keystore.key="+key+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Setenv(env, file)
			var out, errb bytes.Buffer
			code := run(nil, &out, &errb)
			var r result
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
				t.Fatalf("no result line: %v\nstdout:\n%s", err, out.String())
			}
			if code != app.ExitUsage || r.ExitStatus != code {
				t.Errorf("exit %d, result %+v; want exit 2", code, r)
			}
			for _, l := range strings.Split(key, "\n") {
				if len(l) >= 12 && (strings.Contains(out.String(), l[:12]) || strings.Contains(errb.String(), l[:12])) {
					t.Fatalf("the Job shows the key:\nstdout:\n%s\nstderr:\n%s", out.String(), errb.String())
				}
			}
		})
	}
}
