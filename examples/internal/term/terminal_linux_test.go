package term

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/progress"
	"github.com/mm2cutover/mm2cutover/internal/ptytest"
)

// TestTerminal: a pseudo-terminal is a terminal of its width; a file, a
// pipe, /dev/null and a buffer are not.
func TestTerminal(t *testing.T) {
	pty, err := ptytest.Open(72)
	if err != nil {
		t.Fatal(err)
	}
	defer pty.Close()
	if w, ok := Terminal(pty.Terminal); !ok || w != 72 {
		t.Errorf("a pseudo-terminal: %d, %v; want 72, true", w, ok)
	}
	t.Setenv("TERM", "dumb")
	if _, ok := Terminal(pty.Terminal); ok {
		t.Error("a terminal with TERM=dumb is taken as one")
	}
	t.Setenv("TERM", "xterm")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	file, err := os.Create(t.TempDir() + "/log")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for name, w := range map[string]io.Writer{"a pipe": w, "/dev/null": null, "a file": file, "a buffer": &bytes.Buffer{}} {
		if _, ok := Terminal(w); ok {
			t.Errorf("%s is taken as a terminal", name)
		}
	}
}

// TestWaitOnATerminal: a wait (the precheck's stability window, as
// kafkaadmin sleeps through it) logged through the handler onto a
// pseudo-terminal shows one status line rewritten in place, with the time
// left, every second; a log line after it stands on its own line; nothing
// is left of the status line at the end.
func TestWaitOnATerminal(t *testing.T) {
	pty, err := ptytest.Open(100)
	if err != nil {
		t.Fatal(err)
	}
	width, ok := Terminal(pty.Terminal)
	if !ok {
		t.Fatal("the pseudo-terminal is not a terminal")
	}
	status := NewStatus(pty.Terminal, width)
	log := slog.New(NewLogHandler(NewSafeWriter(status), status, nil))
	wait := progress.Start(log, "group g's commits to stay put for 2.5s")
	if err := wait.Sleep(context.Background(), 2500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	log.Info("precheck done")
	status.Clear()
	out := pty.Close()
	lines := strings.Count(out, "\r\x1b[Kwaiting for group g's commits to stay put for 2.5s (")
	if lines < 1 || !strings.Contains(out, "s so far, ") || !strings.Contains(out, "s left)") {
		t.Errorf("no status line with the time waited and left:\n%q", out)
	}
	if strings.Contains(out, "msg=\"waiting for") {
		t.Errorf("the wait was logged as lines too:\n%q", out)
	}
	if !strings.Contains(out, "\r\x1b[Ktime=") || !strings.HasSuffix(out, "msg=\"precheck done\"\r\n") {
		t.Errorf("the line after the wait does not stand alone at the end:\n%q", out)
	}
}
