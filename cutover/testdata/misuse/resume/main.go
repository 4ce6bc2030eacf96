// Probe 2: a resume without CheckResumable. Resume takes its proof, not
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
	_ = cutover.Resume(context.Background(), c, p, reached)
}
