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

// startCLI starts the command line as a process with args and the
// environment env.
func startCLI(t *testing.T, env []string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append([]string{"MM2CUTOVER_CLI_TEST_AS_MAIN=1", "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out, &errb
}

// waitExit waits for cmd to end, for at most two minutes (then kills it
// and fails), and returns its exit status.
func waitExit(t *testing.T, cmd *exec.Cmd, what string) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s: the command line had not ended after two minutes", what)
		return -1
	}
}

// waitOpened waits until process pid holds path open.
func waitOpened(t *testing.T, pid int, path string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		fds, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "fd", "*"))
		for _, fd := range fds {
			if target, err := os.Readlink(fd); err == nil && target == path {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not open %s within two minutes", pid, path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mkfifo(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cutover.env")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return path
}

// TestF7FIFOInputDoesNotBlock: a named pipe with no writer as the -config
// file blocked the command line for ever, in an open no signal could end.
// It is refused at once: settings, exit 2.
func TestF7FIFOInputDoesNotBlock(t *testing.T) {
	fifo := mkfifo(t)
	cmd, _, errb := startCLI(t, nil, "-config", fifo, "precheck")
	if code := waitExit(t, cmd, "-config of a named pipe without a writer"); code != app.ExitUsage {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, app.ExitUsage, errb)
	}
}

// TestF7SignalEndsTheTool: with the command line stuck where a signal
// cannot cancel it (here reading a named pipe whose writer never writes),
// SIGTERM ended nothing: the step's context was cancelled and the read went
// on. The process now ends InterruptGrace after the signal, worth a retry
// (exit 1), and -json still prints its failure document.
func TestF7SignalEndsTheTool(t *testing.T) {
	fifo := mkfifo(t)
	w, err := os.OpenFile(fifo, os.O_RDWR, 0) // a writer that never writes (O_RDWR does not wait on Linux)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cmd, out, errb := startCLI(t, nil, "-json", "-config", fifo, "precheck")
	waitOpened(t, cmd.Process.Pid, fifo)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, "SIGTERM"); code != app.ExitError {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, app.ExitError, errb)
	}
	if !strings.Contains(errb.String(), "interrupted by a signal") {
		t.Errorf("stderr does not say it was interrupted:\n%s", errb)
	}
	var doc struct {
		Schema     string `json:"schema"`
		ExitStatus int    `json:"exit_status"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.Schema != "mm2cutover/failure/v1" || doc.ExitStatus != app.ExitError {
		t.Errorf("stdout is not the failure document (%v):\n%s", err, out)
	}
}
