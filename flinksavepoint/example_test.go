package flinksavepoint_test

import (
	"fmt"

	"github.com/mm2cutover/mm2cutover/flinksavepoint"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// The positions of a KafkaSource in a savepoint real Flink 2.2 wrote with
// `flink stop`, and how a group that missed Flink's last commit stands
// against them.
func Example() {
	sp, err := flinksavepoint.Open("testdata/flink-2.2")
	if err != nil {
		panic(err)
	}
	src, err := sp.KafkaSource("kafka-source")
	if err != nil {
		panic(err)
	}
	fmt.Printf("metadata version %d, stop-with-savepoint %v, operator %s\n", sp.Version, sp.Properties.Stopped(), src.Operator.ID)
	positions := src.Positions()
	unread := src.Unread()
	fmt.Printf("%d splits, %d with a position, %d unread (starts at the %s offset)\n", len(src.Splits), len(positions), len(unread), unread[0].Marker())

	group := offsets.GroupOffsets{}
	var scope []offsets.SourcePartition
	for p, c := range positions {
		group[p] = c - 3 // the group missed the last commit of 3 records per partition
		scope = append(scope, p)
	}
	c := flinksavepoint.Compare(group, src, scope)
	fmt.Printf("consistent %v, %d partitions behind, %d records to copy again from the group, none from the savepoint\n", c.Consistent(), len(c.Behind), c.Duplicates())
	// Output:
	// metadata version 6, stop-with-savepoint true, operator 61252f73469d3ffba207c548d29a0267
	// 4 splits, 3 with a position, 1 unread (starts at the committed offset)
	// consistent true, 3 partitions behind, 9 records to copy again from the group, none from the savepoint
}
