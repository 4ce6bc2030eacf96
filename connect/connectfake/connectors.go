package connectfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Target states of a connector, as Connect writes them to its config topic.
const (
	stateRunning    = "RUNNING"
	statePaused     = "PAUSED"
	stateStopped    = "STOPPED"
	stateUnassigned = "UNASSIGNED"
)

// connector is one connector as the worker's configuration topic holds it,
// plus how its status is shown.
type connector struct {
	name   string
	config value  // a map of string (or null) values, in the order submitted, "name" included
	class  string // the plugin's full class name
	target string // RUNNING, PAUSED or STOPPED
	tasks  int    // number of task configurations; 0 while STOPPED

	hidden    int         // status reads left that answer 404: just created
	shown     *statusView // status shown instead of the settled one, for shownLeft reads
	shownLeft int
}

// statusView is what GET /connectors/{name}/status shows.
type statusView struct {
	state      string
	taskStates []string
}

// settled is the status a connector shows once the worker has acted on its
// target state: a STOPPED connector has no tasks, a RUNNING or PAUSED one
// shows its tasks in its own state.
func (c *connector) settled() statusView {
	v := statusView{state: c.target}
	for range c.tasks {
		v.taskStates = append(v.taskStates, c.target)
	}
	return v
}

// current is the status shown now; read counts the read against the lag.
func (c *connector) current(read bool) statusView {
	if c.shown == nil || c.shownLeft == 0 {
		return c.settled()
	}
	v := *c.shown
	if read {
		if c.shownLeft--; c.shownLeft == 0 {
			c.shown = nil
		}
	}
	return v
}

// tasksMax is the connector's tasks.max (1 when unset). The fake gives a
// running connector that many tasks; MirrorSourceConnector gives at most one
// per source topic partition it found.
func (c *connector) tasksMax() int {
	if v, ok := c.config.get("tasks.max"); ok && v.kind == kString {
		if n, err := strconv.Atoi(strings.TrimSpace(v.s)); err == nil && n > 0 {
			return n
		}
	}
	return 1
}

func (s *Server) statusJSON(c *connector, v statusView) rawJSON {
	type state struct {
		State    string  `json:"state"`
		WorkerID string  `json:"worker_id"`
		Version  *string `json:"version"`
	}
	type task struct {
		ID       int     `json:"id"`
		State    string  `json:"state"`
		WorkerID string  `json:"worker_id"`
		Version  *string `json:"version"`
	}
	version := s.version
	out := struct {
		Name      string `json:"name"`
		Connector state  `json:"connector"`
		Tasks     []task `json:"tasks"`
		Type      string `json:"type"`
	}{Name: c.name, Connector: state{v.state, s.workerID, &version}, Tasks: []task{}, Type: "source"}
	for i, st := range v.taskStates {
		t := task{ID: i, State: st, WorkerID: s.workerID, Version: &version}
		if st == stateUnassigned {
			t.Version = nil
		}
		out.Tasks = append(out.Tasks, t)
	}
	b, _ := marshalNoEscape(out)
	return b
}

// infoJSON is ConnectorInfo: the configuration in the given key order and
// the task IDs.
func infoJSON(c *connector, cfg []byte, tasks int) []byte {
	b := []byte(`{"name":`)
	b = appendJSONString(b, c.name)
	b = append(b, `,"config":`...)
	b = append(b, cfg...)
	b = append(b, `,"tasks":[`...)
	for i := range tasks {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"connector":`...)
		b = appendJSONString(b, c.name)
		b = append(b, `,"task":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, '}')
	}
	return append(b, `],"type":"source"}`...)
}

// storedConfigJSON is the configuration as GET answers it: read back from
// the config topic into a HashMap.
func storedConfigJSON(c *connector) []byte { return c.config.appendJSON(nil, true) }

// submittedConfigJSON is the configuration as create and update answer it:
// in the order submitted, "name" added last.
func submittedConfigJSON(c *connector) []byte { return c.config.appendJSON(nil, false) }

// handleList answers GET /connectors[?expand=status|info].
func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.connectors))
	for n := range s.connectors {
		names = append(names, n)
	}
	slices.Sort(names) // a stable order within a bucket

	names = inHashOrder(names, javaStringHash, grownTableSize(len(names)))
	expand := r.URL.Query()["expand"]
	if len(expand) == 0 {
		writeJSON(w, http.StatusOK, names)
		return
	}
	var kinds []string
	for _, e := range expand {
		if (e == "status" || e == "info") && !slices.Contains(kinds, e) {
			kinds = append(kinds, e)
		}
	}
	kinds = inHashOrder(kinds, javaStringHash, grownTableSize(len(kinds)))
	b := []byte{'{'}
	first := true
	for _, n := range names {
		c := s.connectors[n]
		var parts [][]byte
		omitted := false
		for _, k := range kinds {
			switch k {
			case "status":
				if c.hidden > 0 {
					c.hidden--
					omitted = true // the worker's NotFoundException leaves it out
					continue
				}
				parts = append(parts, append([]byte(`"status":`), s.statusJSON(c, c.current(true))...))
			case "info":
				parts = append(parts, append([]byte(`"info":`), infoJSON(c, storedConfigJSON(c), c.tasks)...))
			}
		}
		if omitted {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendJSONString(b, n)
		b = append(b, ':', '{')
		b = append(b, bytes.Join(parts, []byte{','})...)
		b = append(b, '}')
	}
	b = append(b, '}')
	writeJSON(w, http.StatusOK, rawJSON(b))
}

// connectorOr404 returns the connector named name, or answers 404 as the
// worker does and returns false. The caller holds s.mu.
func (s *Server) connectorOr404(w http.ResponseWriter, name string) (*connector, bool) {
	c, ok := s.connectors[name]
	if !ok {
		writeError(w, http.StatusNotFound, "Connector %s not found", name)
	}
	return c, ok
}

// handleInfo answers GET /connectors/{name}.
func (s *Server) handleInfo(w http.ResponseWriter, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.connectorOr404(w, name)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, rawJSON(infoJSON(c, storedConfigJSON(c), c.tasks)))
}

// handleGetConfig answers GET /connectors/{name}/config.
func (s *Server) handleGetConfig(w http.ResponseWriter, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.connectorOr404(w, name)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, rawJSON(storedConfigJSON(c)))
}

// handleStatus answers GET /connectors/{name}/status.
func (s *Server) handleStatus(w http.ResponseWriter, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.connectors[name]
	if !ok || c.hidden > 0 {
		if ok {
			c.hidden--
		}
		writeError(w, http.StatusNotFound, "No status found for connector %s", name)
		return
	}
	writeJSON(w, http.StatusOK, s.statusJSON(c, c.current(true)))
}

// handleDelete answers DELETE /connectors/{name}. The offsets stay.
func (s *Server) handleDelete(w http.ResponseWriter, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.connectorOr404(w, name); !ok {
		return
	}
	delete(s.connectors, name)
	noContent(w, http.StatusNoContent)
}

// handleTransition answers PUT /connectors/{name}/stop, /pause and /resume:
// 204 for stop (the worker answers once the STOPPED target state and the
// empty task list are written), 202 for pause and resume.
func (s *Server) handleTransition(w http.ResponseWriter, name, op string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.connectors[name]
	if !ok {
		writeError(w, http.StatusNotFound, "Unknown connector %s", name)
		return
	}
	before := c.current(false)
	switch op {
	case "stop":
		c.target, c.tasks = stateStopped, 0
	case "pause":
		c.target = statePaused // a stopped connector stays without tasks
	case "resume":
		c.target = stateRunning
		if c.tasks == 0 {
			c.tasks = c.tasksMax()
		}
	}
	// A pause or resume is only accepted (202) when answered: a worker's next
	// status read shows the connector as it was (pinned by
	// TestConformanceTransient). After a stop a worker shows one of several
	// shapes for a while, depending on timing; the fake shows the end state.
	if op != "stop" && s.statusLag > 0 && c.hidden == 0 && before.state != c.target {
		c.shown, c.shownLeft = &before, s.statusLag
	} else if op == "stop" {
		c.shown, c.shownLeft = nil, 0
	}
	if op == "stop" {
		noContent(w, http.StatusNoContent)
		return
	}
	noContent(w, http.StatusAccepted)
}

// handleCreate answers POST /connectors.
func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r, `Cannot invoke "org.apache.kafka.connect.runtime.rest.entities.CreateConnectorRequest.name()" because "createRequest" is null`)
	if !ok {
		return
	}
	req, err := decodeCreateRequest(body)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%s", err.Error())
		return
	}
	name := strings.TrimSpace(req.name)
	if req.config == nil {
		writeError(w, http.StatusInternalServerError, `Cannot invoke "java.util.Map.get(Object)" because "connectorConfig" is null`)
		return
	}
	cfg := *req.config
	if msg := checkAndPutName(name, &cfg); msg != "" {
		writeError(w, http.StatusBadRequest, "%s", msg)
		return
	}
	class, status, msg := s.validateForWrite(cfg)
	if status != 0 {
		writeError(w, status, "%s", msg)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.connectors[name]; ok {
		writeError(w, http.StatusConflict, "Connector %s already exists", name)
		return
	}
	target := req.initialState
	if target == "" {
		target = stateRunning
	}
	c := &connector{name: name, config: cfg, class: class, target: target, hidden: s.statusLag}
	if target == stateRunning {
		c.tasks = c.tasksMax()
	}
	s.connectors[name] = c
	w.Header().Set("Location", location(r, name))
	writeJSON(w, http.StatusCreated, rawJSON(infoJSON(c, submittedConfigJSON(c), 0)))
}

// location is the Location of a created connector: its absolute URL.
func location(r *http.Request, name string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/connectors/" + url.PathEscape(name)
}

// handlePutConfig answers PUT /connectors/{name}/config: 201 and a new
// RUNNING connector, or 200 and the configuration replaced (the target state
// kept; a running connector's tasks are reconfigured after the answer, which
// still lists the old ones).
func (s *Server) handlePutConfig(w http.ResponseWriter, r *http.Request, name string) {
	cfg, ok := readConfig(w, r)
	if !ok {
		return
	}
	if msg := checkAndPutName(name, cfg); msg != "" {
		writeError(w, http.StatusBadRequest, "%s", msg)
		return
	}
	class, status, msg := s.validateForWrite(*cfg)
	if status != 0 {
		writeError(w, status, "%s", msg)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.connectors[name]
	if !ok {
		c = &connector{name: name, config: *cfg, class: class, target: stateRunning, hidden: s.statusLag}
		c.tasks = c.tasksMax()
		s.connectors[name] = c
		w.Header().Set("Location", location(r, name))
		writeJSON(w, http.StatusCreated, rawJSON(infoJSON(c, submittedConfigJSON(c), 0)))
		return
	}
	oldTasks := c.tasks
	c.config, c.class = *cfg, class
	if c.target == stateRunning {
		c.tasks = c.tasksMax()
	}
	writeJSON(w, http.StatusOK, rawJSON(infoJSON(c, submittedConfigJSON(c), oldTasks)))
}

// checkAndPutName is ConnectorsResource's rule: a "name" in the
// configuration must equal the connector's name; a missing one is added.
func checkAndPutName(name string, cfg *value) string {
	if v, ok := cfg.get("name"); ok && v.kind == kString {
		if v.s != name {
			return fmt.Sprintf("Connector name configuration (%s) doesn't match connector name in the URL (%s)", v.s, name)
		}
		return ""
	}
	cfg.put("name", stringValue(name))
	return ""
}

// createRequest is the body of POST /connectors.
type createRequest struct {
	name         string
	config       *value
	initialState string
}

// decodeCreateRequest decodes POST /connectors as Jackson does into
// CreateConnectorRequest: unknown fields and unknown initial states are
// refused (the worker answers 500 with Jackson's message); initial_state is
// read without regard to case.
func decodeCreateRequest(body []byte) (createRequest, error) {
	const class = "org.apache.kafka.connect.runtime.rest.entities.CreateConnectorRequest"
	var req createRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := expectDelim(dec, '{'); err != nil {
		return req, err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return req, err
		}
		field, _ := tok.(string)
		switch field {
		case "name":
			s, err := decodeString(dec)
			if err != nil {
				return req, err
			}
			req.name = s
		case "config":
			cfg, err := decodeConfig(dec)
			if err != nil {
				return req, err
			}
			req.config = cfg
		case "initial_state":
			s, err := decodeString(dec)
			if err != nil {
				return req, err
			}
			switch st := strings.ToUpper(s); st {
			case "", stateRunning, statePaused, stateStopped:
				req.initialState = st
			default:
				return req, refuse("Cannot construct instance of `%s$InitialState`, problem: No enum constant %s.InitialState.%s%s (through reference chain: %s[\"initial_state\"])",
					class, class, st, jacksonLocation(dec), class)
			}
		default:
			return req, refuse("Unrecognized field %q (class %s), not marked as ignorable (3 known properties: \"config\", \"name\", \"initial_state\")%s (through reference chain: %s[%q])",
				field, class, jacksonLocation(dec), class, field)
		}
	}
	return req, nil
}

// jacksonLocation is the location suffix of Jackson's messages. The column
// is where the fake's decoder stands, which need not be Jackson's.
func jacksonLocation(dec *json.Decoder) string {
	return fmt.Sprintf("\n at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: %d]", dec.InputOffset()+1)
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != d {
		return fmt.Errorf("connectfake: expected %v, got %v", d, tok)
	}
	return nil
}

// decodeString reads a JSON string or null.
func decodeString(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	switch t := tok.(type) {
	case nil:
		return "", nil
	case string:
		return t, nil
	case json.Number:
		return string(t), nil
	case bool:
		return strconv.FormatBool(t), nil
	}
	return "", fmt.Errorf("connectfake: expected a string, got %v", tok)
}

// decodeConfig reads a JSON object as Jackson reads a Map<String, String>:
// numbers and booleans become their text, null stays null; nil for a JSON
// null.
func decodeConfig(dec *json.Decoder) (*value, error) {
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, nil
		}
		return nil, err
	}
	if tok == nil {
		return nil, nil
	}
	if tok != json.Delim('{') {
		return nil, fmt.Errorf("connectfake: the configuration must be a JSON object, got %v", tok)
	}
	cfg := value{kind: kMap}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := k.(string)
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case nil:
			cfg.put(key, value{})
		case string:
			cfg.put(key, stringValue(t))
		case json.Number:
			cfg.put(key, stringValue(string(t)))
		case bool:
			cfg.put(key, stringValue(strconv.FormatBool(t)))
		default:
			return nil, refuse("Cannot deserialize value of type `java.lang.String` from %v%s", tok, jacksonLocation(dec))
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, err
	}
	return &cfg, nil
}
