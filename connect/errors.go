package connect

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/mm2cutover/mm2cutover/errkind"
)

// Sentinel errors. Every error the package returns for a server answer is an
// *APIError (or wraps one); match the cases that matter with errors.Is against
// these values rather than comparing status codes or messages. Every text of
// this package, a sentinel's or a typed error's, starts with "connect: ",
// once; an error of another package that it wraps keeps that package's
// prefix.
var (
	// ErrNotFound matches a 404: the connector (or plugin) does not exist on
	// the Connect cluster.
	ErrNotFound = errkind.New(errkind.Refused, "connect: not found")

	// ErrAlreadyExists matches a 409 "Connector X already exists" from
	// POST /connectors. It is permanent: never retried.
	ErrAlreadyExists = errkind.New(errkind.Refused, "connect: connector already exists")

	// ErrNotStopped matches a request that needs the connector in the STOPPED
	// state with zero tasks (alter or reset offsets): the client's own guard
	// (*NotStoppedError) and the worker's 400 "Connectors must be in the
	// STOPPED state before their offsets can be modified".
	ErrNotStopped = errkind.New(errkind.Refused, "connect: connector is not stopped")

	// ErrRebalance matches a transient refusal while the Connect group
	// rebalances or has no known leader: a 409 "Cannot complete request
	// momentarily ..." or "... conflicting operation ...", or a 500 whose
	// message mentions a rebalance. Requests safe to repeat are retried on it.
	ErrRebalance = errkind.New(errkind.Retry, "connect: worker group is rebalancing")

	// ErrUnauthorized matches a 401: the worker's REST extension (for example
	// BasicAuthSecurityRestExtension) rejected the credentials or got none.
	// It also matches a write that a worker forwarded to the leader with the
	// caller's Authorization header and the leader refused: Connect reports
	// that as a 500 "IO Error trying to forward REST request: ...
	// Authentication challenge without WWW-Authenticate header" (the
	// error matches ErrForwarding too).
	ErrUnauthorized = errkind.New(errkind.Rejected, "connect: unauthorized")

	// ErrForbidden matches a 403.
	ErrForbidden = errkind.New(errkind.Rejected, "connect: forbidden")

	// ErrForwarding matches a 500 "IO Error trying to forward REST request":
	// the worker that received a write could not reach the leader at the
	// leader's advertised REST address.
	ErrForwarding = errkind.New(errkind.Retry, "connect: forwarding to the leader failed")

	// ErrUnsupportedVersion matches a call the worker is too old for; the
	// concrete error is *VersionError.
	ErrUnsupportedVersion = errkind.New(errkind.Rejected, "connect: worker version too old")

	// ErrFailed matches a connector or task in the FAILED state found by
	// WaitRunning; the concrete error is *FailedError with the trace.
	ErrFailed = errkind.New(errkind.CheckFailed, "connect: connector or task failed")

	// ErrOffsetsUnavailable matches a 500 "Failed to retrieve offsets for
	// source connector ..." answering GET /connectors/{name}/offsets: the
	// worker could not read the offsets at that moment. Kafka Connect 4.3.1
	// answers it to the first read after a large alter (10,000 partitions),
	// while it still loads what it just wrote (a
	// ConcurrentModificationException in ConnectorOffsetBackingStore); the
	// next read succeeds. Offsets retries it: a read is safe to repeat.
	ErrOffsetsUnavailable = errkind.New(errkind.Retry, "connect: connector offsets unavailable at the moment")

	// ErrOutcomeUnknown matches a write (any method but GET) whose outcome
	// is unknown: the worker answered 500 "Request timed out" (its herder
	// did not finish the request in time, and may still carry it out), or
	// no answer came within the client's request timeout. The write may have
	// happened: read the state back before deciding what to do (an apply run
	// again finds the offsets applied, or applies them).
	ErrOutcomeUnknown = errkind.New(errkind.OutcomeUnknown, "connect: the write may have happened")
)

// Substrings of Kafka Connect's own error messages (HerderRequestHandler,
// DistributedHerder, RestClient). Classification never relies on these alone:
// each is combined with the status code it comes with.
const (
	msgAlreadyExists = "already exists"
	msgNotStopped    = "must be in the STOPPED state"
	msgForwarding    = "IO Error trying to forward REST request"
	msgMomentarily   = "Cannot complete request momentarily"
	msgConflictingOp = "conflicting operation"
	msgRebalance     = "rebalanc" // rebalance, rebalancing
	// Jetty's HttpClient, forwarding a request for a worker, on the leader's
	// 401 (BasicAuthSecurityRestExtension sends no WWW-Authenticate header).
	msgAuthChallenge = "Authentication challenge without WWW-Authenticate header"
	// Worker.sourceConnectorOffsets, failing to read offsets just written.
	msgOffsetsRead = "Failed to retrieve offsets for source connector"
	// ConnectRestServer, when the herder did not complete a request in time.
	msgTimedOut = "Request timed out"
)

// forwardingAdvice is appended to forwarding failures. Connect workers forward
// writes to the leader's advertised REST URL; when it is unreachable the
// operator has to fix the worker network configuration, not the request.
const forwardingAdvice = "the Connect workers' advertised REST addresses " +
	"(rest.advertised.host.name, rest.advertised.port, rest.advertised.listener) " +
	"must be reachable from each other: a worker forwards writes to the leader at that address"

// forwardedAuthAdvice is appended to a forwarded request the leader refused.
const forwardedAuthAdvice = "the leader refused the credentials the worker forwarded with this request " +
	"(Connect forwards the caller's Authorization header): every worker must accept the same REST users"

// APIError is an error answer from the Kafka Connect REST API: a non-2xx
// status with, usually, Connect's {"error_code": int, "message": string} body.
// Path is the request path relative to the client's base URL, without query.
// Message has any secret value the request carried replaced by "[redacted]".
//
// Use errors.Is with ErrNotFound, ErrAlreadyExists, ErrNotStopped,
// ErrRebalance, ErrUnauthorized, ErrForbidden, ErrForwarding,
// ErrOffsetsUnavailable and ErrOutcomeUnknown.
type APIError struct {
	Method     string
	Path       string
	StatusCode int
	ErrorCode  int
	Message    string
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "connect: %s %s: %d %s", e.Method, e.Path, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	switch {
	case e.isForwardedAuth():
		b.WriteString(" (")
		b.WriteString(forwardedAuthAdvice)
		b.WriteString(")")
	case e.isForwarding():
		b.WriteString(" (")
		b.WriteString(forwardingAdvice)
		b.WriteString(")")
	}
	return b.String()
}

// Is reports whether the answer is one of the sentinel cases.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrAlreadyExists:
		return e.StatusCode == http.StatusConflict && strings.Contains(e.Message, msgAlreadyExists)
	case ErrNotStopped:
		return e.StatusCode == http.StatusBadRequest && strings.Contains(e.Message, msgNotStopped)
	case ErrRebalance:
		return e.isRebalance()
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized || e.isForwardedAuth()
	case ErrForbidden:
		return e.StatusCode == http.StatusForbidden
	case ErrForwarding:
		return e.isForwarding()
	case ErrOffsetsUnavailable:
		return e.isOffsetsRead()
	case ErrOutcomeUnknown:
		return e.Method != http.MethodGet && e.StatusCode == http.StatusInternalServerError && strings.Contains(e.Message, msgTimedOut)
	}
	return false
}

// ErrorKind classifies the answer: errkind.OutcomeUnknown for a write the
// worker timed out on (ErrOutcomeUnknown); errkind.Rejected for 401 and 403
// (and a forwarded request the leader refused), any other 4xx but those
// below, and a redirect; errkind.Retry for a rebalance, a read of offsets
// that failed for the moment, a failed forward to the leader and any
// other 5xx; errkind.Refused for 404 (no such connector), 409 "already
// exists" and 400 "must be in the STOPPED state".
func (e *APIError) ErrorKind() errkind.Kind {
	switch {
	case e.Is(ErrOutcomeUnknown):
		return errkind.OutcomeUnknown
	case e.Is(ErrUnauthorized), e.Is(ErrForbidden):
		return errkind.Rejected
	case e.isRebalance(), e.isOffsetsRead(), e.isForwarding(), e.StatusCode >= 500:
		return errkind.Retry
	case e.Is(ErrNotFound), e.Is(ErrAlreadyExists), e.Is(ErrNotStopped):
		return errkind.Refused
	}
	return errkind.Rejected
}

// isOffsetsRead reports Worker.sourceConnectorOffsets' failure, answered to
// a GET of a source connector's offsets.
func (e *APIError) isOffsetsRead() bool {
	return e.Method == http.MethodGet && e.StatusCode == http.StatusInternalServerError &&
		strings.Contains(e.Message, msgOffsetsRead)
}

func (e *APIError) isForwarding() bool {
	return e.StatusCode == http.StatusInternalServerError && strings.Contains(e.Message, msgForwarding)
}

// isForwardedAuth reports a forwarded request that the leader answered 401.
func (e *APIError) isForwardedAuth() bool {
	return e.isForwarding() && strings.Contains(e.Message, msgAuthChallenge)
}

func (e *APIError) isRebalance() bool {
	switch e.StatusCode {
	case http.StatusConflict:
		if strings.Contains(e.Message, msgAlreadyExists) {
			return false
		}
		return strings.Contains(e.Message, msgMomentarily) ||
			strings.Contains(e.Message, msgConflictingOp) ||
			strings.Contains(strings.ToLower(e.Message), msgRebalance)
	case http.StatusInternalServerError:
		return strings.Contains(strings.ToLower(e.Message), msgRebalance)
	}
	return false
}

// NotStoppedError reports that offsets cannot be altered or reset because the
// connector is not STOPPED with zero tasks. State is the connector state the
// worker reported ("RUNNING", "PAUSED", "FAILED", ...; empty when it could not
// be read), Tasks the number of tasks it still lists. PAUSED is not STOPPED: a
// paused connector keeps its tasks assigned. Err is the worker's own 400 when
// the worker refused the request, nil when the client's guard did.
//
// Settling is true when the connector stayed between states (no status
// yet, UNASSIGNED, STOPPED still listing tasks) for the whole wait of
// RequireStopped: it may settle in STOPPED, so the step is worth a retry;
// with Settling false it was RUNNING, PAUSED or FAILED, a refusal.
//
// It matches ErrNotStopped.
type NotStoppedError struct {
	Connector string
	State     string
	Tasks     int
	Settling  bool
	Err       error
}

func (e *NotStoppedError) Error() string {
	state := e.State
	if state == "" {
		state = "in an unknown state"
	}
	s := fmt.Sprintf("connect: connector %q is %s with %d task(s), not STOPPED with none", e.Connector, state, e.Tasks)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Advice says when offsets can change: a connector still settling may
// reach STOPPED; any other must be stopped first.
func (e *NotStoppedError) Advice() string {
	if e.Settling {
		return "the connector was still between states: run the step again once its status is STOPPED with an empty task list"
	}
	return fmt.Sprintf("offsets change only while the connector is STOPPED with no tasks: stop it (PUT /connectors/%s/stop) "+
		"and wait until its status is STOPPED with an empty task list", e.Connector)
}

// Is reports true for ErrNotStopped.
func (e *NotStoppedError) Is(target error) bool { return target == ErrNotStopped }

// Unwrap returns the worker's answer, if any.
func (e *NotStoppedError) Unwrap() error { return e.Err }

// ErrorKind is errkind.Retry for a connector still settling, and
// errkind.Refused for one RUNNING, PAUSED or FAILED.
func (e *NotStoppedError) ErrorKind() errkind.Kind {
	if e.Settling {
		return errkind.Retry
	}
	return errkind.Refused
}

// VersionError reports that a feature needs a newer Kafka Connect worker than
// the one answering GET /. It matches ErrUnsupportedVersion.
type VersionError struct {
	Feature string // e.g. "alter offsets"
	Need    string // minimum Kafka version, e.g. "3.6"
	Have    string // the worker's version as reported by GET /
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("connect: %s needs a Kafka Connect worker %s or newer, the worker runs %s: upgrade the Connect cluster", e.Feature, e.Need, e.Have)
}

// Is reports true for ErrUnsupportedVersion.
func (e *VersionError) Is(target error) bool { return target == ErrUnsupportedVersion }

// ErrorKind is errkind.Rejected: upgrade the workers.
func (e *VersionError) ErrorKind() errkind.Kind { return errkind.Rejected }

// FailedError reports a connector or one of its tasks in the FAILED state.
// Task is nil when the connector itself failed. Trace is the Java stack trace
// the worker recorded.
//
// It matches ErrFailed.
type FailedError struct {
	Connector string
	Task      *int
	WorkerID  string
	Trace     string
}

func (e *FailedError) Error() string {
	what := "connector"
	if e.Task != nil {
		what = fmt.Sprintf("task %d of connector", *e.Task)
	}
	s := fmt.Sprintf("connect: %s %q failed on worker %s", what, e.Connector, e.WorkerID)
	if e.Trace != "" {
		s += ": " + firstLine(e.Trace)
		if cause := e.RootCause(); cause != firstLine(e.Trace) {
			s += "; caused by " + cause
		}
	}
	return s
}

// RootCause returns the innermost cause the worker's trace names: its last
// "Caused by: " line (without that prefix), or its first line when it has
// none — the exception that says what is wrong, such as
// "java.lang.IllegalArgumentException: Invalid login module control flag
// 'bogus' in JAAS config" under three layers of "Failed to create ...".
// It is "" for an empty trace.
func (e *FailedError) RootCause() string {
	cause := firstLine(e.Trace)
	for line := range strings.Lines(e.Trace) {
		if c, ok := strings.CutPrefix(strings.TrimSpace(line), "Caused by: "); ok {
			cause = strings.TrimSpace(c)
		}
	}
	return cause
}

// Advice says what to do about a failed connector or task.
func (e *FailedError) Advice() string {
	return fmt.Sprintf("the cause is in the worker's trace (GET /connectors/%s/status): fix it (often a client setting or a secret of the connector), "+
		"then restart the connector and its failed tasks (POST /connectors/%s/restart?includeTasks=true&onlyFailed=true)", e.Connector, e.Connector)
}

// Is reports true for ErrFailed.
func (e *FailedError) Is(target error) bool { return target == ErrFailed }

// ErrorKind is errkind.CheckFailed.
func (e *FailedError) ErrorKind() errkind.Kind { return errkind.CheckFailed }

// ConfigConflictError reports that a create which had to be retried found a
// connector of the same name whose configuration differs from the requested
// one. Keys lists the differing configuration keys (never their values). It
// wraps the worker's 409 and so matches ErrAlreadyExists.
type ConfigConflictError struct {
	Connector string
	Keys      []string
	Err       error
}

func (e *ConfigConflictError) Error() string {
	return fmt.Sprintf("connect: connector %q already exists with a different configuration (keys %s): "+
		"delete it or choose another name", e.Connector, strings.Join(e.Keys, ", "))
}

// Unwrap returns the worker's 409 answer.
func (e *ConfigConflictError) Unwrap() error { return e.Err }

// ErrorKind is errkind.Refused: the name is taken.
func (e *ConfigConflictError) ErrorKind() errkind.Kind { return errkind.Refused }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return strings.TrimSpace(s)
}

// words is the text of err without this package's prefix, for an error
// that writes it after its own "connect: ".
func words(err error) string { return strings.TrimPrefix(err.Error(), "connect: ") }
