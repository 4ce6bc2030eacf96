package connectfake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
)

// The worker is a Java program: the text of its answers follows Java's
// rules. Its error messages print maps with Map.toString, in the iteration
// order of a java.util.HashMap, numbers with Long.toString and
// Double.toString; Jackson writes its JSON maps in that same order. This file
// reproduces exactly what those answers need, so that the fake's bytes can be
// compared with the real worker's.

// kind is the Java type Jackson and Connect's JsonConverter give a JSON value.
type kind uint8

const (
	kNull   kind = iota
	kString      // java.lang.String
	kLong        // java.lang.Long (JsonConverter widens every integer to it)
	kBig         // java.math.BigInteger: an integer beyond a long
	kDouble      // java.lang.Double: a number with a fraction or exponent
	kBool        // java.lang.Boolean
	kMap         // java.util.Map
	kList        // java.util.List
)

// value is a JSON value as the worker holds it. Maps keep their keys in
// insertion order (the order of the JSON text); hashOrder gives the order a
// HashMap iterates them in.
type value struct {
	kind kind
	s    string // kString; kBig: the digits
	n    int64  // kLong
	f    float64
	b    bool
	m    []entry // kMap
	l    []value // kList
}

type entry struct {
	key string
	val value
}

func stringValue(s string) value { return value{kind: kString, s: s} }
func longValue(n int64) value    { return value{kind: kLong, n: n} }

// get returns the value of key in a map value.
func (v value) get(key string) (value, bool) {
	for _, e := range v.m {
		if e.key == key {
			return e.val, true
		}
	}
	return value{}, false
}

// put sets key, keeping the position of an existing key (as a HashMap and a
// LinkedHashMap both do).
func (v *value) put(key string, val value) {
	for i := range v.m {
		if v.m[i].key == key {
			v.m[i].val = val
			return
		}
	}
	v.m = append(v.m, entry{key, val})
}

// decodeValue reads one JSON document, keeping the order of object keys. A
// key repeated in an object keeps its first position and its last value, as
// Jackson's LinkedHashMap does.
func decodeValue(data []byte) (value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeNext(dec)
	if err != nil {
		return value{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return value{}, errors.New("unexpected data after the JSON document")
	}
	return v, nil
}

func decodeNext(dec *json.Decoder) (value, error) {
	tok, err := dec.Token()
	if err != nil {
		return value{}, err
	}
	return decodeToken(dec, tok)
}

func decodeToken(dec *json.Decoder, tok json.Token) (value, error) {
	switch t := tok.(type) {
	case nil:
		return value{}, nil
	case string:
		return stringValue(t), nil
	case bool:
		return value{kind: kBool, b: t}, nil
	case json.Number:
		return numberValue(string(t)), nil
	case json.Delim:
		switch t {
		case '{':
			v := value{kind: kMap}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return value{}, err
				}
				key, ok := k.(string)
				if !ok {
					return value{}, fmt.Errorf("object key %v is not a string", k)
				}
				val, err := decodeNext(dec)
				if err != nil {
					return value{}, err
				}
				v.put(key, val)
			}
			_, err := dec.Token() // '}'
			return v, err
		case '[':
			v := value{kind: kList}
			for dec.More() {
				e, err := decodeNext(dec)
				if err != nil {
					return value{}, err
				}
				v.l = append(v.l, e)
			}
			_, err := dec.Token() // ']'
			return v, err
		}
	}
	return value{}, fmt.Errorf("unexpected JSON token %v", tok)
}

// numberValue types a JSON number as Jackson does: an integer is a long,
// or a BigInteger beyond a long's range; anything with a fraction or an
// exponent is a double.
func numberValue(s string) value {
	if strings.ContainsAny(s, ".eE") {
		f, _ := strconv.ParseFloat(s, 64)
		return value{kind: kDouble, f: f}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return longValue(n)
	}
	return value{kind: kBig, s: s}
}

// javaStringHash is String.hashCode: over UTF-16 code units.
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// grownTableSize is the table size of a HashMap built empty and filled by
// n puts: 16, doubled whenever the size passes three quarters of it. Connect's
// JsonConverter builds its maps this way.
func grownTableSize(n int) int {
	size := 16
	for n > size*3/4 {
		size <<= 1
	}
	return size
}

// copiedTableSize is the table size of new HashMap<>(m) for a map m of n
// entries: the power of two at or above n/0.75+1. Connect's ConfigTransformer
// copies a connector configuration this way before validating it.
func copiedTableSize(n int) int {
	need := int(float32(n)/0.75 + 1.0) // Java truncates the float to an int
	size := 1
	for size < need {
		size <<= 1
	}
	return size
}

// bucket is HashMap's bucket index for a key hash in a table of size.
func bucket(h int32, size int) int {
	h ^= int32(uint32(h) >> 16)
	return int(uint32(h) & uint32(size-1))
}

// inHashOrder returns items in the order a java.util.HashMap with a table of
// size, filled with them in the given order, iterates them: by bucket, and
// within a bucket in insertion order. (A bucket of eight or more keys becomes
// a tree in Java; maps that large in one bucket do not occur here.)
func inHashOrder[T any](items []T, hash func(T) int32, size int) []T {
	out := slices.Clone(items)
	slices.SortStableFunc(out, func(a, b T) int { return bucket(hash(a), size) - bucket(hash(b), size) })
	return out
}

// hashOrder returns a map's entries in the iteration order of a HashMap
// that JsonConverter built from them.
func (v value) hashOrder() []entry {
	return inHashOrder(v.m, entryHash, grownTableSize(len(v.m)))
}

func entryHash(e entry) int32 { return javaStringHash(e.key) }

// javaString is the value's Java toString: {k=v, ...} for maps in HashMap
// order, [a, b] for lists.
func (v value) javaString() string {
	var b strings.Builder
	v.writeJava(&b)
	return b.String()
}

func (v value) writeJava(b *strings.Builder) {
	switch v.kind {
	case kNull:
		b.WriteString("null")
	case kString, kBig:
		b.WriteString(v.s)
	case kLong:
		b.WriteString(strconv.FormatInt(v.n, 10))
	case kDouble:
		b.WriteString(javaDouble(v.f))
	case kBool:
		b.WriteString(strconv.FormatBool(v.b))
	case kMap:
		b.WriteByte('{')
		for i, e := range v.hashOrder() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(e.key)
			b.WriteByte('=')
			e.val.writeJava(b)
		}
		b.WriteByte('}')
	case kList:
		b.WriteByte('[')
		for i, e := range v.l {
			if i > 0 {
				b.WriteString(", ")
			}
			e.writeJava(b)
		}
		b.WriteByte(']')
	}
}

// javaDouble is Double.toString for finite values: plain decimal with at
// least one fractional digit for 1e-3 <= |f| < 1e7, otherwise computerized
// scientific notation ("2.0E20", "1.5E-4"). Digits are the shortest that
// round-trip, which is what Java 19 and later print; Java 17 agrees for the
// values Connect offsets hold.
func javaDouble(f float64) string {
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	if a := math.Abs(f); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // "2e+20", "-1.5e-04"
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	n, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(n)
}

// appendJSON writes the value as Jackson does, maps in HashMap order when
// hashed is true and in insertion order otherwise.
func (v value) appendJSON(b []byte, hashed bool) []byte {
	switch v.kind {
	case kNull:
		return append(b, "null"...)
	case kString:
		return appendJSONString(b, v.s)
	case kBig:
		return append(b, v.s...)
	case kLong:
		return strconv.AppendInt(b, v.n, 10)
	case kDouble:
		return append(b, javaDouble(v.f)...)
	case kBool:
		return strconv.AppendBool(b, v.b)
	case kMap:
		es := v.m
		if hashed {
			es = v.hashOrder()
		}
		b = append(b, '{')
		for i, e := range es {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, e.key)
			b = append(b, ':')
			b = e.val.appendJSON(b, hashed)
		}
		return append(b, '}')
	case kList:
		b = append(b, '[')
		for i, e := range v.l {
			if i > 0 {
				b = append(b, ',')
			}
			b = e.appendJSON(b, hashed)
		}
		return append(b, ']')
	}
	return b
}

// appendJSONString quotes s as Jackson does: only '"', '\\' and control
// characters are escaped (no HTML escaping).
func appendJSONString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// schemaTypeName names a value's type in OffsetUtils.validateFormat's
// message: the Connect schema type of a map or a list, the Java class of
// anything without one.
func (v value) schemaTypeName() string {
	switch v.kind {
	case kMap:
		return "MAP"
	case kList:
		return "ARRAY"
	case kBig:
		return "class java.math.BigInteger"
	}
	return ""
}
