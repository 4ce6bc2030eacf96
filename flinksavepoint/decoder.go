package flinksavepoint

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// decoder reads the big-endian values of Java's DataOutputStream from one
// file, knowing the file's size so that no count or length read from it can
// make it allocate more than the file holds. The first error sticks: every
// later read returns zero values, and callers check err where it matters.
type decoder struct {
	r    *bufio.Reader
	off  int64 // bytes consumed
	size int64 // the file's size
	file string
	in   string // what is being read, for errors
	err  error
	buf  [8]byte

	scratch []byte            // reused by internedUTF
	strings map[string]string // the strings internedUTF returned
}

func newDecoder(r io.Reader, size int64, file string) *decoder {
	return &decoder{r: bufio.NewReaderSize(r, 64<<10), size: size, file: file}
}

func (d *decoder) remaining() int64 { return d.size - d.off }

// fail records the first error: sentinel at offset at.
func (d *decoder) fail(at int64, sentinel error, format string, args ...any) {
	if d.err == nil {
		d.err = &FormatError{File: d.file, Offset: at, In: d.in, Detail: fmt.Sprintf(format, args...), Err: sentinel}
	}
}

// read fills p, or records a truncation.
func (d *decoder) read(p []byte, what string) bool {
	if d.err != nil {
		return false
	}
	at := d.off
	if int64(len(p)) > d.remaining() {
		d.fail(at, ErrTruncated, "%s needs %d bytes, %d left", what, len(p), max(d.remaining(), 0))
		return false
	}
	n, err := io.ReadFull(d.r, p)
	d.off += int64(n)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			d.fail(at, ErrTruncated, "%s: the file ends after %d bytes", what, d.off)
		} else {
			d.fail(at, ErrMissingFile, "read: %v", err)
		}
		return false
	}
	return true
}

func (d *decoder) u8(what string) byte {
	if !d.read(d.buf[:1], what) {
		return 0
	}
	return d.buf[0]
}

func (d *decoder) u16(what string) uint16 {
	if !d.read(d.buf[:2], what) {
		return 0
	}
	return uint16(d.buf[0])<<8 | uint16(d.buf[1])
}

func (d *decoder) i32(what string) int32 {
	if !d.read(d.buf[:4], what) {
		return 0
	}
	return int32(uint32(d.buf[0])<<24 | uint32(d.buf[1])<<16 | uint32(d.buf[2])<<8 | uint32(d.buf[3]))
}

func (d *decoder) i64(what string) int64 {
	if !d.read(d.buf[:8], what) {
		return 0
	}
	var v uint64
	for _, b := range d.buf[:8] {
		v = v<<8 | uint64(b)
	}
	return int64(v)
}

// boolean reads a Java boolean: one byte, 0 or 1.
func (d *decoder) boolean(what string) bool {
	at := d.off
	switch b := d.u8(what); b {
	case 0:
		return false
	case 1:
		return true
	default:
		d.fail(at, ErrMalformed, "%s: boolean byte %d", what, b)
		return false
	}
}

// count reads a non-negative int32 count of elements of at least minSize
// bytes each: a count the rest of the file cannot hold is a truncation.
func (d *decoder) count(what string, minSize int64) int {
	at := d.off
	n := d.i32(what)
	if d.err != nil {
		return 0
	}
	if n < 0 {
		d.fail(at, ErrMalformed, "%s: negative count %d", what, n)
		return 0
	}
	if minSize > 0 && int64(n) > d.remaining()/minSize {
		d.fail(at, ErrTruncated, "%s: %d elements of at least %d bytes, %d bytes left", what, n, minSize, d.remaining())
		return 0
	}
	return int(n)
}

// bytes reads n bytes into a new slice.
func (d *decoder) bytes(n int64, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 {
		d.fail(d.off, ErrMalformed, "%s: negative length %d", what, n)
		return nil
	}
	if n > d.remaining() {
		d.fail(d.off, ErrTruncated, "%s needs %d bytes, %d left", what, n, max(d.remaining(), 0))
		return nil
	}
	p := make([]byte, n)
	if !d.read(p, what) {
		return nil
	}
	return p
}

// skip discards n bytes.
func (d *decoder) skip(n int64, what string) {
	if d.err != nil {
		return
	}
	at := d.off
	if n < 0 {
		d.fail(at, ErrMalformed, "%s: negative length %d", what, n)
		return
	}
	if n > d.remaining() {
		d.fail(at, ErrTruncated, "%s needs %d bytes, %d left", what, n, max(d.remaining(), 0))
		return
	}
	m, err := io.CopyN(io.Discard, d.r, n)
	d.off += m
	if err != nil {
		d.fail(at, ErrTruncated, "%s: the file ends after %d bytes", what, d.off)
	}
}

// utf reads a string written by DataOutput.writeUTF: a two-byte length and
// Java's modified UTF-8.
func (d *decoder) utf(what string) string {
	n := d.u16(what)
	return d.modifiedUTF8(int64(n), what)
}

// modifiedUTF8 reads n bytes of Java's modified UTF-8: one to three bytes per
// UTF-16 code unit, NUL as two bytes, a supplementary character as two
// three-byte surrogates. It refuses what DataInput.readUTF refuses; an
// unpaired surrogate becomes U+FFFD.
func (d *decoder) modifiedUTF8(n int64, what string) string {
	at := d.off
	p := d.bytes(n, what)
	if d.err != nil {
		return ""
	}
	s, ok := decodeModifiedUTF8(p)
	if !ok {
		d.fail(at, ErrMalformed, "%s: not modified UTF-8", what)
		return ""
	}
	return s
}

// internedUTF is utf for strings that repeat (a topic per split): equal
// strings share one copy.
func (d *decoder) internedUTF(what string) string {
	n := int(d.u16(what))
	if d.err != nil {
		return ""
	}
	at := d.off
	if int64(n) > d.remaining() {
		d.fail(at, ErrTruncated, "%s needs %d bytes, %d left", what, n, max(d.remaining(), 0))
		return ""
	}
	if cap(d.scratch) < n {
		d.scratch = make([]byte, n, max(n, 256))
	}
	p := d.scratch[:n]
	if !d.read(p, what) {
		return ""
	}
	if s, ok := d.strings[string(p)]; ok {
		return s
	}
	s, ok := decodeModifiedUTF8(p)
	if !ok {
		d.fail(at, ErrMalformed, "%s: not modified UTF-8", what)
		return ""
	}
	if d.strings == nil {
		d.strings = make(map[string]string)
	}
	if len(d.strings) < 1<<16 {
		d.strings[string(p)] = s
	}
	return s
}

func decodeModifiedUTF8(p []byte) (string, bool) {
	ascii := true
	for _, c := range p {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return string(p), true
	}
	units := make([]uint16, 0, len(p))
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c < 0x80:
			units = append(units, uint16(c))
			i++
		case c>>5 == 0x6: // 110xxxxx 10xxxxxx
			if i+1 >= len(p) || p[i+1]>>6 != 0x2 {
				return "", false
			}
			units = append(units, uint16(c&0x1f)<<6|uint16(p[i+1]&0x3f))
			i += 2
		case c>>4 == 0xe: // 1110xxxx 10xxxxxx 10xxxxxx
			if i+2 >= len(p) || p[i+1]>>6 != 0x2 || p[i+2]>>6 != 0x2 {
				return "", false
			}
			units = append(units, uint16(c&0x0f)<<12|uint16(p[i+1]&0x3f)<<6|uint16(p[i+2]&0x3f))
			i += 3
		default:
			return "", false
		}
	}
	b := make([]byte, 0, len(p))
	for _, r := range utf16.Decode(units) {
		b = utf8.AppendRune(b, r)
	}
	return string(b), true
}

// atEnd records trailing bytes as malformed.
func (d *decoder) atEnd(what string) {
	if d.err != nil {
		return
	}
	if d.remaining() != 0 {
		d.fail(d.off, ErrMalformed, "%d bytes after the end of %s", d.remaining(), what)
		return
	}
	if _, err := d.r.ReadByte(); err == nil {
		d.fail(d.off, ErrMalformed, "bytes after the end of %s (the file grew while read)", what)
	}
}
