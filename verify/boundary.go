package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// Boundary is the check of one partition's cutover point: the first record
// MM2 wrote to the target (at the target end offset the plan captured) must
// be the source record at the group offset C, where the old job stopped.
type Boundary struct {
	Partition    offsets.SourcePartition `json:"partition"`
	TargetTopic  string                  `json:"target_topic"`
	SourceOffset int64                   `json:"source_offset"` // C, or the log start for a cleared partition
	TargetOffset int64                   `json:"target_offset"` // the plan's target end offset
	// RecordOffset is the offset of the source record compared: the first
	// data record at or after SourceOffset. It is above SourceOffset when C
	// holds a transaction marker or a compacted-away record, which MM2 skips
	// too.
	RecordOffset int64 `json:"record_offset,omitempty"`
	// Differences lists what differs between the two records; empty when
	// they are the same record.
	Differences []string `json:"differences,omitempty"`
	// Pending is true when no record had arrived yet on the source at C or
	// on the target at the target end offset: nothing to compare.
	Pending bool `json:"pending,omitempty"`
	// Idle is true when Pending because the source itself has no record at
	// C yet: the partition received nothing since the old job stopped, so
	// there is nothing MM2 could have copied. It is not a failure.
	Idle bool `json:"idle,omitempty"`
}

// OK reports whether the two records were read and are the same, or the
// partition is idle (no source record at C yet).
func (b Boundary) OK() bool { return b.Idle || (!b.Pending && len(b.Differences) == 0) }

// CompareRecords lists how a replicated record differs from its source
// record: key, value, headers (in order) and timestamp. MirrorMaker 2 with
// ByteArrayConverter copies all four unchanged. It is pure.
func CompareRecords(source, target kafkaadmin.Record) []string {
	var diffs []string
	if !bytes.Equal(source.Key, target.Key) || (source.Key == nil) != (target.Key == nil) {
		diffs = append(diffs, fmt.Sprintf("key: source %q, target %q", source.Key, target.Key))
	}
	if !bytes.Equal(source.Value, target.Value) || (source.Value == nil) != (target.Value == nil) {
		diffs = append(diffs, fmt.Sprintf("value: source %d bytes, target %d bytes, not equal", len(source.Value), len(target.Value)))
	}
	if len(source.Headers) != len(target.Headers) {
		diffs = append(diffs, fmt.Sprintf("headers: source has %d, target %d", len(source.Headers), len(target.Headers)))
	} else {
		for i, h := range source.Headers {
			t := target.Headers[i]
			if h.Key != t.Key || !bytes.Equal(h.Value, t.Value) {
				diffs = append(diffs, fmt.Sprintf("header %d: source %s=%q, target %s=%q", i, h.Key, h.Value, t.Key, t.Value))
			}
		}
	}
	if !source.Timestamp.Equal(target.Timestamp) {
		diffs = append(diffs, fmt.Sprintf("timestamp: source %s, target %s", source.Timestamp.UTC().Format(time.RFC3339Nano), target.Timestamp.UTC().Format(time.RFC3339Nano)))
	}
	return diffs
}

// CheckBoundary checks, for every partition the plan does not block, that
// the record at the plan's target end offset on the target topic (named by
// policy) is the source record at C. A partition with no record yet on
// either side is read again every second until ctx ends; it is then
// reported Pending, and Idle when the source has no record at C either.
// Run it after MM2 caught up (WaitCaughtUp), so that a source record at C
// missing from the target means MM2 did not copy it. Errors: a read that
// failed for another reason than kafkaadmin.ErrNoRecord, or a policy that
// cannot name a target topic.
func CheckBoundary(ctx context.Context, source, target *kafkaadmin.Reader, p *plan.Plan, policy kafkaadmin.ReplicationPolicy) ([]Boundary, error) {
	var out []Boundary
	for _, e := range p.Entries {
		if e.Action == offsets.ActionBlock {
			continue
		}
		tt, err := policy.TargetTopic(e.Partition.Topic)
		if err != nil {
			return nil, err
		}
		out = append(out, Boundary{Partition: e.Partition, TargetTopic: tt, SourceOffset: startOf(e), TargetOffset: e.TargetEnd, Pending: true})
	}
	for {
		pending := 0
		for i := range out {
			b := &out[i]
			if !b.Pending {
				continue
			}
			src, err := source.ReadRecord(ctx, b.Partition, b.SourceOffset)
			b.Idle = errors.Is(err, kafkaadmin.ErrNoRecord)
			if err == nil {
				var dst kafkaadmin.Record
				dst, err = target.ReadRecord(ctx, kafkaadmin.TopicPartition{Topic: b.TargetTopic, Partition: b.Partition.Partition}, b.TargetOffset)
				if err == nil {
					b.Pending = false
					b.RecordOffset = src.Offset
					b.Differences = CompareRecords(src, dst)
					continue
				}
			}
			if ctx.Err() != nil {
				return out, nil
			}
			if !errors.Is(err, kafkaadmin.ErrNoRecord) {
				return out, fmt.Errorf("boundary of %s: %w", b.Partition, err)
			}
			pending++
		}
		if pending == 0 {
			return out, nil
		}
		if sleep(ctx, pollInterval) != nil {
			return out, nil
		}
	}
}
