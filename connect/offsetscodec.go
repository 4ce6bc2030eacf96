package connect

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// A MirrorSourceConnector's offsets are read and written in bulk: at
// 10,000 partitions encoding/json with generic maps spends about 100 ms and
// 28 MB decoding one GET answer. The codec here reads and writes entries of
// MirrorSourceConnector's exact shape directly, and hands every other
// entry (other keys, escaped strings, numbers that are not plain integers)
// to encoding/json, so the result is the same as encoding/json's.

// offsetList is the body of GET and PATCH /connectors/{name}/offsets.
type offsetList struct {
	Offsets []Offset `json:"offsets"`
}

// UnmarshalJSON reads {"offsets": [...]}. A document of another shape
// (more keys, other spellings) is decoded by encoding/json.
func (l *offsetList) UnmarshalJSON(data []byte) error {
	if list, ok := fastOffsetList(data); ok {
		l.Offsets = list
		return nil
	}
	var generic struct {
		Offsets []Offset `json:"offsets"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&generic); err != nil {
		return err
	}
	l.Offsets = generic.Offsets
	return nil
}

// scan reads JSON known to be valid (encoding/json's decoder has checked
// the whole document before calling UnmarshalJSON).
type scan struct {
	b []byte
	i int
}

func (s *scan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// lit consumes lit after white space.
func (s *scan) lit(lit string) bool {
	s.ws()
	if bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		s.i += len(lit)
		return true
	}
	return false
}

// plainString consumes a string of printable ASCII without escapes and
// returns its contents; ok is false for any other string.
func (s *scan) plainString() (b []byte, ok bool) {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	for j := s.i + 1; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			b = s.b[s.i+1 : j]
			s.i = j + 1
			return b, true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return nil, false
		}
	}
	return nil, false
}

// integer consumes a plain JSON integer that fits int64.
func (s *scan) integer() (int64, bool) {
	s.ws()
	j := s.i
	if j < len(s.b) && s.b[j] == '-' {
		j++
	}
	start := j
	for j < len(s.b) && '0' <= s.b[j] && s.b[j] <= '9' {
		j++
	}
	if j == start || j < len(s.b) && (s.b[j] == '.' || s.b[j] == 'e' || s.b[j] == 'E') {
		return 0, false
	}
	n, err := strconv.ParseInt(string(s.b[s.i:j]), 10, 64)
	if err != nil {
		return 0, false
	}
	s.i = j
	return n, true
}

// fastOffsetList decodes {"offsets": [entries]} when every entry has
// MirrorSourceConnector's shape; ok is false otherwise.
func fastOffsetList(data []byte) (list []Offset, ok bool) {
	s := &scan{b: data}
	if !s.lit("{") || !s.lit(`"offsets"`) || !s.lit(":") {
		return nil, false
	}
	if s.lit("null") {
		if !s.lit("}") {
			return nil, false
		}
		s.ws()
		return nil, s.i == len(s.b)
	}
	if !s.lit("[") {
		return nil, false
	}
	list = []Offset{}
	in := interner{}
	if s.lit("]") {
		return list, s.lit("}") && s.end()
	}
	for {
		o, ok := s.mirrorEntry(in)
		if !ok {
			return nil, false
		}
		list = append(list, o)
		if s.lit(",") {
			continue
		}
		if s.lit("]") && s.lit("}") && s.end() {
			return list, true
		}
		return nil, false
	}
}

func (s *scan) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// interner shares the boxed strings of the cluster alias and topic names,
// repeated in every entry.
type interner map[string]any

func (in interner) get(b []byte) any {
	if v, ok := in[string(b)]; ok {
		return v
	}
	s := string(b)
	var v any = s
	in[s] = v
	return v
}

// mirrorEntry reads {"partition": {"cluster": s, "topic": s, "partition":
// n}, "offset": {"offset": n} | null}, members in any order, each once.
func (s *scan) mirrorEntry(in interner) (Offset, bool) {
	var o Offset
	if !s.lit("{") {
		return o, false
	}
	var havePartition, haveOffset bool
	for first := true; ; first = false {
		if !first && !s.lit(",") {
			break
		}
		switch {
		case !havePartition && s.lit(`"partition"`):
			havePartition = true
			if !s.lit(":") || !s.lit("{") {
				return o, false
			}
			var cluster, topic any
			var part int64
			var haveCluster, haveTopic, havePart bool
			for f := true; ; f = false {
				if !f && !s.lit(",") {
					break
				}
				switch {
				case !haveCluster && s.lit(`"cluster"`):
					b, ok := s.colonString()
					if !ok {
						return o, false
					}
					cluster, haveCluster = in.get(b), true
				case !haveTopic && s.lit(`"topic"`):
					b, ok := s.colonString()
					if !ok {
						return o, false
					}
					topic, haveTopic = in.get(b), true
				case !havePart && s.lit(`"partition"`):
					if !s.lit(":") {
						return o, false
					}
					n, ok := s.integer()
					if !ok {
						return o, false
					}
					part, havePart = n, true
				default:
					return o, false
				}
			}
			if !haveCluster || !haveTopic || !havePart || !s.lit("}") {
				return o, false
			}
			o.Partition = map[string]any{MirrorKeyCluster: cluster, MirrorKeyTopic: topic, MirrorKeyPartition: part}
		case !haveOffset && s.lit(`"offset"`):
			haveOffset = true
			if !s.lit(":") {
				return o, false
			}
			if s.lit("null") {
				continue
			}
			if !s.lit("{") || !s.lit(`"offset"`) || !s.lit(":") {
				return o, false
			}
			n, ok := s.integer()
			if !ok || !s.lit("}") {
				return o, false
			}
			o.Offset = map[string]any{MirrorKeyOffset: n}
		default:
			return o, false
		}
	}
	return o, havePartition && haveOffset && s.lit("}")
}

func (s *scan) colonString() ([]byte, bool) {
	if !s.lit(":") {
		return nil, false
	}
	return s.plainString()
}

// encodeOffsetList writes {"offsets": [...]} as json.Marshal writes it:
// entries of MirrorSourceConnector's shape directly, any other entry
// through json.Marshal.
func encodeOffsetList(list []Offset) ([]byte, error) {
	b := make([]byte, 0, 16+100*len(list))
	b = append(b, `{"offsets":`...)
	if list == nil {
		return append(b, "null}"...), nil
	}
	b = append(b, '[')
	for i, o := range list {
		if i > 0 {
			b = append(b, ',')
		}
		if fast, ok := appendMirrorEntry(b, o); ok {
			b = fast
			continue
		}
		e, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		b = append(b, e...)
	}
	return append(b, "]}"...), nil
}

// appendMirrorEntry appends o when it has exactly MirrorSourceConnector's
// keys with plain values, with map keys sorted as encoding/json sorts them.
func appendMirrorEntry(b []byte, o Offset) ([]byte, bool) {
	if len(o.Partition) != 3 {
		return b, false
	}
	cluster, ok1 := o.Partition[MirrorKeyCluster].(string)
	topic, ok2 := o.Partition[MirrorKeyTopic].(string)
	part, ok3 := plainInt(o.Partition[MirrorKeyPartition])
	if !ok1 || !ok2 || !ok3 || !plainASCII(cluster) || !plainASCII(topic) {
		return b, false
	}
	var m int64
	if o.Offset != nil {
		var ok bool
		if m, ok = plainInt(o.Offset[MirrorKeyOffset]); !ok || len(o.Offset) != 1 {
			return b, false
		}
	}
	b = append(b, `{"partition":{"cluster":"`...)
	b = append(b, cluster...)
	b = append(b, `","partition":`...)
	b = strconv.AppendInt(b, part, 10)
	b = append(b, `,"topic":"`...)
	b = append(b, topic...)
	b = append(b, `"},"offset":`...)
	if o.Offset == nil {
		return append(b, "null}"...), true
	}
	b = append(b, `{"offset":`...)
	b = strconv.AppendInt(b, m, 10)
	return append(b, "}}"...), true
}

// plainInt returns the Go integer types json.Marshal writes as plain
// integers.
func plainInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	}
	return 0, false
}

// plainASCII reports whether json.Marshal writes s unchanged between
// quotes: printable ASCII without '"', '\\' or the HTML-escaped <, >, &.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
