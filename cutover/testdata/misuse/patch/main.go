// Probe 1: a PATCH without the guard. Patch takes the guard's proof, not
// the plan, so this does not compile.
package main

import (
	"context"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/cutover"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

func main() {
	var (
		c       *connect.Client
		p       *plan.Plan
		reached verify.Reached
	)
	_, _ = cutover.Patch(context.Background(), c, p, reached)
}
