package jvmcds

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWithOptions(t *testing.T) {
	opts := []string{"-Xlog:cds=off", "-XX:SharedArchiveFile=/c/broker.jsa"}
	const opt = "-Xlog:cds=off -XX:SharedArchiveFile=/c/broker.jsa"
	for _, tc := range []struct {
		name              string
		argv, env         []string
		envVar            string
		wantArgv, wantEnv []string
	}{
		{"after the java binary", []string{"java", "-Xmx1g", "kafka.Kafka"}, []string{"PATH=/bin"}, "",
			[]string{"java", opts[0], opts[1], "-Xmx1g", "kafka.Kafka"}, []string{"PATH=/bin"}},
		{"at the end of the variable", []string{"entrypoint.sh"}, []string{"PATH=/bin", "OPTS=-XX:+UseSerialGC"}, "OPTS",
			[]string{"entrypoint.sh"}, []string{"PATH=/bin", "OPTS=-XX:+UseSerialGC " + opt}},
		{"the last of a repeated variable", []string{"entrypoint.sh"}, []string{"OPTS=a", "OPTS=b"}, "OPTS",
			[]string{"entrypoint.sh"}, []string{"OPTS=a", "OPTS=b " + opt}},
		{"a variable not set yet", []string{"entrypoint.sh"}, []string{"PATH=/bin"}, "OPTS",
			[]string{"entrypoint.sh"}, []string{"PATH=/bin", "OPTS=" + opt}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := append([]string{}, tc.env...)
			argv, gotEnv := WithOptions(tc.argv, env, tc.envVar, opts)
			if d := cmp.Diff(tc.wantArgv, argv); d != "" {
				t.Errorf("argv (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantEnv, gotEnv); d != "" {
				t.Errorf("env (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.env, env); d != "" {
				t.Errorf("the caller's env changed (-want +got):\n%s", d)
			}
		})
	}
}

// TestClassArchiveFlag: one JVM at a time writes the archive, a killed one
// leaves none, and once it is there every JVM maps it.
func TestClassArchiveFlag(t *testing.T) {
	cache := t.TempDir()
	java := filepath.Join(t.TempDir(), "java")
	if err := os.WriteFile(java, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := New(cache, java, "/kafka/libs/*", "broker")
	if other := New(cache, java, "/kafka-3.7.2/libs/*", "broker"); other.path == a.path {
		t.Fatalf("two distributions share the archive %s", a.path)
	}
	dumping := func(opts []string) string {
		t.Helper()
		if len(opts) != 2 || opts[0] != Quiet {
			t.Fatalf("options %q, want %s -XX:ArchiveClassesAtExit=...", opts, Quiet)
		}
		tmp, ok := strings.CutPrefix(opts[1], "-XX:ArchiveClassesAtExit=")
		if !ok {
			t.Fatalf("options %q, want %s -XX:ArchiveClassesAtExit=...", opts, Quiet)
		}
		return tmp
	}

	opt, done := a.Options()
	tmp := dumping(opt)
	if opts2, _ := a.Options(); opts2 != nil {
		t.Errorf("a second JVM while the first writes the archive: options %q, want none", opts2)
	}
	// A lock left by a JVM that never ended is taken over once stale.
	old := time.Now().Add(-staleLock - time.Minute)
	if err := os.Chtimes(a.path+".lock", old, old); err != nil {
		t.Fatal(err)
	}
	opt2, done2 := a.Options()
	dumping(opt2)
	done2(false)

	os.WriteFile(tmp, []byte("half"), 0o644)
	done(false) // killed
	if _, err := os.Stat(a.path); err == nil {
		t.Fatal("a killed JVM's archive was kept")
	}

	opt, done = a.Options()
	os.WriteFile(dumping(opt), []byte("archive"), 0o644)
	done(true)
	if opts, _ := a.Options(); !cmp.Equal(opts, []string{Quiet, "-XX:SharedArchiveFile=" + a.path}) {
		t.Errorf("options %q after the archive was written, want %s -XX:SharedArchiveFile=%s", opts, Quiet, a.path)
	}
	if m, _ := filepath.Glob(filepath.Join(cache, "cds", "*.tmp")); len(m) > 0 {
		t.Errorf("files left behind: %v", m)
	}
}

func TestClassArchiveWithoutJava(t *testing.T) {
	if a := New(t.TempDir(), filepath.Join(t.TempDir(), "no-java"), "/kafka/libs/*", "broker"); a != nil {
		t.Fatalf("archive %v for a java binary that does not exist, want nil", a)
	}
	var a *Archive
	if opts, done := a.Options(); opts != nil {
		t.Errorf("nil archive: options %q", opts)
	} else {
		done(true)
	}
}
