package kafkaadmin

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTargetTopic(t *testing.T) {
	tests := []struct {
		policy  ReplicationPolicy
		source  string
		want    string
		wantErr bool
	}{
		{ReplicationPolicy{Kind: IdentityPolicy}, "orders", "orders", false},
		{ReplicationPolicy{Kind: IdentityPolicy, SourceAlias: "src"}, "orders", "orders", false},
		{ReplicationPolicy{Kind: DefaultPolicy, SourceAlias: "src"}, "orders", "src.orders", false},
		{ReplicationPolicy{Kind: DefaultPolicy, SourceAlias: "src", Separator: "_"}, "orders", "src_orders", false},
		{ReplicationPolicy{Kind: DefaultPolicy}, "orders", "", true},
		{ReplicationPolicy{Kind: DefaultPolicy, SourceAlias: "a.b"}, "orders", "", true},
		{ReplicationPolicy{}, "orders", "", true},
		{ReplicationPolicy{Kind: "custom"}, "orders", "", true},
	}
	for _, tt := range tests {
		got, err := tt.policy.TargetTopic(tt.source)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%+v.TargetTopic(%q) = %q, %v; want %q, error %v", tt.policy, tt.source, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("error %v does not match ErrInvalidArgument", err)
		}
	}
}

func TestCheckTargets(t *testing.T) {
	source := Topics{"a": 3, "b": 2, "c": 1}
	target := Topics{"src.a": 3, "src.b": 4, "a": 3}
	got, err := CheckTargets(source, target, ReplicationPolicy{Kind: DefaultPolicy, SourceAlias: "src"})
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
	if _, err := CheckTargets(source, target, ReplicationPolicy{Kind: DefaultPolicy}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("CheckTargets with no alias = %v, want ErrInvalidArgument", err)
	}
}
