package verify

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// Observation is what the two clusters hold now for one plan, read by
// [Observe] just before a step that writes (apply, resume, rollback) and
// compared with the plan by [Recheck]. It holds every fact the precheck
// checked that can change after it.
type Observation struct {
	// At is when the reading of the group and the bounds started.
	At              time.Time
	SourceClusterID string
	TargetClusterID string
	// Group is the plan's consumer group as its coordinator describes it.
	Group kafkaadmin.Group
	// Committed holds the group's commits for the plan's partitions; a
	// partition without a commit is absent.
	Committed offsets.GroupOffsets
	// SourceTopics holds the partition count of each of the plan's source
	// topics that exists.
	SourceTopics kafkaadmin.Topics
	// Bounds are the source partitions' log bounds.
	Bounds map[offsets.SourcePartition]offsets.LogBounds
	// TargetTopics holds, keyed by source topic, the partition count of its
	// target topic under the replication policy, for target topics that exist.
	TargetTopics kafkaadmin.Topics
	// TargetEnds are the target partitions' end offsets, keyed by the source
	// partition each receives.
	TargetEnds map[offsets.SourcePartition]int64
	// Input holds the offsets of the plan's input read again, for a plan
	// built from another connector's offsets or a Flink savepoint; nil
	// otherwise. InputRef is what that input's reference says now (for a
	// savepoint: its directory, source, checkpoint and the digest of its
	// _metadata).
	Input    offsets.GroupOffsets
	InputRef string
	// Writers are the clusters the Connect cluster writes to for the
	// cutover's connector ([ObserveWriters]); nil when not read, and then
	// not compared.
	Writers *Writers

	// read is true when Observe made it: only such an observation serves
	// as PrepareOptions.Previous, whose cluster IDs become a Reached.
	read bool
}

// Problem is one reason a plan no longer describes the clusters.
type Problem struct {
	// Check names the fact that changed: "source-cluster",
	// "target-cluster", "worker-cluster", "producer-cluster", "strimzi-managed",
	// "group-members", "group-commit", "input-moved", "source-partitions",
	// "log-start", "log-end", "target-topic" or "target-end".
	Check string `json:"check"`
	// Partition is the source partition concerned; zero for a problem of a
	// whole cluster, group or topic.
	Partition offsets.SourcePartition `json:"partition"`
	Detail    string                  `json:"detail"`
}

func (p Problem) String() string {
	if p.Partition.Topic == "" {
		return p.Check + ": " + p.Detail
	}
	return p.Check + ": " + p.Partition.String() + ": " + p.Detail
}

// ErrStalePlan matches a *StalePlanError.
var ErrStalePlan = errkind.New(errkind.Refused, "verify: the plan no longer describes the clusters")

// StalePlanError is the refusal of [Recheck]: every problem found, sorted
// by check and partition.
type StalePlanError struct {
	Problems []Problem
}

func (e *StalePlanError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "verify: %s (%d problems; build a new plan):", words(ErrStalePlan), len(e.Problems))
	const show = 10
	for i, p := range e.Problems {
		if i == show {
			fmt.Fprintf(&b, "\n  and %d more", len(e.Problems)-show)
			break
		}
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrStalePlan) true.
func (e *StalePlanError) Is(target error) bool { return target == ErrStalePlan }

// ErrorKind is errkind.Refused.
func (e *StalePlanError) ErrorKind() errkind.Kind { return errkind.Refused }

// Recheck compares a plan with what the clusters hold now and returns nil
// when the plan still describes them, or a *StalePlanError listing every
// problem:
//
//   - the source or target cluster ID is not the plan's (another cluster);
//   - MM2's records would be written to another cluster than the plan's
//     target (Observation.Writers, when read): the Connect workers' own
//     cluster ("worker-cluster"), or the one producer.override.bootstrap.servers
//     reaches ("producer-cluster");
//   - the Strimzi operator manages the Connect cluster (Writers.Strimzi,
//     "strimzi-managed"): it would delete the connector; write through its
//     resources (plan.WriteStrimzi) instead;
//   - the group has members: a consumer of the old job's group runs again;
//   - a group commit is not the plan's C. For a plan built from the group
//     (or a schema version 1 plan, which does not record its source) any
//     change counts, a commit that disappeared included. For a plan built
//     from a file, a group without a commit passes (exporting them is the
//     reason to use a file), and a commit that differs from the file passes
//     only when the plan records that the file overrides the group. For a
//     plan built from another connector's offsets the group's commits are
//     not compared, but that connector's offsets are, when the observation
//     read them again (Observation.Input): if they moved, it runs again.
//     For a plan from a Flink savepoint, a group commit past the plan's C
//     refuses (the job ran again after its savepoint; commits behind it or
//     absent are Flink's lost last commit), and so does a savepoint read
//     again whose positions or _metadata differ from the plan's;
//   - a source topic's partition count changed, or the topic is gone: the
//     plan no longer covers every partition;
//   - retention deleted records where MM2 is to start (the log start is past
//     M+1, or past the log start a cleared partition starts from);
//   - C is beyond the log end: the topic was truncated or recreated;
//   - a target topic is gone or has another partition count;
//   - a target partition's end offset moved: something wrote to the target.
//
// It is pure.
func Recheck(p *plan.Plan, o Observation) error {
	var probs []Problem
	add := func(check string, sp offsets.SourcePartition, format string, args ...any) {
		probs = append(probs, Problem{Check: check, Partition: sp, Detail: fmt.Sprintf(format, args...)})
	}
	none := offsets.SourcePartition{}
	if o.SourceClusterID != p.SourceClusterID {
		add("source-cluster", none, "the plan was built on source cluster %s, this is %s", p.SourceClusterID, o.SourceClusterID)
	}
	if o.TargetClusterID != p.TargetClusterID {
		add("target-cluster", none, "the plan was built on target cluster %s, this is %s", p.TargetClusterID, o.TargetClusterID)
	}
	if w := o.Writers; w != nil && w.ProducerClusterID != p.TargetClusterID {
		if w.ProducerOverride != "" {
			add("producer-cluster", none, "producer.override.bootstrap.servers %s reaches cluster %s, not the plan's target %s: MM2 would write every record there", w.ProducerOverride, w.ProducerClusterID, p.TargetClusterID)
		} else {
			add("worker-cluster", none, "the Connect workers' own cluster is %s, not the plan's target %s: their producer would write every record of MM2 there", w.WorkerClusterID, p.TargetClusterID)
		}
	}
	if w := o.Writers; w != nil && len(w.Strimzi) > 0 {
		add("strimzi-managed", none, "the Strimzi operator manages this Connect cluster (%s): it deletes a connector no KafkaConnector or KafkaMirrorMaker2 defines, so the cutover writes nothing over REST here; render the resources with cutover strimzi", strings.Join(w.Strimzi, "; "))
	}
	if n := len(o.Group.Members); n > 0 {
		add("group-members", none, "group %s is %s with %d members: the old job (or another consumer of its group) runs; stop it", p.GroupID, o.Group.State, n)
	}

	counts := make(map[string]int32)
	for _, e := range p.Entries {
		counts[e.Partition.Topic]++
	}
	for _, topic := range slices.Sorted(maps.Keys(counts)) {
		n := counts[topic]
		if have, ok := o.SourceTopics[topic]; !ok {
			add("source-partitions", none, "source topic %s no longer exists", topic)
		} else if have != n {
			add("source-partitions", none, "source topic %s has %d partitions, the plan %d", topic, have, n)
		}
		if have, ok := o.TargetTopics[topic]; !ok {
			add("target-topic", none, "the target topic of %s does not exist", topic)
		} else if have != n {
			add("target-topic", none, "the target topic of %s has %d partitions, the plan %d", topic, have, n)
		}
	}

	from := p.OffsetsFrom
	for _, e := range p.Entries {
		sp := e.Partition
		now, has := o.Committed[sp]
		c, planned := e.GroupOffset.Get()
		switch {
		case from.Kind == plan.FromFlinkSavepoint:
			if has && planned && now > c {
				add("group-commit", sp, "committed offset %d is past the savepoint's %d: the old job ran again after its savepoint; stop it", now, c)
			}
		case from.Kind == plan.FromConnectorOffsets:
		case from.Kind == plan.FromFile && !has:
		case from.Kind == plan.FromFile && from.OverridesGroup:
		case has != planned || now != c:
			was, is := e.GroupOffset.String(), "none"
			if has {
				is = fmt.Sprint(now)
			}
			add("group-commit", sp, "committed offset moved from %s to %s since the plan", was, is)
		}
		if (from.Kind == plan.FromConnectorOffsets || from.Kind == plan.FromFlinkSavepoint) && o.Input != nil {
			if now := o.Input.Lookup(sp); now != e.GroupOffset && from.Kind == plan.FromFlinkSavepoint {
				add("input-moved", sp, "the savepoint's position is %s, the plan's %s: the savepoint was replaced since the plan", now, e.GroupOffset)
			} else if now != e.GroupOffset {
				add("input-moved", sp, "the %s moved from %s to %s since the plan: the old job runs again", from, e.GroupOffset, now)
			}
		}
		if _, sourceExists := o.SourceTopics[sp.Topic]; sourceExists {
			b, ok := o.Bounds[sp]
			switch {
			case !ok:
			case e.Action != offsets.ActionBlock && b.Start > startOf(e):
				add("log-start", sp, "log start %d is past offset %d where MM2 starts: retention deleted %d records since the plan", b.Start, startOf(e), b.Start-startOf(e))
			case planned && c > b.End:
				add("log-end", sp, "committed offset %d is beyond the log end %d: the topic was truncated or recreated", c, b.End)
			}
		}
		if end, ok := o.TargetEnds[sp]; ok && end != e.TargetEnd {
			add("target-end", sp, "target end offset moved from %d to %d: something wrote to the target since the plan", e.TargetEnd, end)
		}
	}
	if from.Kind == plan.FromFlinkSavepoint && o.InputRef != "" && o.InputRef != from.Ref {
		add("input-moved", none, "the savepoint is not the plan's any more: it reads as %s, the plan recorded %s", o.InputRef, from.Ref)
	}
	if len(probs) == 0 {
		return nil
	}
	return &StalePlanError{Problems: probs}
}
