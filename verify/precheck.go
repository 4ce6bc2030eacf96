package verify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/flinkrest"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// Verdict is the outcome of one check. A cutover goes on only when no check
// failed.
type Verdict string

// The outcomes of a check.
const (
	Pass Verdict = "ok"
	Warn Verdict = "warn"
	Fail Verdict = "fail"
)

// Check is the result of one precheck or acceptance check.
type Check struct {
	// Name names what was checked, e.g. "offsets-stable"; several checks may
	// share a name (one per problem found).
	Name    string  `json:"name"`
	Verdict Verdict `json:"status"`
	Detail  string  `json:"detail"`
}

// Checks is a list of checks.
type Checks []Check

// Failed returns the failed checks.
func (cs Checks) Failed() Checks {
	var out Checks
	for _, c := range cs {
		if c.Verdict == Fail {
			out = append(out, c)
		}
	}
	return out
}

func (cs *Checks) add(name string, v Verdict, format string, args ...any) {
	*cs = append(*cs, Check{Name: name, Verdict: v, Detail: fmt.Sprintf(format, args...)})
}

// ErrPrecheck matches a *PrecheckError.
var ErrPrecheck = errkind.New(errkind.CheckFailed, "verify: precheck failed")

// PrecheckError lists the failed checks of a precheck.
type PrecheckError struct {
	Failed Checks
}

func (e *PrecheckError) Error() string {
	var b strings.Builder
	b.WriteString("verify: " + words(ErrPrecheck) + ":")
	for _, c := range e.Failed {
		fmt.Fprintf(&b, "\n  %s: %s", c.Name, c.Detail)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrPrecheck) true.
func (e *PrecheckError) Is(target error) bool { return target == ErrPrecheck }

// ErrorKind is errkind.CheckFailed.
func (e *PrecheckError) ErrorKind() errkind.Kind { return errkind.CheckFailed }

// OffsetsInput supplies the committed offsets C when they do not come from
// the group: a file (FileOffsets) or another MirrorSourceConnector's stored
// offsets (ConnectorOffsets). Precheck reads it once before and once after
// its stability window: offsets that moved mean the job that writes them
// still runs.
type OffsetsInput interface {
	// Source is what the plan records of the input.
	Source() plan.OffsetsSource
	// Read returns the offsets C.
	Read(ctx context.Context) (offsets.GroupOffsets, error)
}

// FileOffsets is the CSV that kafka-consumer-groups.sh --reset-offsets
// --dry-run --export writes, as an OffsetsInput. Group selects the lines of
// the four-column form; OverridesGroup records that the positions were
// chosen on purpose (e.g. --to-datetime), so the group's commits may differ.
type FileOffsets struct {
	Data           []byte
	Group          string
	OverridesGroup bool
}

// Source records the file by its SHA-256 digest.
func (f FileOffsets) Source() plan.OffsetsSource {
	sum := sha256.Sum256(f.Data)
	return plan.OffsetsSource{Kind: plan.FromFile, Ref: "sha256:" + hex.EncodeToString(sum[:]), OverridesGroup: f.OverridesGroup}
}

// Read parses the file (see plan.ParseResetOffsetsCSV).
func (f FileOffsets) Read(context.Context) (offsets.GroupOffsets, error) {
	return plan.ParseResetOffsetsCSV(bytes.NewReader(f.Data), f.Group)
}

// ConnectorOffsets reads another MirrorSourceConnector's stored offsets M
// from a Connect offsets topic — a dedicated-mode MirrorMaker 2's
// mm2-offsets.<alias>.internal on the target, under the connector name
// MirrorSourceConnector — and turns them into C = M+1 for the topics in
// scope (offsets.Reverse). Alias is that connector's source.cluster.alias.
//
// ConnectorTopic is that connector's own offsets topic, when its
// configuration sets offsets.storage.topic (KIP-618; an exactly-once
// connector may): Connect then reads the connector's offsets from the
// workers' topic (Topic) and from its own, its own winning per partition
// (ConnectorOffsetBackingStore.get; a tombstone in its own topic leaves the
// workers' value), and so does Read.
type ConnectorOffsets struct {
	Reader         ConnectOffsetsReader
	Topic          string
	ConnectorTopic string
	Connector      string
	Alias          string
	Topics         []string
}

// Source records the topics, connector and alias read.
func (c ConnectorOffsets) Source() plan.OffsetsSource {
	topic := c.Topic
	if c.ConnectorTopic != "" {
		topic += "+" + c.ConnectorTopic
	}
	return plan.OffsetsSource{Kind: plan.FromConnectorOffsets, Ref: fmt.Sprintf("mm2:%s connector=%s alias=%s", topic, c.Connector, c.Alias)}
}

// Read reads the offsets topic (and the connector's own). An entry under
// another alias is an error (offsets.ErrAliasMismatch): most likely the
// alias given is not the old connector's.
func (c ConnectorOffsets) Read(ctx context.Context) (offsets.GroupOffsets, error) {
	list, err := c.Reader.ReadConnectOffsets(ctx, c.Topic, c.Connector)
	if err != nil {
		return nil, err
	}
	if c.ConnectorTopic != "" && c.ConnectorTopic != c.Topic {
		own, err := c.Reader.ReadConnectOffsets(ctx, c.ConnectorTopic, c.Connector)
		if err != nil {
			return nil, err
		}
		list = MergeConnectOffsets(list, own)
	}
	var inScope []offsets.ConnectOffset
	for _, o := range list {
		if slices.Contains(c.Topics, o.Partition.Topic) {
			inScope = append(inScope, o)
		}
	}
	return offsets.Reverse(c.Alias, inScope)
}

// MergeConnectOffsets returns the offsets a source connector with an
// offsets topic of its own reads, as Connect reads them
// (ConnectorOffsetBackingStore.get): those of the workers' topic, each
// replaced by the entry of the connector's own topic for the same
// partition. Both lists are as kafkaadmin.Client.ReadConnectOffsets
// returns them (a tombstone removes a partition: the workers' value then
// stands). It is pure.
func MergeConnectOffsets(worker, own []offsets.ConnectOffset) []offsets.ConnectOffset {
	mine := make(map[offsets.ConnectPartition]bool, len(own))
	for _, o := range own {
		mine[o.Partition] = true
	}
	out := slices.Clone(own)
	for _, o := range worker {
		if !mine[o.Partition] {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, offsets.CompareConnectOffsets)
	return out
}

// PrecheckSpec says what Precheck checks.
type PrecheckSpec struct {
	// Group is the old job's consumer group; Topics the source topics in
	// scope.
	Group  string
	Topics []string
	// Policy is the replication policy the caller names target topics by.
	// Precheck names them by the policy of Config
	// (offsets.PolicyOf), the one MM2 will run with: a Policy
	// that is not the zero value must name them alike, or the
	// connector-config check fails. Leave it zero.
	Policy offsets.ReplicationPolicy
	// StabilityWindow is how long the group's commits (and Input's offsets)
	// must stay unchanged. When Input is a *FlinkSavepoint and FlinkREST
	// proves the job stopped there (flink-stopped passes, asked before the
	// window), the window is StoppedWindow instead, if that is shorter.
	StabilityWindow time.Duration
	// StoppedWindow is the window after Flink's proof of the stop; zero
	// means FlinkStoppedWindow: none, the group is read once.
	StoppedWindow time.Duration
	// Config is the connector configuration the cutover will create, as it
	// will be POSTed (every file and override merged in); it is linted and
	// validated by the worker, and every target name, cluster address and
	// topic filter the checks use is taken from it.
	Config map[string]string
	// Input supplies C when it does not come from the group; nil means the
	// group's commits. With a *FlinkSavepoint the group is compared with it
	// too (the group-vs-savepoint check).
	Input OffsetsInput
	// Savepoint, with the group as the input, is the old Flink job's final
	// savepoint: the group's commits are compared with its source's
	// positions per partition (group-vs-savepoint): behind it warns with
	// the records MM2 would copy again, ahead of it or missing where it has
	// a position fails. Nil compares nothing.
	Savepoint *FlinkSavepoint
	// FlinkREST and FlinkJob, when set, ask the old job's Flink REST API
	// whether job FlinkJob ended and which savepoint it completed last; the
	// savepoint of Input or Savepoint must be that one (flink-stopped).
	FlinkREST *flinkrest.Client
	FlinkJob  string
	// AcceptExpired lists the partitions whose expired records the operator
	// accepts to lose.
	AcceptExpired []plan.ExpiredAcceptance
	// Connector names the connector the cutover creates: other
	// MirrorSourceConnectors on the Connect cluster are checked for writing
	// the same topics (see checkOtherConnectors), this one is not.
	Connector string
	// WorkerProducer holds the Connect workers' producer.* settings that
	// matter to record sizes, without the prefix ("max.request.size",
	// "buffer.memory"): REST does not show a worker's properties, so
	// settings missing here are taken as Kafka's defaults. The connector's
	// producer.override.* settings win over them.
	WorkerProducer map[string]string
	// WorkerStorage, when set, names the Connect cluster's internal topics
	// (the workers' *.storage.topic settings, which REST does not show);
	// they are checked on the workers' cluster ("connect-internal-topics").
	WorkerStorage *WorkerStorage
	// WorkerGroup is the Connect workers' group.id (the image's
	// CONNECT_GROUP_ID), which REST does not show. A configuration that
	// requires exactly-once (connect.ExactlyOnceOf) needs it: the
	// precheck lists the group's members on the target and asks each
	// worker whether it runs with exactly-once source support
	// (exactly-once-workers), and names the task producers' transactional
	// IDs, <group.id>-<connector>-<task>, by it (exactly-once-acls).
	WorkerGroup string
	// WorkerPrincipal is the principal the workers' own clients
	// authenticate as on the target ("User:mm2"), which REST does not
	// show: exactly-once-acls checks it where the connector does not
	// override its producer's, admin's or consumer's SASL settings, and
	// for the leader's transactional ID connect-cluster-<group.id>. Empty
	// leaves those unchecked (a warning).
	WorkerPrincipal string
	// Strimzi says the connector will be defined by a Strimzi custom
	// resource and its offsets written by the operator (plan.WriteStrimzi),
	// never over REST: the strimzi-managed check then passes where it sees
	// the operator, and fails there otherwise.
	Strimzi bool
	// Logger receives progress; nil discards it.
	Logger *slog.Logger
}

// PrecheckReport is what Precheck found: the checks, and the snapshot a
// plan is built from (PlanSnapshot).
type PrecheckReport struct {
	Checks          Checks `json:"checks"`
	SourceClusterID string `json:"source_cluster_id"`
	TargetClusterID string `json:"target_cluster_id"`
	WorkerVersion   string `json:"worker_version"`
	// Window is the group's commits read twice, a stability window apart.
	Window kafkaadmin.CommitWindow `json:"-"`
	// Group holds the offsets C the plan is built from, from OffsetsFrom.
	Group       offsets.GroupOffsets `json:"-"`
	OffsetsFrom plan.OffsetsSource   `json:"-"`
	// Bounds are the source partitions' log bounds of the second reading.
	Bounds map[offsets.SourcePartition]offsets.LogBounds `json:"-"`
	// TargetEnds are the target partitions' end offsets, keyed by source
	// partition; nil when the target topics failed their check.
	TargetEnds map[offsets.SourcePartition]int64 `json:"-"`

	observed Observation
}

// Observation returns what the precheck read, as an Observation: its second
// reading of the group and the bounds, the target topics and their ends.
// A caller that applies the plan built from this report moments later (the
// CLI's run step) may re-check the plan against it instead of reading every
// fact again; Observation.At says how old it is.
func (r *PrecheckReport) Observation() Observation { return r.observed }

// Err returns a *PrecheckError listing the failed checks, or nil.
func (r *PrecheckReport) Err() error {
	if failed := r.Checks.Failed(); len(failed) > 0 {
		return &PrecheckError{Failed: failed}
	}
	return nil
}

// Blocking returns a *PrecheckError listing the failed checks that keep a
// plan from being built, or nil: every failed check except those about
// single partitions' offsets (missing, or outside the log), which the plan
// shows as blocked entries with their reasons.
func (r *PrecheckReport) Blocking() error {
	var failed Checks
	for _, c := range r.Checks.Failed() {
		if c.Name != "offsets-complete" && c.Name != "offsets-in-range" {
			failed = append(failed, c)
		}
	}
	if len(failed) > 0 {
		return &PrecheckError{Failed: failed}
	}
	return nil
}

// PlanSnapshot returns the snapshot plan.Build takes. It returns a
// *PrecheckError when the target topics failed their check (there are no
// target end offsets to record).
func (r *PrecheckReport) PlanSnapshot() (plan.Snapshot, error) {
	if r.TargetEnds == nil {
		return plan.Snapshot{}, &PrecheckError{Failed: Checks{{Name: "target-topics", Verdict: Fail, Detail: "no target end offsets: the target topics failed the precheck"}}}
	}
	return plan.Snapshot{Group: r.Group, Source: r.Bounds, TargetEnd: r.TargetEnds}, nil
}

// Precheck runs the read-only checks of the cutover's first step and
// gathers the snapshot a plan is built from. It writes nothing anywhere and
// takes at least spec.StabilityWindow: the group's commits are read twice,
// that far apart. It checks that Connect is reachable, runs Kafka 3.7+ and
// has MirrorSourceConnector; that the clusters are distinct; that the source
// topics exist (a failed "source-topics" check names those that do not; the
// others are checked on); that the group has no members, exists, and its
// commits (and the Input's offsets) do not move; that every partition has a C within [log start, log end] (or an
// accepted loss); that a file's offsets agree with the group's commits
// unless it overrides them; that the target topics exist with the source's
// partition counts and were not written to during the window; and that
// the configuration passes connect.LintConfig. It also checks the record
// size limits along the path (record-size), what the tool's principal may
// do on both clusters (permissions; the precheck stops early when it may
// not read what it checks next), that no other MirrorSourceConnector on
// the Connect cluster writes the source or the target topics
// (reverse-replication, other-mirror-connectors), that the cutover's own
// connector name is free or taken by a connector apply adopts: STOPPED,
// with the cutover's configuration, holding no offsets but the plan's
// (connector-name), that the configuration's
// bootstrap servers reach the clusters the clients read
// (connector-clusters) and that MM2's producer — the Connect workers' own,
// or producer.override.bootstrap.servers — writes to the target
// (worker-cluster), that the Strimzi operator does not manage the Connect
// cluster unless spec.Strimzi says the cutover goes through its resources
// (strimzi-managed), that the replication factors of the topics MM2 will
// create fit the brokers of their clusters (replication-factor), and, when
// spec names them, Connect's internal topics (connect-internal-topics); it
// warns when the Connect REST API is plain HTTP off loopback
// (connect-rest-exposure). It warns when the old job's last writes to the
// target were transactional and the connector does not run exactly-once
// (old-job-transactions). For a configuration that requires exactly-once
// (connect.ExactlyOnceOf) it checks that every worker of the group
// spec.WorkerGroup runs with exactly-once source support, asking each
// worker at the URL it advertises (exactly-once-workers), and that the
// target's ACLs let the connector's principals write its transactional IDs
// and offsets topic (exactly-once-acls). A connector offsets topic of its
// own (offsets.storage.topic) must be compacted (connector-offsets-topic).
// The target topics are those the configuration's
// replication policy names (offsets.PolicyOf).
//
// An error is returned only when a check could not run at all; failed
// checks are in the report (see PrecheckReport.Err).
//
// Each of its phases (the worker, the group and its offsets, the target
// topics, the lint) reads its facts first and then judges them with rules
// that read nothing, tested on facts made in the test.
//
// Unlike the other I/O helpers, Precheck takes the clients themselves, not
// small interfaces: it reads some fifteen kinds of facts (groups, commits,
// bounds, records, topic and broker configurations, permissions,
// connectors, plugins, worker versions), and a fake of all of them would be
// a second implementation of Kafka and Connect. Test it against real ones.
func Precheck(ctx context.Context, c *connect.Client, source, target *kafkaadmin.Client, spec PrecheckSpec) (*PrecheckReport, error) {
	log := spec.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &PrecheckReport{}
	cs := &r.Checks
	callerPolicy := spec.Policy
	if len(spec.Config) > 0 {
		if p, err := offsets.PolicyOf(spec.Config); err == nil {
			spec.Policy = p // what MM2 will name the target topics by; the lint reports an error
		}
	}

	// The facts that depend on nothing else are read at once, before any
	// rule: the worker, both cluster IDs, the group's description and the
	// target's end offsets before the window (read earlier than the window
	// needs, which only lengthens what target-quiet watches).
	var (
		err                error
		w                  workerFacts
		srcIDErr, tgtIDErr error
		f                  offsetFacts
		groupErr           error
		endsBefore         map[offsets.SourcePartition]int64
		wg                 sync.WaitGroup
	)
	wg.Go(func() {
		if w.info, w.infoErr = c.ServerInfo(ctx); w.infoErr == nil {
			w.plugins, w.pluginsErr = c.Plugins(ctx)
		}
	})
	wg.Go(func() { r.SourceClusterID, srcIDErr = source.ClusterID(ctx) })
	wg.Go(func() { r.TargetClusterID, tgtIDErr = target.ClusterID(ctx) })
	wg.Go(func() { f.group, groupErr = source.DescribeGroup(ctx, spec.Group) })
	wg.Go(func() { endsBefore = targetEndsNow(ctx, source, target, spec) })
	wg.Wait()
	workerRules(cs, c.String(), w)
	r.WorkerVersion = w.version()
	checkRESTExposure(cs, c.URL(), c.SendsBasicAuth())

	if srcIDErr != nil {
		return nil, fmt.Errorf("source cluster: %w", srcIDErr)
	}
	if tgtIDErr != nil {
		return nil, fmt.Errorf("target cluster: %w", tgtIDErr)
	}
	if r.SourceClusterID == r.TargetClusterID {
		cs.add("clusters-distinct", Fail, "source and target are the same cluster (%s)", r.SourceClusterID)
	}
	// Which clusters MM2 writes to and what the tool may do: read at once
	// (Connect and the connector's addresses, the clusters' ACLs), their
	// checks in this order.
	var (
		writerChecks, accessChecks Checks
		writers                    *Writers
		mayDescribe                bool
	)
	wg.Go(func() {
		writers = precheckWriters(ctx, &writerChecks, c, source, target, spec, r.SourceClusterID, r.TargetClusterID)
	})
	wg.Go(func() { mayDescribe = precheckAccess(ctx, &accessChecks, source, target, spec, r.WorkerVersion) })
	wg.Wait()
	*cs = append(append(*cs, writerChecks...), accessChecks...)
	if !mayDescribe {
		cs.add("precheck-stopped", Fail, "the tool's principal may not DESCRIBE what the precheck reads next (see permissions): the group, offset, target topic, record size and configuration checks did not run")
		return r, nil
	}

	// The group and its offsets: every read first, then the rules
	// (offsetRules), which read nothing.
	if groupErr != nil {
		return nil, fmt.Errorf("describe group %s: %w", spec.Group, groupErr)
	}
	groupInactiveRule(cs, spec.Group, f.group) // first, as the report lists it
	if spec.Input != nil {
		if f.inputFirst, err = spec.Input.Read(ctx); err != nil {
			return nil, fmt.Errorf("offsets from %s: %w", spec.Input.Source(), err)
		}
	}
	if _, fromSavepoint := spec.Input.(*FlinkSavepoint); spec.FlinkREST != nil && fromSavepoint {
		// Asked first: Flink's proof of the stop at the savepoint C is
		// read from shortens the window (windowAfterStop).
		f.flinkStopped = flinkStopped(ctx, spec)
		if w := windowAfterStop(spec, *f.flinkStopped); w < spec.StabilityWindow {
			log.Info("Flink proved the old job's stop: the window is shortened", "from", spec.StabilityWindow, "to", w)
			spec.StabilityWindow, f.shortened = w, true
		}
	}
	if spec.StabilityWindow > 0 || !f.shortened {
		log.Info("reading the group's offsets twice", "group", spec.Group, "window", spec.StabilityWindow)
	} else {
		log.Info("reading the group's offsets once: Flink proved the stop at the savepoint C comes from", "group", spec.Group)
	}
	afterWindow := startTargetReads(ctx, source, target, spec)
	defer afterWindow.stop()
	snap, err := readWindow(ctx, source, spec.Group, spec.Topics, spec.StabilityWindow, f.shortened)
	if topics, ok := checkSourceTopics(cs, spec.Topics, err); ok {
		if len(topics) == 0 {
			return r, nil // nothing to read: the failed check says why
		}
		snap, err = readWindow(ctx, source, spec.Group, topics, spec.StabilityWindow, f.shortened)
	}
	if err != nil && !errors.As(err, &f.unread) {
		return nil, fmt.Errorf("commit window of %s: %w", spec.Group, err)
	}
	f.snap = snap
	if spec.Input != nil {
		if f.inputNow, err = spec.Input.Read(ctx); err != nil {
			return nil, fmt.Errorf("offsets from %s: %w", spec.Input.Source(), err)
		}
	}
	if spec.FlinkREST != nil && (f.flinkStopped == nil || f.flinkStopped.Verdict != Pass) {
		// After the window (again, when asked before it and it failed): a
		// job stopped moments before the precheck may end meanwhile.
		f.flinkStopped = flinkStopped(ctx, spec)
	}
	committed := offsetRules(cs, spec, f, r)
	group, second := f.group, snap.Second

	early := afterWindow.wait(second.Topics)
	targets := afterWindow.checks
	if !early {
		if targets, err = target.CheckTargets(ctx, second.Topics, spec.Policy); err != nil {
			return nil, fmt.Errorf("check target topics: %w", err)
		}
	}
	targetsOK := targetRules(cs, targets)
	r.observed = Observation{
		At: second.At, SourceClusterID: r.SourceClusterID, TargetClusterID: r.TargetClusterID, Group: group,
		Committed: committed, SourceTopics: second.Topics, Bounds: second.Bounds, TargetTopics: kafkaadmin.Topics{}, Writers: writers,
		read: true,
	}
	if spec.Input != nil && (r.OffsetsFrom.Kind == plan.FromConnectorOffsets || r.OffsetsFrom.Kind == plan.FromFlinkSavepoint) {
		r.observed.Input, r.observed.InputRef = r.Group, r.OffsetsFrom.Ref
	}
	for _, t := range targets {
		if t.Exists {
			r.observed.TargetTopics[t.Source] = t.TargetPartitions
		}
	}
	if targetsOK {
		if early {
			r.TargetEnds, err = afterWindow.ends, afterWindow.endsErr
		} else {
			r.TargetEnds, err = TargetEnds(ctx, target, second.Topics, spec.Policy)
		}
		if err != nil {
			return nil, err
		}
		r.observed.TargetEnds = r.TargetEnds
	}

	// The checks left read different things (the target's records and
	// configs, Connect's validation and connectors, the cutover's own
	// connector) and each writes only its own checks: they run at once,
	// and their checks join the report in this order.
	var parts [11]Checks
	if targetsOK {
		wg.Go(func() {
			if endsBefore != nil {
				precheckTargetQuiet(ctx, &parts[0], target, spec, endsBefore, r.TargetEnds, connectorState(ctx, c, spec.Connector))
			} else {
				parts[0].add("target-quiet", Warn, "not checked: the target topics' end offsets could not be read before the %v window", spec.StabilityWindow)
			}
		})
		wg.Go(func() { precheckRecordSizes(ctx, &parts[1], source, target, spec) })
		wg.Go(func() { precheckOldJobTransactions(ctx, &parts[7], target, spec, r.TargetEnds) })
	} else {
		parts[0].add("target-quiet", Warn, "not checked: the target topics failed their check")
	}
	if r.WorkerVersion != "" {
		exp := connect.LintExpectations{SourceAlias: offsets.SourceAliasOf(spec.Config), HasClearedPartition: hasZero(r.Group), Topics: spec.Topics,
			ExactlyOnce: connect.ExactlyOnceOf(spec.Config)}
		if callerPolicy != (offsets.ReplicationPolicy{}) {
			exp.Policy = &callerPolicy
		}
		wg.Go(func() {
			findings, err := c.LintConfig(ctx, spec.Config, exp)
			lintRules(&parts[2], findings, err)
		})
		wg.Go(func() { precheckConnectors(ctx, &parts[3], c, source, target, spec, r.WorkerVersion) })
		wg.Go(func() { precheckReplicationFactors(ctx, &parts[4], source, target, spec, r.WorkerVersion, targets) })
		wg.Go(func() { precheckOwnConnector(ctx, &parts[5], c, spec, r) })
		if connect.ExactlyOnceOf(spec.Config) {
			wg.Go(func() { precheckExactlyOnceWorkers(ctx, &parts[8], c, target, spec) })
		}
	}
	if connect.ExactlyOnceOf(spec.Config) {
		wg.Go(func() { precheckExactlyOnceACLs(ctx, &parts[9], target, spec) })
	}
	wg.Go(func() { precheckWorkerStorage(ctx, &parts[6], target, spec, writers, r.TargetClusterID) })
	wg.Go(func() { precheckConnectorOffsetsTopic(ctx, &parts[10], target, spec) })
	wg.Wait()
	for _, p := range parts {
		*cs = append(*cs, p...)
	}
	partitions := 0
	for _, n := range second.Topics {
		partitions += int(n)
	}
	taskStartRule(cs, partitions, spec.Config["tasks.max"])
	return r, nil
}

// partitionsPerTaskWarn is how many source partitions one task may hold
// before the precheck warns of its start: MM2's MirrorSourceTask reads its
// stored offset one partition at a time when it starts (loadOffsets, each a
// read of the worker's offset store), and the connector shows RUNNING
// only then. scalebench, Kafka 4.3.1, 10,000 partitions on one worker:
// 24.7 s from resume to RUNNING with tasks.max 1, 10.3 s with 4.
const partitionsPerTaskWarn = 2500

// taskStartRule is the task-start and task-heap checks: warn, and only
// warn, when a task of the connector would hold more than
// partitionsPerTaskWarn partitions and more tasks fit
// connect.TaskPartitionBudget, or when its tasks would take more than
// that budget.
func taskStartRule(cs *Checks, partitions int, tasksMax string) {
	tasks, err := strconv.Atoi(tasksMax)
	if err != nil || tasks < 1 {
		tasks = 1 // the lint reports a bad tasks.max
	}
	chosen := connect.TasksFor(partitions)
	if per := (partitions + tasks - 1) / tasks; per > partitionsPerTaskWarn && tasks < chosen {
		cs.add("task-start", Warn, "%d partitions in %d task(s), %d per task: MM2 reads each task's stored offsets one partition at a time when "+
			"it starts, so MM2 copies nothing for that long after the resume (24.7 s at 10,000 partitions in one task on a test worker, 10.3 s in 4); "+
			"tasks.max %d (connect.TasksFor) starts sooner",
			partitions, tasks, per, chosen)
	}
	if tasks > chosen && tasks*partitions > connect.TaskPartitionBudget {
		cs.add("task-heap", Warn, "%d tasks for %d partitions: each task's consumer and producer hold the metadata of every partition of the "+
			"topics it copies, up to about 0.8 KB per partition per task, so these tasks may need about %d MB of the workers' heap "+
			"(50 tasks at 50,000 partitions ran a 768 MB worker out of memory on a test worker); "+
			"tasks.max %d (connect.TasksFor) keeps it to about %d MB",
			tasks, partitions, tasks*partitions*8/10/1000, chosen, chosen*partitions*8/10/1000)
	}
}

// workerFacts is what Precheck reads of the Connect worker: GET / and,
// when that answered, GET /connector-plugins.
type workerFacts struct {
	info       *connect.ServerInfo
	infoErr    error
	plugins    []connect.PluginInfo
	pluginsErr error
}

// version is the worker's Kafka version, "" when GET / failed.
func (w workerFacts) version() string {
	if w.infoErr != nil {
		return ""
	}
	return w.info.Version
}

// workerRules judges the worker (connect-reachable, connect-version,
// connect-plugin); worker names it in a failure.
func workerRules(cs *Checks, worker string, w workerFacts) {
	if w.infoErr != nil {
		cs.add("connect-reachable", Fail, "GET / on %s: %v", worker, w.infoErr)
		return
	}
	if err := connect.RequireCutoverVersion(w.info.Version); err != nil {
		cs.add("connect-version", Fail, "worker runs Kafka %s: %v", w.info.Version, err)
	} else {
		cs.add("connect-version", Pass, "worker runs Kafka %s (3.7+ creates connectors STOPPED)", w.info.Version)
	}
	switch {
	case w.pluginsErr != nil:
		cs.add("connect-plugin", Fail, "GET /connector-plugins: %v", w.pluginsErr)
	case !slices.ContainsFunc(w.plugins, func(p connect.PluginInfo) bool { return p.Class == connect.MirrorSourceConnectorClass }):
		cs.add("connect-plugin", Fail, "the worker has no %s: put connect-mirror on its class path", connect.MirrorSourceConnectorClass)
	default:
		cs.add("connect-plugin", Pass, "MirrorSourceConnector available")
	}
}

// targetRules judges the target topics (target-topic for each problem,
// target-topics when there is none) and reports whether they are fit.
func targetRules(cs *Checks, targets []kafkaadmin.TargetCheck) bool {
	ok := true
	for _, t := range targets {
		if !t.OK() {
			ok = false
			cs.add("target-topic", Fail, "%s", t.Problem())
		}
	}
	if ok {
		cs.add("target-topics", Pass, "%d target topics exist with the source's partition counts", len(targets))
	}
	return ok
}

// lintRules judges the connector configuration from the lint's findings
// and the error of Connect's validation (connector-config).
func lintRules(cs *Checks, findings []connect.Finding, err error) {
	if err != nil {
		cs.add("connector-config", Fail, "validate: %v", err)
	}
	for _, f := range findings {
		v := Warn
		if f.Severity == connect.SeverityError {
			v = Fail
		}
		cs.add("connector-config", v, "%s", f)
	}
	if !connect.HasErrors(findings) && err == nil {
		cs.add("connector-config", Pass, "lint and Connect's validation pass")
	}
}

// offsetFacts is what Precheck reads of the old job's group and offsets
// before offsetRules judges them.
type offsetFacts struct {
	group kafkaadmin.Group
	// snap is the group read twice, a window apart; unread, when not nil,
	// lists the partitions it could not read.
	snap   kafkaadmin.CommitWindow
	unread *kafkaadmin.PartitionErrors
	// inputFirst and inputNow are spec.Input's offsets before and after the
	// window; nil without an input.
	inputFirst, inputNow offsets.GroupOffsets
	// flinkStopped is the flink-stopped check; nil without spec.FlinkREST.
	flinkStopped *Check
	// shortened is true when flinkStopped passed and shortened the window.
	shortened bool
}

// groupInactiveRule is the group-inactive check: the group has no members.
func groupInactiveRule(cs *Checks, name string, g kafkaadmin.Group) {
	if len(g.Members) > 0 {
		cs.add("group-inactive", Fail, "group %s is %s with %d members: stop the old job first", name, g.State, len(g.Members))
	} else {
		cs.add("group-inactive", Pass, "group %s is %s with no members (a Flink group looks like this even while Flink runs: the stability check decides)", name, g.State)
	}
}

// offsetRules judges the group's offsets (offsets-readable, offsets-stable, the input's checks, group-exists,
// group-vs-savepoint, flink-stopped, offsets-complete, offsets-in-range)
// and sets r's Snapshot, Group, OffsetsFrom and Bounds: the offsets C a
// plan is built from, from the input when there is one, else the group's
// second reading. It returns the group's commits of that reading. It reads
// nothing.
func offsetRules(cs *Checks, spec PrecheckSpec, f offsetFacts, r *PrecheckReport) offsets.GroupOffsets {
	r.Window = f.snap
	if f.unread != nil {
		cs.add("offsets-readable", Fail, "%v", f.unread)
	}
	switch {
	case f.shortened && spec.StabilityWindow == 0:
		cs.add("offsets-stable", Pass, "no window: C is the savepoint's, and Flink proved the job stopped there (flink-stopped); the group was read once")
	case f.snap.Stable():
		because := ""
		if f.shortened {
			because = " (the window after Flink's proof of the stop, flink-stopped)"
		}
		cs.add("offsets-stable", Pass, "no committed offset moved in %v%s", spec.StabilityWindow, because)
	default:
		cs.add("offsets-stable", Fail, "%d partitions' committed offsets moved in %v (e.g. %v): the old job still commits; stop it and confirm",
			len(f.snap.Moved), spec.StabilityWindow, f.snap.Moved[0])
	}
	second := f.snap.Second
	committed := offsets.GroupOffsets{}
	maps.Copy(committed, second.Committed)
	parts := second.Topics.Partitions()
	r.Bounds = make(map[offsets.SourcePartition]offsets.LogBounds, len(parts))
	for _, tp := range parts {
		r.Bounds[tp] = second.Bounds[tp] // zero when unread: offsets-readable failed
	}
	groupExists := f.group.State != kafkaadmin.GroupDead || len(committed) > 0

	r.Group, r.OffsetsFrom = committed, plan.OffsetsSource{Kind: plan.FromGroup}
	switch {
	case spec.Input != nil:
		r.Group = offsets.GroupOffsets{}
		for tp, c := range f.inputNow {
			if slices.Contains(spec.Topics, tp.Topic) {
				r.Group[tp] = c
			}
		}
		r.OffsetsFrom = spec.Input.Source()
		checkInputStable(cs, r.OffsetsFrom, spec.StabilityWindow, f.inputFirst, f.inputNow)
		if r.OffsetsFrom.Kind == plan.FromFile {
			checkFileAgainstGroup(cs, spec.Group, r.OffsetsFrom.OverridesGroup, r.Group, committed, groupExists)
		}
		if sp, ok := spec.Input.(*FlinkSavepoint); ok {
			checkSavepoint(cs, sp, spec.Group, committed, parts, true)
		}
	case !groupExists:
		cs.add("group-exists", Fail, "group %s does not exist (no members, no committed offset on any partition): check the group name; a Flink job commits to its KafkaSource's group.id", spec.Group)
	}
	if spec.Savepoint != nil && spec.Input == nil {
		checkSavepoint(cs, spec.Savepoint, spec.Group, committed, parts, false)
	}
	if f.flinkStopped != nil {
		*cs = append(*cs, *f.flinkStopped)
	}
	if missing := len(parts) - countIn(r.Group, parts); missing > 0 {
		cs.add("offsets-complete", Fail, "%d of %d partitions have no committed offset in the %s (see the plan's blocked entries)", missing, len(parts), r.OffsetsFrom.Kind)
	} else {
		cs.add("offsets-complete", Pass, "all %d partitions have a committed offset", len(parts))
	}
	checkRange(cs, spec.AcceptExpired, r.Group, r.Bounds)
	return committed
}

// FlinkStoppedWindow is the stability window of a plan from the old
// Flink job's final savepoint once Flink has proved the job stopped there
// (the flink-stopped check, asked before the window): none. The job is
// FINISHED or CANCELED, every task of it ended and closed its Kafka
// clients (so it can neither commit nor write again: a client closes
// after its requests in flight are answered), and its last completed
// savepoint is the one C is read from, an immutable file: the savepoint is
// the truth, and the group's commits, which a window watches, are not C.
// The group and its commits are read once; members of the group are
// refused by group-inactive, a commit past the savepoint's position (the
// job started again) by group-vs-savepoint and by the re-check before
// every write, and the target's ends are still compared across the
// precheck's reads (target-quiet). A positive PrecheckSpec.StoppedWindow
// keeps a window of that length. With the group as the input the window
// is not shortened: the group's commits are C, and the window is what
// protects them from a writer Flink does not vouch for.
const FlinkStoppedWindow time.Duration = 0

// readWindow is ReadCommitWindow, or, when Flink's proof shortened the
// window to none (FlinkStoppedWindow), one reading standing for both. A
// window the caller gave that is not positive is ReadCommitWindow's
// argument error.
func readWindow(ctx context.Context, source *kafkaadmin.Client, group string, topics []string, window time.Duration, shortened bool) (kafkaadmin.CommitWindow, error) {
	if window > 0 || !shortened {
		return source.ReadCommitWindow(ctx, group, topics, window)
	}
	rd, err := source.ReadGroup(ctx, group, topics)
	return kafkaadmin.CommitWindow{Group: group, First: rd, Second: rd}, err
}

// windowAfterStop is the window once the flink-stopped check is known:
// spec.StoppedWindow (FlinkStoppedWindow, none, when zero) when it passed
// and C comes from the savepoint (spec.Input), else spec.StabilityWindow.
// Precheck takes the shorter of it and spec.StabilityWindow. It is pure.
func windowAfterStop(spec PrecheckSpec, flinkStopped Check) time.Duration {
	if _, fromSavepoint := spec.Input.(*FlinkSavepoint); !fromSavepoint || flinkStopped.Verdict != Pass {
		return spec.StabilityWindow
	}
	if spec.StoppedWindow > 0 {
		return spec.StoppedWindow
	}
	return FlinkStoppedWindow
}

// flinkStopped asks spec.FlinkREST whether the old job ended with the
// savepoint of spec.Input or spec.Savepoint: the flink-stopped check.
func flinkStopped(ctx context.Context, spec PrecheckSpec) *Check {
	var cs Checks
	sp, _ := spec.Input.(*FlinkSavepoint)
	if sp == nil {
		sp = spec.Savepoint
	}
	if sp == nil {
		cs.add("flink-stopped", Fail, "no savepoint to confirm: give the savepoint as the input or beside the group")
	} else if ch, _, err := CheckFlinkStoppedNow(ctx, spec.FlinkREST, spec.FlinkJob, sp, FlinkSettle); err != nil {
		cs.add("flink-stopped", Fail, "cannot ask Flink at %s about job %s: %v", spec.FlinkREST, spec.FlinkJob, err)
	} else {
		cs = append(cs, ch)
	}
	return &cs[0]
}

// TargetEnds reads the end offset of every target partition of the source
// topics (named by policy), keyed by the source partition it receives.
func TargetEnds(ctx context.Context, target EndsReader, topics kafkaadmin.Topics, policy offsets.ReplicationPolicy) (map[offsets.SourcePartition]int64, error) {
	var tps []kafkaadmin.TopicPartition
	back := make(map[kafkaadmin.TopicPartition]offsets.SourcePartition)
	for topic, n := range topics {
		tt, err := policy.TargetTopic(topic)
		if err != nil {
			return nil, err
		}
		for p := range n {
			tp := kafkaadmin.TopicPartition{Topic: tt, Partition: p}
			tps = append(tps, tp)
			back[tp] = offsets.SourcePartition{Topic: topic, Partition: p}
		}
	}
	got, err := target.EndOffsets(ctx, tps)
	if err != nil {
		return nil, fmt.Errorf("target end offsets: %w", err)
	}
	ends := make(map[offsets.SourcePartition]int64, len(got))
	for tp, end := range got {
		ends[back[tp]] = end
	}
	return ends, nil
}

// checkSourceTopics turns the *kafkaadmin.UnknownTopicsError of a stable
// snapshot, which comes at its first reading before any wait, into a failed
// "source-topics" check, and returns the topics that exist, to read
// instead; ok is false for any other result.
func checkSourceTopics(cs *Checks, topics []string, err error) (existing []string, ok bool) {
	var ute *kafkaadmin.UnknownTopicsError
	if !errors.As(err, &ute) {
		return nil, false
	}
	cs.add("source-topics", Fail, "%d of %d topics do not exist on the source cluster (or this user may not describe them): %s",
		len(ute.Topics), len(topics), listSome(quoteAll(ute.Topics), 5))
	for _, t := range topics {
		if !slices.Contains(ute.Topics, t) {
			existing = append(existing, t)
		}
	}
	return existing, true
}

func quoteAll(items []string) []string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
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

func hasZero(g offsets.GroupOffsets) bool {
	for _, c := range g {
		if c == 0 {
			return true
		}
	}
	return false
}

// checkInputStable compares two readings of an offsets input a stability
// window apart: offsets that moved mean the job writing them still runs.
func checkInputStable(cs *Checks, from plan.OffsetsSource, window time.Duration, first, second offsets.GroupOffsets) {
	var moved []string
	for tp, b := range second {
		if a, ok := first[tp]; !ok || a != b {
			moved = append(moved, fmt.Sprintf("%s: %s -> %d", tp, first.Lookup(tp), b))
		}
	}
	for tp := range first {
		if _, ok := second[tp]; !ok {
			moved = append(moved, fmt.Sprintf("%s: %d -> none", tp, first[tp]))
		}
	}
	slices.Sort(moved)
	if len(moved) > 0 {
		cs.add("input-stable", Fail, "%d partitions' offsets in the %s moved in %v (%s): the job that writes them still runs; stop it",
			len(moved), from, window, listSome(moved, 5))
		return
	}
	cs.add("input-stable", Pass, "no offset in the %s moved in %v", from, window)
}

// checkFileAgainstGroup compares a file's offsets with the group's commits:
// the file is the record of C, but where the group still holds a commit
// that differs, the file was not exported from where the old job stopped —
// unless the operator chose its positions on purpose.
func checkFileAgainstGroup(cs *Checks, group string, overrides bool, file, committed offsets.GroupOffsets, groupExists bool) {
	if !groupExists {
		cs.add("offsets-file", Warn, "group %s has no commits any more: the file is the only record of where the old job stopped", group)
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
		cs.add("offsets-file", Pass, "the file's offsets equal group %s's commits where it has them", group)
	case overrides:
		cs.add("offsets-file", Warn, "%d partitions differ from group %s's commits (e.g. %s): the file overrides the group, as recorded", len(differ), group, differ[0])
	default:
		cs.add("offsets-file", Fail, "%d partitions differ from group %s's commits (%s): the file was not exported from where the old job stopped; say that it overrides the group if you chose these positions on purpose",
			len(differ), group, listSome(differ, 5))
	}
}

// checkRange reports the partitions whose C is outside [log start, log
// end]: beyond the end (wrong cluster, recreated topic) or below the start
// (retention deleted records), unless the loss was accepted.
func checkRange(cs *Checks, accepted []plan.ExpiredAcceptance, group offsets.GroupOffsets, bounds map[offsets.SourcePartition]offsets.LogBounds) {
	by := make(map[offsets.SourcePartition]string, len(accepted))
	for _, a := range accepted {
		by[a.Partition] = a.By
	}
	var beyond, expired, lost []string
	for tp, c := range group {
		b, ok := bounds[tp]
		if !ok {
			continue
		}
		// The plan's rule decides, so that the precheck and the plan never
		// disagree on a partition.
		decide := offsets.Decide
		if by[tp] != "" {
			decide = offsets.DecideAcceptingLoss
		}
		switch d := decide(tp, offsets.NewGroupOffset(c), b); {
		case errors.Is(d.Err, offsets.ErrBeyondEnd):
			beyond = append(beyond, fmt.Sprintf("%s (C %d > end %d)", tp, c, b.End))
		case errors.Is(d.Err, offsets.ErrExpired):
			expired = append(expired, fmt.Sprintf("%s (C %d < start %d)", tp, c, b.Start))
		case d.Lost > 0:
			lost = append(lost, fmt.Sprintf("%s (%d records, accepted by %s)", tp, d.Lost, by[tp]))
		}
	}
	slices.Sort(beyond)
	slices.Sort(expired)
	slices.Sort(lost)
	if len(beyond) > 0 {
		cs.add("offsets-in-range", Fail, "%d partitions have C beyond the log end (wrong cluster, or a recreated topic?): %s", len(beyond), listSome(beyond, 5))
	}
	if len(expired) > 0 {
		cs.add("offsets-in-range", Fail, "%d partitions have C below the log start (retention deleted records the old job had not copied): %s; backfill them or accept the loss",
			len(expired), listSome(expired, 5))
	}
	if len(lost) > 0 {
		cs.add("offsets-in-range", Warn, "expired records accepted as lost: %s", listSome(lost, 5))
	}
	if len(beyond)+len(expired) == 0 {
		cs.add("offsets-in-range", Pass, "log start <= C <= log end on every partition with a committed offset")
	}
}

// listSome joins the first n items and says how many more there are.
func listSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}

// targetReads are the precheck's reads of the target after the window —
// its topics (CheckTargets) and their end offsets — started once the
// window has passed since the group's first reading began, beside the
// second reading, which they do not need: they take the source topics'
// partition counts from a metadata read of their own, and are used only
// when those equal the second reading's.
type targetReads struct {
	cancel context.CancelFunc
	done   chan struct{}

	topics  kafkaadmin.Topics
	checks  []kafkaadmin.TargetCheck
	err     error
	ends    map[offsets.SourcePartition]int64
	endsErr error // when the ends could not be read; the checks say whether they had to be
}

// startTargetReads starts the target's reads, spec.StabilityWindow from now.
func startTargetReads(ctx context.Context, source, target *kafkaadmin.Client, spec PrecheckSpec) *targetReads {
	ctx, cancel := context.WithCancel(ctx)
	t := &targetReads{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(t.done)
		window := time.NewTimer(spec.StabilityWindow)
		defer window.Stop()
		select {
		case <-ctx.Done():
			t.err = ctx.Err()
			return
		case <-window.C:
		}
		if t.topics, t.err = existingTopics(ctx, source, spec.Topics); t.err != nil {
			return
		}
		if t.checks, t.err = target.CheckTargets(ctx, t.topics, spec.Policy); t.err != nil {
			return
		}
		t.ends, t.endsErr = TargetEnds(ctx, target, t.topics, spec.Policy)
	}()
	return t
}

// wait waits for the reads and reports whether they can stand for the
// ones after the second reading: they succeeded, on the source topics
// and partition counts topics names.
func (t *targetReads) wait(topics kafkaadmin.Topics) bool {
	<-t.done
	return t.err == nil && maps.Equal(t.topics, topics)
}

// stop ends the reads if they still run and waits for them.
func (t *targetReads) stop() {
	t.cancel()
	<-t.done
}
