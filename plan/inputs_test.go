package plan_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
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
		if got := plan.IsSecretKey(tt.key); got != tt.want {
			t.Errorf("IsSecretKey(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}

// TestSecretKeysFromValidate: keys a plugin's validate answer defines as
// PASSWORD count as secret under any prefix, whatever their names say.
func TestSecretKeysFromValidate(t *testing.T) {
	isSecret := plan.SecretKeys([]string{"vault.lease", "Custom.Credential"})
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
	got := plan.RedactKeys(cfg, []string{"vault.lease"})
	want := map[string]string{
		"source.cluster.sasl.jaas.config":        plan.Redacted,
		"source.consumer.vault.lease":            plan.Redacted,
		"target.cluster.ssl.key.password":        "${env:KEY_PASSWORD}",
		"custom.copy":                            plan.Redacted,
		"custom.url":                             "https://user:" + plan.Redacted + "@vault.example/",
		"source.cluster.ssl.truststore.password": plan.Redacted,
		"tasks.max":                              plan.Redacted, // equal to a secret, however short
		"topics":                                 "abcdef",      // a three-letter secret is not cut out of other values
		"target.cluster.sasl.jaas.config":        "",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RedactKeys mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{
		"org.apache.kafka.common.security.scram.ScramLoginModule required username=\"mm2\" password=\"jaas-pw-1234\";",
		"lease-secret-9876", "jaas-pw-1234", "abc",
	}, plan.SecretValues(cfg, []string{"vault.lease"})); diff != "" {
		t.Errorf("SecretValues mismatch (-want +got):\n%s", diff)
	}
	// Without the validate answer, the unknown key stays (and so do copies of it).
	if r := plan.Redact(cfg); r["source.consumer.vault.lease"] != "lease-secret-9876" || r["custom.copy"] != plan.Redacted {
		t.Errorf("Redact = %v", r)
	}
}

func TestRedactAndDigest(t *testing.T) {
	cfg := map[string]string{
		"topics":                                 "orders",
		"source.cluster.sasl.jaas.config":        `... password="hunter2";`,
		"target.cluster.ssl.keystore.password":   "${file:/etc/kafka/secrets.properties:keystore}",
		"source.cluster.ssl.truststore.password": "${env:TS_PASSWORD}x",
		"source.cluster.ssl.key.password":        "",
	}
	got := plan.Redact(cfg)
	want := map[string]string{
		"topics":                                 "orders",
		"source.cluster.sasl.jaas.config":        plan.Redacted,
		"target.cluster.ssl.keystore.password":   "${file:/etc/kafka/secrets.properties:keystore}",
		"source.cluster.ssl.truststore.password": plan.Redacted,
		"source.cluster.ssl.key.password":        "",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Redact mismatch (-want +got):\n%s", diff)
	}
	if cfg["source.cluster.sasl.jaas.config"] == plan.Redacted {
		t.Errorf("Redact modified its input")
	}
	if got := plan.Redact(nil); got == nil || len(got) != 0 {
		t.Errorf("Redact(nil) = %#v, want an empty map", got)
	}

	d := plan.ConfigDigest(cfg)
	if !strings.HasPrefix(d, "sha256:") || len(d) != len("sha256:")+64 {
		t.Errorf("ConfigDigest = %q, want sha256:<64 hex>", d)
	}
	other := map[string]string{}
	for k, v := range cfg {
		other[k] = v
	}
	other["source.cluster.sasl.jaas.config"] = `... password="another";`
	if got := plan.ConfigDigest(other); got != d {
		t.Errorf("digest changed with a secret value: %s != %s", got, d)
	}
	other["topics"] = "orders|payments"
	if got := plan.ConfigDigest(other); got == d {
		t.Errorf("digest did not change with topics")
	}
}

func TestParseResetOffsetsCSV(t *testing.T) {
	want := offsets.GroupOffsets{sp("orders", 0): 42, sp("orders", 1): 0, sp("pay.ments-x_1", 12): 9223372036854775807}
	for _, tt := range []struct {
		name, in, group string
	}{
		{"three columns", "orders,0,42\norders,1,0\npay.ments-x_1,12,9223372036854775807\n", ""},
		{"header and CRLF", "topic,partition,offset\r\norders,0,42\r\norders,1,0\r\npay.ments-x_1,12,9223372036854775807\r\n", ""},
		{"no final newline", "orders,0,42\norders,1,0\npay.ments-x_1,12,9223372036854775807", ""},
		{"four columns one group", "g1,orders,0,42\ng1,orders,1,0\ng1,pay.ments-x_1,12,9223372036854775807\n", ""},
		{"four columns named group", "g1,orders,0,42\ng2,orders,0,7\ng1,orders,1,0\ng1,pay.ments-x_1,12,9223372036854775807\ng2,audit,0,1\n", "g1"},
		{"four columns with header", "group,topic,partition,offset\ng1,orders,0,42\ng1,orders,1,0\ng1,pay.ments-x_1,12,9223372036854775807\n", "g1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := plan.ParseResetOffsetsCSV(strings.NewReader(tt.in), tt.group)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}

	for _, tt := range []struct {
		name, in, group string
		want            error
		line            int
	}{
		{"empty", "", "", plan.ErrMalformed, 0},
		{"no rows for group", "g2,orders,0,1\n", "g1", plan.ErrMalformed, 0},
		{"two columns", "orders,0\n", "", plan.ErrMalformed, 1},
		{"five columns", "a,b,c,d,e\n", "", plan.ErrMalformed, 1},
		{"mixed forms", "orders,0,1\ng,orders,1,1\n", "", plan.ErrMalformed, 2},
		{"two groups unnamed", "g1,orders,0,1\ng2,orders,0,1\n", "", plan.ErrMalformed, 2},
		{"negative offset", "orders,0,-1\n", "", plan.ErrMalformed, 1},
		{"float offset", "orders,0,1.5\n", "", plan.ErrMalformed, 1},
		{"offset overflow", "orders,0,9223372036854775808\n", "", plan.ErrMalformed, 1},
		{"negative partition", "orders,-1,1\n", "", plan.ErrMalformed, 1},
		{"partition overflow", "orders,2147483648,1\n", "", plan.ErrMalformed, 1},
		{"bad topic", "ord ers,0,1\n", "", plan.ErrMalformed, 1},
		{"empty topic", ",0,1\n", "", plan.ErrMalformed, 1},
		{"bad quote", "\"orders,0,1\n", "", plan.ErrMalformed, 1},
		{"duplicate", "orders,0,1\norders,1,1\norders,0,2\n", "", plan.ErrDuplicatePartition, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := plan.ParseResetOffsetsCSV(strings.NewReader(tt.in), tt.group)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, %v; want error matching %v", got, err, tt.want)
			}
			var le *plan.LineError
			if tt.line > 0 && (!errors.As(err, &le) || le.Line != tt.line) {
				t.Errorf("error %v, want a *LineError on line %d", err, tt.line)
			}
		})
	}
}

func TestParseConnectorOffsets(t *testing.T) {
	body := `{"offsets":[
		{"partition":{"cluster":"dc1","topic":"orders","partition":0},"offset":{"offset":41}},
		{"partition":{"cluster":"dc1","topic":"orders","partition":1},"offset":{"offset":0}}]}`
	got, err := plan.ParseConnectorOffsets(strings.NewReader(body), "dc1")
	want := offsets.GroupOffsets{sp("orders", 0): 42, sp("orders", 1): 1}
	if err != nil || !cmp.Equal(want, got) {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
	got, err = plan.ParseConnectorOffsets(strings.NewReader(`{"offsets":[]}`), "dc1")
	if err != nil || len(got) != 0 {
		t.Errorf("empty list: got %v, %v", got, err)
	}

	for _, tt := range []struct {
		body, alias string
		want        error
	}{
		{body, "source", offsets.ErrAliasMismatch},
		{`{"offsets":[{"partition":{"cluster":"dc1","topic":"orders","partition":0},"offset":{"offset":-5}}]}`, "dc1", offsets.ErrNegative},
		{`{"offsets":[{"partition":{"cluster":"dc1","topic":"orders","partition":0},"offset":{"offset":"5"}}]}`, "dc1", plan.ErrMalformed},
		{`{"offsets":[{"partition":{"cluster":"dc1","topic":"orders","partition":0},"offset":{"offset":5}}]}x`, "dc1", offsets.ErrMalformed},
		{`{"error_code":404,"message":"Connector x not found"}`, "dc1", plan.ErrMalformed},
	} {
		got, err := plan.ParseConnectorOffsets(strings.NewReader(tt.body), tt.alias)
		if !errors.Is(err, tt.want) {
			t.Errorf("ParseConnectorOffsets(%s, %q) = %v, %v; want error matching %v", tt.body, tt.alias, got, err, tt.want)
		}
	}
}

// TestBuildFromCSV builds a plan from the CSV form end to end.
func TestBuildFromCSV(t *testing.T) {
	group, err := plan.ParseResetOffsetsCSV(strings.NewReader("orders,0,42\norders,1,0\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(spec(), plan.Snapshot{
		Group:     group,
		Source:    map[offsets.SourcePartition]offsets.LogBounds{sp("orders", 0): {End: 50}, sp("orders", 1): {End: 50}},
		TargetEnd: map[offsets.SourcePartition]int64{sp("orders", 0): 40, sp("orders", 1): 0},
	})
	if err != nil {
		t.Fatal(err)
	}
	body, err := p.PatchBody()
	want := `{"offsets":[{"partition":{"cluster":"source","topic":"orders","partition":0},"offset":{"offset":41}},{"partition":{"cluster":"source","topic":"orders","partition":1},"offset":null}]}`
	if err != nil || string(body) != want {
		t.Errorf("PatchBody() = %s, %v; want %s", body, err, want)
	}
}
