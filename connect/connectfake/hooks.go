package connectfake

import (
	"context"
	"net/http"
	"slices"
	"strings"
)

// Request is one request the worker received: what an Interceptor sees
// and Requests lists.
type Request struct {
	Method string
	// Path is the URL path as the Server received it, e.g.
	// "/connectors/mm2/offsets" (under http.StripPrefix, without the
	// prefix).
	Path string
	// Query is the raw query, e.g. "expand=status"; "" without one.
	Query string
	// Body is the request's body; nil when it had none.
	Body []byte
	// Status is the status code answered: by the fake, a fault or the
	// Interceptor. It is 0 while the request is being answered, and in
	// what an Interceptor sees.
	Status int
}

// Writes reports whether the request may change the worker's state: any
// method but GET, HEAD and OPTIONS, except PUT
// /connector-plugins/{class}/config/validate, which only validates. A
// test asserts that its tool sent no write with it.
func (r Request) Writes() bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	case http.MethodPut:
		return !(strings.HasPrefix(r.Path, "/connector-plugins/") && strings.HasSuffix(r.Path, "/config/validate"))
	}
	return true
}

func (r Request) clone() Request {
	r.Body = slices.Clone(r.Body)
	return r
}

// Interceptor sees each request before the worker answers it. It answers
// it itself by writing to w (a Fault with Fault.Answer, or any status and
// body), or lets the worker answer by calling next with w, or with another
// http.ResponseWriter, such as an httptest.ResponseRecorder, to look at the
// answer first or to drop it: a request whose answer is lost after it took
// effect. next answers with a fault FailNext set before the normal answer,
// and answers once: later calls do nothing. The Interceptor may wait
// before or after next (selecting on ctx, the request's context) to delay
// the answer. It runs without the Server's lock: it may call the Server's
// methods (seed, inspect, FailNext).
type Interceptor func(ctx context.Context, w http.ResponseWriter, req Request, next func(w http.ResponseWriter))

// Intercept makes fn see every later request (see Interceptor); nil
// removes it. One Interceptor at a time: a second call replaces the
// first.
func (s *Server) Intercept(fn Interceptor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.intercept = fn
}

// Requests returns the requests the worker received so far, in the order
// received, each with the status it was answered (0 while it is being
// answered).
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = r.clone()
	}
	return out
}

// Answer writes the worker's answer of the fault to a request for path
// (its status and Connect's error body), as FailNext makes the fake give
// it; for an Interceptor that chooses the request to fail. Answer does not
// carry the request out: for RequestTimeout, after which a worker still
// does, call next with a recorder first.
func (f Fault) Answer(w http.ResponseWriter, path string) {
	status, msg := f.answer(path)
	writeError(w, status, "%s", msg)
}

// statusWriter records the status of an answer.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// status is the status answered: 200 when the handler wrote nothing, as
// net/http answers then.
func (w *statusWriter) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}
