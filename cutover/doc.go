// Package cutover runs the steps of a cutover that write — apply, resume,
// verify after resume, rollback — each in the order that keeps it safe.
//
// It is the package a migration tool imports first. Open takes the
// clients (the Connect cluster, the source and target Kafka clusters), a
// plan (package plan) and the connector configuration the plan was built
// for; it validates the plan and reads the clusters' IDs itself, so a plan
// built on other clusters is refused before anything else. Then one call
// per step:
//
//	c, err := cutover.Open(ctx, cutover.Clients{Connect: cc, Source: src, Target: tgt}, p, config, opts)
//	applied, err := c.Apply(ctx)        // steps 3-7: create STOPPED, back up, guard, PATCH, read back
//	resumed, err := c.Resume(ctx)       // step 8, once Options.Approve says yes
//	report, err := c.Verify(ctx, nil)   // step 9: RUNNING, caught up, first record = record at C
//	rolled, err := c.Rollback(ctx, grp) // step 10, in the connector's phase
//
// Each step rechecks the plan against the clusters before it writes
// (verify.Prepare), proves right before each write that the connector is
// the plan's (verify.ConfirmConnector: another flow's connector of the same
// name is never written), and never writes over offsets the plan did not
// set. A step run again after an error finds what its first run wrote:
// apply finds the plan applied, resume refuses a connector that runs.
//
// Two hooks give a tool its record and its approval. Options.Record is
// called before each write with what it is about to send, and with each
// fact read and each refusal; its error stops the step before the write.
// Options.Approve is asked before a resume's and a rollback's writes; with
// none, they only say what they would do (ErrNotApproved, an
// errkind.NotApproved). The waits are bounded by default
// (DefaultReadBackTimeout, DefaultRunningTimeout, DefaultCatchUpTimeout).
//
// # The pieces
//
// For a tool that composes the steps itself, each write is also a
// function: CreateOrAdopt, Patch, Resume, RemoveConnector, StopForRollback
// and CommitReverse. Each takes a proof that only the read before it in
// package verify makes — verify.Reached (the clusters, read),
// verify.Guarded (the guard of the offsets), verify.Resumable,
// verify.NeverRan, *verify.Reverse (a reverse plan, a type apart from a
// forward *plan.Plan) — so a PATCH without its guard, a resume without its
// check, clusters filled by hand or the two plans of a rollback swapped do
// not compile, and a zero proof is refused at run time
// (verify.ErrNoProof). The raw writes of connect.Client remain an escape
// hatch with none of these guards.
//
// # Why a package of its own
//
// The small packages (offsets, plan, connect, kafkaadmin, verify) hold
// the rules and the reads, and stay usable alone. But the safety of a
// cutover is also the order of its calls, which free functions can only
// document: this package owns that order, the way kadm's Lag sits beside
// the pure CalculateGroupLag. verify reads and proves; cutover writes.
//
// Errors are classified by package errkind: errkind.Of(err) says whether a
// step is worth running again, refused, failed a check, had its settings
// rejected, or may have written (errkind.OutcomeUnknown: run it again; its
// guard finds the write done, or does it).
package cutover
