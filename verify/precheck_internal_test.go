package verify

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// TestCheckInputStable: offsets of an input that moved, appeared or vanished
// between the two readings fail the check; equal readings pass.
func TestCheckInputStable(t *testing.T) {
	p := func(n int32) offsets.SourcePartition { return offsets.SourcePartition{Topic: "orders", Partition: n} }
	from := plan.OffsetsSource{Kind: plan.FromConnectorOffsets, Ref: "mm2:mm2-offsets.primary.internal"}
	for _, tc := range []struct {
		first, second offsets.GroupOffsets
		want          Verdict
		detail        string
	}{
		{offsets.GroupOffsets{p(0): 5, p(1): 7}, offsets.GroupOffsets{p(0): 5, p(1): 7}, Pass, "no offset"},
		{offsets.GroupOffsets{}, offsets.GroupOffsets{}, Pass, "no offset"},
		{offsets.GroupOffsets{p(0): 5}, offsets.GroupOffsets{p(0): 9}, Fail, "orders-0: 5 -> 9"},
		{offsets.GroupOffsets{p(0): 5}, offsets.GroupOffsets{p(0): 5, p(1): 1}, Fail, "orders-1: none -> 1"},
		{offsets.GroupOffsets{p(0): 5}, offsets.GroupOffsets{}, Fail, "orders-0: 5 -> none"},
	} {
		var cs Checks
		checkInputStable(&cs, from, time.Second, tc.first, tc.second)
		if len(cs) != 1 || cs[0].Verdict != tc.want || !strings.Contains(cs[0].Detail, tc.detail) {
			t.Errorf("%v -> %v: %+v, want %s saying %q", tc.first, tc.second, cs, tc.want, tc.detail)
		}
	}
}

// TestCheckFileAgainstGroup: a file that agrees with the group's commits
// passes; one that differs fails unless it overrides the group; a group
// without commits leaves the file as the only record.
func TestCheckFileAgainstGroup(t *testing.T) {
	p0 := offsets.SourcePartition{Topic: "orders", Partition: 0}
	for _, tc := range []struct {
		name      string
		overrides bool
		file      offsets.GroupOffsets
		committed offsets.GroupOffsets
		exists    bool
		want      Verdict
	}{
		{"equal", false, offsets.GroupOffsets{p0: 5}, offsets.GroupOffsets{p0: 5}, true, Pass},
		{"differs", false, offsets.GroupOffsets{p0: 5}, offsets.GroupOffsets{p0: 7}, true, Fail},
		{"differs, overriding", true, offsets.GroupOffsets{p0: 5}, offsets.GroupOffsets{p0: 7}, true, Warn},
		{"group gone", false, offsets.GroupOffsets{p0: 5}, nil, false, Warn},
	} {
		var cs Checks
		checkFileAgainstGroup(&cs, "g", tc.overrides, tc.file, tc.committed, tc.exists)
		if len(cs) != 1 || cs[0].Verdict != tc.want {
			t.Errorf("%s: %+v, want %s", tc.name, cs, tc.want)
		}
	}
}

// TestCheckRange: C beyond the log end or below the log start fails, naming
// the partition, unless the loss of an expired partition was accepted.
func TestCheckRange(t *testing.T) {
	p := func(n int32) offsets.SourcePartition { return offsets.SourcePartition{Topic: "orders", Partition: n} }
	bounds := map[offsets.SourcePartition]offsets.LogBounds{p(0): {Start: 0, End: 10}, p(1): {Start: 5, End: 10}, p(2): {Start: 5, End: 10}}
	var cs Checks
	checkRange(&cs, []plan.ExpiredAcceptance{{Partition: p(2), By: "ops"}}, offsets.GroupOffsets{p(0): 11, p(1): 3, p(2): 2}, bounds)
	var got []string
	for _, c := range cs {
		got = append(got, string(c.Verdict)+" "+c.Detail)
	}
	want := []string{"orders-0 (C 11 > end 10)", "orders-1 (C 3 < start 5)", "orders-2 (3 records, accepted by ops)"}
	for i, w := range want {
		if i >= len(got) || !strings.Contains(got[i], w) {
			t.Errorf("check %d: %q, want it to say %q (all: %q)", i, got, w, got)
		}
	}
	cs = nil
	checkRange(&cs, nil, offsets.GroupOffsets{p(0): 10, p(1): 5}, bounds)
	if len(cs) != 1 || cs[0].Verdict != Pass {
		t.Errorf("C at the log end and at the log start: %+v, want a pass", cs)
	}
}

// TestCheckSourceTopics: topics that do not exist fail the "source-topics"
// check, naming them quoted, and the others are read on; any other result of
// the snapshot is left to the caller.
func TestCheckSourceTopics(t *testing.T) {
	for _, tc := range []struct {
		name     string
		topics   []string
		err      error
		ok       bool
		existing []string
		detail   string
	}{
		{"no error", []string{"orders"}, nil, false, nil, ""},
		{"another error", []string{"orders"}, fmt.Errorf("x: %w", &kafkaadmin.PartitionErrors{Op: "ReadGroup"}), false, nil, ""},
		{"one missing", []string{"orders", "payments"}, &kafkaadmin.UnknownTopicsError{Topics: []string{"payments"}}, true, []string{"orders"},
			`1 of 2 topics do not exist on the source cluster (or this user may not describe them): "payments"`},
		{"all missing", []string{"orders"}, fmt.Errorf("read group: %w", &kafkaadmin.UnknownTopicsError{Topics: []string{"orders"}}), true, nil, `"orders"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cs Checks
			existing, ok := checkSourceTopics(&cs, tc.topics, tc.err)
			if ok != tc.ok || !slices.Equal(existing, tc.existing) {
				t.Errorf("checkSourceTopics = %v, %v; want %v, %v", existing, ok, tc.existing, tc.ok)
			}
			if !ok {
				if len(cs) != 0 {
					t.Errorf("checks %+v, want none", cs)
				}
				return
			}
			if len(cs) != 1 || cs[0].Name != "source-topics" || cs[0].Verdict != Fail || !strings.Contains(cs[0].Detail, tc.detail) {
				t.Errorf("checks %+v, want source-topics failing with %q", cs, tc.detail)
			}
		})
	}
}
