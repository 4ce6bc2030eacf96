package connect

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGSSAPIClient(t *testing.T) {
	got, err := GSSAPIClient("SASL_SSL", "kafka", "mm2@EXAMPLE.COM", "/etc/security/keytabs/mm2.keytab")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"security.protocol":          "SASL_SSL",
		"sasl.mechanism":             "GSSAPI",
		"sasl.kerberos.service.name": "kafka",
		"sasl.jaas.config":           `com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab="/etc/security/keytabs/mm2.keytab" principal="mm2@EXAMPLE.COM";`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	e, err := parseJAASEntry(got["sasl.jaas.config"])
	if err != nil || e.module != Krb5LoginModule || e.options["keyTab"] != "/etc/security/keytabs/mm2.keytab" || e.options["principal"] != "mm2@EXAMPLE.COM" {
		t.Errorf("the JAAS entry does not read back: %+v, %v", e, err)
	}
	for _, bad := range [][4]string{
		{"SSL", "kafka", "mm2@EXAMPLE.COM", "/k"},
		{"SASL_SSL", "", "mm2@EXAMPLE.COM", "/k"},
		{"SASL_SSL", "kafka/broker1", "mm2@EXAMPLE.COM", "/k"},
		{"SASL_SSL", "kafka", "mm2@EXAMPLE.COM", `/k"; other="x`},
		{"SASL_SSL", "kafka", "mm2@EXAMPLE.COM", `C:\keytabs\mm2.keytab`},
		{"SASL_PLAINTEXT", "kafka", "", "/k"},
		{"SASL_PLAINTEXT", "kafka", "mm2\n@EXAMPLE.COM", "/k"},
	} {
		if _, err := GSSAPIClient(bad[0], bad[1], bad[2], bad[3]); err == nil {
			t.Errorf("GSSAPIClient%q: no error", bad)
		}
	}
}

// TestLintKerberos: the GSSAPI settings of MM2's clients of each cluster.
// A keytab login as the builder writes it only gets the warning that the
// workers must hold the keytab and krb5.conf; no "secret in plain text"
// (its JAAS entry holds none), and errors for what makes MM2's clients
// fail.
func TestLintKerberos(t *testing.T) {
	source, err := GSSAPIClient("SASL_SSL", "kafka", "mm2-source@EXAMPLE.COM", "/keytabs/mm2-source.keytab")
	if err != nil {
		t.Fatal(err)
	}
	target, _ := GSSAPIClient("SASL_PLAINTEXT", "kafka", "mm2-target@EXAMPLE.COM", "/keytabs/mm2-target.keytab")
	keytab := `useKeyTab=true keyTab="/keytabs/mm2.keytab" principal="mm2@EXAMPLE.COM"`
	tests := []struct {
		name string
		edit func(c map[string]string)
		want []keySev
		says string
	}{
		{"the builder's settings on both sides", nil, []keySev{
			{"source.cluster.sasl.jaas.config", SeverityWarning}, {"target.cluster.sasl.jaas.config", SeverityWarning}}, "every worker must hold that file"},
		{"SCRAM on the target side is no business of this check", func(c map[string]string) {
			c["target.cluster.sasl.mechanism"] = "SCRAM-SHA-512"
			c["target.cluster.sasl.jaas.config"] = "${env:MM2_TARGET_SASL_JAAS_CONFIG}"
			delete(c, "target.cluster.sasl.kerberos.service.name")
		}, []keySev{{"source.cluster.sasl.jaas.config", SeverityWarning}}, ""},
		{"no service name", func(c map[string]string) { delete(c, "source.cluster.sasl.kerberos.service.name") }, []keySev{
			{"source.cluster.sasl.kerberos.service.name", SeverityError},
			{"source.cluster.sasl.jaas.config", SeverityWarning}, {"target.cluster.sasl.jaas.config", SeverityWarning}}, "No serviceName defined"},
		{"GSSAPI as Kafka's default mechanism, the service name in the JAAS entry", func(c map[string]string) {
			delete(c, "source.cluster.sasl.mechanism")
			delete(c, "source.cluster.sasl.kerberos.service.name")
			c["source.cluster.sasl.jaas.config"] = Krb5LoginModule + " required " + keytab + ` serviceName="kafka";`
		}, []keySev{{"source.cluster.sasl.jaas.config", SeverityWarning}, {"target.cluster.sasl.jaas.config", SeverityWarning}}, "logs in as mm2@EXAMPLE.COM"},
		{"two service names", func(c map[string]string) {
			c["source.cluster.sasl.jaas.config"] = Krb5LoginModule + " required " + keytab + ` serviceName="kafka-old";`
		}, []keySev{{"source.cluster.sasl.kerberos.service.name", SeverityError},
			{"source.cluster.sasl.jaas.config", SeverityWarning}, {"target.cluster.sasl.jaas.config", SeverityWarning}}, `is "kafka" but the JAAS entry's serviceName is "kafka-old"`},
		{"a SCRAM login with GSSAPI", func(c map[string]string) {
			c["source.cluster.sasl.jaas.config"] = `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";`
		}, []keySev{{"source.cluster.sasl.jaas.config", SeverityError},
			{"source.cluster.sasl.jaas.config", SeverityWarning}, {"target.cluster.sasl.jaas.config", SeverityWarning}}, "not " + Krb5LoginModule},
		{"no JAAS entry", func(c map[string]string) { delete(c, "target.cluster.sasl.jaas.config") }, []keySev{
			{"source.cluster.sasl.jaas.config", SeverityWarning}, {"target.cluster.sasl.jaas.config", SeverityWarning}}, "worker JVM's JAAS file"},
		{"a ticket cache", func(c map[string]string) {
			c["target.cluster.sasl.jaas.config"] = Krb5LoginModule + ` required useTicketCache=true principal="mm2@EXAMPLE.COM";`
		}, []keySev{{"source.cluster.sasl.jaas.config", SeverityWarning}, {"target.cluster.sasl.jaas.config", SeverityWarning}}, "nothing renews it"},
		{"a provider reference without a service name", func(c map[string]string) {
			c["target.cluster.sasl.jaas.config"] = "${file:/secrets/mm2.properties:jaas}"
			delete(c, "target.cluster.sasl.kerberos.service.name")
		}, []keySev{{"source.cluster.sasl.jaas.config", SeverityWarning}, {"target.cluster.sasl.kerberos.service.name", SeverityWarning}},
			"unless it names a serviceName"},
		{"a password option in a Kerberos entry is a secret in plain text", func(c map[string]string) {
			c["target.cluster.sasl.jaas.config"] = Krb5LoginModule + " required " + keytab + ` password="p";`
		}, []keySev{{"source.cluster.sasl.jaas.config", SeverityWarning}, {"target.cluster.sasl.jaas.config", SeverityWarning},
			{"target.cluster.sasl.jaas.config", SeverityWarning}}, "holds a secret in plain text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := goodConfig(t)
			for k, v := range source {
				cfg["source.cluster."+k] = v
			}
			for k, v := range target {
				cfg["target.cluster."+k] = v
			}
			if tt.edit != nil {
				tt.edit(cfg)
			}
			fs := Lint(cfg, "4.3.1", LintExpectations{SourceAlias: "source"})
			var got []keySev
			var text []string
			for _, f := range fs {
				got = append(got, keySev{f.Key, f.Severity})
				text = append(text, f.String())
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", d, strings.Join(text, "\n"))
			}
			if tt.says != "" && !strings.Contains(strings.Join(text, "\n"), tt.says) {
				t.Errorf("no finding says %q:\n%s", tt.says, strings.Join(text, "\n"))
			}
		})
	}
}
