package verify_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/kafkaadmin/kafkafake"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// connectorPlan is a plan for connector "mm2-orders" copying orders.eu and
// payments from alias "src", built with the configuration config returns.
func connectorPlan(t *testing.T) (*plan.Plan, func() map[string]string) {
	t.Helper()
	p, config, err := buildConnectorPlan()
	if err != nil {
		t.Fatal(err)
	}
	return p, config
}

func buildConnectorPlan() (*plan.Plan, func() map[string]string, error) {
	return buildConnectorPlanWith(nil)
}

// buildConnectorPlanWith is buildConnectorPlan with extra keys in the
// connector's configuration.
func buildConnectorPlanWith(extra map[string]string) (*plan.Plan, func() map[string]string, error) {
	config := func() map[string]string {
		cfg, err := connect.MirrorSource{Name: "mm2-orders", SourceAlias: "src", SourceBootstrap: "src:9092", TargetBootstrap: "tgt:9092",
			Topics: []string{"orders.eu", "payments"}, SourceClient: map[string]string{"sasl.jaas.config": "secret-1"}, Extra: extra}.Config()
		if err != nil {
			panic(err)
		}
		return cfg
	}
	o, p0 := offsets.SourcePartition{Topic: "orders.eu", Partition: 0}, offsets.SourcePartition{Topic: "payments", Partition: 0}
	p, err := plan.Build(plan.Spec{
		CreatedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), SourceClusterID: "src-id", TargetClusterID: "tgt-id",
		ConnectorName: "mm2-orders", SourceAlias: "src", GroupID: "flink", ConnectorConfig: config(),
	}, plan.Snapshot{
		Group:     offsets.GroupOffsets{o: 10, p0: 3},
		Source:    map[offsets.SourcePartition]offsets.LogBounds{o: {End: 20}, p0: {End: 3}},
		TargetEnd: map[offsets.SourcePartition]int64{o: 10, p0: 3},
	})
	return p, config, err
}

// TestCheckConnector changes one fact at a time about the connector a step
// is about to write: each is refused naming it, and the plan's own
// connector as the worker returns it (with "name", a secret changed or
// redacted) passes.
func TestCheckConnector(t *testing.T) {
	p, config := connectorPlan(t)
	ours := verify.Clusters{Source: "src-id", Target: "tgt-id"}
	with := func(edit func(map[string]string)) map[string]string {
		c := config()
		edit(c)
		return c
	}
	for _, tc := range []struct {
		name      string
		connector string
		config    map[string]string
		clusters  verify.Clusters
		want      string // the check refused; "" means the connector is the plan's
	}{
		{"the plan's connector", "mm2-orders", config(), ours, ""},
		{"the plan's connector with another secret value", "mm2-orders", with(func(c map[string]string) { c["source.cluster.sasl.jaas.config"] = "secret-2" }), ours, ""},
		{"the plan's connector as GET config returns it, without name", "mm2-orders", with(func(c map[string]string) { delete(c, "name") }), ours, ""},
		{"a plan for another connector", "mm2-payments", with(func(c map[string]string) { c["name"] = "mm2-payments" }), ours, "name"},
		{"the config names another connector", "mm2-orders", with(func(c map[string]string) { c["name"] = "other" }), ours, "name"},
		{"other source cluster", "mm2-orders", config(), verify.Clusters{Source: "x", Target: "tgt-id"}, "source-cluster"},
		{"other target cluster", "mm2-orders", config(), verify.Clusters{Source: "src-id", Target: "x"}, "target-cluster"},
		{"clusters not read", "mm2-orders", config(), verify.Clusters{}, "source-cluster"},
		{"no configuration", "mm2-orders", nil, ours, "config"},
		{"another alias", "mm2-orders", with(func(c map[string]string) { c["source.cluster.alias"] = "dc2" }), ours, "source.cluster.alias"},
		{"the default alias", "mm2-orders", with(func(c map[string]string) { delete(c, "source.cluster.alias") }), ours, "source.cluster.alias"},
		{"another flow's topics", "mm2-orders", with(func(c map[string]string) { c["topics"] = "invoices" }), ours, "topics"},
		{"one of the plan's topics missing", "mm2-orders", with(func(c map[string]string) { c["topics"] = `orders\.eu` }), ours, "topics"},
		{"a plan topic excluded", "mm2-orders", with(func(c map[string]string) { c["topics.exclude"] = "payments" }), ours, "topics"},
		{"topics Go cannot read", "mm2-orders", with(func(c map[string]string) { c["topics"] = `(?<=x)orders` }), ours, "topics"},
		{"a superset of the topics", "mm2-orders", with(func(c map[string]string) { c["topics"] = ".*" }), ours, "config_digest"},
		{"any other key changed", "mm2-orders", with(func(c map[string]string) { c["tasks.max"] = "4" }), ours, "config_digest"},
		// The claim is CheckClaim's: CheckConnector and the digest leave it out.
		{"the plan's connector as its apply created it", "mm2-orders", p.WithClaim(config()), ours, ""},
		{"a connector another plan's apply created", "mm2-orders", with(func(c map[string]string) { c[plan.ClaimKey] = "sha256:" + strings.Repeat("0", 64) }), ours, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := verify.CheckConnector(p, verify.ConnectorFacts{Name: tc.connector, Config: tc.config, Clusters: tc.clusters})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("CheckConnector: %v, want nil", err)
				}
				return
			}
			var fe *verify.ForeignConnectorError
			if !errors.As(err, &fe) || !errors.Is(err, verify.ErrForeignConnector) {
				t.Fatalf("CheckConnector: %v, want a *ForeignConnectorError", err)
			}
			if fe.Check != tc.want {
				t.Errorf("check %q, want %q (%v)", fe.Check, tc.want, err)
			}
			if fe.Advice() == "" {
				t.Error("no advice")
			}
			if tc.config != nil && fe.Topics != tc.config["topics"] {
				t.Errorf("Topics %q, want the connector's %q", fe.Topics, tc.config["topics"])
			}
		})
	}
	secret := with(func(c map[string]string) { c["topics"] = "invoices" })
	if err := verify.CheckConnector(p, verify.ConnectorFacts{Name: "mm2-orders", Config: secret, Clusters: ours}); strings.Contains(err.Error(), "secret-1") {
		t.Errorf("the refusal shows a secret: %v", err)
	}
}

// TestCheckClaim: only a configuration that records another plan's claim
// is refused; the plan's own claim and no claim at all pass.
func TestCheckClaim(t *testing.T) {
	p, config := connectorPlan(t)
	other := config()
	other[plan.ClaimKey] = "sha256:" + strings.Repeat("0", 64)
	for _, tc := range []struct {
		name    string
		config  map[string]string
		refused bool
	}{
		{"created by this plan's apply", p.WithClaim(config()), false},
		{"created without a claim (by hand, by an operator, by an older version)", config(), false},
		{"created by another plan's apply", other, true},
	} {
		err := verify.CheckClaim(p, "mm2-orders", tc.config)
		var fe *verify.ForeignConnectorError
		switch {
		case !tc.refused && err != nil:
			t.Errorf("%s: %v, want nil", tc.name, err)
		case tc.refused && (!errors.As(err, &fe) || fe.Check != "plan" || errkind.Of(err) != errkind.Refused || fe.Advice() == ""):
			t.Errorf("%s: %v, want a refusal whose check is plan", tc.name, err)
		}
	}
}

type configReader map[string]map[string]string

func (r configReader) Config(_ context.Context, name string) (map[string]string, error) {
	c, ok := r[name]
	if !ok {
		return nil, connect.ErrNotFound
	}
	return maps.Clone(c), nil
}

// TestConfirmConnector: the read configuration is returned with the
// verdict; a missing connector is the reader's error.
func TestConfirmConnector(t *testing.T) {
	p, config := connectorPlan(t)
	ours, err := verify.ReadClusters(context.Background(), kafkafake.New("src-id"), kafkafake.New("tgt-id"))
	if err != nil {
		t.Fatal(err)
	}
	r := configReader{"mm2-orders": config(), "other": {"name": "other", "topics": "x"}}
	if cfg, err := verify.ConfirmConnector(context.Background(), r, p, "mm2-orders", ours); err != nil || cfg["topics"] == "" {
		t.Errorf("the plan's connector: %v, %v", cfg, err)
	}
	if _, err := verify.ConfirmConnector(context.Background(), r, p, "other", ours); !errors.Is(err, verify.ErrForeignConnector) {
		t.Errorf("another connector: %v, want ErrForeignConnector", err)
	}
	if _, err := verify.ConfirmConnector(context.Background(), r, p, "gone", ours); !errors.Is(err, connect.ErrNotFound) {
		t.Errorf("a missing connector: %v, want connect.ErrNotFound", err)
	}
	if _, err := verify.ConfirmConnector(context.Background(), r, p, "mm2-orders", verify.Reached{}); !errors.Is(err, verify.ErrNoProof) {
		t.Errorf("clusters no read proved: %v, want verify.ErrNoProof", err)
	}
}
