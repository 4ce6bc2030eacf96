package connectfake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Errors of the Server's test helpers.
var (
	// ErrNoConnector is returned for a connector the fake does not have.
	ErrNoConnector = errors.New("connectfake: no such connector")
	// ErrNotRunning is returned by Advance for a connector that is not
	// RUNNING with tasks: only running tasks commit offsets.
	ErrNotRunning = errors.New("connectfake: connector is not running")
	// ErrOffsetBackwards is returned by Advance for an offset below the one
	// stored: a MirrorSourceTask only commits forward.
	ErrOffsetBackwards = errors.New("connectfake: offset would move backwards")
)

// offsetStore is one connector name's offsets in the offsets topic. They
// outlive the connector: a new connector of the same name inherits them.
type offsetStore struct {
	entries   []offsetEntry // in the order first written
	before    []offsetEntry // the offsets before the last REST write
	staleLeft int           // GET reads left that still answer before
}

// offsetEntry is a source partition and its source offset, as
// JsonConverter normalised them (integers are longs).
type offsetEntry struct {
	partition value
	offset    value
}

// canonical identifies a partition the way Map.equals does: the same keys
// with equal values of the same Java type.
func canonical(v value) string {
	if v.kind != kMap {
		return string(v.appendJSON(nil, false))
	}
	es := slices.Clone(v.m)
	slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	b := []byte{'{'}
	for _, e := range es {
		b = appendJSONString(b, e.key)
		b = append(b, ':')
		b = append(b, canonical(e.val)...)
		b = append(b, ',')
	}
	return string(append(b, '}'))
}

func (st *offsetStore) set(partition, offset value) {
	key := canonical(partition)
	for i, e := range st.entries {
		if canonical(e.partition) == key {
			if offset.kind == kNull {
				st.entries = slices.Delete(st.entries, i, i+1)
			} else {
				st.entries[i].offset = offset
			}
			return
		}
	}
	if offset.kind != kNull {
		st.entries = append(st.entries, offsetEntry{partition, offset})
	}
}

func (s *Server) store(name string) *offsetStore {
	st, ok := s.offsets[name]
	if !ok {
		st = &offsetStore{}
		s.offsets[name] = st
	}
	return st
}

// beginWrite remembers the offsets before a REST write, for stale reads.
func (s *Server) beginWrite(st *offsetStore) {
	st.before = slices.Clone(st.entries)
	st.staleLeft = s.staleReads
}

func offsetsJSON(entries []offsetEntry) rawJSON {
	b := []byte(`{"offsets":[`)
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"partition":`...)
		b = e.partition.appendJSON(b, true)
		b = append(b, `,"offset":`...)
		b = e.offset.appendJSON(b, true)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// handleGetOffsets answers GET /connectors/{name}/offsets. The order of the
// list is the order partitions were first written; a real worker's is
// arbitrary.
func (s *Server) handleGetOffsets(w http.ResponseWriter, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.connectorOr404(w, name); !ok {
		return
	}
	st := s.store(name)
	entries := st.entries
	if st.staleLeft > 0 {
		st.staleLeft--
		entries = st.before
	}
	writeJSON(w, http.StatusOK, offsetsJSON(entries))
}

// modifiable is DistributedHerder's check before an offsets write.
func (s *Server) modifiable(w http.ResponseWriter, name string) (*connector, bool) {
	c, ok := s.connectorOr404(w, name)
	if !ok {
		return nil, false
	}
	if c.target != stateStopped || c.tasks != 0 {
		writeError(w, http.StatusBadRequest, "Connectors must be in the STOPPED state before their offsets can be modified. "+
			"This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/%s/stop' endpoint", name)
		return nil, false
	}
	return c, true
}

// handleResetOffsets answers DELETE /connectors/{name}/offsets.
func (s *Server) handleResetOffsets(w http.ResponseWriter, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.modifiable(w, name); !ok {
		return
	}
	st := s.store(name)
	s.beginWrite(st)
	st.entries = nil
	writeJSON(w, http.StatusOK, map[string]string{"message": "The offsets for this connector have been reset successfully"})
}

// handleAlterOffsets answers PATCH /connectors/{name}/offsets.
func (s *Server) handleAlterOffsets(w http.ResponseWriter, r *http.Request, name string) {
	body, ok := readBody(w, r, `Cannot invoke "org.apache.kafka.connect.runtime.rest.entities.ConnectorOffsets.offsets()" because "offsets" is null`)
	if !ok {
		return
	}
	entries, err := decodeOffsetsRequest(body)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%s", err.Error())
		return
	}
	if len(entries) == 0 {
		writeError(w, http.StatusBadRequest, "Partitions / offsets need to be provided for an alter offsets request")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.modifiable(w, name)
	if !ok {
		return
	}
	// ConnectorOffsets.toMap: a partition listed twice keeps its last offset.
	var merged []offsetEntry
	for _, e := range entries {
		i := slices.IndexFunc(merged, func(m offsetEntry) bool { return canonical(m.partition) == canonical(e.partition) })
		if i >= 0 {
			merged[i].offset = e.offset
		} else {
			merged = append(merged, e)
		}
	}
	for _, e := range merged {
		if msg := formatError(e.partition); msg != "" {
			writeError(w, http.StatusInternalServerError, "%s", msg)
			return
		}
		if msg := formatError(e.offset); msg != "" {
			writeError(w, http.StatusInternalServerError, "%s", msg)
			return
		}
	}
	if c.class == "org.apache.kafka.connect.mirror.MirrorSourceConnector" {
		for _, e := range merged {
			if msg := mirrorSourceOffsetError(e.partition, e.offset); msg != "" {
				writeError(w, http.StatusInternalServerError, "%s", msg)
				return
			}
		}
	}
	st := s.store(name)
	s.beginWrite(st)
	for _, e := range merged {
		if e.partition.kind == kNull {
			continue
		}
		st.set(e.partition, e.offset)
	}
	writeJSON(w, http.StatusOK, map[string]string{"message": "The offsets for this connector have been altered successfully"})
}

// decodeOffsetsRequest decodes a PATCH body as Jackson does into
// ConnectorOffsets; unknown fields are refused with Jackson's message.
func decodeOffsetsRequest(body []byte) ([]offsetEntry, error) {
	const (
		listClass  = "org.apache.kafka.connect.runtime.rest.entities.ConnectorOffsets"
		entryClass = "org.apache.kafka.connect.runtime.rest.entities.ConnectorOffset"
	)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	var out []offsetEntry
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		field, _ := tok.(string)
		if field != "offsets" {
			return nil, refuse("Unrecognized field %q (class %s), not marked as ignorable (one known property: \"offsets\")%s (through reference chain: %s[%q])",
				field, listClass, jacksonLocation(dec), listClass, field)
		}
		tok, err = dec.Token()
		if err != nil {
			return nil, err
		}
		if tok == nil {
			continue
		}
		if tok != json.Delim('[') {
			return nil, fmt.Errorf("connectfake: offsets must be a JSON array, got %v", tok)
		}
		for i := 0; dec.More(); i++ {
			if err := expectDelim(dec, '{'); err != nil {
				return nil, err
			}
			var e offsetEntry
			for dec.More() {
				tok, err := dec.Token()
				if err != nil {
					return nil, err
				}
				f, _ := tok.(string)
				v, err := decodeNext(dec)
				if err != nil {
					return nil, err
				}
				switch f {
				case "partition":
					e.partition = v
				case "offset":
					e.offset = v
				default:
					return nil, refuse("Unrecognized field %q (class %s), not marked as ignorable (2 known properties: \"partition\", \"offset\")%s (through reference chain: %s[\"offsets\"]->java.util.ArrayList[%d]->%s[%q])",
						f, entryClass, jacksonLocation(dec), listClass, i, entryClass, f)
				}
				if v.kind != kNull && v.kind != kMap {
					return nil, fmt.Errorf("connectfake: %s must be a JSON object or null", f)
				}
			}
			if err := expectDelim(dec, '}'); err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		if err := expectDelim(dec, ']'); err != nil {
			return nil, err
		}
	}
	return out, expectDelim(dec, '}')
}

// formatError is OffsetUtils.validateFormat: every value of a partition or
// offset map must be a primitive.
func formatError(m value) string {
	for _, e := range m.m {
		if t := e.val.schemaTypeName(); t != "" {
			return fmt.Sprintf("Offsets may only contain primitive types as values, but field %s contains %s", e.key, t)
		}
	}
	return ""
}

// mirrorSourceOffsetError is MirrorSourceConnector.alterOffsets: the format
// of one entry, and nothing else (a wrong cluster alias or a partition that
// does not exist passes).
func mirrorSourceOffsetError(partition, offset value) string {
	if offset.kind == kNull {
		return "" // tombstones are allowed for anything
	}
	if partition.kind == kNull {
		return "Source partitions may not be null"
	}
	p := partition.javaString()
	for _, key := range []string{"cluster", "topic"} {
		v, ok := partition.get(key)
		if !ok {
			return fmt.Sprintf("Source partition %s is missing the '%s' key, which is required", p, key)
		}
		if v.kind != kString {
			return fmt.Sprintf("Source partition %s has an invalid value %s for the '%s' key, which must be a string", p, v.javaString(), key)
		}
	}
	v, ok := partition.get("partition")
	if !ok {
		return fmt.Sprintf("Source partition %s is missing the 'partition' key, which is required", p)
	}
	if v.kind != kLong || v.n > 1<<31-1 {
		return fmt.Sprintf("Source partition %s has an invalid value %s for the 'partition' key, which must be an integer", p, v.javaString())
	}
	if int32(v.n) < 0 {
		return fmt.Sprintf("Source partition %s has an invalid value %s for the 'partition' key, which cannot be negative", p, v.javaString())
	}
	o := offset.javaString()
	n, ok := offset.get("offset")
	if !ok {
		return fmt.Sprintf("Source offset %s for source partition %s is missing the 'offset' key, which is required", o, p)
	}
	if n.kind != kLong {
		return fmt.Sprintf("Source offset %s for source partition %s has an invalid value %s for the 'offset' key, which must be an integer", o, p, n.javaString())
	}
	if n.n < 0 {
		return fmt.Sprintf("Source offset %s for source partition %s has an invalid value %s for the 'offset' key, which cannot be negative", o, p, n.javaString())
	}
	return ""
}

// Advance stores lastReplicated as the offset of a MirrorSourceConnector
// source partition, as a running MirrorSourceTask's offset commit does:
// the source partition {"cluster": sourceAlias, "partition": partition,
// "topic": topic} and the offset {"offset": lastReplicated}, the offset of
// the last record it copied. A test calls it to simulate MirrorMaker 2
// making progress; GET /connectors/{name}/offsets then shows it.
//
// It returns an error matching ErrNoConnector when the connector does not
// exist, ErrNotRunning when it is not RUNNING with tasks, and
// ErrOffsetBackwards when lastReplicated is below the stored offset.
func (s *Server) Advance(connector, sourceAlias, topic string, partition int32, lastReplicated int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.connectors[connector]
	if !ok {
		return fmt.Errorf("%w: %q", ErrNoConnector, connector)
	}
	if c.target != stateRunning || c.tasks == 0 {
		return fmt.Errorf("%w: %q is %s with %d task(s)", ErrNotRunning, connector, c.target, c.tasks)
	}
	p := value{kind: kMap, m: []entry{
		{"cluster", stringValue(sourceAlias)},
		{"topic", stringValue(topic)},
		{"partition", longValue(int64(partition))},
	}}
	st := s.store(connector)
	key := canonical(p)
	for _, e := range st.entries {
		if canonical(e.partition) != key {
			continue
		}
		if cur, ok := e.offset.get("offset"); ok && cur.kind == kLong && cur.n > lastReplicated {
			return fmt.Errorf("%w: %s-%d is at %d, not %d", ErrOffsetBackwards, topic, partition, cur.n, lastReplicated)
		}
	}
	st.set(p, value{kind: kMap, m: []entry{{"offset", longValue(lastReplicated)}}})
	return nil
}
