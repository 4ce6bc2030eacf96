package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/internal/ptytest"
)

// TestCLIOnATerminal: with stderr a terminal the command line takes its
// terminal path (a status line below the log, term.Status); what it prints
// there still arrives whole, no status line is left behind, and stdout,
// not a terminal, receives no terminal control sequence.
func TestCLIOnATerminal(t *testing.T) {
	requiredEnv(t, "http://127.0.0.1:1")
	pty, err := ptytest.Open(120)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	code := run([]string{"-o", "json", "precheck", "-retry-timeout", "1s", "-request-timeout", "1s"}, &out, pty.Terminal)
	term := pty.Close()
	if code != app.ExitError || !strings.Contains(term, "cutover: ") || !strings.HasSuffix(term, "\r\n") {
		t.Errorf("exit %d; the terminal received:\n%q", code, term)
	}
	if strings.Contains(out.String(), "\x1b") || !strings.Contains(out.String(), `"schema": "mm2cutover/failure/v1"`) {
		t.Errorf("stdout:\n%q", out.String())
	}
}
