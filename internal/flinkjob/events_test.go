package flinkjob

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/offsets"
)

func TestParseEvent(t *testing.T) {
	p := func(topic string, n int32) offsets.SourcePartition {
		return offsets.SourcePartition{Topic: topic, Partition: n}
	}
	for _, tc := range []struct {
		line string
		want Event
		bad  bool
	}{
		{line: `{"event":"running","job":"ab12","flink":"1.20.3","parallelism":2,"restored":""}`,
			want: Event{Kind: "running", JobID: "ab12", Flink: "1.20.3", Parallelism: 2}},
		{line: `{"event":"running","job":"ab12","flink":"2.2.0","parallelism":2,"restored":"","rest":"http://127.0.0.1:40123"}`,
			want: Event{Kind: "running", JobID: "ab12", Flink: "2.2.0", Parallelism: 2, REST: "http://127.0.0.1:40123"}},
		{line: `{"event":"finished"}`, want: Event{Kind: "finished"}},
		{line: `{"event":"checkpoint","checkpoint":7,"subtask":1,"offsets":[{"topic":"orders","partition":0,"next":42},{"topic":"orders","partition":2,"next":0}]}`,
			want: Event{Kind: "checkpoint", Checkpoint: 7, Subtask: 1, Offsets: offsets.GroupOffsets{p("orders", 0): 42, p("orders", 2): 0}}},
		{line: `{"event":"checkpoint","checkpoint":1,"subtask":0,"offsets":[]}`,
			want: Event{Kind: "checkpoint", Checkpoint: 1, Offsets: offsets.GroupOffsets{}}},
		{line: `{"event":"savepoint","path":"file:/tmp/sp/savepoint-1"}`, want: Event{Kind: "savepoint", Path: "file:/tmp/sp/savepoint-1"}},
		{line: `{"event":"cancelled"}`, want: Event{Kind: "cancelled"}},
		{line: `{"event":"failed","error":"boom"}`, want: Event{Kind: "failed", Error: "boom"}},

		{line: `03:34:11,375 INFO log line`, bad: true},
		{line: `{"event":"started"}`, bad: true},
		{line: `{"event":"running","job":"","parallelism":2}`, bad: true},
		{line: `{"event":"running","job":"x","parallelism":0}`, bad: true},
		{line: `{"event":"checkpoint","subtask":0,"offsets":[]}`, bad: true},
		{line: `{"event":"checkpoint","checkpoint":1,"offsets":[]}`, bad: true},
		{line: `{"event":"checkpoint","checkpoint":-1,"subtask":0,"offsets":[]}`, bad: true},
		{line: `{"event":"checkpoint","checkpoint":1,"subtask":0,"offsets":[{"topic":"t","partition":0,"next":-1}]}`, bad: true},
		{line: `{"event":"checkpoint","checkpoint":1,"subtask":0,"offsets":[{"topic":"t","partition":0}]}`, bad: true},
		{line: `{"event":"checkpoint","checkpoint":1,"subtask":0,"offsets":[{"topic":"t t","partition":0,"next":1}]}`, bad: true},
		{line: `{"event":"checkpoint","checkpoint":1,"subtask":0,"offsets":[{"topic":"t","partition":-1,"next":1}]}`, bad: true},
		{line: `{"event":"checkpoint","checkpoint":1,"subtask":0,"offsets":[{"topic":"t","partition":0,"next":1},{"topic":"t","partition":0,"next":2}]}`, bad: true},
		{line: `{"event":"checkpoint","checkpoint":1.5,"subtask":0,"offsets":[]}`, bad: true},
		{line: `{"event":"savepoint"}`, bad: true},
		{line: `{"event":"cancelled","extra":1}`, bad: true},
		{line: `{"event":"cancelled"} {}`, bad: true},
	} {
		got, err := ParseEvent([]byte(tc.line))
		if tc.bad {
			if !errors.Is(err, ErrBadEvent) {
				t.Errorf("%s: got %+v, %v; want ErrBadEvent", tc.line, got, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.line, err)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s: (-want +got)\n%s", tc.line, d)
		}
	}
}

func FuzzParseEvent(f *testing.F) {
	f.Add([]byte(`{"event":"checkpoint","checkpoint":7,"subtask":1,"offsets":[{"topic":"orders","partition":0,"next":42}]}`))
	f.Add([]byte(`{"event":"running","job":"ab12","flink":"2.2.0","parallelism":2,"restored":"file:/x"}`))
	f.Add([]byte(`{"event":"savepoint","path":"file:/tmp/sp"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := ParseEvent(line)
		if err != nil {
			if !errors.Is(err, ErrBadEvent) {
				t.Fatalf("error %v does not match ErrBadEvent", err)
			}
			return
		}
		for p, n := range e.Offsets {
			if p.Validate() != nil || n < 0 {
				t.Fatalf("accepted %s: %d", p, n)
			}
		}
		if e.Kind == "checkpoint" && (e.Checkpoint < 0 || e.Subtask < 0) {
			t.Fatalf("accepted checkpoint %d subtask %d", e.Checkpoint, e.Subtask)
		}
	})
}

// TestCheckpoints: a checkpoint is complete when every subtask reported it;
// its offsets are the union of theirs.
func TestCheckpoints(t *testing.T) {
	p := func(n int32) offsets.SourcePartition { return offsets.SourcePartition{Topic: "t", Partition: n} }
	var c checkpoints
	c.parallelism = 2
	if _, ok := c.add(Event{Checkpoint: 1, Subtask: 0, Offsets: offsets.GroupOffsets{p(0): 5}}); ok {
		t.Fatal("complete after one of two subtasks")
	}
	if _, ok := c.add(Event{Checkpoint: 2, Subtask: 1, Offsets: offsets.GroupOffsets{p(1): 9}}); ok {
		t.Fatal("checkpoint 2 complete after one subtask")
	}
	cp, ok := c.add(Event{Checkpoint: 1, Subtask: 1, Offsets: offsets.GroupOffsets{p(1): 7}})
	if !ok || cp.ID != 1 || !cmp.Equal(cp.Offsets, offsets.GroupOffsets{p(0): 5, p(1): 7}) {
		t.Fatalf("checkpoint 1: %+v %v", cp, ok)
	}
	if _, ok := c.add(Event{Checkpoint: 2, Subtask: 0, Offsets: offsets.GroupOffsets{}}); !ok {
		t.Fatal("checkpoint 2 not complete")
	}
	last, _ := c.last()
	if last.ID != 2 || len(c.list()) != 2 {
		t.Fatalf("last %+v, list %+v", last, c.list())
	}
}

func TestLookupVersion(t *testing.T) {
	for name, want := range map[string]string{"": "1.20.3", "1.20": "1.20.3", "2.2": "2.2.0", "2.2.0": "2.2.0"} {
		v, err := LookupVersion(name)
		if err != nil || v.Flink != want {
			t.Errorf("LookupVersion(%q) = %+v, %v; want flink %s", name, v, err, want)
		}
	}
	if _, err := LookupVersion("1.17"); !errors.Is(err, ErrNoFlink) {
		t.Errorf("LookupVersion(1.17): %v, want ErrNoFlink", err)
	}
}

func TestEscapeProperty(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                      "plain",
		"a=b:c#d!e":                  `a\=b\:c\#d\!e`,
		` lead`:                      `\ lead`,
		"line\nbreak\\":              `line\nbreak\\`,
		`org.apache.kafka...Login r`: `org.apache.kafka...Login r`,
	} {
		if got := escapeProperty(in); got != want {
			t.Errorf("escapeProperty(%q) = %q, want %q", in, got, want)
		}
	}
}
