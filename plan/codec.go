package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/jsonstr"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/redact"
)

// Encode writes the plan as indented canonical JSON (see the package
// documentation) after checking it with [Plan.Validate]; it writes nothing
// when the plan is invalid. Encoding the same plan always gives the same
// bytes. Errors are those of Validate and of w.
func (p *Plan) Encode(w io.Writer) error {
	return p.encode(w, true)
}

// encode writes the canonical JSON of a valid plan, indented for a file or
// compact for MarshalJSON.
func (p *Plan) encode(w io.Writer, indent bool) error {
	if err := p.Validate(); err != nil {
		return err
	}
	jw := jsonWriter{w: w, indent: indent}
	jw.plan(p, true)
	return jw.flush()
}

// Decode reads one plan from r strictly: see the package documentation for
// what is refused. It reads r as a stream, entry by entry, so memory use stays
// near the size of the decoded plan. Errors: [*SchemaVersionError]; an error matching
// [ErrMalformed] (with the [encoding/json] error inside), [ErrUnknownField] or
// [ErrTrailingData]; a [*FieldError] or [*PartitionError] for a missing,
// invalid, unsorted, duplicate or inconsistent field or entry; a
// [*FingerprintError]; or the error of r.
func Decode(r io.Reader) (*Plan, error) {
	return decode(r, true)
}

// MarshalJSON makes encoding/json write a plan in its one canonical form,
// the one [Plan.Encode] writes (compact here), never Go's field names: a
// plan inside a caller's JSON document stays a plan file. It refuses what
// Encode refuses.
func (p Plan) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := p.encode(&b, false); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// UnmarshalJSON makes encoding/json read a plan as [Decode] does, with the
// same errors: Go's field names (what encoding/json would write without
// MarshalJSON) are unknown fields.
func (p *Plan) UnmarshalJSON(b []byte) error {
	d, err := Decode(bytes.NewReader(b))
	if err != nil {
		return err
	}
	*p = *d
	return nil
}

// Validate checks every rule [Decode] enforces on the plan in memory: schema
// version, required fields, sorted unique entries, each entry's action,
// Connect offset and loss following from its offsets and acceptance, the
// acceptances, and the fingerprint. It returns nil or the first problem, as
// Decode would.
func (p *Plan) Validate() error {
	return p.validate(true)
}

func (p *Plan) computeFingerprint() string {
	h := sha256.New()
	jw := jsonWriter{w: h}
	jw.plan(p, false)
	jw.flush() // a hash never fails to write
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func (p *Plan) validate(checkFingerprint bool) error {
	if !readable(int64(p.SchemaVersion)) {
		return &SchemaVersionError{Got: int64(p.SchemaVersion), Want: SchemaVersion}
	}
	if err := p.OffsetsFrom.validate(p.SchemaVersion); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{
		{"source_cluster_id", p.SourceClusterID},
		{"target_cluster_id", p.TargetClusterID},
		{"connector_name", p.ConnectorName},
		{"source_alias", p.SourceAlias},
		{"group_id", p.GroupID},
		{"config_digest", p.ConfigDigest},
	} {
		if f.v == "" {
			return &FieldError{Field: f.name, Err: ErrMissingField}
		}
	}
	if p.CreatedAt.IsZero() {
		return &FieldError{Field: "created_at", Err: ErrMissingField}
	}
	if y := p.CreatedAt.UTC().Year(); y < 1 || y > 9999 {
		return &FieldError{Field: "created_at", Err: ErrInvalidField, Detail: "year outside 1 to 9999"}
	}
	if !validDigest(p.ConfigDigest) {
		return &FieldError{Field: "config_digest", Err: ErrInvalidField, Detail: "want sha256: and 64 lowercase hex digits"}
	}
	if p.SchemaVersion >= 4 {
		if err := p.validateConfig(); err != nil {
			return err
		}
	}
	if len(p.Entries) == 0 {
		return &FieldError{Field: "partitions", Err: ErrNoPartitions}
	}

	accepted := make(map[offsets.SourcePartition]bool, len(p.Accepted))
	for i, a := range p.Accepted {
		if i > 0 && p.Accepted[i-1].Partition.Compare(a.Partition) > 0 {
			return &PartitionError{Partition: a.Partition, Err: ErrUnsorted, Detail: "expired_data_accepted"}
		}
		// Membership is checked once the entries are known to be sorted.
		if err := checkAcceptance(a, accepted, func(offsets.SourcePartition) bool { return true }); err != nil {
			return err
		}
		accepted[a.Partition] = true
	}

	for i := range p.Entries {
		e := &p.Entries[i]
		if i > 0 {
			switch c := p.Entries[i-1].Partition.Compare(e.Partition); {
			case c == 0:
				return &PartitionError{Partition: e.Partition, Err: ErrDuplicatePartition}
			case c > 0:
				return &PartitionError{Partition: e.Partition, Err: ErrUnsorted, Detail: "after " + p.Entries[i-1].Partition.String()}
			}
		}
		if e.TargetEnd < 0 {
			return &PartitionError{Partition: e.Partition, Err: ErrInvalidField, Detail: "negative target_end"}
		}
		if e.Reason == "" {
			return &PartitionError{Partition: e.Partition, Err: ErrMissingField, Detail: "reason"}
		}
		d := decide(e.Partition, e.GroupOffset, e.Bounds, accepted[e.Partition])
		if d.Action != e.Action || d.Offset != e.Offset || d.Lost != e.Lost || (d.Err == nil) != (e.Err == nil) {
			return &PartitionError{Partition: e.Partition, Err: ErrInconsistent, Detail: fmt.Sprintf(
				"plan says %s connect offset %s lost %d, but group offset %s with log bounds [%d, %d] gives %s connect offset %s lost %d",
				e.Action, e.Offset, e.Lost, e.GroupOffset, e.Bounds.Start, e.Bounds.End, d.Action, d.Offset, d.Lost)}
		}
	}

	for _, a := range p.Accepted {
		if _, ok := p.Lookup(a.Partition); !ok {
			return &PartitionError{Partition: a.Partition, Err: ErrUnknownPartition, Detail: "expired data accepted for a partition outside the plan"}
		}
	}

	if checkFingerprint {
		if got := p.computeFingerprint(); got != p.Fingerprint {
			return &FingerprintError{Stored: p.Fingerprint, Computed: got}
		}
	}
	return p.checkConfigDigest()
}

// setBlockedErrors gives each decoded entry blocked by its own decision
// that decision's error, as Build does; an entry whose action does not
// follow from its offsets is left for validate to refuse.
func (p *Plan) setBlockedErrors() {
	accepted := make(map[offsets.SourcePartition]bool, len(p.Accepted))
	for _, a := range p.Accepted {
		accepted[a.Partition] = true
	}
	for i := range p.Entries {
		if e := &p.Entries[i]; e.Action == offsets.ActionBlock {
			if d := decide(e.Partition, e.GroupOffset, e.Bounds, accepted[e.Partition]); d.Action == offsets.ActionBlock {
				e.Err = d.Err
			}
		}
	}
}

// validateConfig checks what a version 4 plan records of its connector:
// a configuration without "name", under the plan's alias, naming the
// recorded policy.
func (p *Plan) validateConfig() error {
	if p.ConnectorConfig == nil {
		return &FieldError{Field: "connector_config", Err: ErrMissingField}
	}
	if _, ok := p.ConnectorConfig["name"]; ok {
		return &FieldError{Field: "connector_config", Err: ErrInvalidField, Detail: "holds name, which the plan records as connector_name"}
	}
	if alias := offsets.SourceAliasOf(p.ConnectorConfig); alias != p.SourceAlias {
		return &FieldError{Field: "connector_config", Err: ErrConfigMismatch, Detail: "source.cluster.alias " + strconv.Quote(alias) + ", the plan's source_alias is " + strconv.Quote(p.SourceAlias)}
	}
	if pol, err := offsets.PolicyOf(p.ConnectorConfig); err != nil || pol != p.ReplicationPolicy {
		return &FieldError{Field: "replication_policy", Err: ErrInvalidField, Detail: "not the policy connector_config names"}
	}
	if !maps.Equal(recordedForm(p.ConnectorConfig), p.ConnectorConfig) {
		return &FieldError{Field: "connector_config", Err: ErrInvalidField, Detail: "holds a secret value that a plan records as " + redact.Redacted}
	}
	return nil
}

// checkConfigDigest checks that what a version 4 plan records of its
// connector is the configuration of its config_digest. validate runs it
// after the fingerprint: content edited without a new fingerprint is a
// *FingerprintError first.
func (p *Plan) checkConfigDigest() error {
	if p.SchemaVersion >= 4 && ConfigDigest(p.ConnectorConfig) != p.ConfigDigest && !hidesSecretCopy(p.ConnectorConfig) {
		return &FieldError{Field: "connector_config", Err: ErrConfigMismatch, Detail: "its digest is not config_digest: it is not the configuration the plan was built for"}
	}
	return nil
}

// hidesSecretCopy reports whether a recorded configuration hides a secret
// inside the value of a key that is not a secret's (redact.Config replaces a
// secret copied under another key): ConfigDigest hashed that value as it
// was, so the digest cannot be recomputed from the record. The recorded
// form of every other configuration hashes to the digest: the values of
// secret keys are redact.Redacted in both.
func hidesSecretCopy(recorded map[string]string) bool {
	for k, v := range recorded {
		if !redact.IsSecretKey(k) && strings.Contains(v, redact.Redacted) {
			return true
		}
	}
	return false
}

// jsonWriter writes the canonical JSON of a plan, flushing to w in chunks.
// indent gives the human-readable form: one top-level field or entry a line.
type jsonWriter struct {
	w      io.Writer
	buf    []byte
	err    error
	indent bool
}

func (w *jsonWriter) flush() error {
	if w.err == nil && len(w.buf) > 0 {
		_, w.err = w.w.Write(w.buf)
	}
	w.buf = w.buf[:0]
	return w.err
}

func (w *jsonWriter) maybeFlush() {
	if len(w.buf) >= 64<<10 {
		w.flush()
	}
}

// key starts a top-level field.
func (w *jsonWriter) key(name string, first bool) { w.member(name, first, "\n  ") }

// member starts a member of an object, on a new line indented by nl in the
// indented form.
func (w *jsonWriter) member(name string, first bool, nl string) {
	if !first {
		w.buf = append(w.buf, ',')
	}
	if w.indent {
		w.buf = append(w.buf, nl...)
	}
	w.buf = jsonstr.Append(w.buf, name)
	w.buf = append(w.buf, ':')
	if w.indent {
		w.buf = append(w.buf, ' ')
	}
}

func (w *jsonWriter) str(name, v string) {
	w.key(name, false)
	w.buf = jsonstr.Append(w.buf, v)
}

// config writes "connector_config", an object with keys sorted bytewise
// (one a line in the indented form).
func (w *jsonWriter) config(c map[string]string) {
	w.key("connector_config", false)
	w.buf = append(w.buf, '{')
	for i, k := range slices.Sorted(maps.Keys(c)) {
		w.member(k, i == 0, "\n    ")
		w.buf = jsonstr.Append(w.buf, c[k])
	}
	if w.indent && len(c) > 0 {
		w.buf = append(w.buf, "\n  "...)
	}
	w.buf = append(w.buf, '}')
}

// list writes a top-level array of n elements, each written by elem.
func (w *jsonWriter) list(name string, n int, elem func(i int)) {
	w.key(name, false)
	w.buf = append(w.buf, '[')
	for i := 0; i < n; i++ {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		if w.indent {
			w.buf = append(w.buf, "\n    "...)
		}
		elem(i)
		w.maybeFlush()
	}
	if w.indent && n > 0 {
		w.buf = append(w.buf, "\n  "...)
	}
	w.buf = append(w.buf, ']')
}

func (w *jsonWriter) plan(p *Plan, withFingerprint bool) {
	w.buf = append(w.buf, '{')
	w.key("schema_version", true)
	w.buf = strconv.AppendInt(w.buf, int64(p.SchemaVersion), 10)
	w.key("created_at", false)
	w.buf = append(w.buf, '"')
	w.buf = p.CreatedAt.UTC().AppendFormat(w.buf, time.RFC3339Nano)
	w.buf = append(w.buf, '"')
	w.str("tool_version", p.ToolVersion)
	w.str("source_cluster_id", p.SourceClusterID)
	w.str("target_cluster_id", p.TargetClusterID)
	w.str("connector_name", p.ConnectorName)
	w.str("source_alias", p.SourceAlias)
	w.str("config_digest", p.ConfigDigest)
	if p.SchemaVersion >= 4 {
		w.config(p.ConnectorConfig)
		w.key("replication_policy", false)
		w.buf = append(w.buf, `{"kind":`...)
		w.buf = jsonstr.Append(w.buf, string(p.ReplicationPolicy.Kind))
		w.buf = append(w.buf, `,"source_alias":`...)
		w.buf = jsonstr.Append(w.buf, p.ReplicationPolicy.SourceAlias)
		w.buf = append(w.buf, `,"separator":`...)
		w.buf = jsonstr.Append(w.buf, p.ReplicationPolicy.Separator)
		w.buf = append(w.buf, '}')
	}
	w.str("group_id", p.GroupID)
	if p.SchemaVersion >= 2 {
		w.key("offsets_from", false)
		w.buf = append(w.buf, `{"kind":`...)
		w.buf = jsonstr.Append(w.buf, string(p.OffsetsFrom.Kind))
		w.buf = append(w.buf, `,"ref":`...)
		w.buf = jsonstr.Append(w.buf, p.OffsetsFrom.Ref)
		w.buf = append(w.buf, `,"overrides_group":`...)
		w.buf = strconv.AppendBool(w.buf, p.OffsetsFrom.OverridesGroup)
		w.buf = append(w.buf, '}')
	}
	w.str("savepoint", p.Savepoint)
	w.list("expired_data_accepted", len(p.Accepted), func(i int) {
		a := &p.Accepted[i]
		w.buf = append(w.buf, `{"topic":`...)
		w.buf = jsonstr.Append(w.buf, a.Partition.Topic)
		w.buf = append(w.buf, `,"partition":`...)
		w.buf = strconv.AppendInt(w.buf, int64(a.Partition.Partition), 10)
		w.buf = append(w.buf, `,"accepted_by":`...)
		w.buf = jsonstr.Append(w.buf, a.By)
		w.buf = append(w.buf, `,"note":`...)
		w.buf = jsonstr.Append(w.buf, a.Note)
		w.buf = append(w.buf, '}')
	})
	w.list("partitions", len(p.Entries), func(i int) { w.buf = appendEntry(w.buf, &p.Entries[i]) })
	if withFingerprint {
		w.str("fingerprint", p.Fingerprint)
	}
	if w.indent {
		w.buf = append(w.buf, '\n')
	}
	w.buf = append(w.buf, '}')
	if w.indent {
		w.buf = append(w.buf, '\n')
	}
}

func appendEntry(b []byte, e *Entry) []byte {
	b = append(b, `{"topic":`...)
	b = jsonstr.Append(b, e.Partition.Topic)
	b = append(b, `,"partition":`...)
	b = strconv.AppendInt(b, int64(e.Partition.Partition), 10)
	b = append(b, `,"group_offset":`...)
	if c, ok := e.GroupOffset.Get(); ok {
		b = strconv.AppendInt(b, c, 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"log_start":`...)
	b = strconv.AppendInt(b, e.Bounds.Start, 10)
	b = append(b, `,"log_end":`...)
	b = strconv.AppendInt(b, e.Bounds.End, 10)
	b = append(b, `,"target_end":`...)
	b = strconv.AppendInt(b, e.TargetEnd, 10)
	b = append(b, `,"action":"`...)
	b = append(b, e.Action.String()...)
	b = append(b, `","connect_offset":`...)
	if m, ok := e.Offset.Get(); ok {
		b = strconv.AppendInt(b, m, 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"lost":`...)
	b = strconv.AppendInt(b, e.Lost, 10)
	b = append(b, `,"reason":`...)
	b = jsonstr.Append(b, e.Reason)
	return append(b, '}')
}

// jsonInt is a JSON integer read into an int64, with whether the field was
// present and whether it was null. Floats, exponents and strings are
// refused.
type jsonInt struct {
	v       int64
	present bool
	null    bool
}

// UnmarshalJSON is used for the acceptances, which encoding/json decodes.
func (n *jsonInt) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = jsonInt{present: true, null: true}
		return nil
	}
	v, ok := parseInt(b)
	if !ok {
		return fmt.Errorf("%w: %.40s is not a 64-bit integer", ErrMalformed, b)
	}
	*n = jsonInt{v: v, present: true}
	return nil
}

// jsonAction is "set", "clear" or "block".
type jsonAction struct {
	a       offsets.Action
	present bool
}

// wirePlan holds the top-level fields of a plan as decoded, before checks;
// the entries are decoded one at a time (see decodeEntries).
type wirePlan struct {
	SchemaVersion   jsonInt
	CreatedAt       *string
	ToolVersion     *string
	SourceClusterID *string
	TargetClusterID *string
	ConnectorName   *string
	SourceAlias     *string
	ConfigDigest    *string
	ConnectorConfig *map[string]*string
	Policy          *wirePolicy
	GroupID         *string
	OffsetsFrom     *wireOffsetsSource
	Savepoint       *string
	Accepted        *[]wireAcceptance
	Entries         []Entry
	HasEntries      bool
	Fingerprint     *string
}

type wireOffsetsSource struct {
	Kind           *string `json:"kind"`
	Ref            *string `json:"ref"`
	OverridesGroup *bool   `json:"overrides_group"`
}

type wirePolicy struct {
	Kind        *string `json:"kind"`
	SourceAlias *string `json:"source_alias"`
	Separator   *string `json:"separator"`
}

type wireAcceptance struct {
	Topic      *string `json:"topic"`
	Partition  jsonInt `json:"partition"`
	AcceptedBy *string `json:"accepted_by"`
	Note       *string `json:"note"`
}

// wireEntry is one element of "partitions" as read, before checks.
type wireEntry struct {
	Topic         string
	HasTopic      bool // false when absent or null
	Partition     jsonInt
	GroupOffset   jsonInt
	LogStart      jsonInt
	LogEnd        jsonInt
	TargetEnd     jsonInt
	Action        jsonAction
	ConnectOffset jsonInt
	Lost          jsonInt
	Reason        string
	HasReason     bool
}

// decode reads a plan from r as a stream: the top-level object key by key
// and the entries one at a time, so that memory stays near the size of the
// plan in memory rather than a multiple of the file. The JSON is read by a
// lexer of this package rather than encoding/json, which spends most of its
// time in reflection: a plan of 100,000 partitions decodes several times
// faster. It accepts what encoding/json with DisallowUnknownFields accepted
// before, except that the keys of an entry must be spelled exactly (not in
// another case) and given once.
func decode(r io.Reader, checkFingerprint bool) (*Plan, error) {
	var w wirePlan
	unknown, err := w.decode(newLexer(r))
	return w.finish(unknown, err, checkFingerprint)
}

// finish turns a decoded wirePlan into a Plan: the schema version first
// (a newer plan's error names its version, not what it could not parse),
// then the fields its version does not know, then validation. unknown and
// err are what decoding the wire form returned.
func (w *wirePlan) finish(unknown string, err error, checkFingerprint bool) (*Plan, error) {
	if err != nil {
		if w.SchemaVersion.present && !w.SchemaVersion.null && !readable(w.SchemaVersion.v) {
			return nil, &SchemaVersionError{Got: w.SchemaVersion.v, Want: SchemaVersion}
		}
		return nil, err
	}
	if !w.SchemaVersion.present || w.SchemaVersion.null {
		return nil, &FieldError{Field: "schema_version", Err: ErrMissingField}
	}
	if !readable(w.SchemaVersion.v) {
		return nil, &SchemaVersionError{Got: w.SchemaVersion.v, Want: SchemaVersion}
	}
	if unknown == "" && w.SchemaVersion.v == 1 && w.OffsetsFrom != nil {
		unknown = "offsets_from" // added by version 2
	}
	if unknown == "" && w.SchemaVersion.v < 4 { // added by version 4
		if w.ConnectorConfig != nil {
			unknown = "connector_config"
		} else if w.Policy != nil {
			unknown = "replication_policy"
		}
	}
	if unknown != "" {
		return nil, unknownField(unknown, w.SchemaVersion.v)
	}
	p, err := w.plan()
	if err != nil {
		return nil, err
	}
	p.setBlockedErrors()
	if err := p.validate(checkFingerprint); err != nil {
		return nil, err
	}
	return p, nil
}

// objectKey reads the key of the next member of an object and its colon;
// first is true for the first member. done is true at the closing brace.
// The key is valid until the next read.
func (lx *lexer) objectKey(first bool) (key []byte, done bool, err error) {
	c, ok := lx.peek()
	if !ok {
		return nil, false, lx.failure()
	}
	if c == '}' && first {
		lx.pos++
		return nil, true, nil
	}
	if !first {
		switch c {
		case '}':
			lx.pos++
			return nil, true, nil
		case ',':
			lx.pos++
		default:
			return nil, false, lx.syntax("want , or } after an object member")
		}
	}
	raw, plain, err := lx.stringToken()
	if err != nil {
		return nil, false, err
	}
	if plain {
		key = raw[1 : len(raw)-1]
	} else {
		s, err := unquote(raw, plain)
		if err != nil {
			return nil, false, err
		}
		key = []byte(s)
	}
	// The key stays in the buffer: the colon may need a read, so look for
	// it there first.
	if lx.pos < len(lx.buf) && lx.buf[lx.pos] == ':' {
		lx.pos++
		return key, false, nil
	}
	k := string(key)
	if err := lx.expect(':', "want : after an object key"); err != nil {
		return nil, false, err
	}
	return []byte(k), false, nil
}

// decode reads the top-level object. An unknown top-level key is skipped and
// returned, so that the schema version, wherever it stands, decides which
// error the caller reports.
func (w *wirePlan) decode(lx *lexer) (unknown string, err error) {
	if c, ok := lx.peek(); !ok {
		return "", lx.failure()
	} else if c != '{' {
		return "", fmt.Errorf("%w: a plan is a JSON object", ErrMalformed)
	}
	lx.pos++
	strs := map[string]**string{
		"created_at": &w.CreatedAt, "tool_version": &w.ToolVersion,
		"source_cluster_id": &w.SourceClusterID, "target_cluster_id": &w.TargetClusterID,
		"connector_name": &w.ConnectorName, "source_alias": &w.SourceAlias,
		"config_digest": &w.ConfigDigest, "group_id": &w.GroupID,
		"savepoint": &w.Savepoint, "fingerprint": &w.Fingerprint,
	}
	seen := make(map[string]bool)
	for first := true; ; first = false {
		k, done, err := lx.objectKey(first)
		if err != nil {
			return "", err
		}
		if done {
			break
		}
		key := string(k)
		if seen[key] {
			return "", &FieldError{Field: key, Err: ErrMalformed, Detail: words(errDuplicateKey)}
		}
		seen[key] = true
		switch {
		case key == "schema_version":
			w.SchemaVersion, err = lx.intValue()
		case strs[key] != nil:
			*strs[key], err = lx.stringPointer()
		case key == "offsets_from":
			err = decodeJSON(lx, &w.OffsetsFrom)
		case key == "connector_config":
			err = decodeJSON(lx, &w.ConnectorConfig)
		case key == "replication_policy":
			err = decodeJSON(lx, &w.Policy)
		case key == "expired_data_accepted":
			err = decodeJSON(lx, &w.Accepted)
		case key == "partitions":
			w.Entries, w.HasEntries, err = decodeEntries(lx)
		default:
			if unknown == "" {
				unknown = key
			}
			_, err = lx.rawValue()
		}
		if err != nil {
			return "", err
		}
	}
	return unknown, lx.end()
}

// decodeJSON reads the next value into v with encoding/json, unknown
// fields refused: for the short values ("offsets_from",
// "expired_data_accepted"), whose rules are encoding/json's.
func decodeJSON(lx *lexer, v any) error {
	raw, err := lx.rawValue()
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	return nil
}

// entryChunk is how many entries decodeEntries collects in one block before
// starting the next; the blocks are joined once the count is known.
const entryChunk = 4096

// decodeEntries reads the "partitions" array entry by entry. ok is false
// when the value is null.
func decodeEntries(lx *lexer) (entries []Entry, ok bool, err error) {
	c, found := lx.peek()
	if !found {
		return nil, false, lx.failure()
	}
	if c == 'n' {
		tok, err := lx.scalarToken()
		if err != nil {
			return nil, false, err
		}
		if string(tok) == "null" {
			return nil, false, nil
		}
	}
	if c != '[' {
		return nil, false, fmt.Errorf("%w: partitions is not an array", ErrMalformed)
	}
	lx.pos++
	intern := make(map[string]string)
	var (
		full  [][]Entry
		block []Entry
		n     int
	)
	for i := 0; ; i++ {
		c, found := lx.peek()
		if !found {
			return nil, false, lx.failure()
		}
		switch {
		case c == ']' && i == 0:
		case i == 0:
		case c == ']':
		case c == ',':
			lx.pos++
		default:
			return nil, false, lx.syntax("want , or ] after an array element")
		}
		if c == ']' {
			lx.pos++
			break
		}
		var we wireEntry
		if err := we.decode(lx, intern); err != nil {
			return nil, false, err
		}
		e, err := we.entry(i)
		if err != nil {
			return nil, false, err
		}
		if len(block) == cap(block) {
			if block != nil {
				full = append(full, block)
			}
			block = make([]Entry, 0, entryChunk)
		}
		block = append(block, e)
		n++
	}
	entries = make([]Entry, 0, n)
	for _, b := range full {
		entries = append(entries, b...)
	}
	return append(entries, block...), true, nil
}

// decode reads one element of "partitions": an object of the entry's
// fields, each given once, or null (an entry with no field).
func (we *wireEntry) decode(lx *lexer, intern map[string]string) error {
	c, ok := lx.peek()
	if !ok {
		return lx.failure()
	}
	if c != '{' {
		tok, err := lx.rawValue()
		if err != nil {
			return err
		}
		if string(tok) == "null" {
			return nil
		}
		return fmt.Errorf("%w: partition entry %.40s is not an object", ErrMalformed, tok)
	}
	lx.pos++
	var seen uint16
	for first := true; ; first = false {
		key, done, err := lx.objectKey(first)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		bit := entryKeyBit(key)
		if bit == 0 {
			return unknownField(string(key), SchemaVersion)
		}
		if seen&bit != 0 {
			return &FieldError{Field: "partitions", Err: ErrMalformed, Detail: "key " + strconv.Quote(string(key)) + " " + words(errDuplicateKey) + " in an entry"}
		}
		seen |= bit
		switch bit {
		case keyTopic:
			we.Topic, we.HasTopic, err = lx.stringValue(intern)
		case keyPartition:
			we.Partition, err = lx.intValue()
		case keyGroupOffset:
			we.GroupOffset, err = lx.intValue()
		case keyLogStart:
			we.LogStart, err = lx.intValue()
		case keyLogEnd:
			we.LogEnd, err = lx.intValue()
		case keyTargetEnd:
			we.TargetEnd, err = lx.intValue()
		case keyAction:
			we.Action, err = lx.actionValue()
		case keyConnectOffset:
			we.ConnectOffset, err = lx.intValue()
		case keyLost:
			we.Lost, err = lx.intValue()
		case keyReason:
			we.Reason, we.HasReason, err = lx.stringValue(nil)
		}
		if err != nil {
			return err
		}
	}
}

// The keys of an entry, as bits of a set.
const (
	keyTopic uint16 = 1 << iota
	keyPartition
	keyGroupOffset
	keyLogStart
	keyLogEnd
	keyTargetEnd
	keyAction
	keyConnectOffset
	keyLost
	keyReason
)

func entryKeyBit(key []byte) uint16 {
	switch string(key) {
	case "topic":
		return keyTopic
	case "partition":
		return keyPartition
	case "group_offset":
		return keyGroupOffset
	case "log_start":
		return keyLogStart
	case "log_end":
		return keyLogEnd
	case "target_end":
		return keyTargetEnd
	case "action":
		return keyAction
	case "connect_offset":
		return keyConnectOffset
	case "lost":
		return keyLost
	case "reason":
		return keyReason
	}
	return 0
}

// actionValue consumes the action, a JSON string compared as written: an
// escaped spelling of "set" is not "set".
func (lx *lexer) actionValue() (jsonAction, error) {
	c, ok := lx.peek()
	if !ok {
		return jsonAction{}, lx.failure()
	}
	if c != '"' {
		tok, err := lx.rawValue()
		if err != nil {
			return jsonAction{}, err
		}
		return jsonAction{}, fmt.Errorf("%w: action %.40s is not a string", ErrMalformed, tok)
	}
	raw, _, err := lx.stringToken()
	if err != nil {
		return jsonAction{}, err
	}
	var a jsonAction
	if err := a.a.UnmarshalText(raw[1 : len(raw)-1]); err != nil {
		return jsonAction{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	a.present = true
	return a, nil
}

func unknownField(name string, version int64) error {
	return &FieldError{Field: name, Err: ErrUnknownField, Detail: "not defined by schema version " + strconv.FormatInt(version, 10)}
}

// readable reports whether this package reads plans of schema version v:
// every version from 1 to SchemaVersion.
func readable(v int64) bool { return v >= 1 && v <= SchemaVersion }

func decodeError(err error) error {
	if errors.Is(err, ErrMalformed) {
		return err
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return err
	}
	// encoding/json reports unknown fields only as text.
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return unknownField(strings.Trim(name, `"`), SchemaVersion)
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%w: %w", ErrMalformed, err)
}

func (w *wirePlan) plan() (*Plan, error) {
	p := &Plan{SchemaVersion: int(w.SchemaVersion.v)}
	for _, f := range []struct {
		name     string
		src      *string
		dst      *string
		optional bool
	}{
		{"tool_version", w.ToolVersion, &p.ToolVersion, true},
		{"source_cluster_id", w.SourceClusterID, &p.SourceClusterID, false},
		{"target_cluster_id", w.TargetClusterID, &p.TargetClusterID, false},
		{"connector_name", w.ConnectorName, &p.ConnectorName, false},
		{"source_alias", w.SourceAlias, &p.SourceAlias, false},
		{"config_digest", w.ConfigDigest, &p.ConfigDigest, false},
		{"group_id", w.GroupID, &p.GroupID, false},
		{"savepoint", w.Savepoint, &p.Savepoint, true},
		{"fingerprint", w.Fingerprint, &p.Fingerprint, false},
	} {
		// Optional fields are always written, possibly empty; a missing key
		// means the file was not written by Encode.
		if f.src == nil || (*f.src == "" && !f.optional) {
			return nil, &FieldError{Field: f.name, Err: ErrMissingField}
		}
		*f.dst = *f.src
	}
	if p.SchemaVersion >= 2 {
		o := w.OffsetsFrom
		if o == nil || o.Kind == nil || o.Ref == nil || o.OverridesGroup == nil {
			return nil, &FieldError{Field: "offsets_from", Err: ErrMissingField, Detail: "needs kind, ref and overrides_group"}
		}
		p.OffsetsFrom = OffsetsSource{Kind: OffsetsKind(*o.Kind), Ref: *o.Ref, OverridesGroup: *o.OverridesGroup}
	}
	if p.SchemaVersion >= 4 {
		if w.ConnectorConfig == nil {
			return nil, &FieldError{Field: "connector_config", Err: ErrMissingField}
		}
		p.ConnectorConfig = make(map[string]string, len(*w.ConnectorConfig))
		for k, v := range *w.ConnectorConfig {
			if v == nil {
				return nil, &FieldError{Field: "connector_config", Err: ErrInvalidField, Detail: "key " + strconv.Quote(k) + " is null"}
			}
			p.ConnectorConfig[k] = *v
		}
		pol := w.Policy
		if pol == nil || pol.Kind == nil || pol.SourceAlias == nil || pol.Separator == nil {
			return nil, &FieldError{Field: "replication_policy", Err: ErrMissingField, Detail: "needs kind, source_alias and separator"}
		}
		p.ReplicationPolicy = offsets.ReplicationPolicy{Kind: offsets.PolicyKind(*pol.Kind), SourceAlias: *pol.SourceAlias, Separator: *pol.Separator}
	}
	if w.CreatedAt == nil {
		return nil, &FieldError{Field: "created_at", Err: ErrMissingField}
	}
	t, err := time.Parse(time.RFC3339Nano, *w.CreatedAt)
	if err != nil {
		return nil, &FieldError{Field: "created_at", Err: ErrInvalidField, Detail: "want an RFC 3339 time"}
	}
	p.CreatedAt = t.UTC()
	if w.Accepted == nil {
		return nil, &FieldError{Field: "expired_data_accepted", Err: ErrMissingField}
	}
	if !w.HasEntries {
		return nil, &FieldError{Field: "partitions", Err: ErrMissingField}
	}
	p.Accepted = make([]ExpiredAcceptance, len(*w.Accepted))
	for i, a := range *w.Accepted {
		if a.Topic == nil || a.AcceptedBy == nil || a.Note == nil {
			return nil, &FieldError{Field: "expired_data_accepted", Err: ErrMissingField, Detail: "entry " + strconv.Itoa(i) + " needs topic, partition, accepted_by and note"}
		}
		part, err := partition(a.Partition)
		if err != nil {
			return nil, &FieldError{Field: "expired_data_accepted", Err: err, Detail: "entry " + strconv.Itoa(i)}
		}
		p.Accepted[i] = ExpiredAcceptance{Partition: offsets.SourcePartition{Topic: *a.Topic, Partition: part}, By: *a.AcceptedBy, Note: *a.Note}
	}

	p.Entries = w.Entries
	return p, nil
}

func (we *wireEntry) entry(i int) (Entry, error) {
	if !we.HasTopic {
		return Entry{}, &FieldError{Field: "partitions", Err: ErrMissingField, Detail: "entry " + strconv.Itoa(i) + " has no topic"}
	}
	part, err := partition(we.Partition)
	if err != nil {
		return Entry{}, &FieldError{Field: "partitions", Err: err, Detail: "entry " + strconv.Itoa(i)}
	}
	sp := offsets.SourcePartition{Topic: we.Topic, Partition: part}
	missing := func(name string) error {
		return &PartitionError{Partition: sp, Err: ErrMissingField, Detail: name}
	}
	for _, f := range []struct {
		name string
		n    jsonInt
	}{{"log_start", we.LogStart}, {"log_end", we.LogEnd}, {"target_end", we.TargetEnd}, {"lost", we.Lost}} {
		if !f.n.present || f.n.null {
			return Entry{}, missing(f.name)
		}
	}
	switch {
	case !we.GroupOffset.present:
		return Entry{}, missing("group_offset")
	case !we.ConnectOffset.present:
		return Entry{}, missing("connect_offset")
	case !we.Action.present:
		return Entry{}, missing("action")
	case !we.HasReason:
		return Entry{}, missing("reason")
	}
	e := Entry{
		Decision: offsets.Decision{
			Partition: sp,
			Bounds:    offsets.LogBounds{Start: we.LogStart.v, End: we.LogEnd.v},
			Action:    we.Action.a,
			Lost:      we.Lost.v,
		},
		TargetEnd: we.TargetEnd.v,
		Reason:    we.Reason,
	}
	if !we.GroupOffset.null {
		e.GroupOffset = offsets.NewGroupOffset(we.GroupOffset.v)
	}
	if !we.ConnectOffset.null {
		e.Offset = offsets.NewMirrorOffset(we.ConnectOffset.v)
	}
	return e, nil
}

func partition(n jsonInt) (int32, error) {
	if !n.present || n.null {
		return 0, ErrMissingField
	}
	if n.v < 0 || n.v > math.MaxInt32 {
		return 0, ErrInvalidField
	}
	return int32(n.v), nil
}
