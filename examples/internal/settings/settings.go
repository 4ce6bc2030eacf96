// Package settings is what an operator tells the example binaries
// (examples/cutover, the CLI, and examples/job, the Kubernetes Job): the
// flags (Flags, BindFlags), each also an MM2CUTOVER_* variable of the
// environment or of a -config file, the client properties files Kafka's
// tools take, and the Settings they make, validated (Validate) before any
// step reaches a cluster, with the defaults the steps assume
// (WithDefaults) and the connector configuration they build
// (ConnectorConfig).
//
// It reads files and the environment and nothing else: the clients and the
// steps are package app's, and every rule that protects data is the
// library's.
package settings

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/redact"
	"github.com/mm2cutover/mm2cutover/verify"
)

// Settings is everything a cutover needs to know, from flags and the
// environment.
type Settings struct {
	Source, Target kafkaadmin.Config

	// Connect is the Kafka Connect REST endpoint and its credentials.
	ConnectURL      string
	ConnectUser     string
	ConnectPassword redact.Secret
	ConnectCAFile   string
	// ConnectOptions are the REST client's options from
	// -connect-client-config (its TLS).
	ConnectOptions []connect.Option

	// RequestTimeout bounds each request to Kafka and Connect;
	// RetryTimeout how long transient failures are retried.
	RequestTimeout, RetryTimeout time.Duration
	// Notices are what the settings' reading has to say that is no error
	// (client settings given that do not apply); app.Open logs them.
	Notices []string

	// StrimziCluster, when set, names the KafkaConnect (with
	// strimzi.io/use-connector-resources) or KafkaMirrorMaker2 whose
	// operator owns the connector: the cutover then writes nothing over
	// REST, the precheck's strimzi-managed check passes, and the strimzi
	// step renders the resources (plan.WriteStrimzi) in StrimziNamespace.
	StrimziCluster, StrimziNamespace string

	Connector   string // connector name; Connect keys offsets by it
	SourceAlias string
	TargetAlias string
	Group       string   // the old job's consumer group
	Topics      []string // source topics in scope
	Policy      string   // "identity" or "default"
	// TasksMax is the connector's tasks.max. 0 chooses it: the plan step
	// takes connect.TasksFor of the source partitions and records it in
	// the plan, and the steps after it take the plan's (WithPlan).
	TasksMax int
	// WorkerMaxRequestSize is the Connect workers' producer.max.request.size
	// as their properties set it (REST does not show it); 0 means not set.
	WorkerMaxRequestSize int
	// WorkerStorage names the Connect cluster's internal topics and their
	// replication factor as the workers' properties set them (the worker
	// image's CONNECT_*_STORAGE_TOPIC); empty names are not checked.
	WorkerStorage verify.WorkerStorage
	// SourceClient and TargetClient are MirrorSourceConnector's client
	// settings for each cluster (security.protocol, sasl.*, ssl.*), written
	// as source.cluster.* and target.cluster.*. Use config provider
	// references for secrets. They may not hold bootstrap.servers: the
	// addresses are -source-bootstrap and -target-bootstrap, which the
	// cutover's own clients use too.
	SourceClient, TargetClient map[string]string
	// Extra connector settings (the -connector-properties file): written
	// under the keys the cutover requires, which they may not change.
	Extra map[string]string
	// ExactlyOnce creates the connector with Kafka Connect's exactly-once
	// source support (connect.MirrorSource.ExactlyOnce); WorkerGroup is then
	// the workers' group.id (the image's CONNECT_GROUP_ID), which REST does
	// not show: the precheck asks every worker of that group and names the
	// task producers' transactional IDs by it. WorkerPrincipal is the
	// principal the workers' producer authenticates as on the target
	// ("User:mm2"), when the connector does not override it.
	ExactlyOnce                  bool
	WorkerGroup, WorkerPrincipal string
	// OffsetSyncs is the explicit decision, for a worker below Kafka 3.9, of
	// where the offset-syncs topic goes; nil for 3.9+ (no offset syncs).
	OffsetSyncs *connect.OffsetSyncsTopic

	// OffsetsFile, when set, is where C comes from instead of the group's
	// commits: a kafka-consumer-groups.sh --reset-offsets --export CSV file
	// (-offsets-from csv:FILE). Group still names the old job's group.
	OffsetsFile string
	// OffsetsFileOverridesGroup records that the file's positions were
	// chosen deliberately and may differ from the group's commits.
	OffsetsFileOverridesGroup bool
	// OffsetsTopic, when set, is where C comes from instead: the Connect
	// offsets topic (on the target) of a MirrorMaker 2 in dedicated mode,
	// mm2-offsets.<its source alias>.internal (-offsets-from mm2:TOPIC).
	// Its offsets are those of OffsetsConnector stored under the source
	// alias OffsetsAlias; C = M+1.
	OffsetsTopic, OffsetsConnector, OffsetsAlias string
	// OffsetsConnectorTopic is the old connector's own offsets topic, when
	// its configuration sets offsets.storage.topic: read with OffsetsTopic,
	// its entries winning (verify.ConnectorOffsets.ConnectorTopic).
	OffsetsConnectorTopic string

	// OffsetsSavepoint, when set, is where C comes from instead: a Flink
	// job's final savepoint directory (-offsets-from flink-savepoint:DIR),
	// read by package flinksavepoint. FlinkSourceUID names its KafkaSource
	// when the job has several.
	OffsetsSavepoint, FlinkSourceUID string
	// Savepoint is the old Flink job's final savepoint directory, recorded
	// in the plan; with the group as the input, the precheck compares the
	// group with it (group-vs-savepoint). With OffsetsSavepoint it is that
	// directory.
	Savepoint string
	// FlinkREST and FlinkJob, when set, are the old job's cluster's Flink
	// REST API and the job's ID: the precheck asks Flink whether the job
	// ended and which savepoint it completed last (flink-stopped).
	FlinkREST, FlinkJob string

	AcceptExpired []plan.ExpiredAcceptance // recorded acceptances of expired data

	StabilityWindow time.Duration // how long the group's offsets must stay unchanged
	// StoppedWindow is the window instead when Flink proves the job
	// stopped at the savepoint C is read from (verify.PrecheckSpec); 0 is
	// verify.FlinkStoppedWindow.
	StoppedWindow   time.Duration
	ReadBackTimeout time.Duration // how long to wait for Connect's read-back to equal the plan
	RunningTimeout  time.Duration // how long to wait for RUNNING after resume
	CatchUpTimeout  time.Duration // how long to wait for lag 0 after resume

	ToolVersion string
	Logger      *slog.Logger

	// OnStep, if set, is called as app.Apply reaches each of its points:
	// "before-create", "created" (right after the create, before the
	// connector is seen STOPPED), "after-create", "before-patch",
	// "after-patch", "before-verify". The Job's tests use it to die or wait
	// at each point.
	OnStep func(step string)
}

// ErrSettings matches a problem with the settings.
var ErrSettings = errkind.New(errkind.Rejected, "invalid settings")

// required are the settings every step that reaches the clusters needs,
// by flag, with their values in s.
func (s Settings) required() []struct{ flag, value string } {
	return []struct{ flag, value string }{
		{"source-bootstrap", strings.Join(s.Source.BootstrapServers, ",")},
		{"target-bootstrap", strings.Join(s.Target.BootstrapServers, ",")},
		{"connect-url", s.ConnectURL},
		{"connector", s.Connector},
		{"group", s.Group},
		{"topics", strings.Join(s.Topics, ",")},
	}
}

// RequiredFlags are the flags of the settings every step that reaches the
// clusters needs (Validate refuses settings without them).
func RequiredFlags() []string {
	var out []string
	for _, r := range (Settings{}).required() {
		out = append(out, r.flag)
	}
	return out
}

// Validate checks that every required setting is present, naming the
// missing ones by flag and environment variable, and that the settings
// agree with each other.
func (s Settings) Validate() error {
	var missing []string
	for _, r := range s.required() {
		if r.value == "" {
			missing = append(missing, fmt.Sprintf("-%s (%s)", r.flag, envKey(r.flag)))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: missing settings: %s", ErrSettings, strings.Join(missing, ", "))
	}
	if s.Policy != "" && s.Policy != "identity" && s.Policy != "default" {
		return fmt.Errorf("%w: replication policy %q: want identity or default", ErrSettings, s.Policy)
	}
	if s.OffsetsFileOverridesGroup && s.OffsetsFile == "" {
		return fmt.Errorf("%w: -offsets-file-overrides-group needs -offsets-from csv:FILE", ErrSettings)
	}
	if s.OffsetsConnectorTopic != "" && s.OffsetsTopic == "" {
		return fmt.Errorf("%w: -offsets-connector-topic needs -offsets-from mm2:TOPIC (the workers' offsets topic)", ErrSettings)
	}
	if s.OffsetsTopic != "" && (s.OffsetsAlias == "" || s.OffsetsConnector == "") {
		return fmt.Errorf("%w: -offsets-from mm2:%s needs -offsets-alias (the old MirrorMaker's source cluster alias) and -offsets-connector", ErrSettings, s.OffsetsTopic)
	}
	for _, c := range []struct {
		flag, instead string
		props         map[string]string
	}{{"-mm2-source-client", "-source-bootstrap", s.SourceClient}, {"-mm2-target-client", "-target-bootstrap", s.TargetClient}} {
		if v, ok := c.props["bootstrap.servers"]; ok {
			return fmt.Errorf("%w: %s sets bootstrap.servers (%s): it would send MM2 to addresses the cutover does not check; remove it and give the cluster's addresses with %s",
				ErrSettings, c.flag, v, c.instead)
		}
	}
	if s.OffsetsSavepoint != "" && s.Savepoint != "" && s.Savepoint != s.OffsetsSavepoint {
		return fmt.Errorf("%w: -offsets-from flink-savepoint:%s and -savepoint %s name two savepoints", ErrSettings, s.OffsetsSavepoint, s.Savepoint)
	}
	if s.FlinkSourceUID != "" && s.OffsetsSavepoint == "" && s.Savepoint == "" {
		return fmt.Errorf("%w: -flink-source-uid needs -offsets-from flink-savepoint:DIR or -savepoint DIR", ErrSettings)
	}
	if (s.FlinkREST == "") != (s.FlinkJob == "") {
		return fmt.Errorf("%w: -flink-rest and -flink-job go together", ErrSettings)
	}
	if s.FlinkREST != "" && s.OffsetsSavepoint == "" && s.Savepoint == "" {
		return fmt.Errorf("%w: -flink-rest needs the savepoint it is to confirm: -offsets-from flink-savepoint:DIR or -savepoint DIR", ErrSettings)
	}
	if err := s.checkExtra(); err != nil {
		return err
	}
	if _, err := s.MirrorSource().Config(); errors.Is(err, connect.ErrKeyMaterialKey) {
		return fmt.Errorf("%w: %w", ErrSettings, err)
	}
	return nil
}

// checkExtra refuses extra connector properties that would change a key
// the cutover sets itself (connect.ErrExtraClash), and tasks.max beside
// -tasks-max 0, which leaves tasks.max to the plan.
func (s Settings) checkExtra() error {
	if _, ok := s.Extra["tasks.max"]; ok && s.TasksMax == 0 {
		return fmt.Errorf("%w: -connector-properties sets tasks.max, which -tasks-max 0 leaves to the plan: use -tasks-max", ErrSettings)
	}
	if _, err := s.MirrorSource().Config(); errors.Is(err, connect.ErrExtraClash) {
		return fmt.Errorf("%w: -connector-properties sets keys the cutover sets itself (client settings go in -mm2-source-client and -mm2-target-client): %w", ErrSettings, err)
	}
	return nil // any other problem is reported where the configuration is built
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

// WithPlan returns the settings with what they leave to the plan: a
// TasksMax of 0 becomes the plan's tasks.max (1 in a plan that records
// no configuration, as every tool version before TasksMax 0 built it).
func (s Settings) WithPlan(p *plan.Plan) Settings {
	if s.TasksMax == 0 && p != nil {
		s.TasksMax = 1
		if n, err := strconv.Atoi(p.ConnectorConfig["tasks.max"]); err == nil && n > 0 {
			s.TasksMax = n
		}
	}
	return s
}

// ConnectorConfig is the configuration the cutover creates the connector
// with. It includes "name", as Connect's GET .../config returns it, so that
// the plan's digest can be compared with the running connector's.
func (s Settings) ConnectorConfig() (map[string]string, error) {
	return s.MirrorSource().Config()
}

// MirrorSource returns the connector the cutover creates.
func (s Settings) MirrorSource() connect.MirrorSource {
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
		ReplicationPolicy: s.flagPolicy(),
		IsolationLevel:    "read_committed",
		OffsetSyncs:       s.OffsetSyncs,
		ExactlyOnce:       s.ExactlyOnce,
		Extra:             s.Extra,
	}
}

// ReplicationPolicy returns the naming of target topics: the replication
// policy of the connector configuration the cutover creates
// (offsets.PolicyOf of ConnectorConfig), -connector-properties
// included, so that -policy default with replication.policy.separator=_
// names orders source_orders. Where that configuration cannot be built,
// the precheck reports why and the policy of -policy is returned.
func (s Settings) ReplicationPolicy() offsets.ReplicationPolicy {
	if cfg, err := s.ConnectorConfig(); err == nil {
		if p, err := offsets.PolicyOf(cfg); err == nil {
			return p
		}
	}
	return s.flagPolicy()
}

// flagPolicy is the policy -policy asks the connector builder for.
func (s Settings) flagPolicy() offsets.ReplicationPolicy {
	if s.Policy == "default" {
		return offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: s.SourceAlias}
	}
	return offsets.ReplicationPolicy{Kind: offsets.IdentityPolicy}
}
