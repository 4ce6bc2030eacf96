package verify

import (
	"fmt"
	"strings"

	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// ErrGroupOffsets matches a *GroupOffsetsError.
var ErrGroupOffsets = errkind.New(errkind.Refused, "verify: the rollback group holds other offsets")

// GroupOffsetsError is the refusal of CheckRollbackGroup: the group holds
// commits that are neither the old job's nor the reverse plan's, listed
// "orders-3 at 120". Writing C' over them would move someone else's
// position.
type GroupOffsetsError struct {
	Group string
	Stale []string
}

func (e *GroupOffsetsError) Error() string {
	return fmt.Sprintf("verify: group %s has commits that are neither the old job's nor the reverse plan's: %s", e.Group, strings.Join(e.Stale, ", "))
}

// Is makes errors.Is(err, ErrGroupOffsets) true.
func (e *GroupOffsetsError) Is(target error) bool { return target == ErrGroupOffsets }

// ErrorKind is errkind.Refused.
func (e *GroupOffsetsError) ErrorKind() errkind.Kind { return errkind.Refused }

// CheckRollbackGroup decides whether a rollback after resume may commit the
// reverse plan's offsets C' = M'+1 to group, whose current commits for the
// forward plan's partitions are current. Each commit must be absent, the
// reverse plan's C' (a retried rollback; reverse may be nil before C' is
// known), or — when group is the forward plan's group — the forward plan's
// C (the old job's commit, untouched since). For a forward plan from a Flink
// savepoint, whose C are the savepoint's positions, the old job's commit is
// any at or below C (Flink's last commit may have been lost). Anything else
// is a *GroupOffsetsError and nothing may be written. It is pure.
func CheckRollbackGroup(forward *plan.Plan, group string, current, reverse offsets.GroupOffsets) error {
	var stale []string
	for _, e := range forward.Entries {
		have, ok := current[e.Partition]
		if !ok {
			continue
		}
		if cPrime, known := reverse[e.Partition]; known && have == cPrime {
			continue
		}
		if c, ok := e.GroupOffset.Get(); ok && group == forward.GroupID && (c == have || (forward.OffsetsFrom.Kind == plan.FromFlinkSavepoint && have <= c)) {
			continue
		}
		stale = append(stale, fmt.Sprintf("%s at %d", e.Partition, have))
	}
	if len(stale) > 0 {
		return &GroupOffsetsError{Group: group, Stale: stale}
	}
	return nil
}
