package flinksavepoint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mm2cutover/mm2cutover/offsets"
)

// Gap is one partition where a group's committed offset C and a savepoint's
// position S differ.
type Gap struct {
	Partition offsets.SourcePartition
	Group     offsets.GroupOffset // absent when the group has no commit
	Savepoint int64               // S; -1 when the savepoint has no position
	Detail    string              // why it is a gap, for a person
}

// Records is S - C: how many records lie between the two positions.
func (g Gap) Records() int64 {
	c, ok := g.Group.Get()
	if !ok || g.Savepoint < 0 {
		return 0
	}
	return g.Savepoint - c
}

// Comparison is how a consumer group's committed offsets stand against a
// KafkaSource's positions in a savepoint, per partition in scope: what the
// design requires of the group offsets a cutover starts from ("consistent
// with the final savepoint; ahead of it or of unknown origin: stop").
type Comparison struct {
	// Equal counts the partitions where C = S, or where neither has a
	// position.
	Equal int
	// Behind lists the partitions where C < S: the group missed the last
	// commit(s); a cutover from the group copies S - C records again.
	Behind []Gap
	// Ahead lists the partitions where C > S: the group moved past the
	// savepoint (the job ran on after it, or this is not its last
	// savepoint).
	Ahead []Gap
	// Missing lists the partitions where the savepoint has a position and
	// the group no commit.
	Missing []Gap
	// Unknown lists the partitions where the group has a commit the
	// savepoint cannot vouch for: the source holds no split of it, or its
	// split has not read a record and would not start from the group's
	// commit (an earliest or latest marker).
	Unknown []Gap
}

// Compare compares the group's committed offsets with the source's positions
// on every partition in scope. A split that has not read a record and starts
// from the committed offset (CommittedOffset) agrees with whatever the group
// holds: restored, Flink would start there too. The gaps are sorted by
// partition. It is pure.
func Compare(group offsets.GroupOffsets, src *Source, scope []offsets.SourcePartition) Comparison {
	var c Comparison
	scope = slices.Clone(scope)
	slices.SortFunc(scope, offsets.SourcePartition.Compare)
	scope = slices.Compact(scope)
	for _, p := range scope {
		g := group.Lookup(p)
		have, hasC := g.Get()
		s, ok := src.Split(p)
		gap := Gap{Partition: p, Group: g, Savepoint: -1}
		switch {
		case !ok && !hasC:
			c.Equal++
		case !ok:
			gap.Detail = "the source holds no split of this partition"
			c.Unknown = append(c.Unknown, gap)
		case s.StartingOffset >= 0:
			gap.Savepoint = s.StartingOffset
			switch {
			case !hasC:
				gap.Detail = "the group has no commit"
				c.Missing = append(c.Missing, gap)
			case have < s.StartingOffset:
				c.Behind = append(c.Behind, gap)
			case have > s.StartingOffset:
				c.Ahead = append(c.Ahead, gap)
			default:
				c.Equal++
			}
		case !hasC || s.StartingOffset == CommittedOffset:
			c.Equal++
		default:
			gap.Detail = "the split has read no record and starts at the " + s.Marker() + " offset, not the group's commit"
			c.Unknown = append(c.Unknown, gap)
		}
	}
	return c
}

// Duplicates returns the records a cutover from the group would copy again:
// the sum of S - C over the partitions behind.
func (c Comparison) Duplicates() int64 {
	var n int64
	for _, g := range c.Behind {
		n += g.Records()
	}
	return n
}

// Consistent reports whether a cutover may start from the group: no
// partition ahead of the savepoint, none missing from the group, none of
// unknown origin. Partitions behind are consistent (they cost duplicates,
// never loss).
func (c Comparison) Consistent() bool {
	return len(c.Ahead)+len(c.Missing)+len(c.Unknown) == 0
}

// String lists the differences for a person, at most n partitions of each
// kind.
func (c Comparison) String() string { return c.Summary(5) }

// Summary lists the differences, at most n partitions of each kind.
func (c Comparison) Summary(n int) string {
	var parts []string
	list := func(what string, gaps []Gap, each func(Gap) string) {
		if len(gaps) == 0 {
			return
		}
		items := make([]string, 0, min(len(gaps), n))
		for i, g := range gaps {
			if i == n {
				items = append(items, fmt.Sprintf("and %d more", len(gaps)-n))
				break
			}
			items = append(items, g.Partition.String()+" ("+each(g)+")")
		}
		parts = append(parts, fmt.Sprintf("%d %s: %s", len(gaps), what, strings.Join(items, ", ")))
	}
	list("behind the savepoint", c.Behind, func(g Gap) string {
		return fmt.Sprintf("group %s, savepoint %d: %d records", g.Group, g.Savepoint, g.Records())
	})
	list("ahead of the savepoint", c.Ahead, func(g Gap) string { return fmt.Sprintf("group %s, savepoint %d", g.Group, g.Savepoint) })
	list("missing from the group", c.Missing, func(g Gap) string { return fmt.Sprintf("savepoint %d", g.Savepoint) })
	list("of unknown origin", c.Unknown, func(g Gap) string { return fmt.Sprintf("group %s: %s", g.Group, g.Detail) })
	if len(parts) == 0 {
		return fmt.Sprintf("%d partitions equal", c.Equal)
	}
	return strings.Join(parts, "; ")
}
