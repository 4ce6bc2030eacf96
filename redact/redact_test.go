package redact_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/redact"
)

func TestIsSecretKey(t *testing.T) {
	for _, tt := range []struct {
		key  string
		want bool
	}{
		{"sasl.jaas.config", true},
		{"source.cluster.sasl.jaas.config", true},
		{"listener.name.sasl_ssl.plain.sasl.jaas.config", true},
		{"ssl.key.password", true},
		{"target.cluster.ssl.keystore.password", true},
		{"source.consumer.ssl.truststore.password", true},
		{"password", true},
		{"DB_PASSWORD", true},
		{"connection.passwd", true},
		{"sasl.oauthbearer.client.credentials.client.secret", true},
		{"aws.secret.access.key", true},
		{"client_secret", true},
		{"basic.auth.user.info", true},
		{"schema.registry.basic.auth.user.info", true},
		{"value.converter.basic.auth.user.info", true},
		{"ssl.keystore.key", true},
		{"producer.override.ssl.keystore.key", true},
		{"tls.private.key", true},
		{"datadog.api.key", true},
		{"apikey", true},
		{"bearer.auth.token", true},
		{"github.access-token", true},
		{"SLACK_TOKEN", true},

		{"sasl.oauthbearer.token.endpoint.url", false},
		{"sasl.login.token.file", false},
		{"token.expiry.ms", false},
		{"ssl.keystore.location", false},
		{"ssl.keystore.type", false},
		{"ssl.truststore.certificates", true}, // PASSWORD in Kafka's ConfigDef, though a certificate
		{"source.cluster.ssl.keystore.certificate.chain", true},
		{"sasl.oauthbearer.assertion.private.key.passphrase", true},
		{"source.consumer.sasl.oauthbearer.assertion.private.key.passphrase", true},
		{"producer.override.sasl.oauthbearer.client.credentials.client.secret", true},
		{"my.plugin.key.passphrase", true},
		{"SSL.KEY.PASSWORD", true},
		{"sasl.oauthbearer.assertion.private.key.file", false},
		{"sasl.oauthbearer.assertion.algorithm", false},
		{"notssl.key.password.location", true}, // heuristic: a word containing "password"
		{"basic.auth.credentials.source", false},
		{"sasl.mechanism", false},
		{"source.cluster.alias", false},
		{"topics", false},
		{"key.converter", false},
		{"aws.access.key.id", false},
		{"", false},
		{"...", false},
	} {
		if got := redact.IsSecretKey(tt.key); got != tt.want {
			t.Errorf("IsSecretKey(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}

// TestSecretKeysFromValidate: keys a plugin's validate answer defines as
// PASSWORD count as secret under any prefix, whatever their names say.
func TestSecretKeysFromValidate(t *testing.T) {
	isSecret := redact.SecretKeys([]string{"vault.lease", "Custom.Credential"})
	for _, tt := range []struct {
		key  string
		want bool
	}{
		{"vault.lease", true},
		{"source.cluster.vault.lease", true},
		{"custom.credential", true},
		{"myvault.lease", false}, // not a dotted suffix
		{"vault.lease.ms", false},
		{"ssl.keystore.password", true},
		{"topics", false},
	} {
		if got := isSecret(tt.key); got != tt.want {
			t.Errorf("SecretKeys(...)(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}

// TestRedactKeysValuesEqualToSecrets: a secret copied under a key no rule
// knows is replaced too, whole or inside a longer value.
func TestRedactKeysValuesEqualToSecrets(t *testing.T) {
	cfg := map[string]string{
		"source.cluster.sasl.jaas.config":        `org.apache.kafka.common.security.scram.ScramLoginModule required username="mm2" password="jaas-pw-1234";`,
		"source.consumer.vault.lease":            "lease-secret-9876",
		"target.cluster.ssl.key.password":        "${env:KEY_PASSWORD}",
		"custom.copy":                            "jaas-pw-1234",
		"custom.url":                             "https://user:lease-secret-9876@vault.example/",
		"source.cluster.ssl.truststore.password": "abc",
		"tasks.max":                              "abc",
		"topics":                                 "abcdef",
		"target.cluster.sasl.jaas.config":        "",
	}
	got := redact.ConfigWith(cfg, []string{"vault.lease"})
	want := map[string]string{
		"source.cluster.sasl.jaas.config":        redact.Redacted,
		"source.consumer.vault.lease":            redact.Redacted,
		"target.cluster.ssl.key.password":        "${env:KEY_PASSWORD}",
		"custom.copy":                            redact.Redacted,
		"custom.url":                             "https://user:" + redact.Redacted + "@vault.example/",
		"source.cluster.ssl.truststore.password": redact.Redacted,
		"tasks.max":                              redact.Redacted, // equal to a secret, however short
		"topics":                                 "abcdef",        // a three-letter secret is not cut out of other values
		"target.cluster.sasl.jaas.config":        "",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ConfigWith mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{
		"org.apache.kafka.common.security.scram.ScramLoginModule required username=\"mm2\" password=\"jaas-pw-1234\";",
		"lease-secret-9876", "jaas-pw-1234", "abc",
	}, redact.SecretValues(cfg, []string{"vault.lease"})); diff != "" {
		t.Errorf("SecretValues mismatch (-want +got):\n%s", diff)
	}
	// Without the validate answer, the unknown key stays (and so do copies of it).
	if r := redact.Config(cfg); r["source.consumer.vault.lease"] != "lease-secret-9876" || r["custom.copy"] != redact.Redacted {
		t.Errorf("Config = %v", r)
	}
}

// TestKeysOnly: only the values of secret keys are replaced; a value equal
// to or containing a secret stays, so that a hash of the result changes with
// the configuration and never with a password.
func TestKeysOnly(t *testing.T) {
	cfg := map[string]string{
		"source.cluster.sasl.jaas.config":      `... username="mm2" password="orders";`,
		"source.consumer.vault.lease":          "lease",
		"target.cluster.ssl.keystore.password": "${file:/etc/kafka/secrets.properties:keystore}",
		"source.cluster.ssl.key.password":      "",
		"topics":                               "orders",
		"custom.url":                           "https://user:orders@vault.example/",
	}
	want := map[string]string{
		"source.cluster.sasl.jaas.config":      redact.Redacted,
		"source.consumer.vault.lease":          redact.Redacted,
		"target.cluster.ssl.keystore.password": "${file:/etc/kafka/secrets.properties:keystore}",
		"source.cluster.ssl.key.password":      "",
		"topics":                               "orders",
		"custom.url":                           "https://user:orders@vault.example/",
	}
	if diff := cmp.Diff(want, redact.KeysOnly(cfg, []string{"vault.lease"})); diff != "" {
		t.Errorf("KeysOnly mismatch (-want +got):\n%s", diff)
	}
	if cfg["source.cluster.sasl.jaas.config"] == redact.Redacted {
		t.Errorf("KeysOnly modified its input")
	}
	if got := redact.KeysOnly(nil, nil); got == nil || len(got) != 0 {
		t.Errorf("KeysOnly(nil) = %#v, want an empty map", got)
	}
}

func TestConfig(t *testing.T) {
	cfg := map[string]string{
		"topics":                                 "orders",
		"source.cluster.sasl.jaas.config":        `... password="hunter2";`,
		"target.cluster.ssl.keystore.password":   "${file:/etc/kafka/secrets.properties:keystore}",
		"source.cluster.ssl.truststore.password": "${env:TS_PASSWORD}x",
		"source.cluster.ssl.key.password":        "",
	}
	got := redact.Config(cfg)
	want := map[string]string{
		"topics":                                 "orders",
		"source.cluster.sasl.jaas.config":        redact.Redacted,
		"target.cluster.ssl.keystore.password":   "${file:/etc/kafka/secrets.properties:keystore}",
		"source.cluster.ssl.truststore.password": redact.Redacted,
		"source.cluster.ssl.key.password":        "",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Config mismatch (-want +got):\n%s", diff)
	}
	if cfg["source.cluster.sasl.jaas.config"] == redact.Redacted {
		t.Errorf("Config modified its input")
	}
	if got := redact.Config(nil); got == nil || len(got) != 0 {
		t.Errorf("Config(nil) = %#v, want an empty map", got)
	}
}

func TestText(t *testing.T) {
	if got := redact.Text("user admin:hunter2-long sent hunter2", "hunter2", "admin:hunter2-long", ""); got != "user "+redact.Redacted+" sent "+redact.Redacted {
		t.Errorf("Text = %q", got)
	}
}

// TestTextEscapedForms: a secret comes back in the forms a server or an
// encoder gives it — HTML-escaped in an error page, JSON-escaped (by Go,
// which also escapes < > &, or by Java), URL-encoded — and each is
// replaced.
func TestTextEscapedForms(t *testing.T) {
	const secret = `p<a>s&s\w"d q`
	for _, echoed := range []string{
		`<p>Unauthorized: user:p&lt;a&gt;s&amp;s\w&#34;d q</p>`,
		`<p>Unauthorized: user:p&lt;a&gt;s&amp;s\w&quot;d q</p>`,
		`{"message":"bad p\u003ca\u003es\u0026s\\w\"d q"}`,
		`{"message":"bad p<a>s&s\\w\"d q"}`,
		`GET /x?password=p%3Ca%3Es%26s%5Cw%22d+q`,
		`GET /p%3Ca%3Es&s%5Cw%22d%20q`,
	} {
		got := redact.Text(echoed, secret)
		if !strings.Contains(got, redact.Redacted) {
			t.Errorf("%s: the escaped secret survived: %s", echoed, got)
		}
	}
	if got := redact.Text("a plain text", "plain"); got != "a "+redact.Redacted+" text" {
		t.Errorf("Text = %q", got)
	}
}
