package settings

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// parseSettings parses the required flags and args into Settings.
func parseSettings(t *testing.T, args ...string) (Settings, error) {
	t.Helper()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := BindFlags(fs)
	base := []string{"-source-bootstrap", "src:9092", "-target-bootstrap", "dst:9092", "-connect-url", "http://c:8088",
		"-connector", "x", "-group", "g", "-topics", "orders"}
	if err := fs.Parse(append(base, args...)); err != nil {
		t.Fatal(err)
	}
	return f.Settings()
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestClientFileBootstrapRefused: bootstrap.servers in a client file (as a
// client.properties usually has) would replace the addresses the cutover
// checks; it is a usage error naming the flag to use instead.
func TestClientFileBootstrapRefused(t *testing.T) {
	file := writeFile(t, "client.properties", "security.protocol=SASL_SSL\nbootstrap.servers=elsewhere:9093\n")
	for flagName, instead := range map[string]string{"-mm2-source-client": "-source-bootstrap", "-mm2-target-client": "-target-bootstrap"} {
		_, err := parseSettings(t, flagName, file)
		if !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), flagName+" sets bootstrap.servers") || !strings.Contains(err.Error(), instead) {
			t.Errorf("%s with bootstrap.servers: %v, want a usage error naming %s", flagName, err, instead)
		}
		if k := errkind.Of(err); k != errkind.Rejected {
			t.Errorf("%s with bootstrap.servers: kind %v, want %v (exit 2)", flagName, k, errkind.Rejected)
		}
	}
	ok := writeFile(t, "client.properties", "security.protocol=SASL_SSL\n")
	if _, err := parseSettings(t, "-mm2-target-client", ok); err != nil {
		t.Errorf("a client file without bootstrap.servers: %v", err)
	}
}

// TestPolicyFromConnectorConfig: the target topics are named by the policy
// of the configuration the cutover creates, -connector-properties
// included.
func TestPolicyFromConnectorConfig(t *testing.T) {
	props := writeFile(t, "connector.properties", "replication.policy.separator=_\n")
	s, err := parseSettings(t, "-policy", "default", "-connector-properties", props)
	if err != nil {
		t.Fatal(err)
	}
	s = s.WithDefaults()
	if got, err := s.ReplicationPolicy().TargetTopic("orders"); err != nil || got != "source_orders" {
		t.Errorf("target topic of orders = %q, %v; want source_orders, as MM2 names it", got, err)
	}
	s, err = parseSettings(t, "-policy", "default")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.WithDefaults().ReplicationPolicy(); got != (offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: "source"}) {
		t.Errorf("ReplicationPolicy = %+v, want the default policy with alias source", got)
	}
}

// TestTasksMaxFromThePlan: -tasks-max 0 leaves tasks.max to the plan,
// which the steps after it take (WithPlan); a tasks.max given stays, and
// tasks.max in -connector-properties beside -tasks-max 0 is refused.
func TestTasksMaxFromThePlan(t *testing.T) {
	s := Settings{
		Source: kafkaadmin.Config{BootstrapServers: []string{"source-1:9092"}}, Target: kafkaadmin.Config{BootstrapServers: []string{"target-1:9092"}},
		ConnectURL: "http://connect:8083", Connector: "mm2-orders", Group: "flink", Topics: []string{"orders"},
	}.WithDefaults()
	if s.TasksMax != 0 {
		t.Fatalf("WithDefaults set TasksMax %d, want 0 (chosen by the plan)", s.TasksMax)
	}
	for _, tc := range []struct {
		name string
		p    *plan.Plan
		in   int
		want int
	}{
		{"no plan", nil, 0, 0},
		{"the plan's", &plan.Plan{ConnectorConfig: map[string]string{"tasks.max": "4"}}, 0, 4},
		{"a plan with no configuration (schema before 4)", &plan.Plan{}, 0, 1},
		{"given wins", &plan.Plan{ConnectorConfig: map[string]string{"tasks.max": "4"}}, 2, 2},
	} {
		if got := (Settings{TasksMax: tc.in}).WithPlan(tc.p).TasksMax; got != tc.want {
			t.Errorf("%s: WithPlan gives TasksMax %d, want %d", tc.name, got, tc.want)
		}
	}
	// tasks.max in -connector-properties would override the plan's choice.
	withExtra := s
	withExtra.Extra = map[string]string{"tasks.max": "1"}
	if err := withExtra.checkExtra(); err == nil || !strings.Contains(err.Error(), "tasks.max") {
		t.Errorf("-tasks-max 0 with tasks.max in the connector properties: %v, want a clash naming tasks.max", err)
	}
	withExtra.TasksMax = 1
	if err := withExtra.checkExtra(); err != nil {
		t.Errorf("-tasks-max 1 with tasks.max=1 in the connector properties: %v", err)
	}
}

// TestSettingsValidate: empty settings name every missing one by flag and
// variable.
func TestSettingsValidate(t *testing.T) {
	s := Settings{}
	err := s.Validate()
	if !errors.Is(err, ErrSettings) {
		t.Fatalf("empty settings: %v", err)
	}
	if want := "missing settings: -source-bootstrap (MM2CUTOVER_SOURCE_BOOTSTRAP), -target-bootstrap (MM2CUTOVER_TARGET_BOOTSTRAP), -connect-url (MM2CUTOVER_CONNECT_URL), -connector (MM2CUTOVER_CONNECTOR), -group (MM2CUTOVER_GROUP), -topics (MM2CUTOVER_TOPICS)"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not list %q", err, want)
	}
}
