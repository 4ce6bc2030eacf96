package kafkaadmin

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/redact"
)

// TestUnknownPropertiesWarnedOnce: an ordinary client.properties with a key
// this package does not know is not refused whole, as Kafka's own clients
// only log such keys: NewClient warns once, through the Logger it is
// given, naming the key, never its value; a key that looks like key
// material is not named either (TestF2KeyMaterialKeysNotNamed).
func TestUnknownPropertiesWarnedOnce(t *testing.T) {
	const keyLine = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgPGvl2"
	props := map[string]string{
		"bootstrap.servers":   "127.0.0.1:1",
		"security.protocol":   "PLAINTEXT",
		"linger.ms":           "5",
		"sasl.jaas.confg":     "x required password=\"" + propSecret + "\";",
		"schema.registry.url": "http://sr:8081",
		keyLine:               "",
	}
	cfg, ignored, err := ConfigFromProperties(props)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"linger.ms"}, ignored); d != "" {
		t.Errorf("ignored (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"sasl.jaas.confg", "schema.registry.url", redact.Redacted}, cfg.UnknownProperties); d != "" {
		t.Errorf("UnknownProperties (-want +got):\n%s", d)
	}
	var logs bytes.Buffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	if _, err := NewClient(cfg); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if n := strings.Count(out, "level=WARN"); n != 1 || !strings.Contains(out, "sasl.jaas.confg, schema.registry.url, [redacted]") {
		t.Errorf("%d warnings, want one naming the keys:\n%s", n, out)
	}
	for _, s := range []string{propSecret, keyLine[:16], "http://sr:8081"} {
		if strings.Contains(out, s) || strings.Contains(cfg.String(), s) {
			t.Errorf("%q shown:\n%s\n%s", s, out, cfg)
		}
	}
	// Without unknown keys, no warning.
	delete(props, "sasl.jaas.confg")
	delete(props, "schema.registry.url")
	delete(props, keyLine)
	cfg, _, err = ConfigFromProperties(props)
	if err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	if _, err := NewClient(cfg); err != nil || logs.Len() != 0 {
		t.Errorf("no unknown key: %v, logged %q", err, logs.String())
	}
}
