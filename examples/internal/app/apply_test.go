package app

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/cutover"
)

// TestNotStopped: the STOPPED guard's errors, worded for a step, keep
// their exit status: a refusal for a connector RUNNING or FAILED, worth a
// retry for one still settling or a worker that did not answer, refused
// for one that does not exist.
func TestNotStopped(t *testing.T) {
	for _, tc := range []struct {
		err  error
		says string
		exit int
	}{
		{&connect.NotStoppedError{Connector: "c", State: "RUNNING", Tasks: 1}, "is RUNNING, not STOPPED: refusal", ExitRefused},
		{&connect.NotStoppedError{Connector: "c", State: "FAILED"}, "is FAILED, not STOPPED: it was resumed", ExitRefused},
		{&connect.NotStoppedError{Connector: "c", State: "UNASSIGNED", Settling: true}, "did not show STOPPED with no tasks in time", ExitError},
		{fmt.Errorf("connect: GET /connectors/c/status: %w", syscall.ECONNREFUSED), "cannot tell whether connector c is STOPPED", ExitError},
		{&connect.APIError{Method: "GET", Path: "/connectors/c", StatusCode: 404}, "connector c does not exist", ExitRefused},
	} {
		err := cutover.NotStopped("c", tc.err, "refusal")
		if !strings.Contains(err.Error(), tc.says) || !errors.Is(err, tc.err) {
			t.Errorf("NotStopped(%v) = %v, want it to say %q and wrap it", tc.err, err, tc.says)
		}
		if got := ExitStatus(err); got != tc.exit {
			t.Errorf("ExitStatus(NotStopped(%v)) = %d, want %d", tc.err, got, tc.exit)
		}
	}
}
