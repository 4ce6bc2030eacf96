package app

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/clientconf"
	"github.com/mm2cutover/mm2cutover/redact"
)

// configFile is a parsed -config file: the value of each MM2CUTOVER_*
// key and the line that set it.
type configFile struct {
	path   string
	values map[string]string
	lines  map[string]int
}

// lookup returns the value the file gives key, if any.
func (f *configFile) lookup(key string) (string, bool) {
	if f == nil {
		return "", false
	}
	v, ok := f.values[key]
	return v, ok
}

// readConfigFile reads a settings file the way a POSIX shell that sources
// it (". cutover.env", "set -a; . cutover.env") reads it, so that the file
// means the same to the tool and to the shell:
//
//   - lines end with LF, CR LF or a lone CR; a leading UTF-8 byte order
//     mark is dropped;
//   - each line holds assignments, MM2CUTOVER_<FLAG>=value, optionally after
//     "export"; blank lines are skipped;
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
// not closed on its line, a trailing backslash. So are a key that names no
// flag, a key given twice and a password (those come from the environment
// only). Every bad line is named with its line number, in one error. The
// file is read up to clientconf.MaxFileSize.
func readConfigFile(path string, names map[string]bool) (*configFile, error) {
	if path == "" {
		return nil, nil
	}
	b, err := clientconf.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	known := map[string]bool{}
	for n := range names {
		known[envKey(n)] = true
	}
	f := &configFile{path: path, values: map[string]string{}, lines: map[string]int{}}
	var errs []error
	bad := func(n int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", path, n, fmt.Sprintf(format, args...)))
	}
	for i, line := range splitLines(string(b)) {
		n := i + 1
		assigns, err := parseShellLine(line)
		if err != nil {
			bad(n, "%v", err)
			continue
		}
		for _, a := range assigns {
			switch {
			case strings.HasSuffix(a.name, "_PASSWORD"):
				bad(n, "%s: passwords come from the environment only", a.name)
			case !known[a.name]:
				bad(n, "%s names no setting%s", a.name, DidYouMean(a.name, slices.Sorted(maps.Keys(known)), ""))
			case f.lines[a.name] != 0:
				bad(n, "%s given twice (first on line %d)", a.name, f.lines[a.name])
			default:
				f.values[a.name], f.lines[a.name] = a.value, n
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return f, nil
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

// parseShellLine returns the assignments of one settings line (see
// readConfigFile), or why a shell would read the line otherwise.
func parseShellLine(line string) ([]assignment, error) {
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
			return nil, errors.New(`"export" without MM2CUTOVER_<FLAG>=value`)
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
			return nil, fmt.Errorf("%s after %s=...: a blank ends a value in a shell, which would run %s as a command; quote a value that holds blanks (%s=\"a b\") and start a comment with \" #\"", shown(w.text), words[k-1].name, shown(w.text), words[k-1].name)
		case k+1 < len(words) && strings.HasPrefix(words[k+1].text, "="):
			return nil, fmt.Errorf("%s: no blanks around = in a shell assignment (%s=value)", shown(w.text), shown(w.text))
		default:
			return nil, fmt.Errorf("%s is not MM2CUTOVER_<FLAG>=value: a shell would run it as a command", shown(w.text))
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

// fromEnv sets each named flag not given on the command line from
// MM2CUTOVER_<NAME> in the environment, else from the settings file. A
// value a flag refuses is named with where it came from (the file's line,
// or the environment) and what the flag takes; every such value is
// reported, in one error.
func fromEnv(fs *flag.FlagSet, names map[string]bool, file *configFile, lookupEnv func(string) (string, bool)) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	type failure struct {
		line int
		err  error
	}
	var failures []failure
	fs.VisitAll(func(f *flag.Flag) {
		if !names[f.Name] || given[f.Name] {
			return
		}
		key := envKey(f.Name)
		where, line := key+" (environment)", 0
		v, ok := lookupEnv(key)
		if !ok {
			if v, ok = file.lookup(key); ok {
				line = file.lines[key]
				where = fmt.Sprintf("%s:%d: %s", file.path, line, key)
			}
		}
		if !ok {
			return
		}
		if err := f.Value.Set(v); err != nil {
			msg := err.Error()
			if shown(v) != strconv.Quote(v) {
				msg = redact.Text(msg, v)
			}
			failures = append(failures, failure{line, fmt.Errorf("%s: invalid value %s: %s%s", where, shown(v), msg, wants(f.Value))})
		}
	})
	slices.SortStableFunc(failures, func(a, b failure) int { return a.line - b.line })
	errs := make([]error, len(failures))
	for i, f := range failures {
		errs[i] = f.err
	}
	return errors.Join(errs...)
}

// wants says what a flag of the standard kinds takes, for an error about a
// value it refused ("parse error" alone says little).
func wants(v flag.Value) string {
	g, ok := v.(flag.Getter)
	if !ok {
		return ""
	}
	switch g.Get().(type) {
	case time.Duration:
		return " (want a duration such as 30s, 2m or 1h30m)"
	case int, int64, uint, uint64:
		return " (want a whole number)"
	case bool:
		return " (want true or false)"
	case float64:
		return " (want a number)"
	}
	return ""
}

// shown quotes a word of the file for an error, unless it looks like key
// material (a private key pasted into the file): never shown, it is named.
func shown(word string) string {
	if redact.IsKeyMaterial(word) || redact.HoldsPrivateKey(word) {
		return "a word that looks like key material"
	}
	return strconv.Quote(word)
}
