package settings

import (
	"errors"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/clientconf"
)

// settingsFile writes a settings or properties file of t's.
func settingsFile(t *testing.T, text string) string {
	t.Helper()
	return writeFile(t, "cutover.env", text)
}

// TestReadConfigFile: values are read as a shell or an env file writes
// them (quotes were kept before), a byte order mark is dropped, and a
// device is not read whole.
func TestReadConfigFile(t *testing.T) {
	names := map[string]bool{"group": true, "topics": true, "connector": true, "source-alias": true}
	got, err := readConfigFile(settingsFile(t, "\ufeff# settings\nexport MM2CUTOVER_GROUP=\"flink orders\"\nMM2CUTOVER_TOPICS='a,b'\n"+
		"MM2CUTOVER_CONNECTOR=\"say \\\"hi\\\" \\\\ \\$HOME\"\n  MM2CUTOVER_SOURCE_ALIAS=src \n"), names)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"MM2CUTOVER_GROUP": "flink orders", "MM2CUTOVER_TOPICS": "a,b", "MM2CUTOVER_CONNECTOR": `say "hi" \ $HOME`, "MM2CUTOVER_SOURCE_ALIAS": "src"}
	if d := cmp.Diff(want, got.values); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	for _, bad := range []string{"MM2CUTOVER_GROUP=\"open\n", "MM2CUTOVER_GROUP='it's'\n", "MM2CUTOVER_GROUP=\"a\"b\"\n", "MM2CUTOVER_GROUP=\"a\\\"\n"} {
		if _, err := readConfigFile(settingsFile(t, bad), names); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := readConfigFile("/dev/zero", names); !errors.Is(err, clientconf.ErrTooLarge) {
			t.Errorf("/dev/zero: %v, want ErrTooLarge", err)
		}
	}
}

// TestCheckEnv: an MM2CUTOVER_* variable that names no flag is refused, as
// the same key in -config is; the passwords and the sandbox's variables are
// not flags and pass.
func TestCheckEnv(t *testing.T) {
	names := map[string]bool{"group": true}
	if err := checkEnv([]string{"MM2CUTOVER_GROUP=g", "MM2CUTOVER_CONNECT_PASSWORD=x", "MM2CUTOVER_SANDBOX=/tmp/s", "HOME=/root"}, names); err != nil {
		t.Errorf("known variables: %v", err)
	}
	err := checkEnv([]string{"MM2CUTOVER_GRUOP=g", "MM2CUTOVER_YES=true"}, names)
	if !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), "MM2CUTOVER_GRUOP (did you mean MM2CUTOVER_GROUP?), MM2CUTOVER_YES (a typo?") {
		t.Errorf("typos: %v", err)
	}
}

// TestClientConfigFlags: -source-client-config fills the source cluster's
// settings from a Kafka client properties file, and refuses the security
// flags beside it; a key it does not know is kept for the client's warning
// (package app's TestUnknownClientPropertiesWarnedOnce).
func TestClientConfigFlags(t *testing.T) {
	file := settingsFile(t, "bootstrap.servers=k:9093\nsecurity.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"+
		"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"pw-marker-1\";\n"+
		"ssl.truststore.type=PEM\nssl.truststore.location=/ca.pem\nlinger.ms=5\n")
	parse := func(args ...string) (Settings, error) {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		f := BindFlags(fs)
		base := []string{"-target-bootstrap", "t:1", "-connect-url", "http://c:1", "-connector", "c", "-group", "g", "-topics", "t"}
		if err := fs.Parse(append(base, args...)); err != nil {
			t.Fatal(err)
		}
		return f.Settings()
	}
	s, err := parse("-source-client-config", file, "-retry-timeout", "3s")
	if err != nil {
		t.Fatal(err)
	}
	if s.Source.BootstrapServers[0] != "k:9093" || s.Source.Username != "u" || s.Source.Password != "pw-marker-1" ||
		s.Source.TLS.Stores.TruststoreLocation != "/ca.pem" || s.Source.RetryTimeout != 3e9 || s.Target.RetryTimeout != 3e9 {
		t.Errorf("source %v", s.Source)
	}
	if len(s.Notices) != 1 || !strings.Contains(s.Notices[0], "linger.ms") {
		t.Errorf("notices %q", s.Notices)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-source-client-config", file, "-source-security-protocol", "SSL"}, "not with the -source-security-protocol"},
		{[]string{"-source-client-config", file, "-source-bootstrap", "other:1"}, "differs from the bootstrap flag"},
		{[]string{"-connect-client-config", file}, "needs an https -connect-url"},
	} {
		_, err := parse(tc.args...)
		if !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "pw-marker") {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}
