// Package errkind sorts the errors of a cutover into what the caller does
// next: retry the step, read the state back, fix the settings, look at a
// failed check, leave a guard's refusal alone, or ask for approval.
//
// It is the one classification every tool of the module uses: the example
// CLI's exit statuses, the Kubernetes Job's result and the Job's
// podFailurePolicy are tables over [Of]. It imports no Kafka client, so a
// tool that only classifies errors links none.
//
// Each package of the module marks its own errors: a sentinel is made with
// [New] and matched with errors.Is as any sentinel is, and a typed error
// says its kind with an ErrorKind method ([Classifier]). [Of] walks an
// error's tree (errors wrapped with %w, errors.Join) and takes the kind the
// outermost error of each branch states; of several branches, the stronger
// kind wins (see [Of]). A few errors of the standard library that only a
// lost connection or a timeout gives are worth a retry wherever they come
// from. Anything else is [Unclassified], which is not worth a retry: the
// safe default, so that an error nobody thought about never makes a
// Kubernetes Job run a step again and again.
package errkind

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"os"
	"syscall"
)

// Kind is what an error means for the caller of a cutover step.
type Kind int

// The kinds, from the weakest to the strongest (see [Of]).
const (
	// None is the kind of a nil error, and what a Classifier answers when
	// it has no opinion of its own (then the errors it wraps decide).
	None Kind = iota
	// Retry: nothing says the same call fails again: a timeout, an
	// unreachable system, a transient refusal the client's retries did not
	// outlast, a connector still settling, a read-back that never read.
	// Nothing was written that a retry would not find: every step guards
	// against its own earlier writes.
	Retry
	// Unclassified: an error that no package of the module marked, such as
	// a file that could not be written. It is not worth a retry: look at
	// it.
	Unclassified
	// NotApproved: a step that needs approval (a resume, a rollback) was
	// not approved, and only said what it would do.
	NotApproved
	// CheckFailed: a check ran and failed: the precheck, a blocked plan, a
	// read-back that read other offsets, a connector FAILED after resume,
	// a verification after resume.
	CheckFailed
	// Refused: a guard refused, and wrote nothing: a stale plan, a
	// connector that is not the plan's or not STOPPED, offsets the plan did
	// not set, a group with members or other commits. The same call is
	// refused again until someone changes the state.
	Refused
	// OutcomeUnknown: a write may have happened: a PATCH answered 500
	// "Request timed out", or no answer came within the request timeout.
	// Running the same step again is safe: its guard finds the write done,
	// or does it.
	OutcomeUnknown
	// Rejected: the input or the settings are wrong, and no retry can
	// help: a malformed plan or savepoint, an invalid configuration, bad
	// flags, a worker too old for the call, credentials refused, a
	// certificate that does not verify, a security protocol the listener
	// does not speak, a redirect to another address. Fix the input, the
	// settings or the secrets.
	Rejected
)

// String names the kind as the tools' JSON output does: "retry",
// "unclassified", "not-approved", "check-failed", "refused",
// "outcome-unknown", "rejected" ("" for None).
func (k Kind) String() string {
	switch k {
	case Retry:
		return "retry"
	case Unclassified:
		return "unclassified"
	case NotApproved:
		return "not-approved"
	case CheckFailed:
		return "check-failed"
	case Refused:
		return "refused"
	case OutcomeUnknown:
		return "outcome-unknown"
	case Rejected:
		return "rejected"
	}
	return ""
}

// Retryable reports whether running the same step again may succeed
// without a change of settings or state: Retry and OutcomeUnknown.
func (k Kind) Retryable() bool { return k == Retry || k == OutcomeUnknown }

// Exit statuses of the module's command-line tools and Kubernetes Jobs,
// one per kind (see [Kind.ExitCode]). A Job's podFailurePolicy fails the
// Job at once on every status but ExitOK and ExitRetry.
const (
	ExitOK           = 0 // None
	ExitRetry        = 1 // Retry and OutcomeUnknown: worth running again
	ExitRejected     = 2 // Rejected: fix the input or the settings
	ExitCheckFailed  = 3 // CheckFailed
	ExitRefused      = 4 // Refused
	ExitNotApproved  = 5 // NotApproved: only said what it would do
	ExitUnclassified = 6 // Unclassified: look at the error
)

// ExitCode is the exit status a tool gives an error of kind k.
func (k Kind) ExitCode() int {
	switch k {
	case None:
		return ExitOK
	case Retry, OutcomeUnknown:
		return ExitRetry
	case Rejected:
		return ExitRejected
	case CheckFailed:
		return ExitCheckFailed
	case Refused:
		return ExitRefused
	case NotApproved:
		return ExitNotApproved
	}
	return ExitUnclassified
}

// Classifier is an error that says its own kind. The typed errors of the
// module's packages implement it. ErrorKind returns None to leave the
// decision to the errors it wraps.
type Classifier interface {
	error
	ErrorKind() Kind
}

// sentinel is an error of New.
type sentinel struct {
	kind Kind
	text string
}

func (e *sentinel) Error() string   { return e.text }
func (e *sentinel) ErrorKind() Kind { return e.kind }

// New returns a new sentinel error with the text text and the kind k, for
// a package's own sentinels (and a tool's: its bad flags as Rejected).
// Each call returns a distinct error, as errors.New does: match it with
// errors.Is, and wrap it with fmt.Errorf("%w: ...").
func New(k Kind, text string) error { return &sentinel{kind: k, text: text} }

// Of returns the kind of err: None for nil; else the kind its tree states.
//
// Of walks err and what it wraps (Unwrap() error and Unwrap() []error). An
// error that states a kind other than None (a sentinel of New, a
// Classifier) decides for itself and everything it wraps; an error that
// states none passes the question to what it wraps; an error that wraps
// nothing and states no kind is Unclassified, unless it is one of the
// standard library's signs of a lost connection or a timeout
// (context.DeadlineExceeded, context.Canceled, os.ErrDeadlineExceeded, a
// net.Error that timed out, a refused, reset or unreachable connection:
// Retry) or of TLS settings that cannot work (a certificate that does not
// verify, a peer that does not speak TLS or refused the session, a host
// name that does not resolve: Rejected). Where err
// wraps several errors, the strongest of their kinds wins, in the order
// Rejected, OutcomeUnknown, Refused, CheckFailed, NotApproved,
// Unclassified, Retry: a write that may have happened is never hidden by
// a timeout beside it, and an error nobody classified is never retried
// because another beside it may be.
func Of(err error) Kind {
	if err == nil {
		return None
	}
	return of(err, 0)
}

// maxDepth bounds the walk of a tree that wraps itself.
const maxDepth = 100

func of(err error, depth int) Kind {
	if err == nil {
		return None
	}
	if depth > maxDepth {
		return Unclassified
	}
	if c, ok := err.(Classifier); ok {
		if k := c.ErrorKind(); k != None {
			return k
		}
	}
	if k := standard(err); k != None {
		return k
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if inner := u.Unwrap(); inner != nil {
			return of(inner, depth+1)
		}
	case interface{ Unwrap() []error }:
		best := None
		for _, e := range u.Unwrap() {
			best = max(best, of(e, depth+1))
		}
		if best != None {
			return best
		}
	}
	return Unclassified
}

// standard classifies the errors of the standard library that say the
// same whoever returns them.
func standard(err error) Kind {
	switch err {
	case context.DeadlineExceeded, context.Canceled, os.ErrDeadlineExceeded:
		return Retry
	case http.ErrSchemeMismatch: // an https:// URL at a plain HTTP port
		return Rejected
	}
	switch e := err.(type) {
	case syscall.Errno:
		switch e {
		case syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.ETIMEDOUT,
			syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.EPIPE:
			return Retry
		}
	case *tls.CertificateVerificationError, x509.UnknownAuthorityError, x509.HostnameError, x509.CertificateInvalidError,
		tls.RecordHeaderError, tls.AlertError:
		// A certificate that does not verify, a peer that does not speak
		// TLS, a peer that refused the session (a client certificate it
		// wants or does not trust).
		return Rejected
	case *net.OpError:
		if e.Op == "remote error" { // a TLS alert before Go 1.21's tls.AlertError
			return Rejected
		}
		if e.Timeout() {
			return Retry
		}
	case *net.DNSError:
		if e.IsNotFound {
			return Rejected // no such host: the address is wrong
		}
		return Retry
	case net.Error:
		if e.Timeout() {
			return Retry
		}
	}
	return None
}

// Advice returns what to do about err in words, from the first error in
// its chain that has an Advice method, or "" when none has. Error strings
// stay short; the advice is asked for separately.
func Advice(err error) string {
	var a interface{ Advice() string }
	if errors.As(err, &a) {
		return a.Advice()
	}
	return ""
}
