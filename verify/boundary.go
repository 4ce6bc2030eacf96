package verify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/progress"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// RecordDigest identifies a record's content without holding it, so that a
// capture can be written to an audit file without copying business data:
// SHA-256 digests of the key, the value and the ordered headers, and the
// timestamp. MirrorMaker 2 with ByteArrayConverter copies all four
// unchanged, so a replicated record has the digest of its source record.
type RecordDigest struct {
	Key       string    `json:"key"`     // "sha256:<hex>", or "null" for a null key
	Value     string    `json:"value"`   // "sha256:<hex>", or "null" for a null value (a tombstone)
	Headers   string    `json:"headers"` // "sha256:<hex>" over every header in order, or "none"
	Timestamp time.Time `json:"timestamp"`
}

// Digest returns the digest of a record.
func Digest(r kafkaadmin.Record) RecordDigest {
	d := RecordDigest{Key: digestBytes(r.Key), Value: digestBytes(r.Value), Headers: "none", Timestamp: r.Timestamp.UTC()}
	if len(r.Headers) > 0 {
		h := sha256.New()
		var n [4]byte
		for _, hd := range r.Headers {
			binary.BigEndian.PutUint32(n[:], uint32(len(hd.Key)))
			h.Write(n[:])
			h.Write([]byte(hd.Key))
			if hd.Value == nil {
				binary.BigEndian.PutUint32(n[:], 1<<32-1)
				h.Write(n[:])
				continue
			}
			binary.BigEndian.PutUint32(n[:], uint32(len(hd.Value)))
			h.Write(n[:])
			h.Write(hd.Value)
		}
		d.Headers = "sha256:" + hex.EncodeToString(h.Sum(nil))
	}
	return d
}

func digestBytes(b []byte) string {
	if b == nil {
		return "null"
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Differences names what differs between two digests — "key", "value",
// "headers", "timestamp" with both values — or nil when they are equal.
func (d RecordDigest) Differences(o RecordDigest) []string {
	var diffs []string
	if d.Key != o.Key {
		diffs = append(diffs, fmt.Sprintf("key: %s, %s", short(d.Key), short(o.Key)))
	}
	if d.Value != o.Value {
		diffs = append(diffs, fmt.Sprintf("value: %s, %s", short(d.Value), short(o.Value)))
	}
	if d.Headers != o.Headers {
		diffs = append(diffs, fmt.Sprintf("headers: %s, %s", short(d.Headers), short(o.Headers)))
	}
	if !d.Timestamp.Equal(o.Timestamp) {
		diffs = append(diffs, fmt.Sprintf("timestamp: %s, %s", d.Timestamp.UTC().Format(time.RFC3339Nano), o.Timestamp.UTC().Format(time.RFC3339Nano)))
	}
	return diffs
}

func short(digest string) string {
	if len(digest) > len("sha256:")+12 {
		return digest[:len("sha256:")+12] + "…"
	}
	return digest
}

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

// BoundaryRecord is the source record MM2 copies first on one partition,
// captured just before the connector resumes: the first committed data
// record at or after where MM2 starts. Compaction may remove that record
// from the source after MM2 copied it (a later record with the same key
// arrives); the capture lets the check after resume compare MM2's first
// record with what the source held when MM2 started.
type BoundaryRecord struct {
	Partition offsets.SourcePartition `json:"partition"`
	// From is where MM2 starts: C, or the log start of a cleared partition.
	From int64 `json:"from"`
	// Offset is the record's offset, at or after From; 0 when Idle.
	Offset int64 `json:"offset,omitempty"`
	// Idle is true when the source held no committed record at or after
	// From: the partition received nothing since the old job stopped.
	Idle   bool          `json:"idle,omitempty"`
	Digest *RecordDigest `json:"digest,omitempty"`
}

// CaptureBoundary reads, for every partition the plan does not block, the
// first committed data record at or after where MM2 starts (one batched
// Fetch per leader, read_committed as MM2 reads) and returns its offset and
// digest, in plan order. Call it while the connector is still STOPPED, just
// before resuming it, and keep the result (the CLI writes it to the audit
// file) for [CheckBoundary]. Errors: the source client's.
func CaptureBoundary(ctx context.Context, source FirstRecordReader, p *plan.Plan) ([]BoundaryRecord, error) {
	from := make(map[kafkaadmin.TopicPartition]int64)
	for _, e := range p.Entries {
		if e.Action != offsets.ActionBlock {
			from[e.Partition] = startOf(e)
		}
	}
	recs, err := source.FirstRecords(ctx, from, kafkaadmin.ReadCommitted)
	if err != nil {
		return nil, fmt.Errorf("capture the boundary records: %w", err)
	}
	var out []BoundaryRecord
	for _, e := range p.Entries {
		at, ok := from[e.Partition]
		if !ok {
			continue
		}
		b := BoundaryRecord{Partition: e.Partition, From: at, Idle: true}
		if r, ok := recs[e.Partition]; ok {
			d := Digest(r)
			b.Offset, b.Idle, b.Digest = r.Offset, false, &d
		}
		out = append(out, b)
	}
	return out, nil
}

// Boundary is the check of one partition's cutover point: the first record
// MM2 wrote to the target (the first record at or after the target end
// offset the plan captured) must be the first committed source record at or
// after C, where the old job stopped.
type Boundary struct {
	Partition    offsets.SourcePartition `json:"partition"`
	TargetTopic  string                  `json:"target_topic"`
	SourceOffset int64                   `json:"source_offset"` // C, or the log start for a cleared partition
	TargetOffset int64                   `json:"target_offset"` // the plan's target end offset
	// RecordOffset is the offset of the source record compared: the first
	// committed data record at or after SourceOffset. It is above
	// SourceOffset when C holds a transaction marker, an aborted record or a
	// compacted-away record, which MM2 skips too.
	RecordOffset int64 `json:"record_offset,omitempty"`
	// Differences lists what differs between the two records; empty when
	// they are the same record.
	Differences []string `json:"differences,omitempty"`
	// Pending is true when no record had arrived yet on the target at the
	// target end offset: nothing to compare.
	Pending bool `json:"pending,omitempty"`
	// Idle is true when Pending because the source itself has no record at
	// C yet: the partition received nothing since the old job stopped, so
	// there is nothing MM2 could have copied. It is not a failure.
	Idle bool `json:"idle,omitempty"`
	// Captured is true when the source side of the comparison is the
	// record captured before resume ([CaptureBoundary]); false when the
	// source was read now.
	Captured bool `json:"captured,omitempty"`
	// RemovedFromSource is true when the source no longer holds the
	// captured record at its offset — compaction (or retention) removed it
	// after MM2 copied it. The capture stands in for it.
	RemovedFromSource bool `json:"removed_from_source,omitempty"`
	// Placed is true when compaction removed the record compared, so MM2's
	// first records were placed on the source instead:
	// the first of them the source still holds, its CopiesGone-th copy
	// (counting from 0; the earlier ones were compacted away since), is at
	// RecordOffset, and MM2 copied every record the source still holds
	// between C and it.
	Placed     bool `json:"placed_after_compaction,omitempty"`
	CopiesGone int  `json:"copies_gone,omitempty"`
	// Duplicates is how many records the old job wrote to the target past
	// its last commit: copies, before the target end, of source records at
	// and after C, which MM2 copies again. They are expected when the old job
	// was stopped without committing what it wrote last (a crash, or a
	// cancel without savepoint); never a loss. Copies of records that
	// compaction has since removed from the source are not counted.
	Duplicates int64 `json:"duplicates,omitempty"`
}

// OK reports whether the two records were read and are the same, or the
// partition is idle (no source record at C yet).
func (b Boundary) OK() bool { return b.Idle || (!b.Pending && len(b.Differences) == 0) }

// scanWindow bounds, in offsets, the source and target records read when
// the cheap comparisons do not settle a boundary: the duplicate count and
// the placement of MM2's first record after compaction.
const scanWindow = 10_000

// scanBudget bounds the offsets one round of the duplicate count reads,
// source and target together: 8 partitions' full scan windows, so that
// memory stays bounded whatever the records' sizes.
const scanBudget = 8 * 2 * scanWindow

// firstCopies is how many of the first records MM2 wrote are compared with
// the source when compaction removed the captured record.
const firstCopies = 64

// lookBack is how many offsets before a position are read to find the last
// data record before it (transaction markers take one offset each).
const lookBack = 16

// CheckBoundary checks, for every partition the plan does not block, that
// the first record at or after the plan's target end offset on the target
// topic (named by policy) is the first committed source record at or after
// C — the captured one when capture has it (see [CaptureBoundary]),
// otherwise the one the source holds now. All reads are batched per leader
// and read_committed. A partition with no record yet on the target is read
// again, backing off from 100 ms to 1 s, until ctx ends; it is then reported
// Pending, and Idle when the source has no record at C either. Run it after
// MM2 caught up ([WaitCaughtUp]), so that a source record missing from the
// target means MM2 did not copy it. Once only idle partitions are pending,
// it returns at once: nothing arrived there for MM2 to copy.
//
// Compaction may remove the captured record after the capture but before
// MM2 read it, or, on a partition with no capture, remove the record MM2
// copied first before the check reads the source; MM2's first record then
// differs from the one compared. In those two cases only, the check places
// MM2's first records on the source instead: none may be a record the
// source holds before C, and the first of them still there must come after
// every record still there from C on that MM2 did not copy before it (the
// source only loses records to compaction, so a record there now was there
// when MM2 read). A record before C copied first (MM2 started early) or a
// record skipped (MM2 started late) still fails.
//
// It also counts the duplicates to expect from the old job (see
// [Boundary.Duplicates]): when the last record before the target end is not
// the source's last record before C, it counts the target records before
// the target end that are copies of source records at or after C.
//
// While partitions are pending it logs how many on log, at most every few
// seconds; log may be nil.
//
// The target topics are those the plan's replication policy names
// (plan.Plan.Policy).
//
// Errors: a read that failed, or plan.ErrConfigNotRecorded for a plan
// older than schema version 4 that was not given its configuration
// (plan.Plan.AttachConfig).
func CheckBoundary(ctx context.Context, source BoundarySource, target RecordReader, p *plan.Plan, capture []BoundaryRecord, log *slog.Logger) ([]Boundary, error) {
	policy, err := p.Policy()
	if err != nil {
		return nil, err
	}
	captured := make(map[offsets.SourcePartition]BoundaryRecord, len(capture))
	for _, c := range capture {
		captured[c.Partition] = c
	}
	var out []Boundary
	want := make(map[offsets.SourcePartition]RecordDigest)
	for _, e := range p.Entries {
		if e.Action == offsets.ActionBlock {
			continue
		}
		tt, err := policy.TargetTopic(e.Partition.Topic)
		if err != nil {
			return nil, err
		}
		b := Boundary{Partition: e.Partition, TargetTopic: tt, SourceOffset: startOf(e), TargetOffset: e.TargetEnd, Pending: true}
		if c, ok := captured[e.Partition]; ok && !c.Idle && c.Digest != nil && c.From == b.SourceOffset {
			b.Captured, b.RecordOffset = true, c.Offset
			want[e.Partition] = *c.Digest
		}
		out = append(out, b)
	}
	if err := checkCaptured(ctx, source, out, captured); err != nil {
		return out, err
	}

	wait := newPoll(100*time.Millisecond, time.Second)
	rep := progress.Start(log, "MM2's first record on each partition of the plan")
	for {
		// The target first: a record MM2 copied after this read started is
		// then already on the source when the source is read.
		tgtFrom := make(map[kafkaadmin.TopicPartition]int64)
		srcFrom := make(map[kafkaadmin.TopicPartition]int64)
		for i := range out {
			b := &out[i]
			if !b.Pending {
				continue
			}
			tgtFrom[b.targetPartition()] = b.TargetOffset
			if !b.Captured {
				srcFrom[b.Partition] = b.SourceOffset
			}
		}
		if len(tgtFrom) == 0 {
			break
		}
		tgt, err := target.FirstRecords(ctx, tgtFrom, kafkaadmin.ReadCommitted)
		if err != nil {
			if ctx.Err() != nil {
				return out, nil
			}
			return out, fmt.Errorf("read the first records MM2 wrote: %w", err)
		}
		src, err := source.FirstRecords(ctx, srcFrom, kafkaadmin.ReadCommitted)
		if err != nil {
			if ctx.Err() != nil {
				return out, nil
			}
			return out, fmt.Errorf("read the source records at C: %w", err)
		}
		for i := range out {
			b := &out[i]
			if !b.Pending {
				continue
			}
			if !b.Captured {
				r, ok := src[b.Partition]
				b.Idle = !ok
				if ok {
					b.RecordOffset = r.Offset
					want[b.Partition] = Digest(r)
				}
			}
			t, ok := tgt[b.targetPartition()]
			if !ok {
				continue
			}
			b.Pending = false
			if b.Idle {
				b.Idle = false
				b.Differences = []string{fmt.Sprintf("the target has a record at %d but the source has none at or after %d", t.Offset, b.SourceOffset)}
				continue
			}
			b.Differences = want[b.Partition].Differences(Digest(t))
		}
		if allIdle(out) {
			break // nothing arrived at C on the source: nothing to wait for
		}
		rep.ReportLeft(ctx, int64(countPending(out)), "pending", countPending(out), "of", len(out))
		if wait.next(ctx) != nil {
			return out, nil
		}
	}
	if err := placeAfterCompaction(ctx, source, target, out); err != nil {
		return out, err
	}
	if err := countDuplicates(ctx, source, target, out, want); err != nil {
		return out, err
	}
	return out, nil
}

func countPending(out []Boundary) int {
	n := 0
	for _, b := range out {
		if b.Pending {
			n++
		}
	}
	return n
}

// placeAfterCompaction re-judges the partitions whose first target record
// differs from the record expected — the captured one, which compaction has
// since removed from the source, or, with no capture, the first record the
// source holds now at C, which compaction may have made later than the one
// MM2 copied (see CheckBoundary).
func placeAfterCompaction(ctx context.Context, source, target RecordReader, out []Boundary) error {
	srcSpans := make(map[kafkaadmin.TopicPartition]kafkaadmin.Span)
	tgtSpans := make(map[kafkaadmin.TopicPartition]kafkaadmin.Span)
	for _, b := range out {
		if len(b.Differences) > 0 && !b.Pending && (!b.Captured || b.RemovedFromSource) {
			srcSpans[b.Partition] = kafkaadmin.Span{From: max(b.SourceOffset-scanWindow, 0), Until: b.SourceOffset + scanWindow}
			tgtSpans[b.targetPartition()] = kafkaadmin.Span{From: b.TargetOffset, Until: b.TargetOffset + firstCopies}
		}
	}
	if len(srcSpans) == 0 {
		return nil
	}
	var pe *kafkaadmin.PartitionErrors
	src, err := source.ReadSpans(ctx, srcSpans, kafkaadmin.ReadCommitted)
	if err != nil && !errors.As(err, &pe) { // below the log start: place on what remains
		return fmt.Errorf("read the source around C: %w", err)
	}
	tgt, err := target.ReadSpans(ctx, tgtSpans, kafkaadmin.ReadCommitted)
	if err != nil {
		return fmt.Errorf("read the first records MM2 wrote: %w", err)
	}
	for i := range out {
		b := &out[i]
		if _, ok := srcSpans[b.Partition]; ok {
			b.place(src[b.Partition], tgt[b.targetPartition()])
		}
	}
	return nil
}

// place judges MM2's first copies against the source records present now
// around C: no copy may be a record before C (MM2 started early), and the
// first copy the source still holds at or after C must come after every
// record still there from C that MM2 did not copy before it (MM2 started
// late); copies the source no longer holds were compacted away since.
func (b *Boundary) place(present, copies []kafkaadmin.Record) {
	before := make(map[RecordDigest]int64)
	var after []kafkaadmin.Record
	for _, r := range present {
		if r.Offset < b.SourceOffset {
			before[Digest(r)] = r.Offset
		} else {
			after = append(after, r)
		}
	}
	at := make(map[RecordDigest]int, len(after))
	for j, r := range after {
		at[Digest(r)] = j
	}
	copied := make(map[RecordDigest]bool, len(copies))
	for k, t := range copies {
		d := Digest(t)
		if off, ok := before[d]; ok {
			b.Differences = []string{fmt.Sprintf("MM2's record %d after the target end is the source record at %d, before C", k, off)}
			return
		}
		j, ok := at[d]
		if !ok {
			copied[d] = true // gone from the source since MM2 copied it
			continue
		}
		var skipped []string
		for _, r := range after[:j] {
			if !copied[Digest(r)] {
				skipped = append(skipped, fmt.Sprint(r.Offset))
			}
		}
		if len(skipped) > 0 {
			b.Differences = []string{fmt.Sprintf("MM2's record %d after the target end is the source record at %d, but the source still holds records at %s that MM2 did not copy before it",
				k, after[j].Offset, strings.Join(skipped, ", "))}
			return
		}
		b.Differences, b.RecordOffset, b.Placed, b.CopiesGone = nil, after[j].Offset, true, k
		return
	}
}

// allIdle reports whether every partition still pending is idle.
func allIdle(out []Boundary) bool {
	for _, b := range out {
		if b.Pending && !b.Idle {
			return false
		}
	}
	return true
}

func (b *Boundary) targetPartition() kafkaadmin.TopicPartition {
	return kafkaadmin.TopicPartition{Topic: b.TargetTopic, Partition: b.Partition.Partition}
}

// checkCaptured reads the source at the captured partitions' starting
// offsets and marks those whose captured record is gone.
func checkCaptured(ctx context.Context, source FirstRecordReader, out []Boundary, captured map[offsets.SourcePartition]BoundaryRecord) error {
	from := make(map[kafkaadmin.TopicPartition]int64)
	for _, b := range out {
		if b.Captured {
			from[b.Partition] = b.SourceOffset
		}
	}
	if len(from) == 0 {
		return nil
	}
	now, err := source.FirstRecords(ctx, from, kafkaadmin.ReadCommitted)
	var pe *kafkaadmin.PartitionErrors
	if err != nil && !errors.As(err, &pe) {
		return fmt.Errorf("read the source records at C: %w", err)
	}
	for i := range out {
		b := &out[i]
		if !b.Captured {
			continue
		}
		r, ok := now[b.Partition]
		b.RemovedFromSource = !ok || r.Offset != captured[b.Partition].Offset || Digest(r) != *captured[b.Partition].Digest
	}
	return nil
}

// countDuplicates sets Duplicates on every compared partition: 0 when the
// last data record before the target end is the source's last record
// before C (the old job stopped exactly at its commit) or there is none;
// otherwise the number of target records before the target end that are
// copies of source records at or after C (the captured one, or those the
// source still holds).
func countDuplicates(ctx context.Context, source BoundarySource, target RecordReader, out []Boundary, want map[offsets.SourcePartition]RecordDigest) error {
	srcSpans := make(map[kafkaadmin.TopicPartition]kafkaadmin.Span)
	tgtSpans := make(map[kafkaadmin.TopicPartition]kafkaadmin.Span)
	for _, b := range out {
		if _, ok := want[b.Partition]; !ok || b.Pending || b.TargetOffset == 0 {
			continue
		}
		srcSpans[b.Partition] = kafkaadmin.Span{From: max(b.SourceOffset-lookBack, 0), Until: b.SourceOffset}
		tgtSpans[b.targetPartition()] = kafkaadmin.Span{From: max(b.TargetOffset-lookBack, 0), Until: b.TargetOffset}
	}
	if len(tgtSpans) == 0 {
		return nil
	}
	var pe *kafkaadmin.PartitionErrors
	src, err := source.ReadSpans(ctx, srcSpans, kafkaadmin.ReadCommitted)
	if err != nil && !errors.As(err, &pe) { // below the log start: compare what remains
		return fmt.Errorf("read the source before C: %w", err)
	}
	tgt, err := target.ReadSpans(ctx, tgtSpans, kafkaadmin.ReadCommitted)
	if err != nil && !errors.As(err, &pe) {
		return fmt.Errorf("read the target before its end: %w", err)
	}
	var scan []*Boundary
	for i := range out {
		b := &out[i]
		if _, ok := tgtSpans[b.targetPartition()]; !ok {
			continue
		}
		t := tgt[b.targetPartition()]
		if len(t) == 0 {
			continue // nothing before the target end: nothing to duplicate
		}
		s := src[b.Partition]
		if len(s) > 0 && Digest(s[len(s)-1]) == Digest(t[len(t)-1]) {
			continue // the old job's last copy is the last record before C
		}
		scan = append(scan, b)
	}
	// Count the copies, as many partitions at a time as keep the offsets
	// read under scanBudget: each partition's spans end at its log end, so
	// a partition with a few records past C costs a few offsets, not
	// scanWindow (at 10,000 partitions, batches of 8 took 1,250 round trips).
	if len(scan) == 0 {
		return nil
	}
	tps := make([]kafkaadmin.TopicPartition, 0, len(scan))
	for _, b := range scan {
		tps = append(tps, b.Partition)
	}
	ends, err := source.LogBounds(ctx, tps)
	if err != nil && !errors.As(err, &pe) {
		return fmt.Errorf("read the source's log ends: %w", err)
	}
	cost := func(b *Boundary) int64 {
		src := int64(scanWindow)
		if lb, ok := ends[b.Partition]; ok { // absent when it could not be read
			src = min(src, max(lb.End-b.SourceOffset, 0))
		}
		return src + min(int64(scanWindow), b.TargetOffset)
	}
	for len(scan) > 0 {
		n, spent := 0, int64(0)
		for n < len(scan) && (n == 0 || spent+cost(scan[n]) <= scanBudget) {
			spent += cost(scan[n])
			n++
		}
		srcSpans := make(map[kafkaadmin.TopicPartition]kafkaadmin.Span, n)
		tgtSpans := make(map[kafkaadmin.TopicPartition]kafkaadmin.Span, n)
		for _, b := range scan[:n] {
			srcSpans[b.Partition] = kafkaadmin.Span{From: b.SourceOffset, Until: b.SourceOffset + scanWindow}
			tgtSpans[b.targetPartition()] = kafkaadmin.Span{From: max(b.TargetOffset-scanWindow, 0), Until: b.TargetOffset}
		}
		srcRecs, err := source.ReadSpans(ctx, srcSpans, kafkaadmin.ReadCommitted)
		if err != nil {
			return fmt.Errorf("read the source after C: %w", err)
		}
		tgtRecs, err := target.ReadSpans(ctx, tgtSpans, kafkaadmin.ReadCommitted)
		if err != nil && !errors.As(err, &pe) {
			return fmt.Errorf("read the target before its end: %w", err)
		}
		for _, b := range scan[:n] {
			atOrAfterC := map[RecordDigest]bool{want[b.Partition]: true}
			for _, r := range srcRecs[b.Partition] {
				atOrAfterC[Digest(r)] = true
			}
			for _, r := range tgtRecs[b.targetPartition()] {
				if atOrAfterC[Digest(r)] {
					b.Duplicates++
				}
			}
		}
		scan = scan[n:]
	}
	return nil
}
