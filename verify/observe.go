package verify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// Observe reads, for [Recheck], what the clusters hold now for a plan: both
// cluster IDs, the group's description, its commits and the log bounds of
// the plan's topics (one ReadGroup), and the partition counts and end
// offsets of the target topics named by the plan's replication policy
// (plan.Plan.Policy). Each fact is read once. A
// topic that no longer exists is left out of the observation (Recheck
// reports it), not an error.
//
// For a plan whose offsets came from another connector's stored offsets,
// pass that input: it is read again (a restarted dedicated-mode MirrorMaker
// moves them). For a plan from a Flink savepoint, pass FlinkSavepointOfPlan:
// the savepoint is read again. Other plans take nil.
//
// source and target are usually *kafkaadmin.Client; a test may pass fakes
// of [ClusterReader].
//
// Errors: the clients' errors, except unknown topics, and
// plan.ErrConfigNotRecorded for a plan older than schema version 4 that
// was not given its configuration (plan.Plan.AttachConfig).
func Observe(ctx context.Context, source, target ClusterReader, p *plan.Plan, input OffsetsInput) (Observation, error) {
	var o Observation
	policy, err := p.Policy()
	if err != nil {
		return o, err
	}
	var topics []string
	for _, e := range p.Entries {
		if len(topics) == 0 || topics[len(topics)-1] != e.Partition.Topic {
			topics = append(topics, e.Partition.Topic)
		}
	}
	back := make(map[string]string, len(topics)) // target topic -> source topic
	var names []string
	for _, t := range topics {
		tt, err := policy.TargetTopic(t)
		if err != nil {
			return o, err
		}
		back[tt] = t
		names = append(names, tt)
	}
	// The input, the source and the target are read at once: no reading
	// depends on another, and Recheck compares them only once all are in.
	var inputErr, sourceErr, targetErr error
	var wg sync.WaitGroup
	if input != nil {
		wg.Go(func() {
			if o.Input, inputErr = input.Read(ctx); inputErr != nil {
				inputErr = fmt.Errorf("offsets from %s: %w", input.Source(), inputErr)
			}
			o.InputRef = input.Source().Ref
		})
	}
	wg.Go(func() { sourceErr = observeSource(ctx, source, p.GroupID, topics, &o) })
	wg.Go(func() { targetErr = observeTarget(ctx, target, names, back, &o) })
	wg.Wait()
	if err := cmp.Or(inputErr, sourceErr, targetErr); err != nil {
		return o, err
	}
	o.read = true
	return o, nil
}

// observeSource reads, for Observe, the source's cluster ID, the group's
// description, and its commits with the bounds of the topics that exist.
// The three reads depend on none another and run at once.
func observeSource(ctx context.Context, source ClusterReader, group string, topics []string, o *Observation) error {
	var (
		idErr, groupErr, readErr error
		reading                  kafkaadmin.Reading
		wg                       sync.WaitGroup
	)
	wg.Go(func() { o.SourceClusterID, idErr = source.ClusterID(ctx) })
	wg.Go(func() { o.Group, groupErr = source.DescribeGroup(ctx, group) })
	wg.Go(func() { reading, readErr = readExisting(ctx, source, group, topics) })
	wg.Wait()
	switch {
	case idErr != nil:
		return fmt.Errorf("source cluster: %w", idErr)
	case groupErr != nil:
		return fmt.Errorf("describe group %s: %w", group, groupErr)
	case readErr != nil:
		return fmt.Errorf("re-read group %s: %w", group, readErr)
	}
	o.At, o.SourceTopics, o.Bounds, o.Committed = reading.At, reading.Topics, reading.Bounds, reading.Committed
	return nil
}

// observeTarget reads, for Observe, the target's cluster ID and the
// partition counts and end offsets of the target topics that exist (names,
// which back maps to their source topics).
// The cluster ID is read beside the topics.
func observeTarget(ctx context.Context, target ClusterReader, names []string, back map[string]string, o *Observation) error {
	var idErr error
	idRead := make(chan struct{})
	go func() {
		defer close(idRead)
		o.TargetClusterID, idErr = target.ClusterID(ctx)
	}()
	err := observeTargetTopics(ctx, target, names, back, o)
	<-idRead
	if idErr != nil {
		return fmt.Errorf("target cluster: %w", idErr)
	}
	return err
}

// observeTargetTopics reads, for observeTarget, the partition counts and
// end offsets of the target topics that exist.
func observeTargetTopics(ctx context.Context, target ClusterReader, names []string, back map[string]string, o *Observation) error {
	have, err := existingTopics(ctx, target, names)
	if err != nil {
		return fmt.Errorf("target topics: %w", err)
	}
	o.TargetTopics = make(kafkaadmin.Topics, len(have))
	var tps []kafkaadmin.TopicPartition
	for tt, n := range have {
		o.TargetTopics[back[tt]] = n
		for i := range n {
			tps = append(tps, kafkaadmin.TopicPartition{Topic: tt, Partition: i})
		}
	}
	ends, err := target.EndOffsets(ctx, tps)
	if err != nil {
		return fmt.Errorf("target end offsets: %w", err)
	}
	o.TargetEnds = make(map[offsets.SourcePartition]int64, len(ends))
	for tp, end := range ends {
		o.TargetEnds[offsets.SourcePartition{Topic: back[tp.Topic], Partition: tp.Partition}] = end
	}
	return nil
}

// readExisting is ReadGroup over the topics that exist.
func readExisting(ctx context.Context, r ClusterReader, group string, topics []string) (kafkaadmin.Reading, error) {
	for {
		rd, err := r.ReadGroup(ctx, group, topics)
		var ute *kafkaadmin.UnknownTopicsError
		if !errors.As(err, &ute) {
			return rd, err
		}
		topics = slices.DeleteFunc(topics, func(t string) bool { return slices.Contains(ute.Topics, t) })
		if len(topics) == 0 {
			return kafkaadmin.Reading{Topics: kafkaadmin.Topics{}}, nil
		}
	}
}

// existingTopics returns the partition counts of the named topics that
// exist. names is not modified.
func existingTopics(ctx context.Context, r ClusterReader, names []string) (kafkaadmin.Topics, error) {
	names = slices.Clone(names)
	for {
		t, err := r.Topics(ctx, names...)
		var ute *kafkaadmin.UnknownTopicsError
		if !errors.As(err, &ute) {
			return t, err
		}
		names = slices.DeleteFunc(names, func(n string) bool { return slices.Contains(ute.Topics, n) })
		if len(names) == 0 {
			return kafkaadmin.Topics{}, nil
		}
	}
}

// ObservationReuse is how old an observation may be for RecheckRecent to
// use it instead of a new Observe: the time from a precheck's last reading
// to the resume of the same run, without the waits of a read-back.
const ObservationReuse = 15 * time.Second

// GroupDescriber describes a consumer group, as *kafkaadmin.Client does.
type GroupDescriber interface {
	DescribeGroup(ctx context.Context, group string) (kafkaadmin.Group, error)
}

// RecheckRecent is Recheck for a step that follows, in the same process,
// moments after o was observed (within ObservationReuse of o.At, by now):
// every fact but the group's members is as fresh as a new read, so it
// reads the group's description again into o and rechecks. reused is
// false, and nothing is read, when o is nil or older: then Observe anew.
func RecheckRecent(ctx context.Context, source GroupDescriber, p *plan.Plan, o *Observation, now time.Time) (reused bool, err error) {
	if o == nil || o.At.IsZero() || now.Sub(o.At) >= ObservationReuse {
		return false, nil
	}
	g, err := source.DescribeGroup(ctx, p.GroupID)
	if err != nil {
		return true, fmt.Errorf("describe group %s: %w", p.GroupID, err)
	}
	o.Group = g
	return true, Recheck(p, *o)
}
