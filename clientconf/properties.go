// Package clientconf reads the client settings files Kafka tools take — a
// Java properties file such as the client.properties given to
// kafka-consumer-groups --command-config — and turns their ssl.* keys into
// a TLS configuration: truststores and keystores as PEM, JKS or PKCS12,
// with their passwords, inline PEM, and
// ssl.endpoint.identification.algorithm.
//
// It is shared by the Kafka clients of package kafkaadmin
// (kafkaadmin.ConfigFromProperties) and the Kafka Connect REST client of
// package connect (connect.OptionsFromProperties), which do not import each
// other. It never prints; values of secret keys never reach its errors.
package clientconf

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/redact"
)

// MaxFileSize bounds every settings file this package reads: a properties
// file, a truststore or a keystore. Real ones are a few kilobytes; a path
// such as /dev/zero must fail, not fill the memory.
const MaxFileSize = 1 << 20

// ErrTooLarge matches a file larger than MaxFileSize.
var ErrTooLarge = errkind.New(errkind.Rejected, "clientconf: file too large")

// SyntaxError reports a line of a properties file that Java's
// Properties.load would refuse too (a malformed \uXXXX escape), or bytes
// that are not UTF-8.
type SyntaxError struct {
	Line   int // 1-based line of the file where the logical line starts
	Reason string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("clientconf: line %d: %s", e.Line, e.Reason)
}

// ErrorKind is errkind.Rejected: fix the file.
func (e *SyntaxError) ErrorKind() errkind.Kind { return errkind.Rejected }

// ReadLimited reads all of r up to limit bytes, and fails with an error
// matching ErrTooLarge beyond that.
func ReadLimited(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
	}
	return b, nil
}

// ReadFile reads a file of at most MaxFileSize bytes (ReadFileLimited).
func ReadFile(path string) ([]byte, error) { return ReadFileLimited(path, MaxFileSize) }

// ReadFileLimited reads a file of at most limit bytes: it is opened with
// OpenInput and read through the bound, so that a device or a pipe is never
// read whole, and neither a named pipe without a writer nor one whose
// writer never finishes makes it wait for ever (PipeTimeout). A directory
// is an error, and so is a pipe that gives nothing.
func ReadFileLimited(path string, limit int64) ([]byte, error) {
	return readInput(path, limit, PipeTimeout)
}

// ReadProperties reads a Java properties file (see ParseProperties).
func ReadProperties(path string) (map[string]string, error) {
	b, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	props, err := ParseProperties(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return props, nil
}

// ParseProperties parses the text of a Java properties file as
// java.util.Properties.load does: "key=value", "key: value" or "key value"
// lines, '#' and '!' comment lines, a line ending in an odd number of
// backslashes continued on the next (whose leading blanks are dropped),
// backslash escapes (\t, \n, \r, \f, \uXXXX; any other escaped character
// stands for itself), lines ended by \n, \r or \r\n. A later key wins.
// Beyond Java: the text is UTF-8 (Java reads ISO-8859-1 from a stream), a
// leading UTF-8 byte order mark is dropped (Java would make it part of the
// first key), and a malformed \uXXXX is a *SyntaxError, as in Java. A PEM
// block spread over lines without a '\' at the end of each (a key pasted
// as it is) is a *SyntaxError too, as is a line that looks like a line of
// key material (redact.IsKeyMaterial): Java would read each line of the
// block as a key, and a message that names keys would show them. The error
// names the line, never what it holds.
func ParseProperties(text []byte) (map[string]string, error) {
	text = bytes.TrimPrefix(text, []byte("\ufeff"))
	if !utf8.Valid(text) {
		line := 1 + bytes.Count(text[:firstInvalid(text)], []byte("\n"))
		return nil, &SyntaxError{Line: line, Reason: "not UTF-8"}
	}
	out := map[string]string{}
	lines := splitLines(string(text))
	for i := 0; i < len(lines); i++ {
		start := i + 1
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		for continued(line) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		if continued(line) {
			line = line[:len(line)-1]
		}
		rawKey, rawValue := splitKey(line)
		if reason := keyMaterial(rawKey, rawValue); reason != "" {
			return nil, &SyntaxError{Line: start, Reason: reason}
		}
		key, err := unescape(rawKey)
		if err != nil {
			return nil, &SyntaxError{Line: start, Reason: err.Error()}
		}
		value, err := unescape(rawValue)
		if err != nil {
			return nil, &SyntaxError{Line: start, Reason: fmt.Sprintf("key %q: %v", keyName(key), err)}
		}
		out[key] = value
	}
	return out, nil
}

// keyMaterial says why a logical line that holds key material spread over
// lines is refused, or returns "": a PEM block whose armor lines are not in
// one logical line (its BEGIN line without its END, or an END line read as
// a key), or a key that looks like a line of a PEM block's body.
func keyMaterial(rawKey, rawValue string) string {
	line := rawKey + " " + rawValue
	if strings.Count(line, "-----BEGIN") != strings.Count(line, "-----END") {
		return "a PEM block continues on the next lines without a \\ at the end of each: " +
			"Java would read each of its lines as a key (end every line of the block but the last with \\; what the lines hold is not shown)"
	}
	if redact.IsKeyMaterial(rawKey) {
		return "the line looks like a line of key material (a PEM block without a \\ at the end of each line?); what it holds is not shown"
	}
	return ""
}

// keyName is key for an error, unless it looks like key material.
func keyName(key string) string {
	if redact.IsKeyMaterial(key) {
		return redact.Redacted
	}
	return key
}

func firstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// splitLines splits at \n, \r and \r\n.
func splitLines(s string) []string {
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, len(s)+1)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
			if data[i] == '\r' {
				if i+1 < len(data) {
					if data[i+1] == '\n' {
						return i + 2, data[:i], nil
					}
					return i + 1, data[:i], nil
				}
				if !atEOF {
					return 0, nil, nil // a \n may follow
				}
			}
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	var out []string
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

func continued(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitKey splits a logical line at the first unescaped '=', ':' or blank,
// and drops the separator and the blanks around it.
func splitKey(line string) (key, value string) {
	end := len(line)
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			end = i
			break
		}
	}
	key, rest := line[:end], strings.TrimLeft(line[end:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	return key, rest
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, "\\") {
		return s, nil
	}
	var b strings.Builder
	var pending []uint16 // UTF-16 code units of \u escapes, for surrogate pairs
	flush := func() {
		if len(pending) > 0 {
			b.WriteString(decodeUTF16(pending))
			pending = pending[:0]
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			if c == '\\' {
				continue // a lone backslash at the end: Java drops it
			}
			flush()
			b.WriteByte(c)
			continue
		}
		i++
		if s[i] == 'u' {
			if len(s)-i-1 < 4 {
				return "", errors.New(`malformed \uxxxx encoding`)
			}
			var v uint16
			for _, h := range s[i+1 : i+5] {
				d, ok := hexDigit(h)
				if !ok {
					return "", errors.New(`malformed \uxxxx encoding`)
				}
				v = v<<4 | uint16(d)
			}
			pending = append(pending, v)
			i += 4
			continue
		}
		flush()
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		default:
			// Any other escaped character stands for itself; it may be
			// the first byte of a multi-byte UTF-8 character.
			_, n := utf8.DecodeRuneInString(s[i:])
			b.WriteString(s[i : i+n])
			i += n - 1
		}
	}
	flush()
	return b.String(), nil
}

func hexDigit(r rune) (int, bool) {
	switch {
	case r >= '0' && r <= '9':
		return int(r - '0'), true
	case r >= 'a' && r <= 'f':
		return int(r-'a') + 10, true
	case r >= 'A' && r <= 'F':
		return int(r-'A') + 10, true
	}
	return 0, false
}

// decodeUTF16 decodes \u escapes as Java's char sequence: surrogate pairs
// become one character; a lone surrogate becomes U+FFFD.
func decodeUTF16(units []uint16) string {
	var b strings.Builder
	for i := 0; i < len(units); i++ {
		u := rune(units[i])
		if u >= 0xd800 && u < 0xdc00 && i+1 < len(units) {
			if l := rune(units[i+1]); l >= 0xdc00 && l < 0xe000 {
				b.WriteRune((u-0xd800)<<10 + (l - 0xdc00) + 0x10000)
				i++
				continue
			}
		}
		if u >= 0xd800 && u < 0xe000 {
			u = utf8.RuneError
		}
		b.WriteRune(u)
	}
	return b.String()
}

// words is the text of err without this package's prefix, for an error
// that writes it after its own "clientconf: ".
func words(err error) string { return strings.TrimPrefix(err.Error(), "clientconf: ") }
