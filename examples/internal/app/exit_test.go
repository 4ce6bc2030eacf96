package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{errors.New("connection refused"), ExitUnclassified}, // an error nobody marked is not worth a retry
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), ExitError},
		{context.DeadlineExceeded, ExitError},
		{fmt.Errorf("wrapped: %w", settings.ErrSettings), ExitUsage},
		{fmt.Errorf("x: %w", ErrPrecheck), ExitCheckFailed},
		{&plan.BlockedError{}, ExitCheckFailed},
		{&connect.ReadBackError{Reads: 3, Attempts: 5, Err: context.DeadlineExceeded}, ExitCheckFailed},
		// A read-back that never read: nothing is known, worth a retry.
		{&connect.ReadBackError{Attempts: 14, Err: context.DeadlineExceeded}, ExitError},
		{ErrCheckFailed, ExitCheckFailed},
		// A connector FAILED after resume: resuming again is refused (not
		// STOPPED), so it is no error worth a retry.
		{fmt.Errorf("after resume: %w", &connect.FailedError{Connector: "c"}), ExitCheckFailed},
		{&plan.StaleOffsetsError{}, ExitRefused},
		{&connect.NotStoppedError{Connector: "c", State: "RUNNING"}, ExitRefused},
		{fmt.Errorf("%w: other clusters", ErrPlanMismatch), ExitRefused},
		{fmt.Errorf("%w: x", verify.ErrGroupOffsets), ExitRefused},
		{fmt.Errorf("rollback: %w", &verify.ForeignConnectorError{Connector: "c", Check: "topics"}), ExitRefused},
		{fmt.Errorf("%w: x", ErrHasRun), ExitRefused},
		{ErrNotApproved, ExitNotApproved},
		{fmt.Errorf("%w: x", ErrNotApplied), ExitRefused},
		{fmt.Errorf("%w: members", kafkaadmin.ErrGroupActive), ExitRefused},
		{fmt.Errorf("mounted plan: %w", plan.ErrTrailingData), ExitRefused},
		{fmt.Errorf("mounted plan: %w", plan.ErrInconsistent), ExitRefused},
		{fmt.Errorf("mounted plan: %w", plan.ErrFingerprint), ExitRefused},
		// Settings a system rejected: no retry helps.
		{fmt.Errorf("source cluster: %w", &kafkaadmin.SecurityError{Addr: "b:9093", Kind: kafkaadmin.ErrAuthentication, Reason: "rejected"}), ExitUsage},
		{&kafkaadmin.SecurityError{Addr: "b:9093", Kind: kafkaadmin.ErrTLS, Err: x509.UnknownAuthorityError{}}, ExitUsage},
		{fmt.Errorf("x: %w", &kafkaadmin.SecurityError{Addr: "b:9092", Kind: kafkaadmin.ErrSecurityProtocol}), ExitUsage},
		{fmt.Errorf("connector c: %w", &connect.APIError{Method: "GET", Path: "/", StatusCode: http.StatusUnauthorized}), ExitUsage},
		{&connect.APIError{Method: "GET", Path: "/", StatusCode: http.StatusForbidden}, ExitUsage},
		{fmt.Errorf("connect: GET /: %w", &url.Error{Op: "Get", URL: "https://c", Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}}), ExitUsage},
		{fmt.Errorf("connect: GET /: %w", &url.Error{Op: "Get", URL: "https://c", Err: x509.HostnameError{Host: "c"}}), ExitUsage},
		{fmt.Errorf("connect: GET /: %w", &url.Error{Op: "Get", URL: "https://c", Err: tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}}), ExitUsage},
		// Failures that may pass: worth a retry.
		{&connect.APIError{Method: "GET", Path: "/", StatusCode: http.StatusInternalServerError, Message: "boom"}, ExitError},
		{fmt.Errorf("connect: GET /: %w", &url.Error{Op: "Get", URL: "https://c", Err: syscall.ECONNREFUSED}), ExitError},
		{errors.New("x509: certificate signed by unknown authority"), ExitUnclassified}, // only types count, never words
	} {
		if got := ExitStatus(tc.err); got != tc.want {
			t.Errorf("ExitStatus(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// TestExitStatusClientCertificateRefused: a Connect endpoint that requires a
// client certificate refuses a client without one with a TLS alert after
// the client's handshake; no retry helps, so it is a usage error (exit 1,
// worth a retry, before).
func TestExitStatusClientCertificateRefused(t *testing.T) {
	serverPEM, err := os.ReadFile("../../../clientconf/testdata/server.pem")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(serverPEM, serverPEM)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := os.ReadFile("../../../clientconf/testdata/ca.pem")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	defer srv.Close()
	c, err := connect.New(srv.URL, connect.WithCACertPEM(caPEM), connect.WithRetry(connect.Retry{Attempts: 1}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ServerInfo(context.Background())
	if got := ExitStatus(err); got != ExitUsage {
		t.Errorf("ExitStatus(%v) = %d, want %d", err, got, ExitUsage)
	}
}
