package redact_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/redact"
)

// A PKCS#8 EC key of the tests (clientconf/testdata/client.pem).
const testKey = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgPGvl2+s6kfJa2wAh
d1cLkOdGRBQKT4zP0UWp3T1CznChRANCAAS7IgFzvoUq1v4U1/1ABmO+qpsyqCgA
-----END PRIVATE KEY-----`

// TestF2KeyMaterial: the lines of a PEM key, which a properties file
// pasted without continuations makes keys, look like key material; Kafka's
// configuration keys and ordinary words do not. A value holding a private
// key is a secret under any key.
func TestF2KeyMaterial(t *testing.T) {
	for _, l := range strings.Split(testKey, "\n") {
		if !redact.IsKeyMaterial(l) {
			t.Errorf("IsKeyMaterial(%q) = false", l)
		}
	}
	for _, s := range []string{"-----END", "-----BEGIN", "AAS7IgFzvoUq1v4U1/1ABmO+qpsyqCgA==", "d1cLkOdGRBQKT4zP0UWp3T1CznChRANC"} {
		if !redact.IsKeyMaterial(s) {
			t.Errorf("IsKeyMaterial(%q) = false", s)
		}
	}
	for _, s := range []string{"", "bootstrap.servers", "sasl.jaas.confg", "source.cluster.ssl.keystore.key", "schema.registry.url",
		"MirrorSourceConnector", "replicationfactor", "producer.override.max.request.size", "abcdefghijklmnopqrstuvwxyz", "0123456789abcdef0123",
		"MkU3OEVBNTcw-NTJENDM2Qk", "x===============", "AAS7IgFzvoUq1v4U1/1ABmO+qpsyqCgA==="} {
		if redact.IsKeyMaterial(s) {
			t.Errorf("IsKeyMaterial(%q) = true", s)
		}
	}
	if d := cmp.Diff([]string{"a.b", "c", redact.Redacted}, redact.KeyNames([]string{"c", "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49", "a.b", "-----END", "c"})); d != "" {
		t.Errorf("KeyNames (-want +got):\n%s", d)
	}
	if got := redact.KeyNames(redact.KeyNames([]string{"z", "-----END"})); !cmp.Equal(got, []string{"z", redact.Redacted}) {
		t.Errorf("KeyNames of its result: %q", got)
	}

	cfg := map[string]string{"x.custom.pem": testKey, "x.note": "a", "ssl.truststore.certificates": "-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----"}
	shown := redact.Config(cfg)
	if shown["x.custom.pem"] != redact.Redacted || shown["x.note"] != "a" {
		t.Errorf("Config: %q", shown)
	}
	if vs := redact.SecretValues(cfg, nil); len(vs) == 0 || vs[0] != testKey {
		t.Errorf("SecretValues: %q, want the key first", vs)
	}
	if got := redact.KeysOnly(cfg, nil); got["x.custom.pem"] != testKey {
		t.Error("KeysOnly changed a value under a key that is not a secret's: digests would change")
	}
	if !redact.HoldsPrivateKey(testKey) || redact.HoldsPrivateKey("-----BEGIN CERTIFICATE-----") || redact.HoldsPrivateKey("private key") {
		t.Error("HoldsPrivateKey")
	}
}
