package cutover

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// Status is the outcome of one check.
type Status string

// The outcomes of a check. A cutover goes on only when no check failed.
const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
)

// Check is one precheck or verification item.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
}

// Checks is a list of checks.
type Checks []Check

// Failed returns the failed checks.
func (cs Checks) Failed() []Check {
	var out []Check
	for _, c := range cs {
		if c.Status == Fail {
			out = append(out, c)
		}
	}
	return out
}

func (cs *Checks) add(name string, st Status, format string, args ...any) {
	*cs = append(*cs, Check{Name: name, Status: st, Detail: fmt.Sprintf(format, args...)})
}

// ErrPrecheck matches a precheck with failed checks.
var ErrPrecheck = errors.New("precheck failed")

// Precheck is what the read-only precheck found: the checks, and the data
// the plan is built from.
type Precheck struct {
	Checks          Checks                                        `json:"checks"`
	SourceClusterID string                                        `json:"source_cluster_id"`
	TargetClusterID string                                        `json:"target_cluster_id"`
	WorkerVersion   string                                        `json:"worker_version"`
	Snapshot        kafkaadmin.Snapshot                           `json:"-"`
	TargetEnds      map[offsets.SourcePartition]int64             `json:"-"`
	Bounds          map[offsets.SourcePartition]offsets.LogBounds `json:"-"`
	Group           offsets.GroupOffsets                          `json:"-"`
	Config          map[string]string                             `json:"-"`
}

// Err returns an error wrapping ErrPrecheck that lists the failed checks,
// or nil.
func (p *Precheck) Err() error {
	failed := p.Checks.Failed()
	if len(failed) == 0 {
		return nil
	}
	var b strings.Builder
	for _, c := range failed {
		fmt.Fprintf(&b, "\n  %s: %s", c.Name, c.Detail)
	}
	return fmt.Errorf("%w:%s", ErrPrecheck, b.String())
}

// RunPrecheck runs the read-only checks of step 1 and gathers the snapshot
// a plan is built from. It writes nothing anywhere. It takes at least
// s.StabilityWindow: the group's offsets are read twice, that far apart.
// An error is returned only when a check could not be run at all; failed
// checks are in the result (see Precheck.Err).
func RunPrecheck(ctx context.Context, env *Env, s Settings) (*Precheck, error) {
	pc := &Precheck{}
	cs := &pc.Checks
	log := s.Logger

	// Connect: reachable, new enough, has the plugin, and the config is sound.
	info, err := env.Connect.ServerInfo(ctx)
	if err != nil {
		cs.add("connect-reachable", Fail, "GET / on %s: %v", env.Connect, err)
	} else {
		pc.WorkerVersion = info.Version
		if err := connect.RequireCutoverVersion(info.Version); err != nil {
			cs.add("connect-version", Fail, "worker runs Kafka %s: %v", info.Version, err)
		} else {
			cs.add("connect-version", OK, "worker runs Kafka %s (3.7+ creates connectors STOPPED)", info.Version)
		}
		if plugins, err := env.Connect.Plugins(ctx); err != nil {
			cs.add("connect-plugin", Fail, "GET /connector-plugins: %v", err)
		} else if !hasPlugin(plugins, connect.MirrorSourceConnectorClass) {
			cs.add("connect-plugin", Fail, "the worker has no %s: put connect-mirror on its class path", connect.MirrorSourceConnectorClass)
		} else {
			cs.add("connect-plugin", OK, "MirrorSourceConnector available")
		}
	}

	// Kafka identities.
	if pc.SourceClusterID, err = env.Source.ClusterID(ctx); err != nil {
		return nil, fmt.Errorf("source cluster: %w", err)
	}
	if pc.TargetClusterID, err = env.Target.ClusterID(ctx); err != nil {
		return nil, fmt.Errorf("target cluster: %w", err)
	}
	if pc.SourceClusterID == pc.TargetClusterID {
		cs.add("clusters-distinct", Fail, "source and target are the same cluster (%s)", pc.SourceClusterID)
	}

	// The group: not consumed by members; stable over the window.
	group, err := env.Source.DescribeGroup(ctx, s.Group)
	if err != nil {
		return nil, fmt.Errorf("describe group %s: %w", s.Group, err)
	}
	switch {
	case len(group.Members) > 0:
		cs.add("group-inactive", Fail, "group %s is %s with %d members: stop the old job first", s.Group, group.State, len(group.Members))
	default:
		cs.add("group-inactive", OK, "group %s is %s with no members (a Flink group looks like this even while Flink runs: the stability check decides)", s.Group, group.State)
	}
	log.Info("reading the group's offsets twice", "group", s.Group, "window", s.StabilityWindow)
	snap, err := env.Source.StableSnapshot(ctx, s.Group, s.Topics, s.StabilityWindow)
	var perr *kafkaadmin.PartitionErrors
	if err != nil && !errors.As(err, &perr) {
		return nil, fmt.Errorf("stable snapshot of %s: %w", s.Group, err)
	}
	pc.Snapshot = snap
	if perr != nil {
		cs.add("offsets-readable", Fail, "%v", perr)
	}
	if snap.Stable() {
		cs.add("offsets-stable", OK, "no committed offset moved in %v", s.StabilityWindow)
	} else {
		cs.add("offsets-stable", Fail, "%d partitions' committed offsets moved in %v (e.g. %v): the old job still commits; stop it and confirm",
			len(snap.Moved), s.StabilityWindow, snap.Moved[0])
	}
	second := snap.Second
	pc.Group = offsets.GroupOffsets{}
	pc.Bounds = map[offsets.SourcePartition]offsets.LogBounds{}
	for _, tp := range second.Offsets.Partitions {
		if c, ok := second.Offsets.Committed[tp]; ok {
			pc.Group[tp] = c.Offset
		}
		b := second.Bounds[tp]
		pc.Bounds[tp] = offsets.LogBounds{Start: b.Start, End: b.End}
	}
	if missing := len(second.Offsets.Partitions) - len(second.Offsets.Committed); missing > 0 {
		cs.add("offsets-complete", Fail, "%d of %d partitions have no committed offset in %s (see the plan's blocked entries)",
			missing, len(second.Offsets.Partitions), s.Group)
	} else {
		cs.add("offsets-complete", OK, "all %d partitions have a committed offset", len(second.Offsets.Partitions))
	}

	// Target topics: exist with the same partition counts; their end offsets.
	checks, err := env.Target.CheckTargets(ctx, second.Topics, s.ReplicationPolicy())
	if err != nil {
		return nil, fmt.Errorf("check target topics: %w", err)
	}
	targetOK := true
	for _, c := range checks {
		if !c.OK() {
			targetOK = false
			cs.add("target-topic", Fail, "%s", c.Problem())
		}
	}
	if targetOK {
		cs.add("target-topics", OK, "%d target topics exist with the source's partition counts", len(checks))
		if pc.TargetEnds, err = targetEnds(ctx, env, s, second.Topics); err != nil {
			return nil, err
		}
	}

	// The connector configuration: our lint and Connect's own validation.
	pc.Config, err = ConnectorConfig(s)
	if err != nil {
		cs.add("connector-config", Fail, "%v", err)
		return pc, nil
	}
	if pc.WorkerVersion != "" {
		exp := connect.LintExpectations{SourceAlias: s.SourceAlias, HasClearedPartition: hasZero(pc.Group)}
		findings, err := env.Connect.LintConfig(ctx, pc.Config, exp)
		if err != nil {
			cs.add("connector-config", Fail, "validate: %v", err)
		}
		for _, f := range findings {
			st := Warn
			if f.Severity == connect.SeverityError {
				st = Fail
			}
			cs.add("connector-config", st, "%s", f)
		}
		if !connect.HasErrors(findings) && err == nil {
			cs.add("connector-config", OK, "lint and Connect's validation pass")
		}
	}
	return pc, nil
}

// targetEnds reads the end offset of every target partition, keyed by the
// source partition it receives.
func targetEnds(ctx context.Context, env *Env, s Settings, topics kafkaadmin.Topics) (map[offsets.SourcePartition]int64, error) {
	policy := s.ReplicationPolicy()
	var tps []kafkaadmin.TopicPartition
	back := map[kafkaadmin.TopicPartition]offsets.SourcePartition{}
	for topic, n := range topics {
		target, err := policy.TargetTopic(topic)
		if err != nil {
			return nil, err
		}
		for p := range n {
			tp := kafkaadmin.TopicPartition{Topic: target, Partition: p}
			tps = append(tps, tp)
			back[tp] = offsets.SourcePartition{Topic: topic, Partition: p}
		}
	}
	bounds, err := env.Target.LogBounds(ctx, tps)
	if err != nil {
		return nil, fmt.Errorf("target end offsets: %w", err)
	}
	ends := make(map[offsets.SourcePartition]int64, len(bounds))
	for tp, b := range bounds {
		ends[back[tp]] = b.End
	}
	return ends, nil
}

func hasPlugin(plugins []connect.PluginInfo, class string) bool {
	for _, p := range plugins {
		if p.Class == class {
			return true
		}
	}
	return false
}

func hasZero(g offsets.GroupOffsets) bool {
	for _, c := range g {
		if c == 0 {
			return true
		}
	}
	return false
}

// BuildPlan builds the plan of step 2 from a precheck's snapshot. It is
// pure: now is the plan's creation time.
func BuildPlan(s Settings, pc *Precheck, now time.Time) (*plan.Plan, error) {
	if pc.TargetEnds == nil {
		return nil, fmt.Errorf("%w: no target end offsets (the target topics failed the precheck)", ErrPrecheck)
	}
	return plan.Build(plan.Spec{
		CreatedAt:       now.UTC(),
		ToolVersion:     s.ToolVersion,
		SourceClusterID: pc.SourceClusterID,
		TargetClusterID: pc.TargetClusterID,
		ConnectorName:   s.Connector,
		SourceAlias:     s.SourceAlias,
		ConnectorConfig: pc.Config,
		GroupID:         s.Group,
		Savepoint:       s.Savepoint,
		AcceptExpired:   s.AcceptExpired,
	}, plan.Snapshot{Group: pc.Group, Source: pc.Bounds, TargetEnd: pc.TargetEnds})
}

// MakePlan runs the precheck and builds the plan from its snapshot.
// Partitions without a usable offset become blocked entries (the plan is
// returned, and Plan.Blocked tells); any other failed check returns the
// precheck and an error wrapping ErrPrecheck, and no plan.
func MakePlan(ctx context.Context, env *Env, s Settings, now time.Time) (*plan.Plan, *Precheck, error) {
	pc, err := RunPrecheck(ctx, env, s)
	if err != nil {
		return nil, nil, err
	}
	for _, ch := range pc.Checks.Failed() {
		if ch.Name != "offsets-complete" { // shown as blocked entries in the plan
			return nil, pc, pc.Err()
		}
	}
	p, err := BuildPlan(s, pc, now)
	return p, pc, err
}
