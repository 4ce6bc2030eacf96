package kafkafake

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/mm2cutover/mm2cutover/kafkaadmin"
)

// Op names a method of Cluster, as Call, FailNext and an Interceptor see
// it: the method's name.
type Op string

// The methods of a Cluster.
const (
	OpClusterID          Op = "ClusterID"
	OpTopics             Op = "Topics"
	OpTopicsMatching     Op = "TopicsMatching"
	OpCheckTargets       Op = "CheckTargets"
	OpLogBounds          Op = "LogBounds"
	OpEndOffsets         Op = "EndOffsets"
	OpFirstRecords       Op = "FirstRecords"
	OpReadRecord         Op = "ReadRecord"
	OpReadSpans          Op = "ReadSpans"
	OpDescribeGroup      Op = "DescribeGroup"
	OpGroupOffsets       Op = "GroupOffsets"
	OpCommitOffsets      Op = "CommitOffsets" // the only write
	OpReadGroup          Op = "ReadGroup"
	OpReadCommitWindow   Op = "ReadCommitWindow"
	OpReadConnectOffsets Op = "ReadConnectOffsets"
)

// Call is one call of a Cluster method, with its arguments; fields a
// method does not take stay zero. Its maps and slices are the Cluster's
// copies: changing them changes nothing.
type Call struct {
	Op Op
	// Group is the consumer group of DescribeGroup, GroupOffsets,
	// CommitOffsets, ReadGroup and ReadCommitWindow.
	Group string
	// Topics are the topics named: of Topics, GroupOffsets, ReadGroup and
	// ReadCommitWindow as given, of CheckTargets the source topics sorted,
	// of ReadConnectOffsets the offsets topic.
	Topics []string
	// Pattern is TopicsMatching's regular expression.
	Pattern string
	// Connector is ReadConnectOffsets' connector.
	Connector string
	// Partitions are the partitions named, sorted: of LogBounds and
	// EndOffsets as given, and the keys of Offsets or Spans.
	Partitions []kafkaadmin.TopicPartition
	// Offsets are CommitOffsets' offsets, or the offsets FirstRecords and
	// ReadRecord read from.
	Offsets map[kafkaadmin.TopicPartition]int64
	// Spans are ReadSpans' spans.
	Spans map[kafkaadmin.TopicPartition]kafkaadmin.Span
	// Isolation is the isolation level of FirstRecords, ReadRecord and
	// ReadSpans.
	Isolation kafkaadmin.Isolation
	// Window is ReadCommitWindow's window.
	Window time.Duration
	// Err is what the call returned; set in the calls Calls lists.
	Err error
}

// Writes reports whether the call writes to the cluster: CommitOffsets is
// the one write of *kafkaadmin.Client.
func (c Call) Writes() bool { return c.Op == OpCommitOffsets }

// Interceptor sees a call before the Cluster answers it. next answers the
// call as the Cluster would (or with a fault FailNext set) and returns
// that answer's error; the Interceptor returns the error the caller gets.
// It may call next once, or not at all: then nothing is read or written.
// When it returns an error that is not the one next returned, the call
// returns that error with zero results, as the real client does for an
// error that is not partial. It runs without the Cluster's lock: it may
// change the cluster under Lock, before or after next, or wait (selecting
// on ctx).
type Interceptor func(ctx context.Context, call Call, next func() error) error

// Commit is one CommitOffsets call that wrote: the group and its offsets.
type Commit struct {
	Group   string
	Offsets map[kafkaadmin.TopicPartition]int64
}

// hooks are a Cluster's faults, interceptor and records of calls. They
// have a lock of their own, so that an Interceptor may take the Cluster's.
type hooks struct {
	mu        sync.Mutex
	intercept Interceptor
	window    func()
	faults    []*fault
	calls     []Call
	commits   []Commit
}

type fault struct {
	op   Op
	left int
	err  error
}

// Intercept makes fn see every later call first (see Interceptor); nil
// removes it. One Interceptor at a time: a second call replaces the
// first.
func (c *Cluster) Intercept(fn Interceptor) {
	c.hooks.mu.Lock()
	defer c.hooks.mu.Unlock()
	c.hooks.intercept = fn
}

// DuringWindow makes fn run in every later ReadCommitWindow between its
// two readings, before the wait: what happens while the window runs, such
// as the old job committing (SeedCommits) or a partition added
// (SeedTopic). fn runs without the Cluster's lock; nil removes it.
func (c *Cluster) DuringWindow(fn func()) {
	c.hooks.mu.Lock()
	defer c.hooks.mu.Unlock()
	c.hooks.window = fn
}

// FailNext makes the next n calls of op return err instead of their
// answer, with nothing read or written; an Interceptor still sees them
// first. Calls add up: faults for the same op are given in the order they
// were set. To fail as the real client does, give an error it returns,
// such as sarama.ErrNotCoordinatorForConsumer after its retries, or a
// *kafkaadmin.GroupActiveError.
func (c *Cluster) FailNext(op Op, n int, err error) {
	if n <= 0 {
		return
	}
	c.hooks.mu.Lock()
	defer c.hooks.mu.Unlock()
	c.hooks.faults = append(c.hooks.faults, &fault{op: op, left: n, err: err})
}

// Calls returns the calls the Cluster received so far, in the order they
// returned, each with the error it returned.
func (c *Cluster) Calls() []Call {
	c.hooks.mu.Lock()
	defer c.hooks.mu.Unlock()
	return slices.Clone(c.hooks.calls)
}

// CommitLog returns the commits CommitOffsets wrote, in order. A commit it
// refused, or one FailNext or an Interceptor answered without calling
// next, is not in it; one whose answer an Interceptor replaced after next
// wrote it is.
func (c *Cluster) CommitLog() []Commit {
	c.hooks.mu.Lock()
	defer c.hooks.mu.Unlock()
	out := make([]Commit, len(c.hooks.commits))
	for i, cm := range c.hooks.commits {
		out[i] = Commit{Group: cm.Group, Offsets: maps.Clone(cm.Offsets)}
	}
	return out
}

// takeFault takes one of the next fault set for op, or returns nil.
func (c *Cluster) takeFault(op Op) *fault {
	c.hooks.mu.Lock()
	defer c.hooks.mu.Unlock()
	for i, f := range c.hooks.faults {
		if f.op == op {
			if f.left--; f.left == 0 {
				c.hooks.faults = slices.Delete(c.hooks.faults, i, i+1)
			}
			return f
		}
	}
	return nil
}

// call runs one call through the interceptor and the faults, and records
// it. run answers it; call returns whether the results run produced stand
// (false: the caller returns zero results) and the error for the caller.
func (c *Cluster) call(ctx context.Context, cl Call, run func() error) (keep bool, err error) {
	ran := false
	var answer error
	next := func() error {
		if ran {
			return answer
		}
		ran = true
		if f := c.takeFault(cl.Op); f != nil {
			answer = f.err
			return answer
		}
		answer = run()
		return answer
	}
	c.hooks.mu.Lock()
	fn := c.hooks.intercept
	c.hooks.mu.Unlock()
	if fn != nil {
		err = fn(ctx, cl, next)
	} else {
		err = next()
	}
	keep = ran && same(err, answer)
	cl.Err = err
	c.hooks.mu.Lock()
	c.hooks.calls = append(c.hooks.calls, cl)
	c.hooks.mu.Unlock()
	return keep, err
}

// same reports whether a and b are the same error value, without the
// panic == gives for an error of an uncomparable type.
func same(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	ta := reflect.TypeOf(a)
	if ta != reflect.TypeOf(b) || !ta.Comparable() {
		return false
	}
	return a == b
}

// logCommit records a commit that was written.
func (c *Cluster) logCommit(group string, o map[kafkaadmin.TopicPartition]int64) {
	c.hooks.mu.Lock()
	defer c.hooks.mu.Unlock()
	c.hooks.commits = append(c.hooks.commits, Commit{Group: group, Offsets: maps.Clone(o)})
}

// sortedKeys returns the partitions of m, sorted.
func sortedKeys[V any](m map[kafkaadmin.TopicPartition]V) []kafkaadmin.TopicPartition {
	out := make([]kafkaadmin.TopicPartition, 0, len(m))
	for tp := range m {
		out = append(out, tp)
	}
	kafkaadmin.SortPartitions(out)
	return out
}
