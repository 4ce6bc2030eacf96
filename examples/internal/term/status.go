// Package term is what the examples' binaries write to a person: stderr
// on a terminal with a status line that shows the wait in progress
// (Status, NewLogHandler), and writers that show no control character
// from a plan or the clusters raw (SafeWriter).
package term

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mm2cutover/mm2cutover/internal/progress"
)

// clearLine returns a terminal's cursor to the start of its line and
// erases the line.
const clearLine = "\r\x1b[K"

// Status is stderr on a terminal with a status line below what is written
// to it: the line of the wait in progress (package internal/progress),
// rewritten in place by Show. Write clears the line first, so that every
// other line stands alone; Clearing gives stdout the same courtesy. It is
// safe for concurrent use.
type Status struct {
	mu    sync.Mutex
	w     io.Writer
	width int
	shown bool
}

// NewStatus returns the status line of the terminal w, width columns wide.
func NewStatus(w io.Writer, width int) *Status {
	return &Status{w: w, width: width}
}

// Write clears the status line, if one is shown, and writes p.
func (s *Status) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clear()
	return s.w.Write(p)
}

// Show replaces the status line with line: escaped as SafeWriter escapes
// (names from the clusters may hold control characters) and cut to the
// terminal's width, so that it never wraps onto a second row that the
// next Show could not erase.
func (s *Status) Show(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	n := 0
	for _, r := range line {
		esc := string(r)
		switch {
		case r == '\n' || r == '\t':
			esc = " "
		case r == utf8.RuneError:
			esc = string(utf8.RuneError)
		case Unsafe(r):
			esc = fmt.Sprintf(`\u%04x`, r)
		}
		if n+utf8.RuneCountInString(esc) > s.width-1 {
			break
		}
		b.WriteString(esc)
		n += utf8.RuneCountInString(esc)
	}
	_, _ = io.WriteString(s.w, clearLine+b.String())
	s.shown = true
}

// Clear removes the status line, if one is shown.
func (s *Status) Clear() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clear()
}

func (s *Status) clear() {
	if s.shown {
		_, _ = io.WriteString(s.w, clearLine)
		s.shown = false
	}
}

// Clearing returns w, writing to which first clears the status line: for
// stdout, which may be the same terminal.
func (s *Status) Clearing(w io.Writer) io.Writer {
	return clearingWriter{s, w}
}

type clearingWriter struct {
	s *Status
	w io.Writer
}

func (c clearingWriter) Write(p []byte) (int, error) {
	c.s.Clear()
	return c.w.Write(p)
}

// NewLogHandler returns the handler of the binaries' log on stderr: slog's
// text lines on w, at the level of opts. With a status line (stderr is a
// terminal), the lines of a wait (progress.IsProgress) are shown on it,
// rewritten every second (the handler is progress.Live) with what is
// awaited, how far it is, the time waited and an estimate of the time
// left, instead of a line every five seconds; the other lines are written
// as without.
func NewLogHandler(w io.Writer, status *Status, opts *slog.HandlerOptions) slog.Handler {
	text := slog.NewTextHandler(w, opts)
	if status == nil {
		return text
	}
	return &liveHandler{text: text, status: status}
}

// liveHandler shows the lines of a wait on a status line.
type liveHandler struct {
	text   slog.Handler
	status *Status
}

// ShowsProgressLive implements progress.Live.
func (h *liveHandler) ShowsProgressLive() bool { return true }

func (h *liveHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.text.Enabled(ctx, l) }

func (h *liveHandler) Handle(ctx context.Context, r slog.Record) error {
	if progress.IsProgress(r) {
		h.status.Show(StatusLine(r))
		return nil
	}
	return h.text.Handle(ctx, r)
}

func (h *liveHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &liveHandler{text: h.text.WithAttrs(as), status: h.status}
}

func (h *liveHandler) WithGroup(name string) slog.Handler {
	return &liveHandler{text: h.text.WithGroup(name), status: h.status}
}

// StatusLine is the status line of a wait's log record: "waiting for
// <what>: <how far> (<waited> so far, <left> left)", with "about" before
// an estimate; "N of M" for an attribute "of".
func StatusLine(r slog.Record) string {
	var waited, left, eta string
	var parts []string
	r.Attrs(func(a slog.Attr) bool {
		v := a.Value.Resolve().String()
		switch a.Key {
		case progress.WaitedKey:
			waited = v
		case progress.LeftKey:
			left = v
		case progress.ETAKey:
			eta = v
		case "of":
			if len(parts) > 0 {
				parts[len(parts)-1] += " of " + v
				break
			}
			parts = append(parts, "of "+v)
		default:
			parts = append(parts, a.Key+"="+v)
		}
		return true
	})
	line := r.Message
	if len(parts) > 0 {
		line += ": " + strings.Join(parts, " ")
	}
	when := []string{waited + " so far"}
	switch {
	case left != "":
		when = append(when, left+" left")
	case eta != "":
		when = append(when, "about "+eta+" left")
	}
	return line + " (" + strings.Join(when, ", ") + ")"
}
