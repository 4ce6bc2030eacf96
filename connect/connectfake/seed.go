package connectfake

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/mm2cutover/mm2cutover/offsets"
)

// State is a connector's target state, as the worker's configuration topic
// holds it: what a create's initial_state, a pause, a resume or a stop
// sets.
type State string

// The target states of a connector.
const (
	StateRunning State = stateRunning
	StatePaused  State = statePaused
	StateStopped State = stateStopped
)

// Connector is a connector as the worker's configuration topic holds it:
// what WithConnectors and SeedConnector create, and what Server.Connector
// returns.
type Connector struct {
	// Name is the connector's name.
	Name string
	// Config is its configuration; "connector.class" names a MirrorMaker 2
	// connector (its full class name or an alias). "name" is added when
	// absent and must equal Name when present. Server.Connector leaves out
	// keys whose value is null.
	Config map[string]string
	// State is its target state; "" seeds a RUNNING connector.
	State State
	// Tasks is how many task configurations it has: tasks.max (1 when
	// unset) while RUNNING, 0 once STOPPED, 0 for a connector created
	// PAUSED. It is set by the fake; a seed's is ignored.
	Tasks int
}

// ErrInvalidSeed is returned by SeedConnector and SeedOffsets for a
// connector or offsets the worker would refuse; New panics with it for an
// invalid WithConnectors or WithOffsets, a test's own mistake.
var ErrInvalidSeed = errors.New("connectfake: invalid seed")

// WithConnectors makes New create the connectors before it serves: each
// with its configuration, in its State, with its status shown at once (it
// existed before the test), as SeedConnector does. Together with
// WithOffsets it is the world a test starts from, as controller-runtime's
// fake client builder's WithObjects is. New panics when one is invalid.
func WithConnectors(cs ...Connector) Option {
	return func(s *Server) {
		for _, c := range cs {
			c.Config = maps.Clone(c.Config)
			s.seeds = append(s.seeds, func() error { return s.SeedConnector(c) })
		}
	}
}

// WithOffsets makes New store MirrorSourceConnector offsets under the
// connector name, whether or not a connector of that name exists, as
// SeedOffsets does: offsets outlive connectors, so a connector created
// later under that name inherits them. New panics when they are invalid.
func WithOffsets(name string, list ...offsets.ConnectOffset) Option {
	list = slices.Clone(list)
	return func(s *Server) {
		s.seeds = append(s.seeds, func() error { return s.SeedOffsets(name, list...) })
	}
}

// SeedConnector creates the connector, or replaces the one of that name,
// as it would be once a create with initial_state c.State (RUNNING when
// empty) has settled: its status shows at once, whatever WithStatusLag
// says. The offsets stored under its name stay. The configuration is
// stored as a create that sent its keys sorted leaves it (encoding/json
// writes a map so, and connect.Client sends one): GET answers list the
// keys in a Java HashMap's order, which for keys of the same bucket is
// the order they were submitted in. It returns an error
// matching ErrInvalidSeed when the worker would refuse the configuration
// (no or an unknown connector.class, a missing required key, a name that
// differs, an invalid tasks.max) or the state.
func (s *Server) SeedConnector(c Connector) error {
	if c.Name == "" {
		return fmt.Errorf("%w: a connector needs a name", ErrInvalidSeed)
	}
	cfg := value{kind: kMap}
	for _, k := range slices.Sorted(maps.Keys(c.Config)) {
		cfg.put(k, stringValue(c.Config[k]))
	}
	if msg := checkAndPutName(c.Name, &cfg); msg != "" {
		return fmt.Errorf("%w: %s", ErrInvalidSeed, msg)
	}
	target := string(c.State)
	switch c.State {
	case "":
		target = stateRunning
	case StateRunning, StatePaused, StateStopped:
	default:
		return fmt.Errorf("%w: connector %s: state %q is not RUNNING, PAUSED or STOPPED", ErrInvalidSeed, c.Name, c.State)
	}
	class, status, msg := s.validateForWrite(cfg)
	if status != 0 {
		return fmt.Errorf("%w: connector %s: %s", ErrInvalidSeed, c.Name, msg)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	conn := &connector{name: c.Name, config: cfg, class: class, target: target}
	if target == stateRunning {
		conn.tasks = conn.tasksMax()
	}
	s.connectors[c.Name] = conn
	return nil
}

// SeedOffsets stores MirrorSourceConnector offsets under the connector
// name, as a PATCH of its offsets or a running task's commit would: a
// partition's offset replaces the one stored, a null offset removes it.
// No connector of that name needs to exist, and none is checked to be
// STOPPED. It returns an error matching ErrInvalidSeed for an offset
// MirrorSourceConnector refuses (a negative partition or offset).
func (s *Server) SeedOffsets(name string, list ...offsets.ConnectOffset) error {
	if name == "" {
		return fmt.Errorf("%w: offsets need a connector name", ErrInvalidSeed)
	}
	entries := make([]offsetEntry, 0, len(list))
	for _, o := range list {
		e := offsetEntry{partition: value{kind: kMap, m: []entry{
			{"cluster", stringValue(o.Partition.Cluster)},
			{"topic", stringValue(o.Partition.Topic)},
			{"partition", longValue(int64(o.Partition.Partition))},
		}}}
		if m, ok := o.Offset.Get(); ok {
			e.offset = value{kind: kMap, m: []entry{{"offset", longValue(m)}}}
		}
		if msg := mirrorSourceOffsetError(e.partition, e.offset); msg != "" {
			return fmt.Errorf("%w: offsets of %s: %s", ErrInvalidSeed, name, msg)
		}
		entries = append(entries, e)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.store(name)
	for _, e := range entries {
		st.set(e.partition, e.offset)
	}
	return nil
}

// Connector returns the named connector as the worker's configuration
// topic holds it now: its configuration, target state and number of
// tasks, whatever its status shows during a status lag. ok is false when
// there is no connector of that name.
func (s *Server) Connector(name string) (c Connector, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	conn, ok := s.connectors[name]
	if !ok {
		return Connector{}, false
	}
	c = Connector{Name: name, Config: make(map[string]string, len(conn.config.m)), State: State(conn.target), Tasks: conn.tasks}
	for _, e := range conn.config.m {
		if e.val.kind == kString {
			c.Config[e.key] = e.val.s
		}
	}
	return c, true
}

// ConnectorNames returns the names of the worker's connectors, sorted.
func (s *Server) ConnectorNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.connectors))
}

// Offsets returns the offsets stored under the connector name now, sorted
// (GET /connectors/{name}/offsets lists them in the order first written,
// and may answer older ones after SetStaleOffsetReads), whether or not a
// connector of that name exists: none is an empty list. Offsets of
// another shape than MirrorSourceConnector's give an error matching
// offsets.ErrMalformed.
func (s *Server) Offsets(name string) ([]offsets.ConnectOffset, error) {
	s.mu.Lock()
	var body []byte
	if st, ok := s.offsets[name]; ok {
		body = offsetsJSON(st.entries)
	} else {
		body = offsetsJSON(nil)
	}
	s.mu.Unlock()
	list, err := offsets.ParseConnectOffsets(body)
	if err != nil {
		return nil, err
	}
	if list == nil {
		list = []offsets.ConnectOffset{}
	}
	slices.SortFunc(list, offsets.CompareConnectOffsets)
	return list, nil
}
