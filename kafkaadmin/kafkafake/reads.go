package kafkafake

import (
	"context"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// errUnknownPartition is the per-partition error of a partition that does
// not exist, worded as kafkaadmin's.
var errUnknownPartition = fmt.Errorf("%w: partition not in metadata", kafkaadmin.ErrUnknownTopic)

// ctxErr is the context's error as the client's calls return it: wrapped
// with the call's operation.
func ctxErr(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("kafkaadmin: %s: %w", op, err)
	}
	return nil
}

// offlineErr is the error of a call that needs an offline partition as a
// whole, as the client returns it once its retries give up.
func offlineErr(op string, tp kafkaadmin.TopicPartition) error {
	return fmt.Errorf("kafkaadmin: %s: %s: %w", op, tp, sarama.ErrLeaderNotAvailable)
}

func checkTopicNames(op string, names []string) error {
	if len(names) == 0 {
		return &kafkaadmin.ArgumentError{Op: op, Reason: "no topics"}
	}
	if slices.Contains(names, "") {
		return &kafkaadmin.ArgumentError{Op: op, Reason: "empty topic name"}
	}
	return nil
}

func dedupe(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// partitionErrors is a *kafkaadmin.PartitionErrors of op, or nil when errs
// is empty.
func partitionErrors(op string, total int, errs map[kafkaadmin.TopicPartition]error) error {
	if len(errs) == 0 {
		return nil
	}
	return &kafkaadmin.PartitionErrors{Op: op, Total: total, Errs: errs}
}

// ClusterID returns ID. Errors: the context's error.
func (c *Cluster) ClusterID(ctx context.Context) (string, error) {
	var id string
	keep, err := c.call(ctx, Call{Op: OpClusterID}, func() error {
		if err := ctxErr(ctx, "cluster id"); err != nil {
			return err
		}
		c.Lock()
		defer c.Unlock()
		id = c.ID
		return nil
	})
	if !keep || err != nil {
		return "", err
	}
	return id, nil
}

// knownTopics returns the partition counts of the named topics that exist
// and an *kafkaadmin.UnknownTopicsError naming the others, sorted. The
// caller holds the lock.
func (c *Cluster) knownTopics(names []string) (kafkaadmin.Topics, error) {
	counts := c.topics()
	out := make(kafkaadmin.Topics, len(names))
	var missing []string
	for _, n := range names {
		if p, ok := counts[n]; ok {
			out[n] = p
		} else if !slices.Contains(missing, n) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return out, &kafkaadmin.UnknownTopicsError{Topics: missing}
	}
	return out, nil
}

// Topics returns the partition counts of the named topics. Errors: an
// *kafkaadmin.ArgumentError for an empty list or name, an
// *kafkaadmin.UnknownTopicsError naming the topics that do not exist (with
// the counts of those that do), or the context's error.
func (c *Cluster) Topics(ctx context.Context, names ...string) (kafkaadmin.Topics, error) {
	var out kafkaadmin.Topics
	keep, err := c.call(ctx, Call{Op: OpTopics, Topics: slices.Clone(names)}, func() error {
		if err := checkTopicNames("Topics", names); err != nil {
			return err
		}
		if err := ctxErr(ctx, "topics"); err != nil {
			return err
		}
		c.Lock()
		defer c.Unlock()
		var err error
		out, err = c.knownTopics(dedupe(names))
		return err
	})
	if !keep {
		return nil, err
	}
	return out, err
}

// TopicsMatching returns the partition counts of every topic whose whole
// name matches the regular expression, topics whose names start with "__"
// left out, as [kafkaadmin.Client.TopicsMatching]. No match gives an empty
// Topics. Errors: an *kafkaadmin.ArgumentError for a bad or empty
// pattern, or the context's error.
func (c *Cluster) TopicsMatching(ctx context.Context, pattern string) (kafkaadmin.Topics, error) {
	var out kafkaadmin.Topics
	keep, err := c.call(ctx, Call{Op: OpTopicsMatching, Pattern: pattern}, func() error {
		re, err := regexp.Compile(`^(?:` + pattern + `)$`)
		if err != nil || pattern == "" {
			return &kafkaadmin.ArgumentError{Op: "TopicsMatching", Reason: fmt.Sprintf("bad pattern %q", pattern)}
		}
		if err := ctxErr(ctx, "topics matching"); err != nil {
			return err
		}
		c.Lock()
		defer c.Unlock()
		out = kafkaadmin.Topics{}
		for name, n := range c.topics() {
			if !strings.HasPrefix(name, "__") && re.MatchString(name) {
				out[name] = n
			}
		}
		return nil
	})
	if !keep || err != nil {
		return nil, err
	}
	return out, nil
}

// CheckTargets checks, on this cluster as the target, that each source
// topic's target topic under the policy exists with the source's
// partition count, as [kafkaadmin.Client.CheckTargets]. Errors: the
// policy's Validate error, an *kafkaadmin.ArgumentError for no source
// topics, or the context's error.
func (c *Cluster) CheckTargets(ctx context.Context, source kafkaadmin.Topics, policy offsets.ReplicationPolicy) ([]kafkaadmin.TargetCheck, error) {
	var out []kafkaadmin.TargetCheck
	keep, err := c.call(ctx, Call{Op: OpCheckTargets, Topics: source.Names()}, func() error {
		if err := policy.Validate(); err != nil {
			return err
		}
		if len(source) == 0 {
			return &kafkaadmin.ArgumentError{Op: "CheckTargets", Reason: "no source topics"}
		}
		if err := ctxErr(ctx, "check targets"); err != nil {
			return err
		}
		c.Lock()
		counts := c.topics()
		c.Unlock()
		target := kafkaadmin.Topics{}
		for _, n := range source.Names() {
			t, _ := policy.TargetTopic(n)
			if p, ok := counts[t]; ok {
				target[t] = p
			}
		}
		var err error
		out, err = kafkaadmin.CheckTargets(source, target, policy)
		return err
	})
	if !keep || err != nil {
		return nil, err
	}
	return out, nil
}

// bounds returns the bounds of the online partitions of tps, and a
// *kafkaadmin.PartitionErrors of op for the others. The caller holds the
// lock.
func (c *Cluster) bounds(op string, tps []kafkaadmin.TopicPartition) (map[kafkaadmin.TopicPartition]offsets.LogBounds, error) {
	counts := c.topics()
	out := make(map[kafkaadmin.TopicPartition]offsets.LogBounds, len(tps))
	errs := make(map[kafkaadmin.TopicPartition]error)
	for _, tp := range tps {
		switch c.locate(counts, tp) {
		case unknown:
			errs[tp] = errUnknownPartition
		case offline:
			errs[tp] = sarama.ErrLeaderNotAvailable
		default:
			out[tp] = c.Bounds[tp]
		}
	}
	return out, partitionErrors(op, len(tps), errs)
}

// LogBounds returns the log start offset, high watermark and last stable
// offset of each partition, as [kafkaadmin.Client.LogBounds]. Errors: an
// *kafkaadmin.ArgumentError for an empty list, a
// *kafkaadmin.PartitionErrors with the bounds of the other partitions for
// partitions that do not exist (kafkaadmin.ErrUnknownTopic) or are offline
// (sarama.ErrLeaderNotAvailable), or the context's error.
func (c *Cluster) LogBounds(ctx context.Context, partitions []kafkaadmin.TopicPartition) (map[kafkaadmin.TopicPartition]offsets.LogBounds, error) {
	var out map[kafkaadmin.TopicPartition]offsets.LogBounds
	keep, err := c.call(ctx, Call{Op: OpLogBounds, Partitions: sorted(partitions)}, func() error {
		if len(partitions) == 0 {
			return &kafkaadmin.ArgumentError{Op: "LogBounds", Reason: "no partitions"}
		}
		if err := ctxErr(ctx, "log bounds"); err != nil {
			return err
		}
		c.Lock()
		defer c.Unlock()
		var err error
		out, err = c.bounds("LogBounds", partitions)
		return err
	})
	if !keep {
		return nil, err
	}
	return out, err
}

// EndOffsets returns the high watermark of each partition, as
// [kafkaadmin.Client.EndOffsets]; results and errors as LogBounds'.
func (c *Cluster) EndOffsets(ctx context.Context, partitions []kafkaadmin.TopicPartition) (map[kafkaadmin.TopicPartition]int64, error) {
	var out map[kafkaadmin.TopicPartition]int64
	keep, err := c.call(ctx, Call{Op: OpEndOffsets, Partitions: sorted(partitions)}, func() error {
		if len(partitions) == 0 {
			return &kafkaadmin.ArgumentError{Op: "EndOffsets", Reason: "no partitions"}
		}
		if err := ctxErr(ctx, "end offsets"); err != nil {
			return err
		}
		c.Lock()
		defer c.Unlock()
		b, err := c.bounds("EndOffsets", partitions)
		out = make(map[kafkaadmin.TopicPartition]int64, len(b))
		for tp, lb := range b {
			out[tp] = lb.End
		}
		return err
	})
	if !keep {
		return nil, err
	}
	return out, err
}

func sorted(tps []kafkaadmin.TopicPartition) []kafkaadmin.TopicPartition {
	out := slices.Clone(tps)
	kafkaadmin.SortPartitions(out)
	return slices.Compact(out)
}

// span returns up to want records of the online partition tp in [from,
// until) that a consumer with isolation iso sees, or
// sarama.ErrOffsetOutOfRange when from is below the log start or beyond
// the high watermark, as a broker answers a fetch there. The caller holds
// the lock.
func (c *Cluster) span(tp kafkaadmin.TopicPartition, from, until int64, iso kafkaadmin.Isolation, want int) ([]kafkaadmin.Record, error) {
	b := c.Bounds[tp]
	if from < b.Start || from > b.End {
		return nil, sarama.ErrOffsetOutOfRange
	}
	end := b.StableEnd
	if iso == kafkaadmin.ReadUncommitted {
		end = b.End
	}
	until = min(until, end)
	var out []kafkaadmin.Record
	for _, r := range c.Records[tp] {
		if r.Offset < from || r.Offset < b.Start {
			continue
		}
		if r.Offset >= until || len(out) == want {
			break
		}
		out = append(out, clone(r))
	}
	return out, nil
}

// clone copies a record, so that a caller cannot change the cluster's.
func clone(r kafkaadmin.Record) kafkaadmin.Record {
	r.Key, r.Value = slices.Clone(r.Key), slices.Clone(r.Value)
	if r.Headers != nil {
		hs := make([]kafkaadmin.Header, len(r.Headers))
		for i, h := range r.Headers {
			hs[i] = kafkaadmin.Header{Key: h.Key, Value: slices.Clone(h.Value)}
		}
		r.Headers = hs
	}
	return r
}

// scan reads up to want records of each span, as the client's fetches do:
// per partition the records found, and per partition the errors; a
// non-nil error is the whole call's. The caller holds the lock.
func (c *Cluster) scan(spans map[kafkaadmin.TopicPartition]kafkaadmin.Span, iso kafkaadmin.Isolation, want int) (map[kafkaadmin.TopicPartition][]kafkaadmin.Record, map[kafkaadmin.TopicPartition]error, error) {
	counts := c.topics()
	found := make(map[kafkaadmin.TopicPartition][]kafkaadmin.Record, len(spans))
	errs := make(map[kafkaadmin.TopicPartition]error)
	for _, tp := range sortedKeys(spans) {
		switch c.locate(counts, tp) {
		case unknown:
			errs[tp] = errUnknownPartition
		case offline:
			return nil, nil, offlineErr("read records", tp)
		default:
			recs, err := c.span(tp, spans[tp].From, spans[tp].Until, iso, want)
			if err != nil {
				errs[tp] = err
			} else if len(recs) > 0 {
				found[tp] = recs
			}
		}
	}
	return found, errs, nil
}

// firstRecords is FirstRecords without the call's record.
func (c *Cluster) firstRecords(ctx context.Context, from map[kafkaadmin.TopicPartition]int64, iso kafkaadmin.Isolation) (map[kafkaadmin.TopicPartition]kafkaadmin.Record, error) {
	for _, tp := range sortedKeys(from) {
		if off := from[tp]; off < 0 || tp.Topic == "" || tp.Partition < 0 {
			return nil, &kafkaadmin.ArgumentError{Op: "FirstRecords", Reason: fmt.Sprintf("read %s at %d: the topic must be named and offset and partition must not be negative", tp, off)}
		}
	}
	if err := ctxErr(ctx, "read records"); err != nil {
		return nil, err
	}
	spans := make(map[kafkaadmin.TopicPartition]kafkaadmin.Span, len(from))
	for tp, off := range from {
		spans[tp] = kafkaadmin.Span{From: off, Until: math.MaxInt64}
	}
	c.Lock()
	defer c.Unlock()
	found, errs, err := c.scan(spans, iso, 1)
	if err != nil {
		return nil, err
	}
	out := make(map[kafkaadmin.TopicPartition]kafkaadmin.Record, len(from))
	for tp, recs := range found {
		out[tp] = recs[0]
	}
	return out, partitionErrors("FirstRecords", len(from), errs)
}

// FirstRecords returns, for each partition of from, the first record at or
// after its offset that a consumer with isolation iso sees (up to the last
// stable offset for ReadCommitted, the high watermark for
// ReadUncommitted), as [kafkaadmin.Client.FirstRecords]; a partition with
// none is absent. Errors: an *kafkaadmin.ArgumentError for an empty topic
// or a negative partition or offset; a *kafkaadmin.PartitionErrors with
// the other partitions' records for a partition that does not exist
// (kafkaadmin.ErrUnknownTopic) or an offset below the log start or beyond
// the high watermark (sarama.ErrOffsetOutOfRange); an error matching
// sarama.ErrLeaderNotAvailable for an offline partition; or the context's
// error.
func (c *Cluster) FirstRecords(ctx context.Context, from map[kafkaadmin.TopicPartition]int64, iso kafkaadmin.Isolation) (map[kafkaadmin.TopicPartition]kafkaadmin.Record, error) {
	var out map[kafkaadmin.TopicPartition]kafkaadmin.Record
	keep, err := c.call(ctx, Call{Op: OpFirstRecords, Partitions: sortedKeys(from), Offsets: maps.Clone(from), Isolation: iso}, func() error {
		var err error
		out, err = c.firstRecords(ctx, from, iso)
		return err
	})
	if !keep {
		return nil, err
	}
	return out, err
}

// ReadRecord returns the first record of the partition at or after
// offset that a consumer with isolation iso sees, as
// [kafkaadmin.Client.ReadRecord]. Errors: kafkaadmin.ErrNoRecord when
// there is none yet; those of FirstRecords, a partition's own error
// wrapped with the partition and offset.
func (c *Cluster) ReadRecord(ctx context.Context, tp kafkaadmin.TopicPartition, offset int64, iso kafkaadmin.Isolation) (kafkaadmin.Record, error) {
	var out kafkaadmin.Record
	from := map[kafkaadmin.TopicPartition]int64{tp: offset}
	keep, err := c.call(ctx, Call{Op: OpReadRecord, Partitions: []kafkaadmin.TopicPartition{tp}, Offsets: maps.Clone(from), Isolation: iso}, func() error {
		got, err := c.firstRecords(ctx, from, iso)
		if pe, ok := err.(*kafkaadmin.PartitionErrors); ok {
			return fmt.Errorf("%s at %d: %w", tp, offset, pe.Errs[tp])
		}
		if err != nil {
			return err
		}
		rec, ok := got[tp]
		if !ok {
			return fmt.Errorf("%s at %d: %w", tp, offset, kafkaadmin.ErrNoRecord)
		}
		out = rec
		return nil
	})
	if !keep || err != nil {
		return kafkaadmin.Record{}, err
	}
	return out, nil
}

// ReadSpans returns, for each partition of spans, the records with offsets
// in its span that a consumer with isolation iso sees, in offset order, as
// [kafkaadmin.Client.ReadSpans]; a partition with none is absent, and an
// empty span (Until <= From) gives none and reads nothing. Errors: an
// *kafkaadmin.ArgumentError for an empty topic or a negative partition or
// From; otherwise as FirstRecords.
func (c *Cluster) ReadSpans(ctx context.Context, spans map[kafkaadmin.TopicPartition]kafkaadmin.Span, iso kafkaadmin.Isolation) (map[kafkaadmin.TopicPartition][]kafkaadmin.Record, error) {
	var out map[kafkaadmin.TopicPartition][]kafkaadmin.Record
	keep, err := c.call(ctx, Call{Op: OpReadSpans, Partitions: sortedKeys(spans), Spans: maps.Clone(spans), Isolation: iso}, func() error {
		todo := make(map[kafkaadmin.TopicPartition]kafkaadmin.Span, len(spans))
		for _, tp := range sortedKeys(spans) {
			sp := spans[tp]
			if sp.From < 0 || tp.Topic == "" || tp.Partition < 0 {
				return &kafkaadmin.ArgumentError{Op: "ReadSpans", Reason: fmt.Sprintf("read %s in [%d, %d): the topic must be named, offsets and partition must not be negative", tp, sp.From, sp.Until)}
			}
			if sp.Until > sp.From {
				todo[tp] = sp
			}
		}
		out = make(map[kafkaadmin.TopicPartition][]kafkaadmin.Record, len(todo))
		if len(todo) == 0 {
			return nil
		}
		if err := ctxErr(ctx, "read records"); err != nil {
			return err
		}
		c.Lock()
		defer c.Unlock()
		found, errs, err := c.scan(todo, iso, math.MaxInt)
		if err != nil {
			return err
		}
		out = found
		return partitionErrors("ReadSpans", len(spans), errs)
	})
	if !keep {
		return nil, err
	}
	if _, partial := err.(*kafkaadmin.PartitionErrors); err != nil && !partial {
		return nil, err
	}
	return out, err
}

// describe is the group as the coordinator describes it. The caller holds
// the lock.
func (c *Cluster) describe(group string) kafkaadmin.Group {
	if n := c.Members[group]; n > 0 {
		g := kafkaadmin.Group{ID: group, State: kafkaadmin.GroupStable, Type: kafkaadmin.GroupTypeClassic, ProtocolType: "consumer", Protocol: "range"}
		for i := range n {
			g.Members = append(g.Members, kafkaadmin.Member{ID: fmt.Sprintf("kafkafake-%s-%d", group, i+1), ClientID: "kafkafake", ClientHost: "/127.0.0.1"})
		}
		slices.SortFunc(g.Members, func(a, b kafkaadmin.Member) int { return strings.Compare(a.ID, b.ID) })
		return g
	}
	if len(c.Commits[group]) > 0 {
		return kafkaadmin.Group{ID: group, State: kafkaadmin.GroupEmpty, Type: kafkaadmin.GroupTypeClassic}
	}
	return kafkaadmin.Group{ID: group, State: kafkaadmin.GroupDead}
}

// DescribeGroup returns the group's state, protocol and members, as
// [kafkaadmin.Client.DescribeGroup]: Stable with Members[group] members,
// Empty with commits and no member, Dead (no error) without either.
// Errors: an *kafkaadmin.ArgumentError for an empty group, or the
// context's error.
func (c *Cluster) DescribeGroup(ctx context.Context, group string) (kafkaadmin.Group, error) {
	var out kafkaadmin.Group
	keep, err := c.call(ctx, Call{Op: OpDescribeGroup, Group: group}, func() error {
		if group == "" {
			return &kafkaadmin.ArgumentError{Op: "DescribeGroup", Reason: "empty group"}
		}
		if err := ctxErr(ctx, "describe group"); err != nil {
			return err
		}
		c.Lock()
		defer c.Unlock()
		out = c.describe(group)
		return nil
	})
	if !keep || err != nil {
		return kafkaadmin.Group{}, err
	}
	return out, nil
}

// committed returns the group's commits of the partitions of t. The
// caller holds the lock.
func (c *Cluster) committed(group string, t kafkaadmin.Topics) offsets.GroupOffsets {
	parts := t.Partitions()
	out := make(offsets.GroupOffsets, len(parts))
	for _, tp := range parts {
		if off, ok := c.Commits[group][tp]; ok {
			out[tp] = off
		}
	}
	return out
}

// GroupOffsets returns the group's committed offsets of every partition
// of the named topics, as [kafkaadmin.Client.GroupOffsets]: a partition
// without a commit is absent, and a group without commits gives an empty
// result, no error. Errors: an *kafkaadmin.ArgumentError for an empty
// group or topic list, an *kafkaadmin.UnknownTopicsError, or the
// context's error.
func (c *Cluster) GroupOffsets(ctx context.Context, group string, topics []string) (offsets.GroupOffsets, error) {
	var out offsets.GroupOffsets
	keep, err := c.call(ctx, Call{Op: OpGroupOffsets, Group: group, Topics: slices.Clone(topics)}, func() error {
		if group == "" {
			return &kafkaadmin.ArgumentError{Op: "GroupOffsets", Reason: "empty group"}
		}
		if err := checkTopicNames("GroupOffsets", topics); err != nil {
			return err
		}
		if err := ctxErr(ctx, "group offsets"); err != nil {
			return err
		}
		c.Lock()
		defer c.Unlock()
		t, err := c.knownTopics(dedupe(topics))
		if err != nil {
			return err
		}
		out = c.committed(group, t)
		return nil
	})
	if !keep || err != nil {
		return nil, err
	}
	return out, nil
}

// CommitOffsets writes the group's committed offsets, as
// [kafkaadmin.Client.CommitOffsets] does for a rollback: each offset is the
// next offset the group will read. Nothing is written when an argument is
// invalid, a topic or partition does not exist, or the group has members.
// Errors: an *kafkaadmin.ArgumentError (no offsets, an empty group, a
// negative offset or partition), an *kafkaadmin.GroupActiveError, an
// *kafkaadmin.UnknownTopicsError (also naming a partition beyond its
// topic's count, as "topic-partition"), or the context's error.
func (c *Cluster) CommitOffsets(ctx context.Context, group string, o map[kafkaadmin.TopicPartition]int64) error {
	_, err := c.call(ctx, Call{Op: OpCommitOffsets, Group: group, Partitions: sortedKeys(o), Offsets: maps.Clone(o)}, func() error {
		if group == "" {
			return &kafkaadmin.ArgumentError{Op: "CommitOffsets", Reason: "empty group"}
		}
		if len(o) == 0 {
			return &kafkaadmin.ArgumentError{Op: "CommitOffsets", Reason: "no offsets"}
		}
		var topics []string
		for _, tp := range sortedKeys(o) {
			if off := o[tp]; tp.Topic == "" || tp.Partition < 0 || off < 0 {
				return &kafkaadmin.ArgumentError{Op: "CommitOffsets", Reason: fmt.Sprintf("bad entry %s=%d", tp, off)}
			}
			topics = append(topics, tp.Topic)
		}
		if err := ctxErr(ctx, "commit offsets"); err != nil {
			return err
		}
		c.Lock()
		defer c.Unlock()
		if g := c.describe(group); g.Active() {
			return &kafkaadmin.GroupActiveError{Group: group, State: g.State, Members: len(g.Members)}
		}
		t, err := c.knownTopics(slices.Compact(topics))
		if err != nil {
			return err
		}
		var beyond []string
		for tp := range o {
			if tp.Partition >= t[tp.Topic] {
				beyond = append(beyond, tp.String())
			}
		}
		if len(beyond) > 0 {
			slices.Sort(beyond)
			return &kafkaadmin.UnknownTopicsError{Topics: beyond}
		}
		if c.Commits[group] == nil {
			c.Commits[group] = offsets.GroupOffsets{}
		}
		maps.Copy(c.Commits[group], o)
		c.logCommit(group, o)
		return nil
	})
	return err
}

// readGroup is one reading of the group on the topics: its commits, and
// with withBounds every partition's bounds. The caller does not hold the
// lock.
func (c *Cluster) readGroup(ctx context.Context, group string, topics []string, withBounds bool) (kafkaadmin.Reading, error) {
	if err := ctxErr(ctx, "read group"); err != nil {
		return kafkaadmin.Reading{}, err
	}
	c.Lock()
	defer c.Unlock()
	out := kafkaadmin.Reading{At: time.Now()}
	t, err := c.knownTopics(dedupe(topics))
	if err != nil {
		return kafkaadmin.Reading{}, err
	}
	out.Topics = t
	out.Committed = c.committed(group, t)
	parts := t.Partitions()
	if withBounds {
		var err error
		out.Bounds, err = c.bounds("LogBounds", parts)
		if pe, ok := err.(*kafkaadmin.PartitionErrors); ok {
			out.Errors = pe.Errs
		}
		for tp, b := range out.Bounds { // a reading has no last stable offset, as the client's
			b.StableEnd = 0
			out.Bounds[tp] = b
		}
	}
	return out, partitionErrors("ReadGroup", len(parts), out.Errors)
}

// ReadGroup is one reading of the group's commits on the named topics
// with every partition's bounds, as [kafkaadmin.Client.ReadGroup]. Errors:
// an *kafkaadmin.ArgumentError for an empty group or topic list, an
// *kafkaadmin.UnknownTopicsError, a *kafkaadmin.PartitionErrors with the
// Reading when some partitions are offline (also in Reading.Errors), or
// the context's error.
func (c *Cluster) ReadGroup(ctx context.Context, group string, topics []string) (kafkaadmin.Reading, error) {
	var out kafkaadmin.Reading
	keep, err := c.call(ctx, Call{Op: OpReadGroup, Group: group, Topics: slices.Clone(topics)}, func() error {
		if group == "" {
			return &kafkaadmin.ArgumentError{Op: "ReadGroup", Reason: "empty group"}
		}
		if err := checkTopicNames("ReadGroup", topics); err != nil {
			return err
		}
		var err error
		out, err = c.readGroup(ctx, group, topics, true)
		return err
	})
	if !keep {
		return kafkaadmin.Reading{}, err
	}
	return out, err
}

// ReadCommitWindow reads the group's commits, waits for window, reads them
// again with the partitions' bounds, and reports every partition whose
// commit moved, as [kafkaadmin.Client.ReadCommitWindow]. A test changes
// the cluster during the window with DuringWindow. Errors: an *kafkaadmin.ArgumentError
// for a window that is not positive or an empty group or topic list, a
// *kafkaadmin.TopicsChangedError (with the readings) when a partition
// count changed during the window, a *kafkaadmin.PartitionErrors (with the
// readings), the context's error (also while waiting), or those of
// ReadGroup.
func (c *Cluster) ReadCommitWindow(ctx context.Context, group string, topics []string, window time.Duration) (kafkaadmin.CommitWindow, error) {
	var out kafkaadmin.CommitWindow
	keep, err := c.call(ctx, Call{Op: OpReadCommitWindow, Group: group, Topics: slices.Clone(topics), Window: window}, func() error {
		if window <= 0 {
			return &kafkaadmin.ArgumentError{Op: "ReadCommitWindow", Reason: "window must be positive"}
		}
		if group == "" {
			return &kafkaadmin.ArgumentError{Op: "ReadCommitWindow", Reason: "empty group"}
		}
		if err := checkTopicNames("ReadCommitWindow", topics); err != nil {
			return err
		}
		out = kafkaadmin.CommitWindow{Group: group, Window: window}
		var err error
		out.First, err = c.readGroup(ctx, group, topics, false)
		if _, partial := err.(*kafkaadmin.PartitionErrors); err != nil && !partial {
			return err
		}
		c.hooks.mu.Lock()
		during := c.hooks.window
		c.hooks.mu.Unlock()
		if during != nil {
			during()
		}
		t := time.NewTimer(window)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return fmt.Errorf("kafkaadmin: commit window: %w", ctx.Err())
		case <-t.C:
		}
		out.Second, err = c.readGroup(ctx, group, topics, true)
		if _, partial := err.(*kafkaadmin.PartitionErrors); err != nil && !partial {
			return err
		}
		out.Moved = kafkaadmin.DiffCommitted(out.First, out.Second)
		if !maps.Equal(out.First.Topics, out.Second.Topics) {
			return &kafkaadmin.TopicsChangedError{Before: out.First.Topics, After: out.Second.Topics}
		}
		errs := make(map[kafkaadmin.TopicPartition]error)
		maps.Copy(errs, out.First.Errors)
		maps.Copy(errs, out.Second.Errors)
		return partitionErrors("ReadCommitWindow", len(out.Second.Topics.Partitions()), errs)
	})
	if !keep {
		return kafkaadmin.CommitWindow{}, err
	}
	switch err.(type) {
	case nil, *kafkaadmin.PartitionErrors, *kafkaadmin.TopicsChangedError:
		return out, err
	}
	return kafkaadmin.CommitWindow{}, err
}

// ReadConnectOffsets reads a Kafka Connect offsets topic from its log
// start to its last stable offset, as [kafkaadmin.Client.ReadConnectOffsets]
// does, and returns the offsets stored for the MirrorSourceConnector named
// connector: per source partition the latest, a tombstone removing it, in
// partition order. Records of other connectors are skipped; the records
// are decoded as the client decodes them (see StoreConnectOffsets).
// Errors: an *kafkaadmin.ArgumentError for an empty topic or connector, an
// *kafkaadmin.UnknownTopicsError when the topic does not exist, a
// *kafkaadmin.PartitionErrors for an offline partition of it, an error
// matching kafkaadmin.ErrMalformedOffsetRecord naming the record's
// partition and offset, or the context's error.
func (c *Cluster) ReadConnectOffsets(ctx context.Context, topic, connector string) ([]offsets.ConnectOffset, error) {
	var out []offsets.ConnectOffset
	keep, err := c.call(ctx, Call{Op: OpReadConnectOffsets, Topics: []string{topic}, Connector: connector}, func() error {
		if topic == "" || connector == "" {
			return &kafkaadmin.ArgumentError{Op: "ReadConnectOffsets", Reason: "the offsets topic and the connector must be named"}
		}
		if err := ctxErr(ctx, "topics"); err != nil {
			return err
		}
		c.Lock()
		defer c.Unlock()
		t, err := c.knownTopics([]string{topic})
		if err != nil {
			return err
		}
		parts := t.Partitions()
		if _, err := c.bounds("LogBounds", parts); err != nil {
			return err
		}
		latest := map[string]offsets.ConnectOffset{}
		for _, tp := range parts {
			b := c.Bounds[tp]
			if b.StableEnd <= b.Start {
				continue
			}
			recs, err := c.span(tp, b.Start, b.StableEnd, kafkaadmin.ReadCommitted, math.MaxInt)
			if err != nil {
				return err
			}
			for _, rec := range recs {
				name, raw, err := kafkaadmin.DecodeConnectOffsetKey(rec.Key)
				if err != nil {
					return fmt.Errorf("%s at %d: %w", tp, rec.Offset, err)
				}
				if name != connector {
					continue
				}
				o, err := kafkaadmin.DecodeMirrorOffset(raw, rec.Value)
				if err != nil {
					return fmt.Errorf("%s at %d: %w", tp, rec.Offset, err)
				}
				if o.Offset.Present() {
					latest[string(rec.Key)] = o
				} else {
					delete(latest, string(rec.Key))
				}
			}
		}
		out = make([]offsets.ConnectOffset, 0, len(latest))
		for _, o := range latest {
			out = append(out, o)
		}
		slices.SortFunc(out, offsets.CompareConnectOffsets)
		return nil
	})
	if !keep || err != nil {
		return nil, err
	}
	return out, nil
}
