package app

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/mm2cutover/mm2cutover/clientconf"
	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
	"github.com/mm2cutover/mm2cutover/flinkrest"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// Precheck is what the read-only precheck found: the checks, and the data
// the plan is built from.
type Precheck = verify.PrecheckReport

// ErrPrecheck matches a precheck with failed checks.
var ErrPrecheck = verify.ErrPrecheck

// RunPrecheck runs the read-only checks of step 1 (verify.Precheck) with
// the settings' connector configuration and offsets input.
func RunPrecheck(ctx context.Context, env *Env, s settings.Settings) (*Precheck, error) {
	cfg, err := s.ConnectorConfig()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", settings.ErrSettings, err)
	}
	source, target, err := env.clients()
	if err != nil {
		return nil, err
	}
	if s.TasksMax == 0 {
		// The configuration the precheck validates is the one the plan
		// will record: BuildPlan counts the same partitions. A topic
		// that cannot be read is the precheck's to report.
		if topics, err := source.Topics(ctx, s.Topics...); err == nil {
			s.TasksMax = connect.TasksFor(len(topics.Partitions()))
			if cfg, err = s.ConnectorConfig(); err != nil {
				return nil, fmt.Errorf("%w: %w", settings.ErrSettings, err)
			}
			if s.Logger != nil {
				s.Logger.Info("tasks.max chosen by the source partitions", "partitions", len(topics.Partitions()), "tasks.max", s.TasksMax)
			}
		}
	}
	// The target names, cluster addresses and topic filter the checks use
	// are the configuration's: no policy is passed beside it.
	spec := verify.PrecheckSpec{
		Group: s.Group, Topics: s.Topics, StabilityWindow: s.StabilityWindow, StoppedWindow: s.StoppedWindow,
		Config: cfg, AcceptExpired: s.AcceptExpired, Logger: s.Logger, Connector: s.Connector,
		Strimzi: s.StrimziCluster != "", WorkerGroup: s.WorkerGroup, WorkerPrincipal: s.WorkerPrincipal,
	}
	if ws := s.WorkerStorage; ws != (verify.WorkerStorage{}) {
		spec.WorkerStorage = &ws
	}
	if s.WorkerMaxRequestSize > 0 {
		spec.WorkerProducer = map[string]string{"max.request.size": strconv.Itoa(s.WorkerMaxRequestSize)}
	}
	switch {
	case s.OffsetsFile != "":
		data, err := readOffsetsFile(s.OffsetsFile)
		if err != nil {
			return nil, fmt.Errorf("%w: -offsets-from: %w", settings.ErrSettings, err)
		}
		in := verify.FileOffsets{Data: data, Group: s.Group, OverridesGroup: s.OffsetsFileOverridesGroup}
		if _, err := in.Read(ctx); err != nil {
			return nil, fmt.Errorf("%w: -offsets-from csv:%s: %w", settings.ErrSettings, s.OffsetsFile, err)
		}
		spec.Input = in
	case s.OffsetsTopic != "":
		spec.Input = mm2Input(env, s)
	case s.OffsetsSavepoint != "":
		in, err := verify.OpenFlinkSavepoint(s.OffsetsSavepoint, s.FlinkSourceUID)
		if err != nil {
			return nil, fmt.Errorf("%w: -offsets-from flink-savepoint:%s: %w", settings.ErrSettings, s.OffsetsSavepoint, err)
		}
		spec.Input = in
	}
	if s.Savepoint != "" && s.OffsetsSavepoint == "" {
		sp, err := verify.OpenFlinkSavepoint(s.Savepoint, s.FlinkSourceUID)
		if err != nil {
			return nil, fmt.Errorf("%w: -savepoint %s: %w", settings.ErrSettings, s.Savepoint, err)
		}
		spec.Savepoint = sp
	}
	if s.FlinkREST != "" {
		c, err := flinkClient(s)
		if err != nil {
			return nil, fmt.Errorf("%w: -flink-rest: %w", settings.ErrSettings, err)
		}
		spec.FlinkREST, spec.FlinkJob = c, s.FlinkJob
	}
	return verify.Precheck(ctx, env.Connect, source, target, spec)
}

// flinkClient is the Flink REST client of the settings: -request-timeout
// bounds each of its requests as it does Kafka's and Connect's.
func flinkClient(s settings.Settings) (*flinkrest.Client, error) {
	var opts []flinkrest.Option
	if s.RequestTimeout > 0 {
		opts = append(opts, flinkrest.WithTimeout(s.RequestTimeout))
	}
	return flinkrest.New(s.FlinkREST, nil, opts...)
}

// BuildPlan builds the plan of step 2 from a precheck's snapshot. It is
// pure: now is the plan's creation time. A TasksMax of 0 becomes
// connect.TasksFor of the source partitions the precheck read.
func BuildPlan(s settings.Settings, pc *Precheck, now time.Time) (*plan.Plan, error) {
	snap, err := pc.PlanSnapshot()
	if err != nil {
		return nil, err
	}
	if s.TasksMax == 0 {
		s.TasksMax = connect.TasksFor(len(pc.Bounds))
	}
	cfg, err := s.ConnectorConfig()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", settings.ErrSettings, err)
	}
	return plan.Build(plan.Spec{
		CreatedAt:       now.UTC(),
		ToolVersion:     s.ToolVersion,
		SourceClusterID: pc.SourceClusterID,
		TargetClusterID: pc.TargetClusterID,
		ConnectorName:   s.Connector,
		SourceAlias:     s.SourceAlias,
		ConnectorConfig: cfg,
		GroupID:         s.Group,
		OffsetsFrom:     pc.OffsetsFrom,
		Savepoint:       cmp.Or(s.Savepoint, s.OffsetsSavepoint),
		AcceptExpired:   s.AcceptExpired,
	}, snap)
}

// MakePlan runs the precheck and builds the plan from its snapshot.
// Partitions without a usable offset become blocked entries (the plan is
// returned, and Plan.Blocked tells); any other failed check returns the
// precheck and an error matching ErrPrecheck, and no plan.
func MakePlan(ctx context.Context, env *Env, s settings.Settings, now time.Time) (*plan.Plan, *Precheck, error) {
	pc, err := RunPrecheck(ctx, env, s)
	if err != nil {
		return nil, nil, err
	}
	obs := pc.Observation()
	env.observed = &obs
	if err := pc.Blocking(); err != nil {
		return nil, pc, err
	}
	p, err := BuildPlan(s, pc, now)
	return p, pc, err
}

// maxOffsetsFile bounds an -offsets-from csv:FILE: about 50 bytes a
// partition, so room for a million partitions, and /dev/zero is refused
// rather than read whole.
const maxOffsetsFile = 64 << 20

func readOffsetsFile(path string) ([]byte, error) {
	return clientconf.ReadFileLimited(path, maxOffsetsFile)
}
