package connectfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
)

// Version and Commit are what GET / of the fake reports by default: the
// Kafka Connect release whose answers the fake reproduces.
const (
	Version = "4.3.1"
	Commit  = "26b251a451ce941d"
)

// DefaultKafkaClusterID is the kafka_cluster_id GET / reports by default.
const DefaultKafkaClusterID = "Y29ubmVjdGZha2UtY2x1cw"

// Server is a fake Kafka Connect cluster of one worker, listening on a
// local httptest server. It is safe for concurrent use. Its zero value is
// not usable: call New.
type Server struct {
	srv *httptest.Server

	mu         sync.Mutex
	version    string
	commit     string
	clusterID  string
	workerID   string
	statusLag  int
	staleReads int
	connectors map[string]*connector
	offsets    map[string]*offsetStore // by connector name: offsets outlive connectors
	faults     []*pendingFault
	lookedUp   map[string]bool // connector classes looked up and not found
	plugins    pluginDefs      // read-only after New
	pluginsErr error
	seeds      []func() error // WithConnectors and WithOffsets, run by New
	intercept  Interceptor
	requests   []Request // in the order received
}

// Option configures a Server in New.
type Option func(*Server)

// WithVersion makes GET / report another Kafka version and commit (and the
// plugins that version). The answers stay those of Kafka Connect 4.3.1; use
// it to exercise a client's version checks.
func WithVersion(version, commit string) Option {
	return func(s *Server) { s.version, s.commit = version, commit }
}

// WithKafkaClusterID sets the kafka_cluster_id GET / reports: on a real
// worker, the ID of the Kafka cluster that holds its internal topics.
func WithKafkaClusterID(id string) Option {
	return func(s *Server) { s.clusterID = id }
}

// WithStatusLag sets for how many reads a connector's status lags behind a
// change (default 1, as a real worker usually does); a read is a GET
// /connectors/{name}/status or a GET /connectors?expand=status. After a
// create the first n reads find no status: GET .../status answers 404 "No
// status found for connector NAME" and the list leaves the connector out.
// After a pause or resume the first n reads still show the status from
// before; a stop shows STOPPED at once. 0 makes every change visible at
// once. The configuration, the task list and the offsets never
// lag: a real worker answers them from its configuration topic.
func WithStatusLag(n int) Option {
	return func(s *Server) { s.statusLag = max(n, 0) }
}

// New starts a fake Connect worker on a local port. Close it when done.
// It panics when a connector or offsets seeded with WithConnectors or
// WithOffsets are invalid (an error matching ErrInvalidSeed).
func New(opts ...Option) *Server {
	s := &Server{
		version:    Version,
		commit:     Commit,
		clusterID:  DefaultKafkaClusterID,
		statusLag:  1,
		connectors: make(map[string]*connector),
		offsets:    make(map[string]*offsetStore),
	}
	for _, o := range opts {
		o(s)
	}
	s.plugins, s.pluginsErr = loadPlugins()
	for _, seed := range s.seeds {
		if err := seed(); err != nil {
			panic(err)
		}
	}
	s.seeds = nil
	s.srv = httptest.NewServer(s)
	if u, err := url.Parse(s.srv.URL); err == nil {
		s.workerID = u.Host
	}
	return s
}

// URL is the worker's base URL, e.g. "http://127.0.0.1:40123".
func (s *Server) URL() string { return s.srv.URL }

// Close shuts the server down; requests in flight finish first.
func (s *Server) Close() { s.srv.Close() }

// ServeHTTP answers one Kafka Connect REST request. The Server serves itself
// on URL; ServeHTTP lets a test mount it elsewhere too (behind
// http.StripPrefix, in an httptest.NewTLSServer, ...). The request passes
// the Interceptor, if any, then a fault FailNext set, and is recorded for
// Requests.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "connectfake: reading the request: %v", err)
		return
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery}
	if len(body) > 0 {
		req.Body = body
	}
	s.mu.Lock()
	i := len(s.requests)
	s.requests = append(s.requests, req)
	fn := s.intercept
	s.mu.Unlock()

	var once sync.Once
	next := func(w http.ResponseWriter) {
		once.Do(func() {
			r.Body = io.NopCloser(bytes.NewReader(body))
			if f, ok := s.takeFault(r.Method, r.URL.Path); ok {
				s.answerFault(w, r, f)
				return
			}
			s.route(w, r)
		})
	}
	sw := &statusWriter{ResponseWriter: w}
	if fn != nil {
		fn(r.Context(), sw, req.clone(), next)
	} else {
		next(sw)
	}
	s.mu.Lock()
	s.requests[i].Status = sw.status()
	s.mu.Unlock()
}

// route dispatches a request to its endpoint. Unknown paths and methods get
// the worker's own 404 and 405 answers; endpoints of the real REST API the
// fake does not implement get a 501 that says so.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if path == "" {
		parts = nil
	}
	m := r.Method
	switch {
	case len(parts) == 0:
		s.only(w, r, http.MethodGet, s.handleRoot)
	case parts[0] == "connector-plugins" && len(parts) == 1:
		s.only(w, r, http.MethodGet, s.handlePlugins)
	case parts[0] == "connector-plugins" && len(parts) == 4 && parts[2] == "config" && parts[3] == "validate":
		s.only(w, r, http.MethodPut, func(w http.ResponseWriter, r *http.Request) { s.handleValidate(w, r, parts[1]) })
	case parts[0] == "connectors" && len(parts) == 1:
		switch m {
		case http.MethodGet:
			s.handleList(w, r)
		case http.MethodPost:
			s.handleCreate(w, r)
		default:
			methodNotAllowed(w)
		}
	case parts[0] == "connectors" && len(parts) == 2:
		name := parts[1]
		switch m {
		case http.MethodGet:
			s.handleInfo(w, name)
		case http.MethodDelete:
			s.handleDelete(w, name)
		default:
			methodNotAllowed(w)
		}
	case parts[0] == "connectors" && len(parts) == 3:
		name := parts[1]
		switch parts[2] {
		case "config":
			switch m {
			case http.MethodGet:
				s.handleGetConfig(w, name)
			case http.MethodPut:
				s.handlePutConfig(w, r, name)
			case http.MethodPatch:
				notImplemented(w, r)
			default:
				methodNotAllowed(w)
			}
		case "status":
			s.only(w, r, http.MethodGet, func(w http.ResponseWriter, r *http.Request) { s.handleStatus(w, name) })
		case "stop", "pause", "resume":
			s.only(w, r, http.MethodPut, func(w http.ResponseWriter, r *http.Request) { s.handleTransition(w, name, parts[2]) })
		case "offsets":
			switch m {
			case http.MethodGet:
				s.handleGetOffsets(w, name)
			case http.MethodPatch:
				s.handleAlterOffsets(w, r, name)
			case http.MethodDelete:
				s.handleResetOffsets(w, name)
			default:
				methodNotAllowed(w)
			}
		case "restart", "tasks", "topics", "tasks-config":
			notImplemented(w, r)
		default:
			notFound(w)
		}
	case parts[0] == "connectors" && len(parts) > 3, parts[0] == "admin":
		notImplemented(w, r)
	default:
		notFound(w)
	}
}

func (s *Server) only(w http.ResponseWriter, r *http.Request, method string, h http.HandlerFunc) {
	if r.Method != method {
		methodNotAllowed(w)
		return
	}
	h(w, r)
}

// refusal is a message of the worker's, in its words, carried as an error
// until it is written as the answer.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

func refuse(format string, args ...any) error {
	return &refusal{fmt.Sprintf(format, args...)}
}

// errorBody is Connect's error answer.
type errorBody struct {
	ErrorCode int    `json:"error_code"`
	Message   string `json:"message"`
}

// writeError writes Connect's {"error_code","message"} answer.
func writeError(w http.ResponseWriter, status int, format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	writeJSON(w, status, errorBody{status, msg})
}

// readBody reads a request's body. When it cannot, or when the body is
// blank and nullMsg is not empty (Jersey hands the resource a null and Java
// says so), it answers 500 and returns false.
func readBody(w http.ResponseWriter, r *http.Request, nullMsg string) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "connectfake: reading the request: %v", err)
		return nil, false
	}
	if nullMsg != "" && len(bytes.TrimSpace(body)) == 0 {
		writeError(w, http.StatusInternalServerError, "%s", nullMsg)
		return nil, false
	}
	return body, true
}

// readConfig reads a body that is a connector configuration, as PUT
// .../config and .../config/validate take it: a null or malformed one is
// answered 500 in the worker's words and returns false.
func readConfig(w http.ResponseWriter, r *http.Request) (*value, bool) {
	body, ok := readBody(w, r, "")
	if !ok {
		return nil, false
	}
	cfg, err := decodeConfig(json.NewDecoder(bytes.NewReader(body)))
	if err != nil || cfg == nil {
		if err == nil {
			err = refuse(`Cannot invoke "java.util.Map.get(Object)" because "connectorConfig" is null`)
		}
		writeError(w, http.StatusInternalServerError, "%s", err.Error())
		return nil, false
	}
	return cfg, true
}

// notFound and methodNotAllowed are Jersey's answers for a path or a method
// no resource serves: Connect's error body without a Content-Type.
func notFound(w http.ResponseWriter) { writeBare(w, http.StatusNotFound, "HTTP 404 Not Found") }

func methodNotAllowed(w http.ResponseWriter) {
	writeBare(w, http.StatusMethodNotAllowed, "HTTP 405 Method Not Allowed")
}

func writeBare(w http.ResponseWriter, status int, msg string) {
	body, _ := json.Marshal(errorBody{status, msg})
	w.Header()["Content-Type"] = nil // as Jersey sends it: no Content-Type
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// notImplemented answers an endpoint of the real REST API that the fake
// leaves out.
func notImplemented(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotImplemented, "connectfake: %s %s is not implemented by the fake", r.Method, r.URL.Path)
}

// writeJSON writes v encoded by encoding/json (struct fields in declaration
// order, as Jackson writes Connect's entities).
func writeJSON(w http.ResponseWriter, status int, v any) {
	var b []byte
	switch x := v.(type) {
	case rawJSON:
		b = x
	default:
		var err error
		if b, err = marshalNoEscape(v); err != nil {
			status = http.StatusInternalServerError
			b, _ = json.Marshal(errorBody{status, "connectfake: " + err.Error()})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// rawJSON is an answer body already encoded.
type rawJSON []byte

func marshalNoEscape(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

func noContent(w http.ResponseWriter, status int) {
	w.Header()["Content-Type"] = nil
	w.WriteHeader(status)
}

// handleRoot answers GET /.
func (s *Server) handleRoot(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	info := struct {
		Version        string `json:"version"`
		Commit         string `json:"commit"`
		KafkaClusterID string `json:"kafka_cluster_id"`
	}{s.version, s.commit, s.clusterID}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, info)
}
