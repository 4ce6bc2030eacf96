package kafkaadmin

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/offsets"
)

func TestCheckTargets(t *testing.T) {
	source := Topics{"a": 3, "b": 2, "c": 1}
	target := Topics{"src.a": 3, "src.b": 4, "a": 3}
	got, err := CheckTargets(source, target, offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: "src"})
	if err != nil {
		t.Fatal(err)
	}
	want := []TargetCheck{
		{Source: "a", SourcePartitions: 3, Target: "src.a", Exists: true, TargetPartitions: 3},
		{Source: "b", SourcePartitions: 2, Target: "src.b", Exists: true, TargetPartitions: 4},
		{Source: "c", SourcePartitions: 1, Target: "src.c"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("CheckTargets mismatch (-want +got):\n%s", diff)
	}
	oks := []bool{true, false, false}
	for i, c := range got {
		if c.OK() != oks[i] || (c.Problem() == "") != oks[i] {
			t.Errorf("%s: OK() = %v, Problem() = %q; want OK %v", c.Source, c.OK(), c.Problem(), oks[i])
		}
	}
	if _, err := CheckTargets(source, target, offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy}); !errors.Is(err, offsets.ErrInvalidPolicy) {
		t.Errorf("CheckTargets with no alias = %v, want ErrInvalidArgument", err)
	}
}
