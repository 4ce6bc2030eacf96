package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/progress"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// Reading is one reading of a group over a full partition set: its
// committed offsets and the partitions' log bounds, read together.
type Reading struct {
	// At is when the reading started.
	At time.Time
	// Topics are the topics read, with their partition counts.
	Topics Topics
	// Committed holds the group's commit C of every partition of Topics
	// that has one. A partition without a commit is absent; so is one whose
	// commit could not be read (it is in Errors).
	Committed offsets.GroupOffsets
	// Bounds holds the log start and end offsets of every partition of
	// Topics that could be read (the others are in Errors); their
	// StableEnd is 0, not read (a plan does not use it: [Client.LogBounds]
	// reads it). It is nil when the reading did not read bounds (the first
	// reading of a [CommitWindow]).
	Bounds map[TopicPartition]offsets.LogBounds
	// Errors holds, per partition, why its commit or its bounds could not
	// be read. It is nil when everything was read.
	Errors map[TopicPartition]error
}

// Missing returns, sorted, the partitions of Topics that have no commit
// and no read error: the partitions a cutover must block on.
func (rd Reading) Missing() []TopicPartition {
	var out []TopicPartition
	for _, tp := range rd.Topics.Partitions() {
		if _, ok := rd.Committed[tp]; ok {
			continue
		}
		if _, failed := rd.Errors[tp]; failed {
			continue
		}
		out = append(out, tp)
	}
	return out
}

// ReadGroup reads, in one call, the group's committed offsets and the log
// start and end offsets of every partition of the named topics: one
// Metadata request (none on a step client that read it moments ago), one
// OffsetFetch to the coordinator, and two ListOffsets per partition leader
// (earliest and latest; the last stable offset is not read). The commits are read before the bounds, so a commit made by a
// running job is never above the end offsets it is compared with.
//
// Errors: as [Client.GroupOffsets] and [Client.LogBounds]; a
// [*PartitionErrors] comes with the Reading, whose Errors holds the same
// partitions.
func (r *Client) ReadGroup(ctx context.Context, group string, topics []string) (Reading, error) {
	if group == "" {
		return Reading{}, &ArgumentError{Op: "ReadGroup", Reason: "empty group"}
	}
	if err := checkTopicNames("ReadGroup", topics); err != nil {
		return Reading{}, err
	}
	return r.readGroup(ctx, group, topics, true)
}

// readGroup is ReadGroup, reading the bounds only when withBounds is set.
func (r *Client) readGroup(ctx context.Context, group string, topics []string, withBounds bool) (Reading, error) {
	var out Reading
	err := r.do(ctx, "read group", func(s *session) error {
		var err error
		out, err = s.read(group, dedupe(topics), withBounds)
		return err
	})
	var pe *PartitionErrors
	if err != nil && !errors.As(err, &pe) {
		return Reading{}, err
	}
	return out, err
}

func (s *session) read(group string, topics []string, withBounds bool) (Reading, error) {
	out := Reading{At: time.Now()}
	t, err := s.topics(topics)
	if err != nil {
		return Reading{}, err
	}
	out.Topics = t
	parts := t.Partitions()
	out.Committed, err = s.groupOffsets(group, parts)
	if err := out.addErrors(err); err != nil {
		return Reading{}, err
	}
	if withBounds {
		out.Bounds, err = s.bounds("LogBounds", parts, startEnd)
		if err := out.addErrors(err); err != nil {
			return Reading{}, err
		}
	}
	return out, partitionErrors("ReadGroup", len(parts), out.Errors)
}

// addErrors records the partitions of a [*PartitionErrors] in Errors and
// returns any other non-nil error.
func (rd *Reading) addErrors(err error) error {
	var pe *PartitionErrors
	if err == nil {
		return nil
	}
	if !errors.As(err, &pe) {
		return err
	}
	if rd.Errors == nil {
		rd.Errors = make(map[TopicPartition]error, len(pe.Errs))
	}
	for tp, perr := range pe.Errs {
		if _, seen := rd.Errors[tp]; !seen {
			rd.Errors[tp] = perr
		}
	}
	return nil
}

// OffsetChange is a partition whose commit differs between two readings.
type OffsetChange struct {
	TopicPartition
	// Before and After are the committed offsets of the two readings. A
	// commit that appeared has Before absent; one that disappeared
	// (deleted, or expired after offsets.retention.minutes) has After
	// absent.
	Before, After offsets.GroupOffset
}

// String returns "topic-partition before->after", "none" for an absent
// commit: "orders-0 1200->1250".
func (c OffsetChange) String() string {
	return c.TopicPartition.String() + " " + c.Before.String() + "->" + c.After.String()
}

// DiffCommitted compares the commits of two readings of a group and
// returns, sorted, every partition whose commit changed, appeared or
// disappeared. It looks at the partitions of before.Topics; partitions in
// either reading's Errors are skipped (they are reported as errors
// instead). An empty result means the group's offsets were stable.
func DiffCommitted(before, after Reading) []OffsetChange {
	var out []OffsetChange
	for _, tp := range before.Topics.Partitions() {
		if before.Errors[tp] != nil || after.Errors[tp] != nil {
			continue
		}
		b, a := committed(before.Committed, tp), committed(after.Committed, tp)
		if b == a {
			continue
		}
		out = append(out, OffsetChange{TopicPartition: tp, Before: b, After: a})
	}
	return out
}

// committed is the group's commit for tp in m, absent when m has none.
func committed(m offsets.GroupOffsets, tp TopicPartition) offsets.GroupOffset {
	if c, ok := m[tp]; ok {
		return offsets.NewGroupOffset(c)
	}
	return offsets.GroupOffset{}
}

// CommitWindow is a group's commits read twice, a window apart.
type CommitWindow struct {
	Group string
	// Window is the requested time between the two readings.
	Window time.Duration
	// First and Second are the two readings. First holds the commits only
	// (its Bounds is nil); Second holds the commits and the bounds: use
	// Second's for a plan.
	First, Second Reading
	// Moved lists every partition whose commit changed between the
	// readings. Empty means the offsets were stable over the window.
	Moved []OffsetChange
}

// Stable reports whether no commit moved during the window. Together with
// the operator's confirmation, it is the signal that a job committing
// these offsets (Flink) has stopped. Check the error of ReadCommitWindow too:
// a partition that could not be read is not in Moved.
func (s CommitWindow) Stable() bool {
	return len(s.Moved) == 0
}

// firstReadingDone is what ReadCommitWindow logs (at debug level) once its
// first reading is done and the window starts.
const firstReadingDone = "commit window: first reading done"

// ReadCommitWindow reads the group's commits over every partition of the
// named topics, waits for window, reads them again with the partitions' log
// bounds, and reports every partition whose commit moved. The first
// reading has no bounds (First.Bounds is nil): only the commits are
// compared, and the second reading's bounds are the ones a plan uses. Each
// reading opens its own connections, so none are held during the window;
// a step client ([Client.Step]) keeps its own, idle, and reads the
// metadata again after a window longer than StepMetadataAge.
//
// Errors: an [*ArgumentError] for an empty group or topic list or a
// window that is not positive, a [*TopicsChangedError] (with the
// window's readings) when a partition count changed between them, a
// [*PartitionErrors] (with the readings) when some partitions could not be
// read in either reading, the context's error (also while waiting), or the
// errors of [Client.ReadGroup].
func (r *Client) ReadCommitWindow(ctx context.Context, group string, topics []string, window time.Duration) (CommitWindow, error) {
	if window <= 0 {
		return CommitWindow{}, &ArgumentError{Op: "ReadCommitWindow", Reason: "window must be positive"}
	}
	out := CommitWindow{Group: group, Window: window}
	var err error
	var pe *PartitionErrors
	if group == "" {
		return CommitWindow{}, &ArgumentError{Op: "ReadCommitWindow", Reason: "empty group"}
	}
	if err := checkTopicNames("ReadCommitWindow", topics); err != nil {
		return CommitWindow{}, err
	}
	out.First, err = r.readGroup(ctx, group, topics, false)
	if err != nil && !errors.As(err, &pe) {
		return CommitWindow{}, err
	}
	r.log.DebugContext(ctx, firstReadingDone, "group", group, "window", window)
	wait := progress.Start(r.log, fmt.Sprintf("group %s's commits to stay put for %s", group, window))
	if err := wait.Sleep(ctx, window); err != nil {
		return CommitWindow{}, opError("commit window", err)
	}
	out.Second, err = r.ReadGroup(ctx, group, topics)
	if err != nil && !errors.As(err, &pe) {
		return CommitWindow{}, err
	}
	out.Moved = DiffCommitted(out.First, out.Second)
	if !maps.Equal(out.First.Topics, out.Second.Topics) {
		return out, &TopicsChangedError{Before: out.First.Topics, After: out.Second.Topics}
	}
	errs := make(map[TopicPartition]error)
	maps.Copy(errs, out.First.Errors)
	maps.Copy(errs, out.Second.Errors)
	return out, partitionErrors("ReadCommitWindow", len(out.Second.Topics.Partitions()), errs)
}
