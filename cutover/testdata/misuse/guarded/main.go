// Probe 1 again: a guard's proof forged with the decision wanted. Its
// fields are unexported, so this does not compile.
package main

import (
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

func main() {
	var p *plan.Plan
	_ = verify.Guarded{plan: p, action: plan.GuardApply}
}
