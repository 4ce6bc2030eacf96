package cutover

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
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
	ExitUsage       = 2
	ExitCheckFailed = 3 // a check ran and failed: precheck, blocked plan, a read-back that read other offsets, verification, a connector FAILED after resume
	ExitRefused     = 4 // a guard refused: stale plan, a connector that is not the plan's or not STOPPED, other clusters, other commits
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
	case errors.Is(err, ErrSettings), errors.Is(err, offsets.ErrAliasMismatch), rejected(err):
		return ExitUsage
	case errors.Is(err, plan.ErrStaleOffsets), errors.Is(err, verify.ErrStalePlan), errors.Is(err, ErrPlanMismatch), errors.Is(err, verify.ErrGroupOffsets), errors.Is(err, plan.ErrConfigChanged),
		errors.Is(err, ErrHasRun), errors.Is(err, ErrNotApplied), errors.Is(err, connect.ErrNotStopped),
		errors.Is(err, kafkaadmin.ErrGroupActive), errors.Is(err, plan.ErrInvalid), errors.Is(err, verify.ErrForeignConnector):
		return ExitRefused
	case errors.Is(err, ErrPrecheck), errors.Is(err, plan.ErrBlocked), errors.Is(err, connect.ErrReadBack),
		errors.Is(err, ErrCheckFailed), errors.Is(err, connect.ErrFailed):
		return ExitCheckFailed
	}
	return ExitError
}

// rejected reports an error that says a system rejected the settings, so
// that the same request will fail the same way: a broker refused the
// credentials, the TLS handshake, or the protocol (kafkaadmin's
// *SecurityError), the Connect REST API answered 401 or 403, or the
// Connect endpoint's certificate did not verify or it does not speak TLS.
func rejected(err error) bool {
	var (
		verification *tls.CertificateVerificationError
		unknownCA    x509.UnknownAuthorityError
		hostname     x509.HostnameError
		invalid      x509.CertificateInvalidError
		record       tls.RecordHeaderError
	)
	var alert *net.OpError // a TLS alert the server sent: a client certificate refused or missing
	if errors.As(err, &alert) && alert.Op == "remote error" {
		return true
	}
	return errors.Is(err, kafkaadmin.ErrAuthentication) || errors.Is(err, kafkaadmin.ErrTLS) ||
		errors.Is(err, kafkaadmin.ErrSecurityProtocol) ||
		errors.Is(err, connect.ErrUnauthorized) || errors.Is(err, connect.ErrForbidden) ||
		errors.As(err, &verification) || errors.As(err, &unknownCA) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &record)
}

// Failure is what the binaries print on stdout, as JSON, when a step fails:
// the Job's result line, and the CLI's document with -json (schema
// mm2cutover/failure/v1) when the step printed none of its own.
type Failure struct {
	Result     string `json:"result"` // check-failed, refused, not-approved or error
	Connector  string `json:"connector,omitempty"`
	Error      string `json:"error"`
	ExitStatus int    `json:"exit_status"`
}

// NewFailure describes err, whose exit status is code.
func NewFailure(connector string, code int, err error) Failure {
	return Failure{Result: ResultOf(code), Connector: connector, Error: err.Error(), ExitStatus: code}
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
