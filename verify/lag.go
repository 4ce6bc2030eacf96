package verify

import (
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// PartitionLag is how far MM2 is behind on one source partition.
type PartitionLag struct {
	Partition offsets.SourcePartition
	// Next is the next source offset MM2 will replicate: M+1 from its
	// Connect offset, or where the plan starts it when it has stored none.
	Next int64
	// End is the source partition's end offset (high watermark).
	End int64
	// Lag is End - Next, never below 0.
	Lag int64
}

// Lag computes, per partition of the plan, the source end minus the next
// offset MM2 will replicate. ends holds the source end offsets; got the
// connector's current offsets. Partitions the plan blocks are skipped.
func Lag(p *plan.Plan, ends map[offsets.SourcePartition]int64, got []offsets.ConnectOffset) []PartitionLag {
	stored := make(map[offsets.ConnectPartition]int64, len(got))
	for _, o := range got {
		if m, ok := o.Offset.Get(); ok {
			stored[o.Partition] = m
		}
	}
	var out []PartitionLag
	for _, e := range p.Entries {
		if e.Action == offsets.ActionBlock {
			continue
		}
		next := startOf(e)
		if m, ok := stored[e.Partition.Connect(p.SourceAlias)]; ok && m+1 > next {
			next = m + 1
		}
		end := ends[e.Partition]
		l := PartitionLag{Partition: e.Partition, Next: next, End: end, Lag: max(end-next, 0)}
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
