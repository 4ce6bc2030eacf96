package verify_test

import (
	"errors"
	"fmt"

	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/verify"
)

func offset(topic string, partition int32, m int64) offsets.ConnectOffset {
	return offsets.ConnectOffset{
		Partition: offsets.ConnectPartition{Cluster: "source", Topic: topic, Partition: partition},
		Offset:    offsets.NewMirrorOffset(m),
	}
}

// Connect's GET /connectors/{name}/offsets lists entries in any order and
// is eventually consistent: compare as sets, and only 100% equal passes.
func ExampleCompareReadBack() {
	want := []offsets.ConnectOffset{offset("orders", 0, 41), offset("orders", 1, 9)}
	got := []offsets.ConnectOffset{offset("orders", 1, 9)}
	rb := verify.CompareReadBack(want, got)
	fmt.Println(rb.OK())
	fmt.Println(rb)
	// Output:
	// false
	// 1 match, 0 wrong value, 1 missing, 0 unexpected
	//   source/orders-0: missing (want 41, got null)
}

// Before applying a plan, the connector's existing offsets decide: none (or
// some of the plan's own) means apply, exactly the plan's means already
// applied, anything else means the connector ran or another plan was applied.
func ExampleGuard() {
	want := []offsets.ConnectOffset{offset("orders", 0, 41)}
	for _, existing := range [][]offsets.ConnectOffset{
		nil,
		{offset("orders", 0, 41)},
		{offset("orders", 0, 977)}, // MM2 ran and moved on
	} {
		action, err := verify.Guard(want, existing)
		if errors.Is(err, verify.ErrStaleOffsets) {
			fmt.Println("refused: stale offsets")
			continue
		}
		fmt.Println(action)
	}
	// Output:
	// apply
	// already-applied
	// refused: stale offsets
}
