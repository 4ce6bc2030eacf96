package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/examples/internal/app"
)

// TestF7SignalEndsTheJob: with the Job stuck where a signal cannot cancel
// it (reading a settings file that is a named pipe whose writer never
// writes), SIGTERM ended nothing, and the kubelet's SIGKILL came after the
// grace period with no result line. The Job now ends InterruptGrace after
// the signal, worth a retry, its result line last.
func TestF7SignalEndsTheJob(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "cutover.env")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	w, err := os.OpenFile(fifo, os.O_RDWR, 0) // a writer that never writes (O_RDWR does not wait on Linux)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{"MM2CUTOVER_JOB_TEST_AS_MAIN=1", "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "MM2CUTOVER_CONFIG=" + fifo}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(2 * time.Minute)
	for opened := false; !opened; {
		fds, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "fd", "*"))
		for _, fd := range fds {
			if target, err := os.Readlink(fd); err == nil && target == fifo {
				opened = true
			}
		}
		if !opened && time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the Job did not open the settings file within two minutes; stderr:\n%s", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var code int
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatal("SIGTERM did not end the Job within two minutes")
	}
	var r result
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		t.Fatalf("no result line: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	if code != app.ExitError || r.ExitStatus != code || r.Kind != "retry" || !strings.Contains(r.Error, "interrupted by a signal") {
		t.Errorf("exit %d, result %+v; want exit 1, interrupted, worth a retry", code, r)
	}
}
