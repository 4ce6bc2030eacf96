package verify

import (
	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// The proofs of this package are values that only its reads make: their
// fields are unexported, so a tool cannot fill one by hand, and the steps
// that write (package cutover) take them as arguments, so that a write
// cannot be called before the read that proves it safe. A zero proof is
// refused at run time with ErrNoProof.

// ErrNoProof matches a write given a proof that no read of this package
// made (a zero value): nothing was written.
var ErrNoProof = errkind.New(errkind.Refused, "verify: no proof: the read that proves the step safe did not run")

// Reached proves which Kafka clusters a step's clients reach: their
// cluster IDs, as read from the clients by [ReadClusters] or [Prepare],
// never passed in. Every write compares them with the plan's
// (ConfirmConnector), so a plan built on other clusters is never written.
type Reached struct {
	source, target string
}

// Source is the source cluster's ID as read.
func (r Reached) Source() string { return r.source }

// Target is the target cluster's ID as read.
func (r Reached) Target() string { return r.target }

// Clusters returns the IDs as the pure checks take them.
func (r Reached) Clusters() Clusters { return Clusters{Source: r.source, Target: r.target} }

// Proven reports whether a read made r.
func (r Reached) Proven() bool { return r.source != "" && r.target != "" }

// Guarded is the proof of steps 4 and 5 of an apply ([GuardOffsets]): what
// the plan's connector held (the backup a tool records before it writes)
// and what the guard decided. The PATCH of package cutover takes it, and
// sends nothing unless the guard said plan.GuardApply.
type Guarded struct {
	plan   *plan.Plan
	backup []offsets.ConnectOffset
	action plan.GuardAction
}

// Plan is the plan the guard compared the offsets with.
func (g Guarded) Plan() *plan.Plan { return g.plan }

// Backup is what the connector held when the guard read it.
func (g Guarded) Backup() []offsets.ConnectOffset { return g.backup }

// Action is what the guard decided: plan.GuardApply, or
// plan.GuardAlreadyApplied (nothing to write).
func (g Guarded) Action() plan.GuardAction { return g.action }

// Resumable is the proof of [CheckResumable]: the plan's connector, on
// the plan's clusters, STOPPED with no tasks, holding exactly the plan's
// offsets. The resume of package cutover takes it.
type Resumable struct {
	plan *plan.Plan
}

// Plan is the plan whose connector is resumable.
func (r Resumable) Plan() *plan.Plan { return r.plan }

// NeverRan is the proof of [CheckNeverRan]: the plan's connector is
// STOPPED and holds no offsets but the plan's, so removing it and its
// offsets undoes the apply. The rollback before resume of package cutover
// takes it.
type NeverRan struct {
	plan    *plan.Plan
	offsets []offsets.ConnectOffset
}

// Plan is the plan whose connector never ran.
func (n NeverRan) Plan() *plan.Plan { return n.plan }

// Offsets is what the connector held, for the record.
func (n NeverRan) Offsets() []offsets.ConnectOffset { return n.offsets }

// Reverse is a rollback's reverse plan ([ReversePlan]): per partition C' =
// M'+1 for the old job's group, built from the forward plan's stopped
// connector. It is a type of its own, not a *plan.Plan, so that the
// forward and reverse plans cannot change places in a call.
type Reverse struct {
	forward, reverse *plan.Plan
}

// Plan is the reverse plan: its entries' group offsets are C'.
func (r *Reverse) Plan() *plan.Plan { return r.reverse }

// Forward is the plan the connector was applied with.
func (r *Reverse) Forward() *plan.Plan { return r.forward }
