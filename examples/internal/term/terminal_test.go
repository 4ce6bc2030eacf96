package term

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSafeWriter(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"orders-3\tok\n", "orders-3\tok\n"},
		{"group \x1b[2J\x1b]0;owned\x07 done", `group \u001b[2J\u001b]0;owned\u0007 done`},
		{"a\rb\x00c\x7f", `a\u000db\u0000c\u007f`},
		{"csi \u009b31m", `csi \u009b31m`},
		{"bidi \u202eevil\u2066", `bidi \u202eevil\u2066`},
		{"not utf-8 \xff\xfe", "not utf-8 \ufffd\ufffd"},
		{"grüße, 注文, 🚀", "grüße, 注文, 🚀"},
		{"a literal \\u001b stays", "a literal \\u001b stays"},
	} {
		var b bytes.Buffer
		w := NewSafeWriter(&b)
		if n, err := w.Write([]byte(tc.in)); n != len(tc.in) || err != nil {
			t.Errorf("Write(%q) = %d, %v", tc.in, n, err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); got != tc.want {
			t.Errorf("SafeWriter(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestSafeWriterCutRune: a UTF-8 sequence cut between two writes comes out
// whole; one never completed comes out as U+FFFD at Flush.
func TestSafeWriterCutRune(t *testing.T) {
	var b bytes.Buffer
	w := NewSafeWriter(&b)
	s := []byte("注")
	w.Write(s[:1])
	w.Write(s[1:2])
	w.Write(append(s[2:], " \u0085"...))
	w.Write(s[:2])
	w.Flush()
	if got, want := b.String(), `注 \u0085`+"\ufffd"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// FuzzSafeWriter: whatever is written, in whatever pieces, the output is
// valid UTF-8 with nothing Unsafe in it, the same as written at once; text
// with nothing to escape passes unchanged; and JSON stays JSON with the
// same value.
func FuzzSafeWriter(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[2J", "a\u009bb\u202e", "\xff", "注文\n", `{"group":"\u001b"}`} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, s string, cut uint8) {
		var whole, pieces bytes.Buffer
		w := NewSafeWriter(&whole)
		w.Write([]byte(s))
		w.Flush()
		pw := NewSafeWriter(&pieces)
		step := int(cut%7) + 1
		for i := 0; i < len(s); i += step {
			pw.Write([]byte(s[i:min(i+step, len(s))]))
		}
		pw.Flush()
		out := whole.String()
		if pieces.String() != out {
			t.Fatalf("in pieces of %d: %q, at once: %q", step, pieces.String(), out)
		}
		if !utf8.ValidString(out) || strings.ContainsFunc(out, Unsafe) {
			t.Fatalf("output %q is not safe", out)
		}
		if utf8.ValidString(s) && !strings.ContainsFunc(s, Unsafe) && out != s {
			t.Fatalf("safe text %q changed to %q", s, out)
		}
		if !utf8.ValidString(s) {
			return
		}
		doc, _ := json.Marshal(map[string]string{"v": s})
		var back bytes.Buffer
		jw := NewSafeWriter(&back)
		jw.Write(doc)
		jw.Flush()
		var got map[string]string
		if err := json.Unmarshal(back.Bytes(), &got); err != nil || got["v"] != s {
			t.Fatalf("JSON %s through the writer: %s, %v", doc, back.Bytes(), err)
		}
	})
}
