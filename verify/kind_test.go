package verify_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"syscall"
	"testing"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/flinkrest"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

func TestClassify(t *testing.T) {
	mine := verify.Mark(verify.KindRefused, "the tool's own refusal")
	for _, tc := range []struct {
		err  error
		want verify.Kind
	}{
		{nil, verify.KindNone},
		{errors.New("connection refused"), verify.KindRetry},
		{context.DeadlineExceeded, verify.KindRetry},
		{fmt.Errorf("x: %w", verify.ErrPrecheck), verify.KindCheckFailed},
		{&plan.BlockedError{}, verify.KindCheckFailed},
		{&connect.ReadBackError{Reads: 3, Attempts: 5, Err: context.DeadlineExceeded}, verify.KindCheckFailed},
		// A read-back that never read: nothing is known, worth a retry.
		{&connect.ReadBackError{Attempts: 14, Err: context.DeadlineExceeded}, verify.KindRetry},
		{fmt.Errorf("after resume: %w", &connect.FailedError{Connector: "c"}), verify.KindCheckFailed},
		{fmt.Errorf("group: %w", verify.ErrCheckFailed), verify.KindCheckFailed},
		{&plan.StaleOffsetsError{}, verify.KindRefused},
		{&connect.NotStoppedError{Connector: "c", State: "RUNNING"}, verify.KindRefused},
		// Still between states when the guard gave up: it may settle.
		{&connect.NotStoppedError{Connector: "c", State: "UNASSIGNED", Settling: true}, verify.KindRetry},
		{fmt.Errorf("%w: x", verify.ErrGroupOffsets), verify.KindRefused},
		{fmt.Errorf("rollback: %w", &verify.ForeignConnectorError{Connector: "c", Check: "topics"}), verify.KindRefused},
		{fmt.Errorf("%w: x", verify.ErrHasRun), verify.KindRefused},
		{fmt.Errorf("%w: x", verify.ErrNotApplied), verify.KindRefused},
		{fmt.Errorf("%w: members", kafkaadmin.ErrGroupActive), verify.KindRefused},
		{fmt.Errorf("mounted plan: %w", plan.ErrTrailingData), verify.KindRefused},
		{fmt.Errorf("mounted plan: %w", plan.ErrFingerprint), verify.KindRefused},
		{&plan.ConfigChangedError{Field: "config_digest"}, verify.KindRefused},
		{fmt.Errorf("%w: x", mine), verify.KindRefused},
		{errors.Join(errors.New("audit"), mine), verify.KindRefused},
		{fmt.Errorf("%w: x", offsets.ErrAliasMismatch), verify.KindRejected},
		{verify.Mark(verify.KindRejected, "bad flags"), verify.KindRejected},
		// Settings a system rejected: no retry helps.
		{fmt.Errorf("source cluster: %w", &kafkaadmin.SecurityError{Addr: "b:9093", Kind: kafkaadmin.ErrAuthentication, Reason: "rejected"}), verify.KindRejected},
		{&kafkaadmin.SecurityError{Addr: "b:9093", Kind: kafkaadmin.ErrTLS, Err: x509.UnknownAuthorityError{}}, verify.KindRejected},
		{fmt.Errorf("connector c: %w", &connect.APIError{Method: "GET", Path: "/", StatusCode: http.StatusUnauthorized}), verify.KindRejected},
		{&connect.APIError{Method: "GET", Path: "/", StatusCode: http.StatusForbidden}, verify.KindRejected},
		{&connect.SecurityError{Method: "GET", Path: "/", Reason: "r", Err: x509.UnknownAuthorityError{}}, verify.KindRejected},
		{fmt.Errorf("connect: GET /: %w", &url.Error{Op: "Get", URL: "https://c", Err: x509.HostnameError{Host: "c"}}), verify.KindRejected},
		{fmt.Errorf("connect: GET /: %w", &url.Error{Op: "Get", URL: "https://c", Err: tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}}), verify.KindRejected},
		// A write whose outcome is unknown.
		{fmt.Errorf("alter: %w", &connect.APIError{Method: "PATCH", Path: "/connectors/c/offsets", StatusCode: 500, Message: "Request timed out"}), verify.KindOutcomeUnknown},
		{fmt.Errorf("connect: PATCH /x: %w: %w", connect.ErrOutcomeUnknown, context.DeadlineExceeded), verify.KindOutcomeUnknown},
		// The same answer to a read: nothing was written.
		{&connect.APIError{Method: "GET", Path: "/connectors/c/offsets", StatusCode: 500, Message: "Request timed out"}, verify.KindRetry},
		{&connect.APIError{Method: "GET", Path: "/", StatusCode: http.StatusInternalServerError, Message: "boom"}, verify.KindRetry},
		{fmt.Errorf("connect: GET /: %w", &url.Error{Op: "Get", URL: "https://c", Err: syscall.ECONNREFUSED}), verify.KindRetry},
		{errors.New("x509: certificate signed by unknown authority"), verify.KindRetry}, // only types count, never words
	} {
		if got := verify.Classify(tc.err); got != tc.want {
			t.Errorf("Classify(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	if !verify.KindOutcomeUnknown.Retryable() || verify.KindRefused.Retryable() {
		t.Error("Retryable: want true for outcome-unknown, false for refused")
	}
}

func TestAdvice(t *testing.T) {
	err := fmt.Errorf("apply: %w", &plan.StaleOffsetsError{})
	if verify.Advice(err) == "" {
		t.Errorf("Advice(%v) is empty", err)
	}
	if a := verify.Advice(errors.New("x")); a != "" {
		t.Errorf("Advice of a plain error = %q", a)
	}
}

// A Connect URL that redirects is a setting to fix, not worth a retry: the
// client sent nothing where the answer pointed.
func TestF1RedirectRejected(t *testing.T) {
	for _, err := range []error{
		&connect.RedirectError{Method: "PATCH", Path: "/connectors/c/offsets", StatusCode: 301, Location: "https://lb/connectors/c/offsets", BaseURL: "https://lb"},
		fmt.Errorf("apply: %w", &connect.RedirectError{Method: "GET", Path: "/", StatusCode: 307}),
		fmt.Errorf("flink job: %w", &flinkrest.RedirectError{Method: "GET", URL: "http://jm/jobs/j", StatusCode: 302}),
	} {
		if got := verify.Classify(err); got != verify.KindRejected {
			t.Errorf("Classify(%v) = %v, want rejected", err, got)
		}
	}
}

// An https:// URL at a plain HTTP port: Go's client says
// http.ErrSchemeMismatch. A setting to fix (exit 2), not a retry.
func TestF10HTTPSAtPlainPortRejected(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("flinkrest: %w", &url.Error{Op: "Get", URL: "https://jm:8081/jobs/j", Err: http.ErrSchemeMismatch}),
		&connect.SecurityError{Method: "GET", Path: "/", Reason: "r", Err: &url.Error{Op: "Get", URL: "https://c:8083/", Err: http.ErrSchemeMismatch}},
	} {
		if got := verify.Classify(err); got != verify.KindRejected {
			t.Errorf("Classify(%v) = %v, want rejected", err, got)
		}
	}
}
