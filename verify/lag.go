package verify

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/progress"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// PartitionLag is how far MM2 is behind on one source partition.
//
// MM2 reads read_committed and stores the offset of the last data record it
// copied, so after a transaction its next offset M+1 is the transaction's
// marker, and the high watermark is beyond it forever: a marker is never
// copied. Lag therefore counts from the first record MM2 has yet to copy —
// the first committed data record at or after Next — to the last stable
// offset. Markers and aborted records after the last copied record are no
// lag.
type PartitionLag struct {
	Partition offsets.SourcePartition `json:"partition"`
	// Next is the next source offset MM2 will read: M+1 from its Connect
	// offset, or where the plan starts it when it has stored none.
	Next int64 `json:"next"`
	// End is the source partition's high watermark.
	End int64 `json:"end"`
	// StableEnd is the last stable offset: the end a read_committed
	// consumer such as MM2 can read to.
	StableEnd int64 `json:"stable_end"`
	// Pending is the offset of the first committed data record at or after
	// Next, the next record MM2 will copy; meaningful only when Lag > 0.
	Pending int64 `json:"pending,omitempty"`
	// Lag is StableEnd - Pending: 0 when no committed data record lies
	// between Next and StableEnd.
	Lag int64 `json:"lag"`
}

// NextOffsets returns, per partition the plan does not block, the next
// source offset MM2 reads: M+1 from the connector's current offsets got, or
// the plan's starting point (M+1 of the plan, or the log start for a cleared
// partition) while MM2 has stored nothing past it. It is pure.
func NextOffsets(p *plan.Plan, got []offsets.ConnectOffset) map[offsets.SourcePartition]int64 {
	stored := make(map[offsets.ConnectPartition]int64, len(got))
	for _, o := range got {
		if m, ok := o.Offset.Get(); ok {
			stored[o.Partition] = m
		}
	}
	out := make(map[offsets.SourcePartition]int64, len(p.Entries))
	for _, e := range p.Entries {
		if e.Action == offsets.ActionBlock {
			continue
		}
		next := startOf(e)
		if m, ok := stored[e.Partition.Connect(p.SourceAlias)]; ok && m+1 > next {
			next = m + 1
		}
		out[e.Partition] = next
	}
	return out
}

// Lag computes the lag of every partition of next (see [PartitionLag]) from
// the source's bounds and pending, the offset of the first committed data
// record at or after each partition's next offset (absent when there is
// none before the last stable offset). It is pure; the result is in plan
// order when next came from [NextOffsets] of that plan.
func Lag(p *plan.Plan, next map[offsets.SourcePartition]int64, bounds map[offsets.SourcePartition]offsets.LogBounds, pending map[offsets.SourcePartition]int64) []PartitionLag {
	var out []PartitionLag
	for _, e := range p.Entries {
		n, ok := next[e.Partition]
		if !ok {
			continue
		}
		b := bounds[e.Partition]
		l := PartitionLag{Partition: e.Partition, Next: n, End: b.End, StableEnd: b.StableEnd}
		if at, ok := pending[e.Partition]; ok && at < b.StableEnd {
			l.Pending, l.Lag = at, b.StableEnd-at
		}
		out = append(out, l)
	}
	return out
}

// TotalLag sums the lag of every partition.
func TotalLag(lags []PartitionLag) int64 {
	var n int64
	for _, l := range lags {
		n += l.Lag
	}
	return n
}

// startOf returns the first source offset MM2 replicates for an entry:
// M+1 for a set entry, the log start for a cleared one (C = 0, so
// auto.offset.reset=earliest starts at the log start).
func startOf(e plan.Entry) int64 {
	if m, ok := e.Offset.Get(); ok {
		return m + 1
	}
	return e.Bounds.Start
}

// ReadLag reads the connector's offsets, the source's bounds, and, for the
// partitions whose next offset is below the last stable offset, the first
// committed record MM2 has yet to copy (one batched Fetch per leader), and
// returns the lag of every partition of the plan in plan order.
func ReadLag(ctx context.Context, c MirrorOffsetsReader, source LagSource, p *plan.Plan, connector string) ([]PartitionLag, error) {
	got, err := c.MirrorOffsets(ctx, connector)
	if err != nil {
		return nil, err
	}
	return LagOf(ctx, source, p, got)
}

// LagOf is ReadLag for connector offsets already read (got): it reads only
// the source.
func LagOf(ctx context.Context, source LagSource, p *plan.Plan, got []offsets.ConnectOffset) ([]PartitionLag, error) {
	next := NextOffsets(p, got)
	tps := make([]kafkaadmin.TopicPartition, 0, len(next))
	for tp := range next {
		tps = append(tps, tp)
	}
	bounds, err := source.LogBounds(ctx, tps)
	if err != nil {
		return nil, err
	}
	pending, err := firstPending(ctx, source, next, bounds)
	if err != nil {
		return nil, err
	}
	return Lag(p, next, bounds, pending), nil
}

// firstPending reads, for each partition whose next offset is below its last
// stable offset, the offset of the first committed data record at or after
// it.
func firstPending(ctx context.Context, source FirstRecordReader, next map[offsets.SourcePartition]int64, bounds map[offsets.SourcePartition]offsets.LogBounds) (map[offsets.SourcePartition]int64, error) {
	from := make(map[kafkaadmin.TopicPartition]int64)
	for tp, n := range next {
		if n < bounds[tp].StableEnd {
			from[tp] = max(n, bounds[tp].Start)
		}
	}
	out := make(map[offsets.SourcePartition]int64, len(from))
	if len(from) == 0 {
		return out, nil
	}
	recs, err := source.FirstRecords(ctx, from, kafkaadmin.ReadCommitted)
	if err != nil {
		return nil, fmt.Errorf("read the next records MM2 copies: %w", err)
	}
	for tp, r := range recs {
		out[tp] = r.Offset
	}
	return out, nil
}

// LagSample is the total lag at one moment.
type LagSample struct {
	At    time.Time `json:"at"`
	Total int64     `json:"total"`
}

// CatchUp is what WaitCaughtUp observed.
type CatchUp struct {
	// Samples is the total lag at each reading, first to last.
	Samples []LagSample `json:"samples"`
	// Last is the per-partition lag of the last reading.
	Last []PartitionLag `json:"-"`
	// Reached is true when MM2 had copied, on every partition, every
	// committed record the source held at the first reading.
	Reached bool `json:"reached"`
}

// caughtUp reports whether MM2 has copied every committed record below goal
// on every partition: the next record it has yet to copy, if any, is at or
// beyond the goal (the last stable offset of the first reading).
func caughtUp(lags []PartitionLag, goal map[offsets.SourcePartition]int64) bool {
	return behind(lags, goal) == 0
}

// behind counts the partitions caughtUp still waits for.
func behind(lags []PartitionLag, goal map[offsets.SourcePartition]int64) int {
	n := 0
	for _, l := range lags {
		if l.Lag > 0 && l.Pending < goal[l.Partition] {
			n++
		}
	}
	return n
}

// leftToGoal is how far MM2 still is from the goal caughtUp waits for, in
// offsets, summed over the partitions behind it: what the estimate of the
// time left is measured in.
func leftToGoal(lags []PartitionLag, goal map[offsets.SourcePartition]int64) int64 {
	var n int64
	for _, l := range lags {
		if l.Lag > 0 && l.Pending < goal[l.Partition] {
			n += goal[l.Partition] - l.Pending
		}
	}
	return n
}

// WaitCaughtUp reads the lag until MM2 has copied, on every partition of the
// plan, every committed record the source held at the first reading — the
// first record it has yet to copy lies at or beyond that reading's last
// stable offset — or ctx ends. Under continuing traffic the lag then only
// counts records produced since, so the samples show it converging; with
// no traffic it reaches 0, transaction markers included. Connect stores
// offsets every offset.flush.interval.ms, so a wait takes at least that
// long. It reads at once, then backs off from 100 ms to 1 s between reads.
// While it waits it logs the lag on log, at most every few seconds; log may
// be nil. On timeout it returns what it saw and an error wrapping the
// context's.
func WaitCaughtUp(ctx context.Context, c MirrorOffsetsReader, source LagSource, p *plan.Plan, connector string, log *slog.Logger) (CatchUp, error) {
	var res CatchUp
	var goal map[offsets.SourcePartition]int64
	wait := newPoll(100*time.Millisecond, time.Second)
	rep := progress.Start(log, fmt.Sprintf("connector %s to copy what the source held when it resumed", connector))
	for {
		lags, err := ReadLag(ctx, c, source, p, connector)
		if err != nil {
			return res, err
		}
		res.Last = lags
		res.Samples = append(res.Samples, LagSample{At: time.Now(), Total: TotalLag(lags)})
		if goal == nil {
			goal = make(map[offsets.SourcePartition]int64, len(lags))
			for _, l := range lags {
				goal[l.Partition] = l.StableEnd
			}
		}
		if res.Reached = caughtUp(lags, goal); res.Reached {
			return res, nil
		}
		rep.ReportLeft(ctx, leftToGoal(lags, goal), "lag", res.Samples[len(res.Samples)-1].Total, "partitions_behind", behind(lags, goal), "of", len(lags))
		if err := wait.next(ctx); err != nil {
			return res, fmt.Errorf("connector %s has not caught up (lag %d): %w", connector, res.Samples[len(res.Samples)-1].Total, err)
		}
	}
}

// poll paces a waiting loop: each wait doubles, from first up to most.
type poll struct {
	d, most time.Duration
}

func newPoll(first, most time.Duration) *poll { return &poll{d: first, most: most} }

// next waits for the current interval, or until ctx ends, and doubles the
// interval for the following call.
func (p *poll) next(ctx context.Context) error {
	err := sleep(ctx, p.d)
	p.d = min(2*p.d, p.most)
	return err
}

// Progress is how MirrorMaker 2 moved between two readings of its lag,
// each summarised by the sum of its next offsets over the plan's
// partitions ([PartitionLag.Next]) and its total lag ([TotalLag]).
type Progress struct {
	// Moved is how far the next offsets moved: the records MM2 copied,
	// and transaction markers it passed.
	Moved int64
	// Advancing is true when they moved forward.
	Advancing bool
	// Stalled is true when there was lag at both readings and the next
	// offsets did not move: MM2 is not copying, which a connector and tasks
	// RUNNING (and Kubernetes' readiness) do not show.
	Stalled bool
}

// ProgressOf compares two readings (the earlier one first). ok is false
// when the earlier one has no next offsets to compare with (prevNext 0:
// nothing read yet). It is pure.
func ProgressOf(prevNext, prevLag, next, lag int64) (p Progress, ok bool) {
	if prevNext <= 0 {
		return Progress{}, false
	}
	p.Moved = next - prevNext
	p.Advancing = p.Moved > 0
	p.Stalled = !p.Advancing && lag > 0 && prevLag > 0
	return p, true
}
