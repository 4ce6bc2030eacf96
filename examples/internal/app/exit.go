package app

import (
	"github.com/mm2cutover/mm2cutover/errkind"
)

// Exit statuses of the example binaries.
const (
	ExitOK    = 0 // done
	ExitError = 1 // an error worth a retry: a timeout, an unreachable system, a read-back that never read
	// ExitUsage is bad flags or settings, found before anything is read or
	// written, and settings a system rejected at the first contact, where
	// no retry can help: credentials a broker or the Connect REST API
	// refused (a wrong password, an unknown user), a certificate that does
	// not verify against the CA given, a security protocol the listener
	// does not speak. Fix the settings or the secrets.
	ExitUsage        = 2
	ExitCheckFailed  = 3 // a check ran and failed: precheck, blocked plan, a read-back that read other offsets, verification, a connector FAILED after resume
	ExitRefused      = 4 // a guard refused: stale plan, a connector that is not the plan's or not STOPPED, other clusters, other commits
	ExitNotApproved  = 5 // resume or rollback not approved: only said what it would do
	ExitUnclassified = 6 // an error no package classified: not worth a retry; look at it
)

// ErrCheckFailed marks a verification that ran and did not pass.
var ErrCheckFailed = errkind.New(errkind.CheckFailed, "verification failed")

// ExitStatus maps the error of a step to the exit status of the binaries:
// errkind's exit code of its kind.
func ExitStatus(err error) int { return errkind.Of(err).ExitCode() }

// rejected reports an error that says a system rejected the settings
// (errkind.Rejected), so that the same request will fail the same way.
func rejected(err error) bool { return errkind.Of(err) == errkind.Rejected }

// Failure is what the binaries print on stdout, as JSON, when a step fails:
// the Job's result line, and the CLI's document with -json (schema
// mm2cutover/failure/v1) when the step printed none of its own.
type Failure struct {
	Result string `json:"result"` // check-failed, refused, not-approved or error
	// Kind is errkind.Of's name for the error: retry,
	// outcome-unknown (a write may have happened), refused, check-failed
	// or rejected.
	Kind      string `json:"kind,omitempty"`
	Connector string `json:"connector,omitempty"`
	Error     string `json:"error"`
	// Advice is what to do, when the error says (errkind.Advice).
	Advice     string `json:"advice,omitempty"`
	ExitStatus int    `json:"exit_status"`
}

// NewFailure describes err, whose exit status is code.
func NewFailure(connector string, code int, err error) Failure {
	return Failure{Result: ResultOf(code), Kind: errkind.Of(err).String(), Connector: connector, Error: err.Error(),
		Advice: errkind.Advice(err), ExitStatus: code}
}

// ResultOf names an exit status as the "result" field of the binaries' JSON
// does: check-failed (3), refused (4), not-approved (5), error otherwise.
func ResultOf(code int) string {
	switch code {
	case ExitCheckFailed:
		return "check-failed"
	case ExitRefused:
		return "refused"
	case ExitNotApproved:
		return "not-approved"
	}
	return "error"
}
