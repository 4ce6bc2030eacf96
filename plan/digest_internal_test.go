package plan

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// encodeUnchecked writes p as Encode does, without Validate: a plan file
// someone edited and gave a fresh fingerprint.
func encodeUnchecked(t *testing.T, p *Plan) []byte {
	t.Helper()
	var b bytes.Buffer
	jw := jsonWriter{w: &b, indent: true}
	jw.plan(p, true)
	if err := jw.flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestF5ConfigCheckedAgainstDigest: the connector configuration a plan
// records (from which its steps take the replication policy) must be the one
// its config_digest names, even where the fingerprint was made anew.
func TestF5ConfigCheckedAgainstDigest(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "applicable.plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	good, err := Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(map[string]string)
		want error
	}{
		{"topics edited", func(c map[string]string) { c["topics"] = "orders" }, ErrConfigMismatch},
		{"a key added", func(c map[string]string) { c["target.cluster.security.protocol"] = "PLAINTEXT" }, ErrConfigMismatch},
		{"a key removed", func(c map[string]string) { delete(c, "target.cluster.ssl.keystore.password") }, ErrConfigMismatch},
		// The digest hides secrets; a plan never records one.
		{"a secret in the clear", func(c map[string]string) { c["source.cluster.sasl.jaas.config"] = "x required;" }, ErrInvalidField},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := *good
			p.ConnectorConfig = maps.Clone(good.ConnectorConfig)
			tc.edit(p.ConnectorConfig)
			p.Fingerprint = p.computeFingerprint()
			_, err := Decode(bytes.NewReader(encodeUnchecked(t, &p)))
			if !errors.Is(err, tc.want) || !errors.Is(err, ErrInvalid) {
				t.Errorf("Decode: %v, want %v", err, tc.want)
			}
			if err := p.Validate(); !errors.Is(err, tc.want) {
				t.Errorf("Validate: %v, want %v", err, tc.want)
			}
		})
	}
	// A secret copied under another key is hidden in the record, which then
	// cannot hash to the digest of the configuration as it was: such a plan
	// is still read.
	t.Run("a secret copy hidden", func(t *testing.T) {
		cfg := map[string]string{
			"connector.class":                 "org.apache.kafka.connect.mirror.MirrorSourceConnector",
			"source.cluster.alias":            "source",
			"source.cluster.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="hunter2-long";`,
			"target.cluster.alias":            "target",
			"topics":                          "^(orders|payments)$",
			"x.note":                          "copied hunter2-long by mistake",
		}
		p := *good
		p.ConnectorConfig, p.ReplicationPolicy, err = recordConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		p.ConfigDigest = ConfigDigest(cfg)
		p.Fingerprint = p.computeFingerprint()
		back, err := Decode(bytes.NewReader(encodeUnchecked(t, &p)))
		if err != nil {
			t.Fatalf("Decode: %v", err)
		}
		if back.ConnectorConfig["x.note"] != "copied [redacted] by mistake" {
			t.Errorf("recorded %q", back.ConnectorConfig["x.note"])
		}
	})
}
