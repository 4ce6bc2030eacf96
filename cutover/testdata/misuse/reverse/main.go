// Probe 4: the forward and reverse plans swapped. The reverse plan is a
// *verify.Reverse, not a *plan.Plan, so this does not compile.
package main

import (
	"context"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/cutover"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

func main() {
	var (
		c       *connect.Client
		src     *kafkaadmin.Client
		forward *plan.Plan
		reverse *verify.Reverse
		reached verify.Reached
	)
	_, _ = cutover.CommitReverse(context.Background(), c, src, forward, reached)
	_ = reverse
}
