package plan

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/mm2cutover/mm2cutover/offsets"
)

// ParseResetOffsetsCSV reads the group offsets that
//
//	kafka-consumer-groups.sh --reset-offsets ... --dry-run --export
//
// writes: one "topic,partition,offset" line per partition for a single
// group, or "group,topic,partition,offset" lines when several groups were
// named. In the four-column form only the lines of group are kept; group may
// be empty when the file holds a single group. A header line with those
// column names is skipped. Every offset is a committed offset C.
//
// Errors are a [*LineError] matching [ErrMalformed] (wrong column count,
// a form that changes between lines, an invalid topic, partition or offset,
// several groups and no group named) or [ErrDuplicatePartition], and an error
// matching [ErrMalformed] when no line is left.
func ParseResetOffsetsCSV(r io.Reader, group string) (offsets.GroupOffsets, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	out := make(offsets.GroupOffsets)
	width := 0
	seenGroup := ""
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			line := 0
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				line = pe.Line
			}
			return nil, &LineError{Line: line, Err: fmt.Errorf("%w: %w", ErrMalformed, err)}
		}
		line, _ := cr.FieldPos(0) // rec has at least one field

		bad := func(format string, args ...any) error {
			return &LineError{Line: line, Err: fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)}
		}
		if len(rec) != 3 && len(rec) != 4 {
			return nil, bad("%d columns, want topic,partition,offset or group,topic,partition,offset", len(rec))
		}
		if width == 0 {
			width = len(rec)
			if slices.Equal(rec, []string{"topic", "partition", "offset"}) || slices.Equal(rec, []string{"group", "topic", "partition", "offset"}) {
				continue
			}
		}
		if len(rec) != width {
			return nil, bad("%d columns after lines of %d", len(rec), width)
		}
		if width == 4 {
			g := rec[0]
			rec = rec[1:]
			if group != "" && g != group {
				continue
			}
			if group == "" && seenGroup != "" && g != seenGroup {
				return nil, bad("offsets of groups %q and %q: name the group to read", seenGroup, g)
			}
			seenGroup = g
		}
		n, err := strconv.ParseInt(rec[1], 10, 32)
		if err != nil || n < 0 {
			return nil, bad("partition %q is not a partition number", rec[1])
		}
		p := offsets.SourcePartition{Topic: rec[0], Partition: int32(n)}
		if p.Validate() != nil {
			return nil, bad("topic %q is not a Kafka topic name", rec[0])
		}
		c, err := strconv.ParseInt(rec[2], 10, 64)
		if err != nil || c < 0 {
			return nil, bad("offset %q is not a committed offset", rec[2])
		}
		if _, dup := out[p]; dup {
			return nil, &LineError{Line: line, Err: fmt.Errorf("%w %s", ErrDuplicatePartition, p)}
		}
		out[p] = c
	}
	if len(out) == 0 {
		if group != "" {
			return nil, fmt.Errorf("%w: no offsets for group %q", ErrMalformed, group)
		}
		return nil, fmt.Errorf("%w: no offsets", ErrMalformed)
	}
	return out, nil
}

// GroupOffsetsFromConnector reads the body of GET /connectors/{name}/offsets of
// another MirrorSourceConnector (a dedicated-mode MM2 moved to Connect, or a
// connector under another name) and returns the group offsets it stands for:
// each stored M becomes C = M+1 ([offsets.Reverse]). alias is that
// connector's source.cluster.alias; an entry under any other alias is an
// error, not skipped. An empty list gives an empty result: every partition
// will then block as missing. It is [offsets.ParseConnectOffsets] (which
// returns what Connect stores, M) followed by offsets.Reverse with the alias
// check, and is named for what it returns: the group offsets C.
//
// Errors match [ErrMalformed] and [offsets.ErrMalformed] for a body that is
// not such a list; otherwise they are the [*offsets.ConnectPartitionError] of
// offsets.Reverse, or the error of r.
func GroupOffsetsFromConnector(r io.Reader, alias string) (offsets.GroupOffsets, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("plan: reading connector offsets: %w", err)
	}
	list, err := offsets.ParseConnectOffsets(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	g, err := offsets.Reverse(alias, list)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	return g, nil
}
