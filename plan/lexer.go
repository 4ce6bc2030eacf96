package plan

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/mm2cutover/mm2cutover/errkind"
)

// lexer reads the JSON of a plan from a stream, token by token, for
// decode. It keeps only a window of the input: what has not been consumed
// yet, and from mark on while a raw value is being captured. It checks the
// JSON grammar itself; string contents that are not plain printable ASCII
// are unquoted by encoding/json, so that escapes and invalid UTF-8 are
// handled exactly as encoding/json handles them.
type lexer struct {
	r    io.Reader
	buf  []byte
	pos  int   // next byte of buf to read
	mark int   // start of a raw value being captured, or -1
	off  int64 // offset in the stream of buf[0]
	eof  bool
	err  error // the read error of r, other than io.EOF
}

const lexerChunk = 64 << 10

func newLexer(r io.Reader) *lexer {
	return &lexer{r: r, buf: make([]byte, 0, lexerChunk), mark: -1}
}

// fill reads more input, keeping buf[min(pos, mark):]. It reports false at
// the end of the input or on a read error (see lexer.err).
func (lx *lexer) fill() bool {
	if lx.eof || lx.err != nil {
		return false
	}
	keep := lx.pos
	if lx.mark >= 0 && lx.mark < keep {
		keep = lx.mark
	}
	if keep > 0 {
		n := copy(lx.buf, lx.buf[keep:])
		lx.buf = lx.buf[:n]
		lx.off += int64(keep)
		lx.pos -= keep
		if lx.mark >= 0 {
			lx.mark -= keep
		}
	}
	if cap(lx.buf)-len(lx.buf) < lexerChunk/2 {
		nb := make([]byte, len(lx.buf), 2*cap(lx.buf))
		copy(nb, lx.buf)
		lx.buf = nb
	}
	for tries := 0; tries < 100; tries++ {
		n, err := lx.r.Read(lx.buf[len(lx.buf):cap(lx.buf)])
		lx.buf = lx.buf[:len(lx.buf)+n]
		switch {
		case err == io.EOF:
			lx.eof = true
			return n > 0
		case err != nil:
			lx.err = err
			return n > 0
		case n > 0:
			return true
		}
	}
	lx.err = io.ErrNoProgress
	return false
}

// failure is the error for input that ended or could not be read where
// more was needed.
func (lx *lexer) failure() error {
	if lx.err != nil {
		return fmt.Errorf("plan: reading: %w", lx.err)
	}
	return fmt.Errorf("%w: %w", ErrMalformed, io.ErrUnexpectedEOF)
}

// syntax is the error for input that is not JSON.
func (lx *lexer) syntax(what string) error {
	return fmt.Errorf("%w: %s at byte %d", ErrMalformed, what, lx.off+int64(lx.pos))
}

// peek skips white space and returns the next byte without consuming it;
// ok is false at the end of the input.
func (lx *lexer) peek() (c byte, ok bool) {
	for {
		for lx.pos < len(lx.buf) {
			switch c := lx.buf[lx.pos]; c {
			case ' ', '\t', '\n', '\r':
				lx.pos++
			default:
				return c, true
			}
		}
		if !lx.fill() {
			return 0, false
		}
	}
}

// next skips white space and consumes the next byte, which must exist.
func (lx *lexer) next() (byte, error) {
	c, ok := lx.peek()
	if !ok {
		return 0, lx.failure()
	}
	lx.pos++
	return c, nil
}

// expect consumes the next byte, which must be want.
func (lx *lexer) expect(want byte, what string) error {
	c, err := lx.next()
	if err != nil {
		return err
	}
	if c != want {
		lx.pos--
		return lx.syntax(what)
	}
	return nil
}

// stringToken consumes a JSON string and returns it with its quotes, raw:
// escapes are only skipped, not checked (see unquote). The slice is valid
// until the next read. plain is true when it holds no escape and only
// printable ASCII, so that its contents are its value.
func (lx *lexer) stringToken() (raw []byte, plain bool, err error) {
	if c, ok := lx.peek(); !ok {
		return nil, false, lx.failure()
	} else if c != '"' {
		return nil, false, lx.syntax("want a string")
	}
	plain = true
	i := lx.pos + 1
	for {
		for i < len(lx.buf) {
			c := lx.buf[i]
			switch {
			case c == '"':
				raw = lx.buf[lx.pos : i+1]
				lx.pos = i + 1
				return raw, plain, nil
			case c == '\\':
				plain = false
				i += 2
				continue
			case c < 0x20:
				lx.pos = i
				return nil, false, lx.syntax("control character in string")
			case c >= 0x7f:
				plain = false
			}
			i++
		}
		rel := i - lx.pos
		if !lx.fill() {
			return nil, false, lx.failure()
		}
		i = lx.pos + rel
	}
}

// unquote returns the value of a string token as encoding/json decodes it.
func unquote(raw []byte, plain bool) (string, error) {
	if plain {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return s, nil
}

// byteAt returns the byte rel bytes after pos, reading more input as
// needed; ok is false when the input ends first.
func (lx *lexer) byteAt(rel int) (c byte, ok bool) {
	for lx.pos+rel >= len(lx.buf) {
		if !lx.fill() {
			return 0, false
		}
	}
	return lx.buf[lx.pos+rel], true
}

// scalarToken consumes a number or a literal (null, true, false) and
// returns it. Like encoding/json's scanner it stops where the JSON grammar
// says the value ends ("00" is the number 0 followed by a stray 0, for the
// caller to refuse). The slice is valid until the next read.
func (lx *lexer) scalarToken() ([]byte, error) {
	c, ok := lx.peek()
	if !ok {
		return nil, lx.failure()
	}
	n := 0
	switch {
	case c == 'n' || c == 't' || c == 'f':
		lit := "null"
		if c == 't' {
			lit = "true"
		} else if c == 'f' {
			lit = "false"
		}
		for n < len(lit) {
			b, ok := lx.byteAt(n)
			if !ok {
				return nil, lx.failure()
			}
			if b != lit[n] {
				lx.pos += n
				return nil, lx.syntax("invalid literal")
			}
			n++
		}
	case c == '-' || '0' <= c && c <= '9':
		var err error
		if n, err = lx.numberLength(); err != nil {
			return nil, err
		}
	default:
		return nil, lx.syntax("want a value")
	}
	tok := lx.buf[lx.pos : lx.pos+n]
	lx.pos += n
	return tok, nil
}

// numberLength returns the length of the JSON number at pos.
func (lx *lexer) numberLength() (int, error) {
	n := 0
	digits := func() int {
		k := 0
		for {
			b, ok := lx.byteAt(n)
			if !ok || b < '0' || b > '9' {
				return k
			}
			n++
			k++
		}
	}
	bad := func() (int, error) {
		if _, ok := lx.byteAt(n); !ok {
			return 0, lx.failure()
		}
		lx.pos += n
		return 0, lx.syntax("invalid number")
	}
	if b, _ := lx.byteAt(0); b == '-' {
		n++
	}
	switch b, ok := lx.byteAt(n); {
	case !ok:
		return 0, lx.failure()
	case b == '0':
		n++
	case '1' <= b && b <= '9':
		digits()
	default:
		return bad()
	}
	if b, ok := lx.byteAt(n); ok && b == '.' {
		n++
		if digits() == 0 {
			return bad()
		}
	}
	if b, ok := lx.byteAt(n); ok && (b == 'e' || b == 'E') {
		n++
		if b, ok := lx.byteAt(n); ok && (b == '+' || b == '-') {
			n++
		}
		if digits() == 0 {
			return bad()
		}
	}
	if lx.err != nil {
		return 0, lx.failure()
	}
	return n, nil
}

// parseInt reads a JSON number as an int64; floats, exponents and values
// out of range are refused.
func parseInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	d := b
	if neg {
		d = b[1:]
	}
	if len(d) == 0 || len(d) > 19 {
		return 0, false
	}
	var u uint64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	switch {
	case !neg && u <= 1<<63-1:
		return int64(u), true
	case neg && u <= 1<<63:
		return -int64(u), true
	}
	return 0, false
}

// intValue consumes a value that must be a JSON integer or null.
func (lx *lexer) intValue() (jsonInt, error) {
	c, ok := lx.peek()
	if !ok {
		return jsonInt{}, lx.failure()
	}
	var tok []byte
	if c == '"' || c == '{' || c == '[' {
		raw, err := lx.rawValue()
		if err != nil {
			return jsonInt{}, err
		}
		tok = raw
	} else {
		var err error
		if tok, err = lx.scalarToken(); err != nil {
			return jsonInt{}, err
		}
	}
	if string(tok) == "null" {
		return jsonInt{present: true, null: true}, nil
	}
	v, ok := parseInt(tok)
	if !ok {
		return jsonInt{}, fmt.Errorf("%w: %.40s is not a 64-bit integer", ErrMalformed, tok)
	}
	return jsonInt{v: v, present: true}, nil
}

// stringValue consumes a value that must be a JSON string or null; ok is
// false for null. intern, if not nil, shares equal strings.
func (lx *lexer) stringValue(intern map[string]string) (s string, ok bool, err error) {
	c, found := lx.peek()
	if !found {
		return "", false, lx.failure()
	}
	if c != '"' {
		tok, err := lx.rawValue()
		if err != nil {
			return "", false, err
		}
		if string(tok) == "null" {
			return "", false, nil
		}
		return "", false, fmt.Errorf("%w: %.40s is not a string", ErrMalformed, tok)
	}
	raw, plain, err := lx.stringToken()
	if err != nil {
		return "", false, err
	}
	if intern != nil && plain {
		if s, ok := intern[string(raw[1:len(raw)-1])]; ok {
			return s, true, nil
		}
	}
	if s, err = unquote(raw, plain); err != nil {
		return "", false, err
	}
	if intern != nil && plain {
		intern[s] = s
	}
	return s, true, nil
}

// stringPointer is stringValue for a field that may be absent: nil for null.
func (lx *lexer) stringPointer() (*string, error) {
	s, ok, err := lx.stringValue(nil)
	if err != nil || !ok {
		return nil, err
	}
	return &s, nil
}

// maxDepth bounds the nesting of a raw value, as encoding/json does.
const maxDepth = 10000

// rawValue consumes any JSON value and returns a copy of it, checked with
// json.Valid.
func (lx *lexer) rawValue() ([]byte, error) {
	if _, ok := lx.peek(); !ok {
		return nil, lx.failure()
	}
	lx.mark = lx.pos
	defer func() { lx.mark = -1 }()
	depth := 0
	for {
		c, ok := lx.peek()
		if !ok {
			return nil, lx.failure()
		}
		switch c {
		case '"':
			if _, _, err := lx.stringToken(); err != nil {
				return nil, err
			}
		case '{', '[':
			if depth++; depth > maxDepth {
				return nil, lx.syntax("nested too deep")
			}
			lx.pos++
			continue
		case '}', ']':
			if depth == 0 {
				return nil, lx.syntax("unexpected " + string(c))
			}
			depth--
			lx.pos++
		case ',', ':':
			if depth == 0 {
				return nil, lx.syntax("unexpected " + string(c))
			}
			lx.pos++
			continue
		default:
			if _, err := lx.scalarToken(); err != nil {
				return nil, err
			}
		}
		if depth == 0 {
			break
		}
	}
	raw := append([]byte(nil), lx.buf[lx.mark:lx.pos]...)
	if !json.Valid(raw) {
		return nil, fmt.Errorf("%w: invalid JSON value at byte %d", ErrMalformed, lx.off+int64(lx.mark))
	}
	return raw, nil
}

// end checks that only white space follows the plan.
func (lx *lexer) end() error {
	if _, ok := lx.peek(); ok {
		return ErrTrailingData
	}
	if lx.err != nil {
		return lx.failure()
	}
	return nil
}

var errDuplicateKey = errkind.New(errkind.Refused, "plan: given twice")
