package term

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// SafeWriter escapes, in everything written through it, the characters a
// terminal would take as commands rather than text: names read from a plan
// file or from the clusters (a group, a connector, a topic in a hand-edited
// plan) and messages a server sent back may hold them, and "\x1b[2J" in a
// group name would clear the operator's screen, or worse. It is the one
// place the binaries escape: their stdout, stderr and audit file go through
// it, so every table, message and log line is covered, whoever formats it.
//
// Escaped as \u followed by four hex digits, which reads as text and is
// also a valid escape inside a JSON string (encoding/json leaves DEL, the
// C1 controls and the bidirectional controls raw): the C0 controls but tab
// and newline, DEL, the C1 controls U+0080 to U+009F, and the bidirectional
// formatting characters (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066
// to U+2069) that reorder what a terminal shows. A byte that is not UTF-8
// becomes U+FFFD. Everything else passes unchanged, in its order.
type SafeWriter struct {
	w       io.Writer
	pending []byte // the start of a UTF-8 sequence that the next Write completes
}

// NewSafeWriter returns a SafeWriter writing to w. Call Flush when done.
func NewSafeWriter(w io.Writer) *SafeWriter { return &SafeWriter{w: w} }

// Write escapes p and writes it. It reports len(p) written when the
// escaped text was written whole. A UTF-8 sequence cut at the end of p is
// kept for the next Write.
func (s *SafeWriter) Write(p []byte) (int, error) {
	in := p
	if len(s.pending) > 0 {
		in = append(s.pending, p...)
		s.pending = nil
	}
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); {
		if !utf8.FullRune(in[i:]) {
			s.pending = append([]byte(nil), in[i:]...)
			break
		}
		r, n := utf8.DecodeRune(in[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = utf8.AppendRune(out, utf8.RuneError)
		case Unsafe(r):
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, in[i:i+n]...)
		}
		i += n
	}
	if _, err := s.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what a last Write left pending (a cut UTF-8 sequence), as
// U+FFFD.
func (s *SafeWriter) Flush() error {
	if len(s.pending) == 0 {
		return nil
	}
	s.pending = nil
	_, err := s.w.Write([]byte(string(utf8.RuneError)))
	return err
}

// Unsafe reports whether SafeWriter escapes r.
func Unsafe(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
