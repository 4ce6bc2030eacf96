package connect

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"

	"github.com/mm2cutover/mm2cutover/errkind"
)

// ErrTLS matches a TLS failure with the Connect REST endpoint that no retry
// fixes: its certificate does not verify against the CA given (unknown
// authority, wrong host name, expired), the endpoint does not speak TLS, or
// it refused the client's certificate (a TLS alert). The concrete error is
// *SecurityError. Credentials the REST API refused are ErrUnauthorized and
// ErrForbidden (an *APIError).
var ErrTLS = errkind.New(errkind.Rejected, "connect: tls handshake failed")

// SecurityError reports a request to the Connect REST API that failed for
// a reason of the client's settings, which no retry fixes: a certificate
// that does not verify, a TLS alert from the endpoint, or an endpoint that
// answered TLS with something else. The client returns it at once instead
// of retrying. It matches ErrTLS and unwraps to the transport's error. It
// never contains a credential.
type SecurityError struct {
	Method, Path string
	Reason       string // what was seen, in words
	Err          error
}

func (e *SecurityError) Error() string {
	return "connect: " + e.Method + " " + e.Path + ": " + e.Reason + ": " + e.Err.Error()
}

// Is reports true for ErrTLS.
func (e *SecurityError) Is(target error) bool { return target == ErrTLS }

// ErrorKind is errkind.Rejected: no retry fixes the TLS settings.
func (e *SecurityError) ErrorKind() errkind.Kind { return errkind.Rejected }

// Unwrap returns the transport's error.
func (e *SecurityError) Unwrap() error { return e.Err }

// securityError classifies a transport error of req as a *SecurityError,
// or returns nil.
func securityError(req request, err error) error {
	reason, ok := TLSFailure(err)
	if !ok {
		return nil
	}
	return &SecurityError{Method: req.method, Path: req.path, Reason: reason, Err: err}
}

// TLSFailure reports whether err, from any Go TLS client, is a TLS failure
// no retry fixes, and says which in words: a certificate that does not
// verify (unknown authority, wrong host name, expired), a peer that does
// not speak TLS, or a TLS alert from the peer (a client certificate
// refused or missing). Only types decide, never the words of a message.
// It is pure.
func TLSFailure(err error) (reason string, ok bool) {
	var (
		verification *tls.CertificateVerificationError
		unknownCA    x509.UnknownAuthorityError
		hostname     x509.HostnameError
		invalid      x509.CertificateInvalidError
		record       tls.RecordHeaderError
		alert        *net.OpError
	)
	switch {
	case errors.As(err, &verification), errors.As(err, &unknownCA), errors.As(err, &hostname), errors.As(err, &invalid):
		return "the endpoint's certificate does not verify (check the CA given and the URL's host name)", true
	case errors.As(err, &record), errors.Is(err, http.ErrSchemeMismatch):
		// Go's HTTP client reports a plain HTTP answer to its TLS hello
		// (Jetty's, Connect's, is a 400) as http.ErrSchemeMismatch instead
		// of the tls.RecordHeaderError it saw.
		return "the endpoint does not speak TLS (an http:// endpoint behind an https:// URL?)", true
	case errors.As(err, &alert) && alert.Op == "remote error":
		return "the endpoint refused the TLS session (one that requires a client certificate: check it, and that the endpoint trusts its CA)", true
	}
	return "", false
}
