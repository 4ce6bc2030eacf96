package cutover

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/offsets"
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
		if ExitStatus(err) != ExitUsage {
			t.Errorf("%s with bootstrap.servers: exit %d, want %d", flagName, ExitStatus(err), ExitUsage)
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
