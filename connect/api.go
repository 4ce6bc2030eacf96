package connect

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"

	"github.com/mm2cutover/mm2cutover/redact"
)

// ServerInfo is the answer of GET / on a Connect worker.
type ServerInfo struct {
	Version        string `json:"version"`          // Kafka release of the worker, e.g. "4.3.1"
	Commit         string `json:"commit"`           // git commit of that release
	KafkaClusterID string `json:"kafka_cluster_id"` // cluster ID of the worker's own Kafka cluster (its internal topics)
}

// PluginInfo is one entry of GET /connector-plugins.
type PluginInfo struct {
	Class   string `json:"class"`   // e.g. "org.apache.kafka.connect.mirror.MirrorSourceConnector"
	Type    string `json:"type"`    // "source", "sink", and with connectorsOnly=false "converter", ...
	Version string `json:"version"` // plugin version; for MM2, the Kafka version
}

// Connector states reported by GET /connectors/{n}/status.
const (
	StateRunning    = "RUNNING"
	StatePaused     = "PAUSED"
	StateStopped    = "STOPPED"
	StateFailed     = "FAILED"
	StateUnassigned = "UNASSIGNED"
	StateRestarting = "RESTARTING"
)

// State is the state of a connector or task on a worker.
type State struct {
	State    string `json:"state"`           // one of the State* constants
	WorkerID string `json:"worker_id"`       // the worker's advertised host:port
	Trace    string `json:"trace,omitempty"` // Java stack trace when FAILED
}

// TaskState is the state of one task.
type TaskState struct {
	ID int `json:"id"`
	State
}

// ConnectorStatus is the answer of GET /connectors/{n}/status: the connector's
// state and its tasks'. A STOPPED connector has no tasks; a PAUSED one keeps
// them (PAUSED).
type ConnectorStatus struct {
	Name      string      `json:"name"`
	Connector State       `json:"connector"`
	Tasks     []TaskState `json:"tasks"`
	Type      string      `json:"type"` // "source" or "sink"
}

// TaskID names a task of a connector.
type TaskID struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
}

// ConnectorInfo is the answer of GET /connectors/{n} and of create and
// config updates: the stored configuration (with "name" added by Connect) and
// the current task IDs.
type ConnectorInfo struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	Tasks  []TaskID          `json:"tasks"`
	Type   string            `json:"type"`
}

// InitialState is the target state of a connector created by POST
// /connectors (KIP-980, Kafka 3.7).
type InitialState string

// Initial states. InitialDefault omits the field: the connector starts RUNNING
// and works on any version.
const (
	InitialDefault InitialState = ""
	InitialRunning InitialState = "RUNNING"
	InitialPaused  InitialState = "PAUSED"
	InitialStopped InitialState = "STOPPED"
)

// ServerInfo reads GET /: the worker's Kafka version, commit and Kafka
// cluster ID. It is retried on transient errors and the version is cached for
// the version gates of later calls.
func (c *Client) ServerInfo(ctx context.Context) (*ServerInfo, error) {
	var info ServerInfo
	if _, err := c.do(ctx, request{method: http.MethodGet, path: "/", repeat: RepeatSafe, timeout: serverInfoTimeout}, &info); err != nil {
		return nil, err
	}
	c.mu.Lock()
	cp := info
	c.version = &cp
	c.mu.Unlock()
	return &info, nil
}

// serverInfoTimeout bounds each attempt of GET /, which a worker answers
// from its own memory: an endpoint that accepts the connection and says
// nothing for this long is taken for one that does not answer.
const serverInfoTimeout = 5 * time.Second

// requireVersion returns a *VersionError when the worker is older than need.
func (c *Client) requireVersion(ctx context.Context, feature string, need kafkaVersion) error {
	c.mu.Lock()
	info := c.version
	c.mu.Unlock()
	if info == nil {
		var err error
		if info, err = c.ServerInfo(ctx); err != nil {
			return err
		}
	}
	v, err := parseKafkaVersion(info.Version)
	if err != nil {
		return err
	}
	if !v.atLeast(need) {
		return &VersionError{Feature: feature, Need: need.String(), Have: info.Version}
	}
	return nil
}

// Plugins lists the connector plugins installed on the worker that answers
// (GET /connector-plugins). Workers of one cluster should have the same
// plugins; the precheck looks for MirrorSourceConnectorClass.
func (c *Client) Plugins(ctx context.Context) ([]PluginInfo, error) {
	var out []PluginInfo
	if _, err := c.do(ctx, request{method: http.MethodGet, path: "/connector-plugins", repeat: RepeatSafe}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Connectors lists every connector with its status (GET
// /connectors?expand=status), keyed by connector name. A connector deleted
// while the worker builds the answer is left out by Connect.
func (c *Client) Connectors(ctx context.Context) (map[string]ConnectorStatus, error) {
	var raw map[string]struct {
		Status ConnectorStatus `json:"status"`
	}
	req := request{method: http.MethodGet, path: "/connectors", query: url.Values{"expand": {"status"}}, repeat: RepeatSafe}
	if _, err := c.do(ctx, req, &raw); err != nil {
		return nil, err
	}
	out := make(map[string]ConnectorStatus, len(raw))
	for name, v := range raw {
		out[name] = v.Status
	}
	return out, nil
}

// Connector reads GET /connectors/{name}. It returns an *APIError matching
// ErrNotFound when the connector does not exist.
func (c *Client) Connector(ctx context.Context, name string) (*ConnectorInfo, error) {
	var out ConnectorInfo
	if _, err := c.do(ctx, request{method: http.MethodGet, path: connectorPath(name, ""), repeat: RepeatSafe}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Config reads the stored configuration of a connector (GET
// /connectors/{name}/config), as submitted: config provider references are
// not resolved. It returns an *APIError matching ErrNotFound when the
// connector does not exist.
func (c *Client) Config(ctx context.Context, name string) (map[string]string, error) {
	var out map[string]string
	if _, err := c.do(ctx, request{method: http.MethodGet, path: connectorPath(name, "/config"), repeat: RepeatSafe}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Status reads GET /connectors/{name}/status. It returns an *APIError
// matching ErrNotFound when the connector does not exist.
func (c *Client) Status(ctx context.Context, name string) (*ConnectorStatus, error) {
	var out ConnectorStatus
	if _, err := c.do(ctx, request{method: http.MethodGet, path: connectorPath(name, "/status"), repeat: RepeatSafe}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Create creates a connector (POST /connectors) with the given configuration
// and initial state. Use InitialStopped for the cutover: the connector then
// never runs before its offsets are set. A non-default initial state needs a
// Kafka 3.7 worker (*VersionError otherwise).
//
// Create is retried only when the worker refused it because of a rebalance.
// If a retried create then meets "already exists", the earlier attempt may
// have succeeded: Create reads the existing configuration and succeeds if it
// equals the requested one ("name" aside), and otherwise returns a
// *ConfigConflictError. A first attempt meeting "already exists" returns the
// worker's *APIError (ErrAlreadyExists).
func (c *Client) Create(ctx context.Context, name string, config map[string]string, initial InitialState) (*ConnectorInfo, error) {
	if name == "" {
		return nil, errors.New("connect: connector name is empty")
	}
	if initial != InitialDefault {
		if err := c.requireVersion(ctx, "creating a connector with initial_state", versionInitialState); err != nil {
			return nil, err
		}
	}
	body := struct {
		Name         string            `json:"name"`
		Config       map[string]string `json:"config"`
		InitialState InitialState      `json:"initial_state,omitempty"`
	}{name, config, initial}
	req := request{method: http.MethodPost, path: "/connectors", body: body, repeat: RepeatOnRebalance, secrets: redact.SecretValues(config, nil)}

	data, err := encodeBody(req)
	if err != nil {
		return nil, err
	}
	var (
		out      ConnectorInfo
		attempts int
	)
	err = c.retry(ctx, req, func() error {
		attempts++
		_, err := c.once(ctx, req, data, &out)
		if err != nil && attempts > 1 && errors.Is(err, ErrAlreadyExists) {
			return c.adoptExisting(ctx, name, config, &out, err)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// adoptExisting decides whether an "already exists" met by a retried create
// is our own earlier attempt: only if the stored configuration is the one
// requested.
func (c *Client) adoptExisting(ctx context.Context, name string, want map[string]string, out *ConnectorInfo, existsErr error) error {
	info, err := c.Connector(ctx, name)
	if err != nil {
		return fmt.Errorf("connect: create %q was retried and met an existing connector, reading it failed: %w", name, err)
	}
	if keys := configDiffKeys(name, want, info.Config); len(keys) > 0 {
		return &ConfigConflictError{Connector: name, Keys: keys, Err: existsErr}
	}
	*out = *info
	return nil
}

// configDiffKeys lists the keys whose values differ between the requested and
// the stored configuration; Connect adds "name" to the stored one.
func configDiffKeys(name string, want, got map[string]string) []string {
	w := make(map[string]string, len(want)+1)
	for k, v := range want {
		w[k] = v
	}
	if _, ok := w["name"]; !ok {
		w["name"] = name
	}
	var keys []string
	for k, v := range w {
		if gv, ok := got[k]; !ok || gv != v {
			keys = append(keys, k)
		}
	}
	for k := range got {
		if _, ok := w[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// PutConfig creates or replaces a connector's configuration (PUT
// /connectors/{name}/config). created reports a 201 (a new connector, which
// starts RUNNING) as opposed to a 200 (an update; the connector keeps its
// target state). It is safe to repeat and retried on transient errors.
func (c *Client) PutConfig(ctx context.Context, name string, config map[string]string) (info *ConnectorInfo, created bool, err error) {
	var out ConnectorInfo
	status, err := c.do(ctx, request{method: http.MethodPut, path: connectorPath(name, "/config"), body: config,
		repeat: RepeatSafe, secrets: redact.SecretValues(config, nil)}, &out)
	if err != nil {
		return nil, false, err
	}
	return &out, status == http.StatusCreated, nil
}

// Delete deletes a connector (DELETE /connectors/{name}). Its offsets are
// kept by Connect and inherited by a new connector of the same name: reset
// them first (ResetOffsets) when they must go too. Deleting a connector that
// does not exist returns an *APIError matching ErrNotFound.
func (c *Client) Delete(ctx context.Context, name string) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, path: connectorPath(name, ""), repeat: RepeatSafe}, nil)
	return err
}

// Stop asks for the STOPPED state (PUT /connectors/{name}/stop, Kafka 3.5):
// the connector and its tasks shut down and its task configurations are
// removed. The change is asynchronous: use WaitStopped.
func (c *Client) Stop(ctx context.Context, name string) error {
	_, err := c.do(ctx, request{method: http.MethodPut, path: connectorPath(name, "/stop"), repeat: RepeatSafe}, nil)
	return err
}

// Pause asks for the PAUSED state (PUT /connectors/{name}/pause). PAUSED is
// not STOPPED: tasks stay assigned and offsets cannot be altered.
func (c *Client) Pause(ctx context.Context, name string) error {
	_, err := c.do(ctx, request{method: http.MethodPut, path: connectorPath(name, "/pause"), repeat: RepeatSafe}, nil)
	return err
}

// Resume asks for the RUNNING state (PUT /connectors/{name}/resume), from
// PAUSED or STOPPED. For the cutover this is the point of no return: the
// connector starts reading at the offsets set. Use WaitRunning after it.
func (c *Client) Resume(ctx context.Context, name string) error {
	_, err := c.do(ctx, request{method: http.MethodPut, path: connectorPath(name, "/resume"), repeat: RepeatSafe}, nil)
	return err
}

// RestartOptions selects what POST /connectors/{name}/restart restarts.
type RestartOptions struct {
	IncludeTasks bool // restart the tasks too
	OnlyFailed   bool // restart only instances in the FAILED state
}

// Restart restarts a connector (POST /connectors/{name}/restart). With the
// zero RestartOptions only the connector instance restarts and the status is
// nil; otherwise the worker answers 202 with the status. Restart is not
// retried.
func (c *Client) Restart(ctx context.Context, name string, opts RestartOptions) (*ConnectorStatus, error) {
	q := url.Values{}
	if opts.IncludeTasks {
		q.Set("includeTasks", strconv.FormatBool(true))
	}
	if opts.OnlyFailed {
		q.Set("onlyFailed", strconv.FormatBool(true))
	}
	var out ConnectorStatus
	status, err := c.do(ctx, request{method: http.MethodPost, path: connectorPath(name, "/restart"), query: q, repeat: NeverRepeat}, &out)
	if err != nil {
		return nil, err
	}
	if status != http.StatusAccepted {
		return nil, nil
	}
	return &out, nil
}

// ConfigInfos is the answer of the validate endpoint: one entry per known
// configuration key with the value Connect saw and its errors.
type ConfigInfos struct {
	Name       string       `json:"name"` // connector class
	ErrorCount int          `json:"error_count"`
	Groups     []string     `json:"groups"`
	Configs    []ConfigInfo `json:"configs"`
}

// ConfigInfo is one key of ConfigInfos: its definition in the plugin's
// ConfigDef and the value Connect saw.
type ConfigInfo struct {
	Definition ConfigKeyInfo   `json:"definition"`
	Value      ConfigValueInfo `json:"value"`
}

// ConfigKeyInfo is the definition of one key as the plugin declares it.
type ConfigKeyInfo struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"` // "STRING", "INT", "LIST", ...; "PASSWORD" marks a secret
	Required      bool     `json:"required"`
	DefaultValue  *string  `json:"default_value"`
	Importance    string   `json:"importance"`
	Documentation string   `json:"documentation"`
	Group         string   `json:"group"`
	DisplayName   string   `json:"display_name"`
	Dependents    []string `json:"dependents"`
}

// TypePassword is ConfigKeyInfo.Type of a key that holds a secret
// (ConfigDef.Type.PASSWORD): Connect masks its value in the answer.
const TypePassword = "PASSWORD"

// PasswordKeys returns the sorted names of the keys the plugin defines as
// PASSWORD: the plugin's own word on what is secret, for the redaction
// of redact.ConfigWith. Keys the plugin passes through without defining
// them (MirrorSourceConnector's source.cluster.* client settings, for
// example) are not among them; redact.IsSecretKey covers those.
func (c *ConfigInfos) PasswordKeys() []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, ci := range c.Configs {
		if ci.Definition.Type == TypePassword && ci.Definition.Name != "" {
			out = append(out, ci.Definition.Name)
		}
	}
	sort.Strings(out)
	return out
}

// ConfigValueInfo is the validation result of one key.
type ConfigValueInfo struct {
	Name              string   `json:"name"`
	Value             *string  `json:"value"`
	RecommendedValues []string `json:"recommended_values"`
	Errors            []string `json:"errors"`
	Visible           bool     `json:"visible"`
}

// Validate runs the plugin's own validation on config (PUT
// /connector-plugins/{class}/config/validate). Invalid values are not an
// error: they are listed in the answer's ErrorCount and per-key Errors (see
// ValidationFindings). The call is safe to repeat and retried on transient
// errors. Secret values are masked by Connect for password-typed keys.
func (c *Client) Validate(ctx context.Context, class string, config map[string]string) (*ConfigInfos, error) {
	var out ConfigInfos
	req := request{method: http.MethodPut, path: "/connector-plugins/" + url.PathEscape(class) + "/config/validate",
		body: config, repeat: RepeatSafe, secrets: redact.SecretValues(config, nil)}
	if _, err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
