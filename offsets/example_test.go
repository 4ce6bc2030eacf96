package offsets_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mm2cutover/mm2cutover/offsets"
)

func ExampleDecide() {
	p := offsets.SourcePartition{Topic: "orders", Partition: 3}
	bounds := offsets.LogBounds{Start: 0, End: 1000}

	d := offsets.Decide(p, offsets.NewGroupOffset(42), bounds)
	fmt.Println(d.Action, d.Offset, "-", d.Reason())

	d = offsets.Decide(p, offsets.NewGroupOffset(0), bounds)
	fmt.Println(d.Action, d.Offset, "-", d.Reason())

	d = offsets.Decide(p, offsets.GroupOffset{}, bounds)
	fmt.Println(d.Action, errors.Is(d.Err, offsets.ErrMissing), "-", d.Err)
	// Output:
	// set 41 - MM2 resumes at committed offset 42
	// clear null - committed offset 0: no connect offset; auto.offset.reset=earliest reads from 0
	// block true - offsets: orders-3: no committed offset
}

func ExampleDecideAcceptingLoss() {
	p := offsets.SourcePartition{Topic: "orders", Partition: 3}
	bounds := offsets.LogBounds{Start: 500, End: 1000} // retention deleted 0..499

	d := offsets.Decide(p, offsets.NewGroupOffset(420), bounds)
	fmt.Println(d.Action, errors.Is(d.Err, offsets.ErrExpired))

	d = offsets.DecideAcceptingLoss(p, offsets.NewGroupOffset(420), bounds)
	fmt.Println(d.Action, d.Offset, d.Lost)
	// Output:
	// block true
	// set 499 80
}

func ExampleMirrorOffset_GroupOffset() {
	// After MM2 ran, its Connect offset for a partition is 1041: the last
	// record it copied. A consumer taking over resumes at 1042.
	c, err := offsets.NewMirrorOffset(1041).GroupOffset()
	fmt.Println(c, err)

	// A null Connect offset is no position at all.
	c, err = offsets.MirrorOffset{}.GroupOffset()
	fmt.Println(c.Present(), err)
	// Output:
	// 1042 <nil>
	// false <nil>
}

func ExampleReverse() {
	body := []byte(`{"offsets":[
		{"partition":{"cluster":"source","topic":"orders","partition":0},"offset":{"offset":41}},
		{"partition":{"cluster":"source","topic":"orders","partition":1},"offset":{"offset":9}}]}`)
	list, err := offsets.ParseConnectOffsets(body)
	if err != nil {
		fmt.Println(err)
		return
	}
	group, err := offsets.Reverse("source", list)
	fmt.Println(group, err)

	_, err = offsets.Reverse("primary", list)
	fmt.Println(err)
	// Output:
	// map[orders-0:42 orders-1:10] <nil>
	// offsets: connect partition source/orders-0: source cluster alias mismatch: want "primary"
}

func ExampleConnectOffset() {
	p := offsets.SourcePartition{Topic: "orders", Partition: 3}
	d := offsets.Decide(p, offsets.NewGroupOffset(42), offsets.LogBounds{End: 100})
	entry, ok := d.ConnectOffset("source")
	body, _ := json.Marshal(offsets.ConnectOffsetList{Offsets: []offsets.ConnectOffset{entry}})
	fmt.Println(ok, string(body))
	// Output:
	// true {"offsets":[{"partition":{"cluster":"source","topic":"orders","partition":3},"offset":{"offset":41}}]}
}
