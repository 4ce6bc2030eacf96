package cutover

import (
	"errors"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// Exit statuses of the example binaries.
const (
	ExitOK          = 0 // done
	ExitError       = 1 // an error worth a retry: a timeout, an unreachable system
	ExitUsage       = 2 // bad flags or settings
	ExitCheckFailed = 3 // a check ran and failed: precheck, blocked plan, read-back, verification
	ExitRefused     = 4 // a guard refused: stale plan, connector not STOPPED, other clusters, other commits
	ExitNotApproved = 5 // resume or rollback not approved: only said what it would do
)

// ErrCheckFailed marks a verification that ran and did not pass.
var ErrCheckFailed = errors.New("verification failed")

// ExitStatus maps the error of a step to the exit status of the binaries.
func ExitStatus(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, ErrNotApproved):
		return ExitNotApproved
	case errors.Is(err, ErrSettings), errors.Is(err, offsets.ErrAliasMismatch):
		return ExitUsage
	case errors.Is(err, plan.ErrStaleOffsets), errors.Is(err, verify.ErrStalePlan), errors.Is(err, ErrPlanMismatch), errors.Is(err, verify.ErrGroupOffsets), errors.Is(err, plan.ErrConfigChanged),
		errors.Is(err, ErrHasRun), errors.Is(err, ErrNotApplied), errors.Is(err, connect.ErrNotStopped),
		errors.Is(err, kafkaadmin.ErrGroupActive), errors.Is(err, plan.ErrInvalid):
		return ExitRefused
	case errors.Is(err, ErrPrecheck), errors.Is(err, plan.ErrBlocked), errors.Is(err, connect.ErrReadBack),
		errors.Is(err, ErrCheckFailed):
		return ExitCheckFailed
	}
	return ExitError
}
