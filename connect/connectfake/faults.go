package connectfake

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
)

// Fault is an error answer a real worker gives now and then but not on
// demand. FailNext makes the fake give it.
type Fault int

const (
	// Rebalance is the 409 a worker answers while its view of the
	// configuration is stale, typically right after another write: "Cannot
	// complete request momentarily due to stale configuration (typically
	// caused by a concurrent config change)". The request has no effect.
	Rebalance Fault = iota + 1

	// NoLeader is the 409 a worker answers when a write must go to the
	// leader and it knows none, during a rebalance. The request has no
	// effect.
	NoLeader

	// ConflictingOperation is the 409 a worker answers when a forwarded
	// request did not find the leader within two hops. The request has no
	// effect.
	ConflictingOperation

	// RequestTimeout is the 500 "Request timed out" a worker answers when
	// the request took longer than its REST timeout (90 s). The worker goes
	// on with the request: the fake applies it and answers the fault.
	RequestTimeout

	// ForwardingFailed is the 500 of a worker that could not reach the
	// leader's advertised REST address to forward a write. The request has
	// no effect.
	ForwardingFailed

	// OffsetsReadFailed is the 500 "Failed to retrieve offsets for source
	// connector NAME" a Kafka Connect 4.3.1 worker answered to GET
	// /connectors/{name}/offsets right after a large PATCH (a
	// ConcurrentModificationException while it loaded what it just wrote);
	// the next read succeeded. Meant for GET .../offsets.
	OffsetsReadFailed
)

func (f Fault) String() string {
	switch f {
	case Rebalance:
		return "Rebalance"
	case NoLeader:
		return "NoLeader"
	case ConflictingOperation:
		return "ConflictingOperation"
	case RequestTimeout:
		return "RequestTimeout"
	case ForwardingFailed:
		return "ForwardingFailed"
	case OffsetsReadFailed:
		return "OffsetsReadFailed"
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// answer is the status and message of the fault for a request path. The
// messages are the worker's (HerderRequestHandler, RestClient, Worker).
func (f Fault) answer(path string) (int, string) {
	switch f {
	case Rebalance:
		return http.StatusConflict, "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"
	case NoLeader:
		return http.StatusConflict, "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
	case ConflictingOperation:
		return http.StatusConflict, "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
	case RequestTimeout:
		return http.StatusInternalServerError, "Request timed out"
	case ForwardingFailed:
		return http.StatusInternalServerError, "IO Error trying to forward REST request: java.net.ConnectException: Connection refused"
	case OffsetsReadFailed:
		name := strings.TrimSuffix(strings.TrimPrefix(path, "/connectors/"), "/offsets")
		return http.StatusInternalServerError, "Failed to retrieve offsets for source connector " + name
	}
	return http.StatusInternalServerError, "connectfake: unknown fault " + f.String()
}

// applied reports whether the worker carries the request out although it
// answers the fault.
func (f Fault) applied() bool { return f == RequestTimeout }

type pendingFault struct {
	method, path string
	left         int
	fault        Fault
}

// FailNext makes the next n requests with this method and path (the URL
// path as sent, e.g. "/connectors/mm2/offsets", without query) answer f
// instead of their normal answer. Calls add up: faults for the same request
// are given in the order they were set.
func (s *Server) FailNext(method, path string, n int, f Fault) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &pendingFault{method: method, path: path, left: n, fault: f})
}

// SetStaleOffsetReads makes GET /connectors/{name}/offsets eventually
// consistent, as on a real worker that has not yet read back what it wrote:
// after each later PATCH or DELETE of a connector's offsets, the next n reads
// answer the offsets as they were before that write. 0 (the default) makes
// reads current at once.
func (s *Server) SetStaleOffsetReads(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.staleReads = max(n, 0)
}

func (s *Server) takeFault(method, path string) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if f.method == method && f.path == path {
			f.left--
			if f.left == 0 {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
			}
			return f.fault, true
		}
	}
	return 0, false
}

func (s *Server) answerFault(w http.ResponseWriter, r *http.Request, f Fault) {
	if f.applied() {
		s.route(httptest.NewRecorder(), r)
	}
	f.Answer(w, r.URL.Path)
}
