package verify_test

import (
	"fmt"

	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/verify"
)

// report says how a step ended, as a tool's exit status would: the kind
// of its error (verify.Classify), and whether running it again may help.
func report(err error) {
	switch kind := errkind.Of(err); {
	case kind == errkind.None:
		fmt.Println("done")
	case kind.Retryable():
		fmt.Printf("%s, run it again: %v\n", kind, err)
	default:
		fmt.Printf("%s: %v\n", kind, err)
	}
}

// audit is a tool's record of the change; here it prints.
func audit(step string, detail any) { fmt.Println("audit:", step, detail) }

// kafka is what the steps read and write on a cluster: a
// *kafkaadmin.Client, or, in the examples, a cluster in memory.
type kafka interface {
	verify.ClusterReader
	verify.GroupCommitter
	verify.FirstRecordReader
	verify.BoundsReader
}

var _ kafka = (*kafkaadmin.Client)(nil)
