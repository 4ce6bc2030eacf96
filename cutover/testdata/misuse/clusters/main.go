// Probe 3: the clusters filled by hand from the plan. A Reached is made
// only by reading the clients, so this does not compile.
package main

import (
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

func main() {
	var p *plan.Plan
	_ = verify.Reached{Source: p.SourceClusterID, Target: p.TargetClusterID}
}
