package verify

import (
	"errors"
	"strings"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/flinkrest"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// Kind is what an error of a cutover step means for the caller: whether a
// guard refused, a check failed, a system rejected the settings, the
// outcome of a write is unknown, or it is worth a retry. [Classify] gives
// it for any error the packages of this module return; a tool's exit
// statuses, a Job's result and a retry loop are tables over it.
type Kind int

const (
	// KindNone is the kind of a nil error.
	KindNone Kind = iota
	// KindRetry: nothing says the same call fails again — a timeout, an
	// unreachable system, a transient refusal the client's retries did not
	// outlast, a connector still settling, a read-back that never read.
	// Nothing was written that a retry would not find (every step guards
	// against its own earlier writes). Every error no other kind claims.
	KindRetry
	// KindOutcomeUnknown: a write may have happened — a PATCH answered 500
	// "Request timed out", or no answer within the request timeout
	// (connect.ErrOutcomeUnknown). Read the state back before deciding;
	// running the same step again is safe: its guard finds the write done,
	// or does it.
	KindOutcomeUnknown
	// KindRefused: a guard refused, and wrote nothing: a stale plan, a
	// connector that is not the plan's or not STOPPED, offsets the plan did
	// not set, a group with members or other commits, an invalid plan. The
	// same call is refused again until someone changes the state.
	KindRefused
	// KindCheckFailed: a check ran and failed: the precheck, a blocked
	// plan, a read-back that read other offsets, a connector FAILED after
	// resume, a verification.
	KindCheckFailed
	// KindRejected: a system rejected the settings at the first contact,
	// and no retry can help: credentials refused (a broker, 401 or 403 from
	// the Connect REST API), a certificate that does not verify, a security
	// protocol the listener does not speak, a source alias that is not the
	// plan's, a REST endpoint that redirects (connect.ErrRedirect,
	// flinkrest.ErrRedirect: nothing is sent where it points). Fix the
	// settings or the secrets.
	KindRejected
)

// String names the kind as a tool's JSON output does: "retry",
// "outcome-unknown", "refused", "check-failed", "rejected" ("" for
// KindNone).
func (k Kind) String() string {
	switch k {
	case KindRetry:
		return "retry"
	case KindOutcomeUnknown:
		return "outcome-unknown"
	case KindRefused:
		return "refused"
	case KindCheckFailed:
		return "check-failed"
	case KindRejected:
		return "rejected"
	}
	return ""
}

// Retryable reports whether running the same step again may succeed
// without a change of settings or state: KindRetry and KindOutcomeUnknown.
func (k Kind) Retryable() bool { return k == KindRetry || k == KindOutcomeUnknown }

// ErrCheckFailed matches a check of this package that ran and did not pass
// where no more specific error says so (a group whose offsets read back
// other than committed). Classify gives KindCheckFailed.
var ErrCheckFailed = errors.New("verify: check failed")

// words is the text of err without this package's prefix, for a typed error
// that writes it after its own "verify: ".
func words(err error) string { return strings.TrimPrefix(err.Error(), "verify: ") }

// kindTarget is the errors.Is target of a Kind (see Mark).
type kindTarget Kind

func (k kindTarget) Error() string { return Kind(k).String() }

// marked is an error of Mark.
type marked struct {
	kind Kind
	text string
}

func (e *marked) Error() string { return e.text }

func (e *marked) Is(target error) bool { t, ok := target.(kindTarget); return ok && Kind(t) == e.kind }

// Mark returns a new sentinel error with the message text that Classify
// gives kind, for a tool's own errors (its bad flags as KindRejected, its
// own refusals as KindRefused). Each call returns a distinct error, as
// errors.New does; wrap it with fmt.Errorf("%w: ...").
func Mark(kind Kind, text string) error { return &marked{kind: kind, text: text} }

// Classify returns the kind of err, for any error of this module's
// packages (wrapped with %w or errors.Join, in any depth), and of Mark.
// Only types and sentinels decide, never the words of a message. Where an
// error matches several kinds, the first of rejected, outcome unknown,
// refused and check failed wins; an error matching none is KindRetry.
func Classify(err error) Kind {
	if err == nil {
		return KindNone
	}
	is := func(targets ...error) bool {
		for _, t := range targets {
			if errors.Is(err, t) {
				return true
			}
		}
		return false
	}
	var nse *connect.NotStoppedError
	switch {
	case is(kindTarget(KindRejected), kafkaadmin.ErrAuthentication, kafkaadmin.ErrTLS, kafkaadmin.ErrSecurityProtocol,
		connect.ErrTLS, connect.ErrUnauthorized, connect.ErrForbidden, connect.ErrRedirect, flinkrest.ErrRedirect, offsets.ErrAliasMismatch) || isTLSFailure(err):
		return KindRejected
	case is(kindTarget(KindOutcomeUnknown), connect.ErrOutcomeUnknown):
		return KindOutcomeUnknown
	case errors.As(err, &nse) && nse.Settling:
		return KindRetry
	case is(kindTarget(KindRefused), plan.ErrStaleOffsets, ErrStalePlan, ErrGroupOffsets, plan.ErrConfigChanged,
		ErrHasRun, ErrNotApplied, connect.ErrNotStopped, kafkaadmin.ErrGroupActive, plan.ErrInvalid, ErrForeignConnector):
		return KindRefused
	case is(kindTarget(KindCheckFailed), ErrPrecheck, plan.ErrBlocked, connect.ErrReadBack, ErrCheckFailed, connect.ErrFailed):
		return KindCheckFailed
	}
	return KindRetry
}

// isTLSFailure reports a TLS failure that reached the caller unwrapped by
// connect or kafkaadmin (another client of the tool's, as flinkrest's).
func isTLSFailure(err error) bool {
	_, ok := connect.TLSFailure(err)
	return ok
}

// Advice returns what to do about err in words, from the first error in
// its chain that has an Advice method (*plan.StaleOffsetsError,
// *ForeignConnectorError, *connect.FailedError, ...), or "" when none has.
// Error strings stay short; the advice is asked for separately.
func Advice(err error) string {
	var a interface{ Advice() string }
	if errors.As(err, &a) {
		return a.Advice()
	}
	return ""
}
