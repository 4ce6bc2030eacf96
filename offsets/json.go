package offsets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// ParseSourcePartition parses a partition as this package prints it,
// "orders-3", or as a command line often writes it, "orders:3". The
// partition number follows the last '-' or ':', so topic names with dashes
// parse ("my-topic-3" is my-topic, partition 3). The result is validated
// (see [SourcePartition.Validate]); errors match [ErrInvalidPartition].
func ParseSourcePartition(s string) (SourcePartition, error) {
	i := strings.LastIndexAny(s, "-:")
	if i <= 0 || i == len(s)-1 {
		return SourcePartition{}, fmt.Errorf("%w: %q: want topic-partition or topic:partition", ErrInvalidPartition, s)
	}
	n, err := strconv.ParseInt(s[i+1:], 10, 32)
	if err != nil {
		return SourcePartition{}, fmt.Errorf("%w: %q: partition %q is not a number", ErrInvalidPartition, s, s[i+1:])
	}
	p := SourcePartition{Topic: s[:i], Partition: int32(n)}
	if err := p.Validate(); err != nil {
		return SourcePartition{}, err
	}
	return p, nil
}

// MarshalText returns the partition as String does, "orders-3", so that a
// SourcePartition is a JSON string and a JSON object key.
func (p SourcePartition) MarshalText() ([]byte, error) {
	return []byte(p.String()), nil
}

// UnmarshalText parses what MarshalText writes (see [ParseSourcePartition]).
func (p *SourcePartition) UnmarshalText(b []byte) error {
	q, err := ParseSourcePartition(string(b))
	if err != nil {
		return err
	}
	*p = q
	return nil
}

// MarshalJSON writes the committed offset as a JSON integer, or null when
// absent.
func (g GroupOffset) MarshalJSON() ([]byte, error) {
	return appendOptional(nil, g.c, g.ok), nil
}

// UnmarshalJSON reads a JSON integer or null.
func (g *GroupOffset) UnmarshalJSON(b []byte) error {
	v, ok, err := parseOptional(b)
	if err != nil {
		return err
	}
	*g = GroupOffset{c: v, ok: ok}
	return nil
}

// MarshalJSON writes M as a JSON integer, or null.
func (o MirrorOffset) MarshalJSON() ([]byte, error) {
	return appendOptional(nil, o.m, o.ok), nil
}

// UnmarshalJSON reads a JSON integer or null.
func (o *MirrorOffset) UnmarshalJSON(b []byte) error {
	v, ok, err := parseOptional(b)
	if err != nil {
		return err
	}
	*o = MirrorOffset{m: v, ok: ok}
	return nil
}

func appendOptional(buf []byte, v int64, ok bool) []byte {
	if !ok {
		return append(buf, "null"...)
	}
	return strconv.AppendInt(buf, v, 10)
}

// parseOptional reads null or a plain JSON integer (no fraction, no
// exponent, no string); errors match [ErrMalformed].
func parseOptional(b []byte) (int64, bool, error) {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return 0, false, nil
	}
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%w: %.40q is not a 64-bit integer or null", ErrMalformed, b)
	}
	return v, true, nil
}

// MarshalJSON writes the decision as one JSON object, its error as the
// error's text: {"partition":"orders-3","group_offset":42,"log_start":0,
// "log_end":100,"action":"set","offset":41,"lost":0,"reason":"...",
// "error":""}. A decision is a report; there is no UnmarshalJSON.
func (d Decision) MarshalJSON() ([]byte, error) {
	errText := ""
	if d.Err != nil {
		errText = d.Err.Error()
	}
	return json.Marshal(struct {
		Partition   SourcePartition `json:"partition"`
		GroupOffset GroupOffset     `json:"group_offset"`
		Start       int64           `json:"log_start"`
		End         int64           `json:"log_end"`
		Action      Action          `json:"action"`
		Offset      MirrorOffset    `json:"offset"`
		Lost        int64           `json:"lost"`
		Reason      string          `json:"reason"`
		Err         string          `json:"error"`
	}{d.Partition, d.GroupOffset, d.Bounds.Start, d.Bounds.End, d.Action, d.Offset, d.Lost, d.Reason(), errText})
}
