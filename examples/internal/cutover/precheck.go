package cutover

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
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
	OffsetsFrom     plan.OffsetsSource                            `json:"-"`
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
	var mm2First offsets.GroupOffsets
	if s.OffsetsTopic != "" { // read again after the window: a running old MirrorMaker moves them
		if mm2First, err = readMM2Offsets(ctx, env, s); err != nil {
			return nil, err
		}
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
	committed := offsets.GroupOffsets{}
	pc.Bounds = map[offsets.SourcePartition]offsets.LogBounds{}
	for _, tp := range second.Offsets.Partitions {
		if c, ok := second.Offsets.Committed[tp]; ok {
			committed[tp] = c.Offset
		}
		b := second.Bounds[tp]
		pc.Bounds[tp] = offsets.LogBounds{Start: b.Start, End: b.End}
	}
	groupExists := group.State != kafkaadmin.GroupDead || len(committed) > 0

	// Where C comes from: the group's commits, or a file.
	pc.Group, pc.OffsetsFrom = committed, plan.OffsetsSource{Kind: plan.FromGroup}
	if s.OffsetsFile != "" {
		file, digest, err := readOffsetsFile(s.OffsetsFile, s.Group)
		if err != nil {
			return nil, err
		}
		pc.Group = offsets.GroupOffsets{}
		for tp, c := range file {
			if slices.Contains(s.Topics, tp.Topic) {
				pc.Group[tp] = c
			}
		}
		pc.OffsetsFrom = plan.OffsetsSource{Kind: plan.FromFile, Ref: digest, OverridesGroup: s.OffsetsFileOverridesGroup}
		checkFileAgainstGroup(cs, s, pc.Group, committed, groupExists)
	} else if s.OffsetsTopic != "" {
		if pc.Group, err = readMM2Offsets(ctx, env, s); err != nil {
			return nil, err
		}
		pc.OffsetsFrom = mm2Source(s)
		checkMM2Stopped(cs, s, mm2First, pc.Group)
	} else if !groupExists {
		cs.add("group-exists", Fail, "group %s does not exist (no members, no committed offset on any partition): check the group name; a Flink job commits to its KafkaSource's group.id", s.Group)
	}
	if missing := len(second.Offsets.Partitions) - countIn(pc.Group, second.Offsets.Partitions); missing > 0 {
		cs.add("offsets-complete", Fail, "%d of %d partitions have no committed offset in %s (see the plan's blocked entries)",
			missing, len(second.Offsets.Partitions), pc.OffsetsFrom.Kind)
	} else {
		cs.add("offsets-complete", OK, "all %d partitions have a committed offset", len(second.Offsets.Partitions))
	}
	checkRange(cs, s, pc.Group, pc.Bounds)

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

// countIn counts the partitions of parts that have an offset in g.
func countIn(g offsets.GroupOffsets, parts []kafkaadmin.TopicPartition) int {
	n := 0
	for _, tp := range parts {
		if _, ok := g[tp]; ok {
			n++
		}
	}
	return n
}

// readOffsetsFile reads a kafka-consumer-groups.sh --reset-offsets --export
// file (the lines of group in the four-column form) and returns its offsets
// and its "sha256:" digest, which the plan records.
func readOffsetsFile(path, group string) (offsets.GroupOffsets, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("%w: -offsets-from: %w", ErrSettings, err)
	}
	g, err := plan.ParseResetOffsetsCSV(bytes.NewReader(data), group)
	if err != nil {
		return nil, "", fmt.Errorf("%w: -offsets-from %s: %w", ErrSettings, path, err)
	}
	sum := sha256.Sum256(data)
	return g, "sha256:" + hex.EncodeToString(sum[:]), nil
}

// checkFileAgainstGroup compares the file's offsets with the group's
// commits: the file is the record of C, but where the group still holds a
// commit that differs, the file was not exported from where the old job
// stopped — unless the operator chose its positions on purpose.
func checkFileAgainstGroup(cs *Checks, s Settings, file, committed offsets.GroupOffsets, groupExists bool) {
	if !groupExists {
		cs.add("offsets-file", Warn, "group %s has no commits any more: the file is the only record of where the old job stopped", s.Group)
		return
	}
	var differ []string
	for tp, c := range file {
		if have, ok := committed[tp]; ok && have != c {
			differ = append(differ, fmt.Sprintf("%s: file %d, group %d", tp, c, have))
		}
	}
	slices.Sort(differ)
	switch {
	case len(differ) == 0:
		cs.add("offsets-file", OK, "the file's offsets equal group %s's commits where it has them", s.Group)
	case s.OffsetsFileOverridesGroup:
		cs.add("offsets-file", Warn, "%d partitions differ from group %s's commits (e.g. %s): the file overrides the group, as -offsets-file-overrides-group says", len(differ), s.Group, differ[0])
	default:
		cs.add("offsets-file", Fail, "%d partitions differ from group %s's commits (%s): the file was not exported from where the old job stopped; pass -offsets-file-overrides-group if you chose these positions on purpose",
			len(differ), s.Group, listSome(differ, 5))
	}
}

// checkRange reports the partitions whose C is outside [log start, log end]:
// beyond the end (wrong cluster, recreated topic) or below the start
// (retention deleted records), unless the operator accepted that loss.
func checkRange(cs *Checks, s Settings, group offsets.GroupOffsets, bounds map[offsets.SourcePartition]offsets.LogBounds) {
	accepted := map[offsets.SourcePartition]string{}
	for _, a := range s.AcceptExpired {
		accepted[a.Partition] = a.By
	}
	var beyond, expired, lost []string
	for tp, c := range group {
		b, ok := bounds[tp]
		if !ok {
			continue
		}
		switch {
		case c > b.End:
			beyond = append(beyond, fmt.Sprintf("%s (C %d > end %d)", tp, c, b.End))
		case c < b.Start && accepted[tp] != "":
			lost = append(lost, fmt.Sprintf("%s (%d records, accepted by %s)", tp, b.Start-c, accepted[tp]))
		case c < b.Start:
			expired = append(expired, fmt.Sprintf("%s (C %d < start %d)", tp, c, b.Start))
		}
	}
	slices.Sort(beyond)
	slices.Sort(expired)
	slices.Sort(lost)
	if len(beyond) > 0 {
		cs.add("offsets-in-range", Fail, "%d partitions have C beyond the log end (wrong cluster, or a recreated topic?): %s", len(beyond), listSome(beyond, 5))
	}
	if len(expired) > 0 {
		cs.add("offsets-in-range", Fail, "%d partitions have C below the log start (retention deleted records the old job had not copied): %s; backfill them or accept the loss with -accept-expired",
			len(expired), listSome(expired, 5))
	}
	if len(lost) > 0 {
		cs.add("offsets-in-range", Warn, "expired records accepted as lost: %s", listSome(lost, 5))
	}
	if len(beyond)+len(expired) == 0 {
		cs.add("offsets-in-range", OK, "log start <= C <= log end on every partition with a committed offset")
	}
}

// listSome joins the first n items and says how many more there are.
func listSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
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
		OffsetsFrom:     pc.OffsetsFrom,
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
		if ch.Name != "offsets-complete" && ch.Name != "offsets-in-range" { // shown as blocked entries in the plan
			return nil, pc, pc.Err()
		}
	}
	p, err := BuildPlan(s, pc, now)
	return p, pc, err
}
