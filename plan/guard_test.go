package plan_test

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

func connectOffset(topic string, p int32, m int64) offsets.ConnectOffset {
	return offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "source", Topic: topic, Partition: p}, Offset: offsets.NewMirrorOffset(m)}
}

// TestGuard: what the connector already holds decides whether the plan may
// be applied. The applicable fixture sets orders-0 (M 41), orders-2 (19,
// after an accepted loss), orders-3 (99), payments-0 (9), payments-1 (6)
// and payments-2 (9), and clears orders-1.
func TestGuard(t *testing.T) {
	p := mustBuild(t, blockedSpec(), applicableSnapshot())
	want, err := p.ExpectedOffsets()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		existing []offsets.ConnectOffset
		action   plan.GuardAction
		stale    bool
	}{
		{"fresh connector", nil, plan.GuardApply, false},
		{"plan applied", want, plan.GuardAlreadyApplied, false},
		{"plan partly applied", want[:2], plan.GuardApply, false},
		{"connector ran", append([]offsets.ConnectOffset{connectOffset("orders", 0, 500)}, want[1:]...), 0, true},
		{"a leftover of an earlier connector", append(append([]offsets.ConnectOffset{}, want...), connectOffset("audit", 0, 5)), 0, true},
		{"an offset where the plan clears", append(append([]offsets.ConnectOffset{}, want...), connectOffset("orders", 1, 3)), 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			action, err := p.Guard(tc.existing)
			if tc.stale {
				var se *plan.StaleOffsetsError
				if !errors.As(err, &se) || !errors.Is(err, plan.ErrStaleOffsets) || se.ReadBack.Diff() == "" {
					t.Fatalf("got %v, %v; want a *StaleOffsetsError with a diff", action, err)
				}
				return
			}
			if err != nil || action != tc.action {
				t.Fatalf("got %v, %v; want %v", action, err, tc.action)
			}
		})
	}
	if _, err := mustBuild(t, blockedSpec(), blockedSnapshot()).Guard(nil); !errors.Is(err, plan.ErrBlocked) {
		t.Errorf("Guard of a blocked plan: %v, want ErrBlocked", err)
	}
}

// TestCheckConfig: the configuration a connector is created with, or the
// one Connect returns (with "name" added), is the plan's; another name,
// alias or any other key is not.
func TestCheckConfig(t *testing.T) {
	p := mustBuild(t, blockedSpec(), applicableSnapshot())
	cfg := maps.Clone(spec().ConnectorConfig)
	if err := p.CheckConfig(cfg); err != nil {
		t.Errorf("the configuration of the plan: %v", err)
	}
	stored := maps.Clone(cfg)
	stored["name"] = p.ConnectorName
	if err := p.CheckConfig(stored); err != nil {
		t.Errorf("the configuration as Connect returns it: %v", err)
	}
	stored["source.cluster.sasl.jaas.config"] = "another secret"
	if err := p.CheckConfig(stored); err != nil {
		t.Errorf("another secret value: %v", err)
	}
	for _, tc := range []struct {
		name  string
		edit  func(map[string]string)
		field string
	}{
		{"another name", func(c map[string]string) { c["name"] = "other" }, "name"},
		{"another alias", func(c map[string]string) { c["source.cluster.alias"] = "dc1" }, "source.cluster.alias"},
		{"another topic list", func(c map[string]string) { c["topics"] = "orders" }, "config_digest"},
		{"a key added", func(c map[string]string) { c["tasks.max"] = "4" }, "config_digest"},
	} {
		c := maps.Clone(cfg)
		tc.edit(c)
		err := p.CheckConfig(c)
		var ce *plan.ConfigChangedError
		if !errors.As(err, &ce) || !errors.Is(err, plan.ErrConfigChanged) || ce.Field != tc.field || errors.Is(err, plan.ErrInvalid) {
			t.Errorf("%s: %v, want a *ConfigChangedError on %s (not an invalid plan)", tc.name, err, tc.field)
		}
	}
}

// Before applying a plan, the connector's existing offsets decide: none (or
// some of the plan's own) means apply, exactly the plan's means already
// applied, anything else means the connector ran or another plan was applied.
func ExamplePlan_Guard() {
	p, err := plan.Build(plan.Spec{
		CreatedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), SourceClusterID: "src", TargetClusterID: "tgt",
		ConnectorName: "orders-mirror", SourceAlias: "source", GroupID: "flink-orders",
		ConnectorConfig: map[string]string{"topics": "orders"},
	}, plan.Snapshot{
		Group:     offsets.GroupOffsets{{Topic: "orders"}: 42},
		Source:    map[offsets.SourcePartition]offsets.LogBounds{{Topic: "orders"}: {End: 100}},
		TargetEnd: map[offsets.SourcePartition]int64{{Topic: "orders"}: 40},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, existing := range [][]offsets.ConnectOffset{
		nil,
		{connectOffset("orders", 0, 41)},
		{connectOffset("orders", 0, 977)}, // MM2 ran and moved on
	} {
		action, err := p.Guard(existing)
		if errors.Is(err, plan.ErrStaleOffsets) {
			fmt.Println("refused: stale offsets")
			continue
		}
		fmt.Println(action)
	}
	// Output:
	// apply
	// already-applied
	// refused: stale offsets
}

// TestClaim: a plan's claim names what its apply writes: the same plan
// made again has it, a plan that writes another offset has another, and
// the configuration an apply creates the connector with (WithClaim) is
// still the plan's configuration.
func TestClaim(t *testing.T) {
	p := mustBuild(t, spec(), applicableSnapshot())
	again := mustBuild(t, spec(), applicableSnapshot())
	if p.Claim() != again.Claim() {
		t.Errorf("the same plan made twice has claims %s and %s", p.Claim(), again.Claim())
	}
	if !strings.HasPrefix(p.Claim(), "sha256:") || len(p.Claim()) != len("sha256:")+64 {
		t.Errorf("claim %q, want sha256: and 64 hex digits", p.Claim())
	}
	snap := applicableSnapshot()
	snap.Group[sp("orders", 0)] = 43
	moved := mustBuild(t, spec(), snap)
	if moved.Claim() == p.Claim() {
		t.Error("a plan that writes another offset has the same claim")
	}
	created := p.WithClaim(p.ConnectorConfig)
	if created[plan.ClaimKey] != p.Claim() || p.ConnectorConfig[plan.ClaimKey] != "" {
		t.Errorf("WithClaim: %v; the plan's own configuration must not change", created)
	}
	if err := p.CheckConfig(created); err != nil {
		t.Errorf("CheckConfig of the configuration with the claim: %v", err)
	}
}
