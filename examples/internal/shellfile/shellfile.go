// Package shellfile reads a settings file of NAME=value lines the way a
// POSIX shell that sources it (". cutover.env", "set -a; . cutover.env")
// reads it, so that the file means the same to the tool and to the shell:
//
//   - lines end with LF, CR LF or a lone CR; a leading UTF-8 byte order
//     mark is dropped;
//   - each line holds assignments, NAME=value, optionally after "export";
//     blank lines are skipped;
//   - a # at the start of a word begins a comment (so "g # old job" is g,
//     and "g#1" is g#1);
//   - a value may be bare, 'single-quoted' (taken as it is) or
//     "double-quoted" (\" \\ \$ and \` unescaped), or made of such parts;
//     a backslash outside quotes takes the next character as it is.
//
// What a shell would expand, run or read across lines is refused rather
// than read differently: $ and ` outside single quotes, an unquoted ~ where
// a shell expands it, ; & | < > ( ) outside quotes, a word that is not an
// assignment (a shell would run it: "KEY= value", "KEY = value"), a quote
// not closed on its line, a trailing backslash.
package shellfile

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mm2cutover/mm2cutover/clientconf"
	"github.com/mm2cutover/mm2cutover/redact"
)

// Assignment is one NAME=value of a file, its value unquoted, and the
// line that holds it (from 1).
type Assignment struct {
	Name, Value string
	Line        int
}

// LineError is why a shell would read one line of a file otherwise than
// as assignments (or, from a caller, why a line's assignment is refused).
type LineError struct {
	Path string
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// Read returns the assignments of the file at path, in order, and the
// lines a shell would read otherwise; err is only that the file cannot be
// read (it is read up to clientconf.MaxFileSize). form is how the errors
// show an assignment the caller expects, such as "MM2CUTOVER_<FLAG>=value".
func Read(path, form string) (assigns []Assignment, bad []*LineError, err error) {
	b, err := clientconf.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	for i, line := range splitLines(string(b)) {
		as, err := parseShellLine(line, form)
		if err != nil {
			bad = append(bad, &LineError{path, i + 1, err})
			continue
		}
		for _, a := range as {
			assigns = append(assigns, Assignment{Name: a.name, Value: a.value, Line: i + 1})
		}
	}
	return assigns, bad, nil
}

// splitLines splits s at LF, CR LF and lone CR line ends.
func splitLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// assignment is one NAME=value word of a settings line, unquoted.
type assignment struct{ name, value string }

// shellWord is a word of a line as a shell splits it: its text with quotes
// removed, and whether it is an assignment (an unquoted name, then =).
type shellWord struct {
	text   string
	assign bool
	name   string // the assignment's name
	eq     int    // the index in text where the value starts
}

// parseShellLine returns the assignments of one settings line (see Read),
// or why a shell would read the line otherwise.
func parseShellLine(line, form string) ([]assignment, error) {
	var words []shellWord
	i := 0
	for {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i == len(line) || line[i] == '#' {
			break
		}
		w, next, err := scanWord(line, i)
		if err != nil {
			return nil, err
		}
		words, i = append(words, w), next
	}
	if len(words) > 0 && words[0].text == "export" && !words[0].assign {
		words = words[1:]
		if len(words) == 0 {
			return nil, fmt.Errorf(`"export" without %s`, form)
		}
	}
	var out []assignment
	for k, w := range words {
		if w.assign {
			out = append(out, assignment{w.name, w.text[w.eq:]})
			continue
		}
		switch {
		case k > 0 && words[k-1].assign:
			return nil, fmt.Errorf("%s after %s=...: a blank ends a value in a shell, which would run %s as a command; quote a value that holds blanks (%s=\"a b\") and start a comment with \" #\"", Quote(w.text), words[k-1].name, Quote(w.text), words[k-1].name)
		case k+1 < len(words) && strings.HasPrefix(words[k+1].text, "="):
			return nil, fmt.Errorf("%s: no blanks around = in a shell assignment (%s=value)", Quote(w.text), Quote(w.text))
		default:
			return nil, fmt.Errorf("%s is not %s: a shell would run it as a command", Quote(w.text), form)
		}
	}
	return out, nil
}

// scanWord reads the word of line that starts at i, as a shell would, and
// returns it and the index after it.
func scanWord(line string, i int) (shellWord, int, error) {
	var w shellWord
	var b strings.Builder
	plain := true // every byte so far was unquoted and unescaped
	for i < len(line) {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			w.text = b.String()
			return w, i, nil
		case c == '=' && plain && !w.assign && isName(b.String()):
			w.assign, w.name, w.eq = true, b.String(), b.Len()+1
			b.WriteByte(c)
			i++
			continue
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return w, 0, errors.New("a single quote not closed on its line (a value cannot span lines)")
			}
			b.WriteString(line[i+1 : i+1+end])
			i += end + 2
		case c == '"':
			j := i + 1
			for ; j < len(line) && line[j] != '"'; j++ {
				switch d := line[j]; {
				case d == '\\' && j+1 < len(line) && strings.IndexByte("$`\"\\", line[j+1]) >= 0:
					j++
					b.WriteByte(line[j])
				case d == '$' || d == '`':
					return w, 0, fmt.Errorf("%c inside double quotes: a shell would expand it; write \\%c, or use single quotes", d, d)
				default:
					b.WriteByte(d)
				}
			}
			if j == len(line) {
				return w, 0, errors.New("a double quote not closed on its line (a value cannot span lines)")
			}
			i = j + 1
		case c == '\\':
			if i+1 == len(line) {
				return w, 0, errors.New("a trailing backslash continues the line in a shell: put each setting on one line")
			}
			b.WriteByte(line[i+1])
			i += 2
		case c == '$' || c == '`':
			return w, 0, fmt.Errorf("%c: a shell would expand it; write \\%c, or use single quotes", c, c)
		case strings.IndexByte(";&|<>()", c) >= 0:
			return w, 0, fmt.Errorf("%c outside quotes is shell syntax: quote the value", c)
		case c == '~' && w.assign && (b.Len() == w.eq || line[i-1] == ':'):
			return w, 0, errors.New("~ here is your home directory to a shell: write the path in full, or quote it")
		default:
			b.WriteByte(c)
			i++
			continue
		}
		plain = false
	}
	w.text = b.String()
	return w, i, nil
}

// isName reports whether s is a shell variable name.
func isName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Quote quotes a word of the file for an error, unless it looks like key
// material (a private key pasted into the file): never shown, it is named.
func Quote(word string) string {
	if redact.IsKeyMaterial(word) || redact.HoldsPrivateKey(word) {
		return "a word that looks like key material"
	}
	return strconv.Quote(word)
}
