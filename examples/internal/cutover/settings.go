// Package cutover composes the library's packages into the steps of the
// cutover, for the example binaries examples/cutover (the CLI) and
// examples/job (the Kubernetes Job): precheck, plan, apply, verify, resume,
// status and rollback. It is what a platform team's own tool would write: no
// step here knows anything the library packages do not expose.
package cutover

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/plan"
)

// Settings is everything a cutover needs to know, from flags and the
// environment.
type Settings struct {
	Source, Target kafkaadmin.Config

	// Connect is the Kafka Connect REST endpoint and its credentials.
	ConnectURL      string
	ConnectUser     string
	ConnectPassword kafkaadmin.Secret
	ConnectCAFile   string

	Connector   string // connector name; Connect keys offsets by it
	SourceAlias string
	TargetAlias string
	Group       string   // the old job's consumer group
	Topics      []string // source topics in scope
	Policy      string   // "identity" or "default"
	TasksMax    int
	// SourceClient and TargetClient are MirrorSourceConnector's client
	// settings for each cluster (security.protocol, sasl.*, ssl.*), written
	// as source.cluster.* and target.cluster.*. Use config provider
	// references for secrets.
	SourceClient, TargetClient map[string]string
	// Extra connector settings, written last.
	Extra map[string]string

	Savepoint     string                   // optional Flink savepoint reference, recorded in the plan
	AcceptExpired []plan.ExpiredAcceptance // recorded acceptances of expired data

	StabilityWindow time.Duration // how long the group's offsets must stay unchanged
	ReadBackTimeout time.Duration // how long to wait for Connect's read-back to equal the plan
	RunningTimeout  time.Duration // how long to wait for RUNNING after resume
	CatchUpTimeout  time.Duration // how long to wait for lag 0 after resume

	ToolVersion string
	Logger      *slog.Logger

	// OnStep, if set, is called as Apply reaches each of its points:
	// "before-create", "after-create", "after-patch", "before-verify".
	// The Job's tests use it to die at each point and rerun.
	OnStep func(step string)
}

func (s Settings) step(name string) {
	if s.OnStep != nil {
		s.OnStep(name)
	}
}

// ErrSettings matches a problem with the settings.
var ErrSettings = errors.New("invalid settings")

// Validate checks that every required setting is present.
func (s Settings) Validate() error {
	var missing []string
	for name, v := range map[string]string{
		"source bootstrap servers": strings.Join(s.Source.BootstrapServers, ","),
		"target bootstrap servers": strings.Join(s.Target.BootstrapServers, ","),
		"connect URL":              s.ConnectURL,
		"connector name":           s.Connector,
		"group":                    s.Group,
		"topics":                   strings.Join(s.Topics, ","),
	} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("%w: missing %s", ErrSettings, strings.Join(missing, ", "))
	}
	if s.Policy != "" && s.Policy != "identity" && s.Policy != "default" {
		return fmt.Errorf("%w: replication policy %q: want identity or default", ErrSettings, s.Policy)
	}
	return nil
}

// WithDefaults fills the optional settings.
func (s Settings) WithDefaults() Settings {
	if s.SourceAlias == "" {
		s.SourceAlias = "source"
	}
	if s.TargetAlias == "" {
		s.TargetAlias = "target"
	}
	if s.Policy == "" {
		s.Policy = "identity"
	}
	if s.TasksMax == 0 {
		s.TasksMax = 1
	}
	if s.StabilityWindow == 0 {
		s.StabilityWindow = 30 * time.Second
	}
	if s.ReadBackTimeout == 0 {
		s.ReadBackTimeout = 2 * time.Minute
	}
	if s.RunningTimeout == 0 {
		s.RunningTimeout = 2 * time.Minute
	}
	if s.CatchUpTimeout == 0 {
		s.CatchUpTimeout = 5 * time.Minute
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	return s
}

// MirrorSource returns the connector the cutover creates.
func (s Settings) MirrorSource() connect.MirrorSource {
	policy := connect.IdentityPolicy
	if s.Policy == "default" {
		policy = connect.DefaultPolicy
	}
	return connect.MirrorSource{
		Name:              s.Connector,
		SourceAlias:       s.SourceAlias,
		TargetAlias:       s.TargetAlias,
		SourceBootstrap:   strings.Join(s.Source.BootstrapServers, ","),
		TargetBootstrap:   strings.Join(s.Target.BootstrapServers, ","),
		SourceClient:      s.SourceClient,
		TargetClient:      s.TargetClient,
		Topics:            s.Topics,
		TasksMax:          s.TasksMax,
		ReplicationPolicy: policy,
		IsolationLevel:    "read_committed",
		Extra:             s.Extra,
	}
}

// ReplicationPolicy returns the naming of target topics under the settings.
func (s Settings) ReplicationPolicy() kafkaadmin.ReplicationPolicy {
	if s.Policy == "default" {
		return kafkaadmin.ReplicationPolicy{Kind: kafkaadmin.DefaultPolicy, SourceAlias: s.SourceAlias}
	}
	return kafkaadmin.ReplicationPolicy{Kind: kafkaadmin.IdentityPolicy}
}
