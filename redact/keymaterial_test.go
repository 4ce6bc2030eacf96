package redact_test

import (
	"html/template"
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

// TestF8EscapedCredentials: a basic-auth header echoed by an HTML error
// page whose encoder escapes '+' as &#43; (Go's html/template), or '/' and
// '=' as references of any form, or percent-escapes in lower case, kept
// the credential readable: Forms lists one spelling of each encoder.
func TestF8EscapedCredentials(t *testing.T) {
	const pair = "b3BlcmF0b3I6cGE+PndvcmQ/Pw==" // operator:pa>>word??
	for _, echoed := range []string{
		template.HTMLEscapeString(pair),
		"b3BlcmF0b3I6cGE&#x2B;PndvcmQ&#x2F;Pw&#x3D;&#x3D;",
		"b3BlcmF0b3I6cGE&#x2b;PndvcmQ&#47;Pw&#61;&#61;",
		"b3BlcmF0b3I6cGE&plus;PndvcmQ&sol;Pw&equals;&equals;",
		"b3BlcmF0b3I6cGE&#043;PndvcmQ/Pw==",
		"b3BlcmF0b3I6cGE&#43PndvcmQ/Pw==",
		"b3BlcmF0b3I6cGE%2bPndvcmQ%2fPw%3d%3d",
		"b3BlcmF0b3I6cGE%2BPndvcmQ&#47;Pw==",
	} {
		page := "<html><body><h1>401</h1><pre>Authorization: Basic " + echoed + "</pre> &amp; more</body></html>"
		got := redact.Text(page, pair)
		if strings.Contains(got, "b3BlcmF0b3I6") || strings.Contains(got, "PndvcmQ") || !strings.Contains(got, "Basic "+redact.Redacted+"</pre> &amp; more") {
			t.Errorf("%s\n-> %s", echoed, got)
		}
	}
	// Escapes around no secret are left as they are.
	if in := "a &#43; b %2b c &amp; d &plus;"; redact.Text(in, "zzz-secret") != in {
		t.Errorf("changed: %s", redact.Text(in, "zzz-secret"))
	}
}

// FuzzText: Text never panics, whatever the escapes, and leaves text
// without the secret or an escape as it was.
func FuzzText(f *testing.F) {
	for _, s := range []string{"a&#43;b", "&#x2B", "&", "%", "%2", "&#", "&#x;", "&plus", "x&amp;y%2bz"} {
		f.Add(s, "+b")
	}
	f.Fuzz(func(t *testing.T, s, secret string) {
		got := redact.Text(s, secret)
		if !strings.ContainsAny(s, "&%") && (secret == "" || !strings.Contains(s, secret)) && len(redact.Forms(secret)) <= 1 && got != s {
			t.Errorf("Text(%q, %q) = %q", s, secret, got)
		}
	})
}

// TestF9JAASSecretValues: Kafka's JaasConfig strips single quotes too,
// and reads bare values and blanks around '=': the password inside a JAAS
// line is a secret value in each spelling, so that a copy of it elsewhere
// (a worker's error message) is redacted.
func TestF9JAASSecretValues(t *testing.T) {
	for _, jaas := range []string{
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="pw-in-double";`,
		`org.apache.kafka.common.security.plain.PlainLoginModule required username='u' password='pw-in-double';`,
		`org.apache.kafka.common.security.plain.PlainLoginModule required username=u password = pw-in-double ;`,
		"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId=c clientSecret=\n'pw-in-double';",
	} {
		vs := redact.SecretValues(map[string]string{"sasl.jaas.config": jaas}, nil)
		if len(vs) != 2 || vs[1] != "pw-in-double" {
			t.Errorf("%s: %q, want the line and pw-in-double", jaas, vs)
		}
		if got := redact.Config(map[string]string{"sasl.jaas.config": jaas, "x.note": "copy pw-in-double"}); got["x.note"] != "copy "+redact.Redacted {
			t.Errorf("%s: %q", jaas, got)
		}
	}
}
