package flinkjob

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mm2cutover/mm2cutover/offsets"
)

// Event is one line the job prints on stdout.
type Event struct {
	Kind string // running, checkpoint, savepoint, cancelled, finished, failed

	// running
	JobID       string
	Flink       string // the Flink version that runs
	Parallelism int
	Restored    string // the savepoint restored from, "" when started from the group
	REST        string // the base URL of the job's Flink REST API, e.g. http://127.0.0.1:40123

	// checkpoint: one subtask's report of a completed checkpoint or savepoint
	Checkpoint int64
	Subtask    int
	Offsets    offsets.GroupOffsets // per partition the subtask read: the next offset

	Path  string // savepoint
	Error string // failed
}

// ErrBadEvent means a line of the job's output is not an event.
var ErrBadEvent = errors.New("bad event line")

// ParseEvent decodes one event line. Unknown event kinds are refused, as are
// checkpoint lines with a negative offset, an invalid partition or one listed
// twice. Errors match ErrBadEvent.
func ParseEvent(line []byte) (Event, error) {
	var w struct {
		Event       string `json:"event"`
		Job         string `json:"job"`
		Flink       string `json:"flink"`
		Parallelism int    `json:"parallelism"`
		Restored    string `json:"restored"`
		REST        string `json:"rest"`
		Checkpoint  *int64 `json:"checkpoint"`
		Subtask     *int   `json:"subtask"`
		Offsets     []struct {
			Topic     string `json:"topic"`
			Partition int32  `json:"partition"`
			Next      *int64 `json:"next"`
		} `json:"offsets"`
		Path  string `json:"path"`
		Error string `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return Event{}, fmt.Errorf("%w: %v", ErrBadEvent, err)
	}
	if dec.More() {
		return Event{}, fmt.Errorf("%w: trailing data", ErrBadEvent)
	}
	e := Event{Kind: w.Event, JobID: w.Job, Flink: w.Flink, Parallelism: w.Parallelism, Restored: w.Restored, REST: w.REST, Path: w.Path, Error: w.Error}
	switch w.Event {
	case "running":
		if w.Job == "" || w.Parallelism < 1 {
			return Event{}, fmt.Errorf("%w: running without job id or parallelism", ErrBadEvent)
		}
	case "checkpoint":
		if w.Checkpoint == nil || w.Subtask == nil || *w.Checkpoint < 0 || *w.Subtask < 0 {
			return Event{}, fmt.Errorf("%w: checkpoint without id or subtask", ErrBadEvent)
		}
		e.Checkpoint, e.Subtask = *w.Checkpoint, *w.Subtask
		e.Offsets = offsets.GroupOffsets{}
		for _, o := range w.Offsets {
			p := offsets.SourcePartition{Topic: o.Topic, Partition: o.Partition}
			if p.Validate() != nil || o.Next == nil || *o.Next < 0 {
				return Event{}, fmt.Errorf("%w: checkpoint %d: bad offset of %s", ErrBadEvent, e.Checkpoint, p)
			}
			if _, dup := e.Offsets[p]; dup {
				return Event{}, fmt.Errorf("%w: checkpoint %d: %s twice", ErrBadEvent, e.Checkpoint, p)
			}
			e.Offsets[p] = *o.Next
		}
	case "savepoint":
		if w.Path == "" {
			return Event{}, fmt.Errorf("%w: savepoint without path", ErrBadEvent)
		}
	case "cancelled", "finished", "failed":
	default:
		return Event{}, fmt.Errorf("%w: unknown event %q", ErrBadEvent, w.Event)
	}
	return e, nil
}

// Checkpoint is a checkpoint or savepoint every subtask reported complete.
type Checkpoint struct {
	ID int64
	// Offsets are, per partition the job read since it started, the next
	// offset after the last record in the checkpoint: what KafkaSource
	// commits to the group when the checkpoint completes.
	Offsets offsets.GroupOffsets
}

// checkpoints gathers subtask reports into complete checkpoints.
type checkpoints struct {
	parallelism int
	partial     map[int64]map[int]offsets.GroupOffsets
	complete    []Checkpoint // in completion order
}

// add records one subtask's report and returns the checkpoint when it is
// the last subtask's.
func (c *checkpoints) add(e Event) (Checkpoint, bool) {
	if c.partial == nil {
		c.partial = map[int64]map[int]offsets.GroupOffsets{}
	}
	subs := c.partial[e.Checkpoint]
	if subs == nil {
		subs = map[int]offsets.GroupOffsets{}
		c.partial[e.Checkpoint] = subs
	}
	subs[e.Subtask] = e.Offsets
	if len(subs) < c.parallelism {
		return Checkpoint{}, false
	}
	cp := Checkpoint{ID: e.Checkpoint, Offsets: offsets.GroupOffsets{}}
	for _, o := range subs {
		for p, n := range o {
			cp.Offsets[p] = n
		}
	}
	delete(c.partial, e.Checkpoint)
	c.complete = append(c.complete, cp)
	return cp, true
}

func (c *checkpoints) last() (Checkpoint, bool) {
	if len(c.complete) == 0 {
		return Checkpoint{}, false
	}
	return c.complete[len(c.complete)-1], true
}

// list returns the completed checkpoints sorted by ID.
func (c *checkpoints) list() []Checkpoint {
	out := slices.Clone(c.complete)
	slices.SortFunc(out, func(a, b Checkpoint) int { return cmp.Compare(a.ID, b.ID) })
	return out
}
