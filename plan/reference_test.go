package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// refDecode is the decoder this package had before its own lexer: the same
// rules, read by encoding/json. FuzzDecodeAgainstReference checks that the
// lexer accepts nothing the reference refuses, and reads the same plan.
func refDecode(r io.Reader, checkFingerprint bool) (*Plan, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var w wirePlan
	unknown, err := refDecodeTop(&w, dec)
	return w.finish(unknown, err, checkFingerprint)
}

// refInt is jsonInt as encoding/json filled it.
type refInt jsonInt

func (n *refInt) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = refInt{present: true, null: true}
		return nil
	}
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %.40s is not a 64-bit integer", ErrMalformed, b)
	}
	*n = refInt{v: v, present: true}
	return nil
}

type refAction jsonAction

func (a *refAction) UnmarshalJSON(b []byte) error {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return fmt.Errorf("%w: action %.40s is not a string", ErrMalformed, b)
	}
	if err := a.a.UnmarshalText(b[1 : len(b)-1]); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	a.present = true
	return nil
}

type refEntry struct {
	Topic         *string   `json:"topic"`
	Partition     refInt    `json:"partition"`
	GroupOffset   refInt    `json:"group_offset"`
	LogStart      refInt    `json:"log_start"`
	LogEnd        refInt    `json:"log_end"`
	TargetEnd     refInt    `json:"target_end"`
	Action        refAction `json:"action"`
	ConnectOffset refInt    `json:"connect_offset"`
	Lost          refInt    `json:"lost"`
	Reason        *string   `json:"reason"`
}

func (re refEntry) wire() wireEntry {
	we := wireEntry{
		Partition: jsonInt(re.Partition), GroupOffset: jsonInt(re.GroupOffset), LogStart: jsonInt(re.LogStart),
		LogEnd: jsonInt(re.LogEnd), TargetEnd: jsonInt(re.TargetEnd), Action: jsonAction(re.Action),
		ConnectOffset: jsonInt(re.ConnectOffset), Lost: jsonInt(re.Lost),
	}
	if re.Topic != nil {
		we.Topic, we.HasTopic = *re.Topic, true
	}
	if re.Reason != nil {
		we.Reason, we.HasReason = *re.Reason, true
	}
	return we
}

func refDecodeTop(w *wirePlan, dec *json.Decoder) (unknown string, err error) {
	if err := refExpect(dec, json.Delim('{'), "a plan is a JSON object"); err != nil {
		return "", err
	}
	strs := map[string]**string{
		"created_at": &w.CreatedAt, "tool_version": &w.ToolVersion,
		"source_cluster_id": &w.SourceClusterID, "target_cluster_id": &w.TargetClusterID,
		"connector_name": &w.ConnectorName, "source_alias": &w.SourceAlias,
		"config_digest": &w.ConfigDigest, "group_id": &w.GroupID,
		"savepoint": &w.Savepoint, "fingerprint": &w.Fingerprint,
	}
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", decodeError(err)
		}
		key, _ := tok.(string)
		if seen[key] {
			return "", &FieldError{Field: key, Err: ErrMalformed, Detail: "given twice"}
		}
		seen[key] = true
		switch {
		case key == "schema_version":
			var n refInt
			err = dec.Decode(&n)
			w.SchemaVersion = jsonInt(n)
		case strs[key] != nil:
			err = dec.Decode(strs[key])
		case key == "offsets_from":
			err = dec.Decode(&w.OffsetsFrom)
		case key == "connector_config":
			err = dec.Decode(&w.ConnectorConfig)
		case key == "replication_policy":
			err = dec.Decode(&w.Policy)
		case key == "expired_data_accepted":
			err = dec.Decode(&w.Accepted)
		case key == "partitions":
			w.Entries, w.HasEntries, err = refDecodeEntries(dec)
		default:
			if unknown == "" {
				unknown = key
			}
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return "", decodeError(err)
		}
	}
	if err := refExpect(dec, json.Delim('}'), "unterminated plan object"); err != nil {
		return "", err
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", ErrTrailingData
	}
	return unknown, nil
}

func refDecodeEntries(dec *json.Decoder) (entries []Entry, ok bool, err error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, false, err
	}
	if tok == nil {
		return nil, false, nil
	}
	if tok != json.Delim('[') {
		return nil, false, fmt.Errorf("%w: partitions is not an array", ErrMalformed)
	}
	entries = []Entry{}
	for i := 0; dec.More(); i++ {
		var re refEntry
		if err := dec.Decode(&re); err != nil {
			return nil, false, err
		}
		we := re.wire()
		e, err := we.entry(i)
		if err != nil {
			return nil, false, err
		}
		entries = append(entries, e)
	}
	if _, err := dec.Token(); err != nil {
		return nil, false, err
	}
	return slices.Clip(entries), true, nil
}

func refExpect(dec *json.Decoder, want json.Delim, detail string) error {
	tok, err := dec.Token()
	if err != nil {
		return decodeError(err)
	}
	if tok != want {
		return fmt.Errorf("%w: %s", ErrMalformed, detail)
	}
	return nil
}

// stricter reports the errors by which the lexer refuses what the
// reference takes: a key of an entry in another case (encoding/json matches
// keys case-insensitively) or given twice (encoding/json keeps the last).
func stricter(err error) bool {
	var fe *FieldError
	if !errors.As(err, &fe) {
		return false
	}
	if fe.Err == ErrMalformed && strings.Contains(fe.Detail, "given twice in an entry") {
		return true
	}
	if fe.Err == ErrUnknownField {
		for _, k := range []string{"topic", "partition", "group_offset", "log_start", "log_end", "target_end", "action", "connect_offset", "lost", "reason"} {
			if strings.EqualFold(fe.Field, k) {
				return true
			}
		}
	}
	return false
}

// FuzzDecodeAgainstReference: whatever the lexer accepts, the reference
// (encoding/json) accepts too, as the same plan; and when the reference
// refuses, the lexer refuses with an error of the same family, except
// where the lexer is stricter on purpose (keys of an entry in another case
// or given twice: the reference takes them, the lexer refuses).
func FuzzDecodeAgainstReference(f *testing.F) {
	addSeeds(f)
	f.Add([]byte(`{"schema_version":1,"partitions":[{"Topic":"a","topic":"b"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, fp := range []bool{true, false} {
			got, err := decode(bytes.NewReader(data), fp)
			want, refErr := refDecode(bytes.NewReader(data), fp)
			switch {
			case err == nil && refErr != nil:
				t.Fatalf("fingerprint %v: the lexer accepts what encoding/json refuses (%v):\n%q", fp, refErr, data)
			case err == nil:
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("fingerprint %v: plans differ (-reference +lexer):\n%s", fp, diff)
				}
			case stricter(err):
				// The reference may accept, or fail later for another reason.
			case refErr == nil:
				t.Fatalf("fingerprint %v: the lexer refuses (%v) what encoding/json accepts:\n%q", fp, err, data)
			default:
				for _, family := range []error{ErrSchemaVersion, ErrFingerprint} {
					if errors.Is(refErr, family) != errors.Is(err, family) {
						t.Fatalf("fingerprint %v: reference error %v, lexer error %v", fp, refErr, err)
					}
				}
			}
		}
	})
}
