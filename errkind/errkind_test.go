package errkind_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/mm2cutover/mm2cutover/errkind"
)

var (
	errRefused  = errkind.New(errkind.Refused, "test: refused")
	errRejected = errkind.New(errkind.Rejected, "test: rejected")
	errRetry    = errkind.New(errkind.Retry, "test: retry")
	errUnknown  = errkind.New(errkind.OutcomeUnknown, "test: outcome unknown")
	errCheck    = errkind.New(errkind.CheckFailed, "test: check failed")
)

// typed states its kind unless it has none, then what it wraps decides.
type typed struct {
	kind errkind.Kind
	err  error
}

func (e *typed) Error() string           { return "test: typed" }
func (e *typed) ErrorKind() errkind.Kind { return e.kind }
func (e *typed) Unwrap() error           { return e.err }
func (e *typed) Advice() string          { return "do this" }
func (e *typed) Is(target error) bool    { return target == errRefused && e.kind == errkind.Refused }
func loop() error                        { var e selfWrap; e.self = &e; return &e }

type selfWrap struct{ self *selfWrap }

func (e *selfWrap) Error() string { return "loop" }
func (e *selfWrap) Unwrap() error { return e.self }

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want errkind.Kind
	}{
		{"nil", nil, errkind.None},
		{"sentinel", errRefused, errkind.Refused},
		{"wrapped sentinel", fmt.Errorf("apply: %w", errRefused), errkind.Refused},
		{"an error nobody marked", errors.New("disk full"), errkind.Unclassified},
		{"a wrapped unmarked error", fmt.Errorf("write audit: %w", io.ErrShortWrite), errkind.Unclassified},
		{"truncated input is not a retry", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), errkind.Unclassified},
		{"typed states its kind over what it wraps", &typed{errkind.Retry, errRefused}, errkind.Retry},
		{"typed without a kind leaves it to what it wraps", &typed{errkind.None, errRefused}, errkind.Refused},
		{"typed without a kind wrapping nothing", &typed{errkind.None, nil}, errkind.Unclassified},
		{"deadline", fmt.Errorf("wait: %w", context.DeadlineExceeded), errkind.Retry},
		{"canceled", context.Canceled, errkind.Retry},
		{"os deadline", os.ErrDeadlineExceeded, errkind.Retry},
		{"connection refused", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, errkind.Retry},
		{"connection reset", fmt.Errorf("read: %w", syscall.ECONNRESET), errkind.Retry},
		{"other errno", syscall.EACCES, errkind.Unclassified},
		{"timeout", &net.OpError{Op: "read", Err: timeoutErr{}}, errkind.Retry},
		{"no such host", &net.DNSError{Name: "nowhere", IsNotFound: true}, errkind.Rejected},
		{"dns server failing", &net.DNSError{Name: "somewhere", IsTemporary: true}, errkind.Retry},
		{"certificate", fmt.Errorf("tls: %w", x509.UnknownAuthorityError{}), errkind.Rejected},
		{"joined: rejected beats all", errors.Join(errRetry, errRejected, errUnknown), errkind.Rejected},
		{"joined: outcome unknown beats refused", errors.Join(errRefused, errUnknown), errkind.OutcomeUnknown},
		{"joined: refused beats check failed", fmt.Errorf("%w: %w", errCheck, errRefused), errkind.Refused},
		{"joined: unclassified beats retry", errors.Join(errRetry, errors.New("audit write failed")), errkind.Unclassified},
		{"joined: retry beside nil", errors.Join(errRetry, nil), errkind.Retry},
		{"a loop ends", loop(), errkind.Unclassified},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := errkind.Of(tc.err); got != tc.want {
				t.Errorf("Of(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestSentinelsAreDistinct(t *testing.T) {
	a, b := errkind.New(errkind.Refused, "x"), errkind.New(errkind.Refused, "x")
	if errors.Is(a, b) {
		t.Error("two sentinels of the same text match each other")
	}
	if !errors.Is(fmt.Errorf("w: %w", a), a) {
		t.Error("a wrapped sentinel does not match itself")
	}
	if a.Error() != "x" {
		t.Errorf("text %q, want %q", a.Error(), "x")
	}
}

func TestKinds(t *testing.T) {
	for _, tc := range []struct {
		k         errkind.Kind
		name      string
		exit      int
		retryable bool
	}{
		{errkind.None, "", 0, false},
		{errkind.Retry, "retry", 1, true},
		{errkind.OutcomeUnknown, "outcome-unknown", 1, true},
		{errkind.Rejected, "rejected", 2, false},
		{errkind.CheckFailed, "check-failed", 3, false},
		{errkind.Refused, "refused", 4, false},
		{errkind.NotApproved, "not-approved", 5, false},
		{errkind.Unclassified, "unclassified", 6, false},
	} {
		if got := tc.k.String(); got != tc.name {
			t.Errorf("%d.String() = %q, want %q", tc.k, got, tc.name)
		}
		if got := tc.k.ExitCode(); got != tc.exit {
			t.Errorf("%v.ExitCode() = %d, want %d", tc.k, got, tc.exit)
		}
		if got := tc.k.Retryable(); got != tc.retryable {
			t.Errorf("%v.Retryable() = %v, want %v", tc.k, got, tc.retryable)
		}
	}
}

func TestAdvice(t *testing.T) {
	if got := errkind.Advice(fmt.Errorf("x: %w", &typed{errkind.Refused, nil})); got != "do this" {
		t.Errorf("Advice = %q", got)
	}
	if got := errkind.Advice(errors.New("plain")); got != "" {
		t.Errorf("Advice of a plain error = %q", got)
	}
}
