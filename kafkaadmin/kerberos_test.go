package kafkaadmin

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/krberror"

	"github.com/mm2cutover/mm2cutover/redact"
)

// krb5JAAS is a client's Kerberos login from a keytab, as Kafka's
// documentation gives it.
func krb5JAAS(options string) string {
	return krb5LoginModule + " required " + options + ";"
}

func TestConfigFromPropertiesGSSAPI(t *testing.T) {
	keytabLogin := krb5JAAS(`useKeyTab=true storeKey=true keyTab="/etc/security/keytabs/tool.keytab" principal="tool@EXAMPLE.COM"`)
	want := Config{BootstrapServers: []string{"broker1.example.com:9093"}, SecurityProtocol: SASLSSL, SASLMechanism: GSSAPI,
		Username: "tool@EXAMPLE.COM", Kerberos: KerberosConfig{ServiceName: "kafka", KeytabFile: "/etc/security/keytabs/tool.keytab"}}
	for _, tc := range []struct {
		name    string
		props   map[string]string
		edit    func(*Config)
		ignored []string
	}{
		{"keytab, service name key", map[string]string{"bootstrap.servers": "broker1.example.com:9093", "security.protocol": "SASL_SSL",
			"sasl.mechanism": "GSSAPI", "sasl.kerberos.service.name": "kafka", "sasl.jaas.config": keytabLogin}, nil, nil},
		{"Kafka's default mechanism", map[string]string{"bootstrap.servers": "broker1.example.com:9093", "security.protocol": "SASL_SSL",
			"sasl.kerberos.service.name": "kafka", "sasl.jaas.config": keytabLogin}, nil, nil},
		{"service name in the JAAS entry, lower-case true, the login thread's keys ignored", map[string]string{"bootstrap.servers": "broker1.example.com:9093",
			"security.protocol": "SASL_SSL", "sasl.mechanism": "gssapi", "sasl.kerberos.ticket.renew.window.factor": "0.8", "sasl.kerberos.kinit.cmd": "/usr/bin/kinit",
			"sasl.jaas.config": krb5JAAS(`useKeyTab=TRUE doNotPrompt=true keyTab="/etc/security/keytabs/tool.keytab" principal="tool@EXAMPLE.COM" serviceName="kafka" debug=false`)},
			nil, []string{"sasl.kerberos.kinit.cmd", "sasl.kerberos.ticket.renew.window.factor"}},
		{"the same service name twice", map[string]string{"bootstrap.servers": "broker1.example.com:9093", "security.protocol": "SASL_SSL",
			"sasl.mechanism": "GSSAPI", "sasl.kerberos.service.name": " kafka", "sasl.jaas.config": krb5JAAS(`useKeyTab=true keyTab="/etc/security/keytabs/tool.keytab" principal="tool@EXAMPLE.COM" serviceName=kafka`)},
			nil, nil},
		{"a principal with an instance and no realm, SASL_PLAINTEXT", map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI",
			"sasl.kerberos.service.name": "kafka-prod", "sasl.jaas.config": krb5JAAS(`useKeyTab=true keyTab="/k/mm2.keytab" principal="mm2/cutover-host"`)},
			func(c *Config) {
				c.BootstrapServers, c.SecurityProtocol, c.Username = nil, SASLPlaintext, "mm2/cutover-host"
				c.Kerberos = KerberosConfig{ServiceName: "kafka-prod", KeytabFile: "/k/mm2.keytab"}
			}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ignored, err := ConfigFromProperties(tc.props)
			if err != nil {
				t.Fatal(err)
			}
			w := want
			if tc.edit != nil {
				tc.edit(&w)
			}
			if d := cmp.Diff(w, got, cmpopts.IgnoreFields(Config{}, "Sarama", "Logger")); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.ignored, ignored); d != "" {
				t.Errorf("ignored (-want +got):\n%s", d)
			}
			if got.BootstrapServers == nil {
				got.BootstrapServers = []string{"h:1"}
			}
			if err := got.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}

	t.Run("the service name key beside another mechanism is ignored, and said so", func(t *testing.T) {
		_, ignored, err := ConfigFromProperties(map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.kerberos.service.name": "kafka",
			"sasl.jaas.config": scramLoginModule + ` required username="u" password="` + propSecret + `";`})
		if err != nil || !cmp.Equal(ignored, []string{"sasl.kerberos.service.name"}) {
			t.Errorf("got %v, %v; want sasl.kerberos.service.name ignored", ignored, err)
		}
	})
}

func TestConfigFromPropertiesRefusesGSSAPI(t *testing.T) {
	base := map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI", "sasl.kerberos.service.name": "kafka"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "<unset>" {
				delete(m, kv[i])
				continue
			}
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	keytab := `useKeyTab=true keyTab="/k/tool.keytab" principal="tool@EXAMPLE.COM"`
	for _, tc := range []struct {
		name  string
		props map[string]string
		want  string
	}{
		{"no JAAS entry (a JAAS file is not read)", base, "this tool reads no JAAS file"},
		{"the default mechanism with a SCRAM login", with("sasl.mechanism", "<unset>", "sasl.jaas.config", scramLoginModule+` required username="u" password="`+propSecret+`";`),
			"ScramLoginModule with sasl.mechanism GSSAPI: want " + krb5LoginModule},
		{"IBM's login module", with("sasl.jaas.config", "com.ibm.security.auth.module.Krb5LoginModule required useKeytab=\"/k/t\" principal=p;"), "want " + krb5LoginModule},
		{"ticket cache", with("sasl.jaas.config", krb5JAAS("useTicketCache=true")), "reads no ticket cache"},
		{"ticket cache beside a keytab", with("sasl.jaas.config", krb5JAAS(keytab+" useTicketCache=true")), "reads no ticket cache"},
		{"password prompt", with("sasl.jaas.config", krb5JAAS(`principal="tool@EXAMPLE.COM"`)), "needs useKeyTab=true"},
		{"useKeyTab=false", with("sasl.jaas.config", krb5JAAS(`useKeyTab=false keyTab="/k/tool.keytab" principal="tool@EXAMPLE.COM"`)), "needs useKeyTab=true"},
		{"no keyTab", with("sasl.jaas.config", krb5JAAS(`useKeyTab=true principal="tool@EXAMPLE.COM"`)), "needs keyTab"},
		{"no principal", with("sasl.jaas.config", krb5JAAS(`useKeyTab=true keyTab="/k/tool.keytab"`)), "needs principal"},
		{"two realms", with("sasl.jaas.config", krb5JAAS(`useKeyTab=true keyTab="/k/t" principal="tool@corp@EXAMPLE.COM"`)), "more than one @"},
		{"empty realm", with("sasl.jaas.config", krb5JAAS(`useKeyTab=true keyTab="/k/t" principal="tool@"`)), "empty realm"},
		{"empty instance", with("sasl.jaas.config", krb5JAAS(`useKeyTab=true keyTab="/k/t" principal="tool/@EXAMPLE.COM"`)), "empty component"},
		{"misspelt option", with("sasl.jaas.config", krb5JAAS(`useKeyTab=true keytab="/k/t" principal="tool@EXAMPLE.COM"`)), "options keytab are not known"},
		{"an OAUTHBEARER extension", with("sasl.jaas.config", krb5JAAS(keytab+" extension_x=y")), "options extension_x are not known"},
		{"a server's login", with("sasl.jaas.config", krb5JAAS(keytab+" isInitiator=false")), "is for a server"},
		{"no service name", with("sasl.kerberos.service.name", "<unset>", "sasl.jaas.config", krb5JAAS(keytab)), "sasl.kerberos.service.name: required"},
		{"two service names", with("sasl.jaas.config", krb5JAAS(keytab+` serviceName="kafka-old"`)), `"kafka" conflicts with serviceName "kafka-old"`},
		{"service name from a provider", with("sasl.kerberos.service.name", "${env:SERVICE}", "sasl.jaas.config", krb5JAAS(keytab)), "config provider reference"},
		{"GSSAPI without SASL", map[string]string{"security.protocol": "SSL", "sasl.mechanism": "GSSAPI", "sasl.jaas.config": krb5JAAS(keytab)}, "does not use SASL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ConfigFromProperties(tc.props)
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an ErrInvalidConfig saying %q", err, tc.want)
			}
			if strings.Contains(err.Error(), propSecret) {
				t.Errorf("the error shows a secret: %v", err)
			}
		})
	}
}

func TestConfigValidateGSSAPI(t *testing.T) {
	ok := Config{BootstrapServers: []string{"broker1:9093"}, SecurityProtocol: SASLSSL, SASLMechanism: GSSAPI, Username: "tool@EXAMPLE.COM",
		Kerberos: KerberosConfig{ServiceName: "kafka", KeytabFile: "/k/tool.keytab"}}
	for _, tc := range []struct {
		name  string
		edit  func(*Config)
		field string // "" means valid
	}{
		{"keytab", func(*Config) {}, ""},
		{"password", func(c *Config) { c.Kerberos.KeytabFile, c.Password = "", "p" }, ""},
		{"a principal without a realm", func(c *Config) { c.Username = "tool" }, ""},
		{"no principal", func(c *Config) { c.Username = "" }, "Username"},
		{"a principal with a blank", func(c *Config) { c.Username = "tool @EXAMPLE.COM" }, "Username"},
		{"no service name", func(c *Config) { c.Kerberos.ServiceName = "" }, "Kerberos.ServiceName"},
		{"a service principal for a service name", func(c *Config) { c.Kerberos.ServiceName = "kafka/broker1@EXAMPLE.COM" }, "Kerberos.ServiceName"},
		{"keytab and password", func(c *Config) { c.Password = "p" }, "Kerberos.KeytabFile"},
		{"neither keytab nor password", func(c *Config) { c.Kerberos.KeytabFile = "" }, "Password"},
		{"OAuth beside", func(c *Config) { c.OAuth.UnsecuredSubject = "x" }, "OAuth"},
		{"Kerberos beside SCRAM", func(c *Config) { c.SASLMechanism, c.Password = ScramSHA512, "p" }, "Kerberos"},
		{"Kerberos without SASL", func(c *Config) { c.SecurityProtocol, c.SASLMechanism, c.Username = SSL, "", "" }, "SASLMechanism"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			err := c.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != tc.field {
				t.Fatalf("Validate() = %v, want a *ConfigError for %s", err, tc.field)
			}
		})
	}
}

// kerberosFiles writes a krb5.conf and a keytab with keys of principals
// (name@realm, derived from a password) to a temporary directory.
func kerberosFiles(t *testing.T, conf string, principals ...string) (confPath, keytabPath string, kt *keytab.Keytab) {
	t.Helper()
	dir := t.TempDir()
	confPath, keytabPath = filepath.Join(dir, "krb5.conf"), filepath.Join(dir, "client.keytab")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	kt = keytab.New()
	for _, p := range principals {
		name, realm, _ := strings.Cut(p, "@")
		for _, et := range []int32{etypeID.AES256_CTS_HMAC_SHA1_96, etypeID.AES128_CTS_HMAC_SHA1_96} {
			if err := kt.AddEntry(name, realm, "pw-"+p, time.Now(), 1, et); err != nil {
				t.Fatal(err)
			}
		}
	}
	b, err := kt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keytabPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return confPath, keytabPath, kt
}

const testKrb5Conf = `[libdefaults]
  default_realm = EXAMPLE.COM
  dns_lookup_kdc = false
  udp_preference_limit = 1
[realms]
  EXAMPLE.COM = {
    kdc = 127.0.0.1:8888
  }
  OTHER.ORG = {
    kdc = kdc.other.org
  }
`

// TestNewClientKerberosFiles: NewClient reads the krb5.conf and the
// keytab, and refuses what no login can succeed with, naming the file and
// what is wrong, never a key of the keytab.
func TestNewClientKerberosFiles(t *testing.T) {
	conf, kt, keys := kerberosFiles(t, testKrb5Conf, "tool@EXAMPLE.COM", "mm2/host1@EXAMPLE.COM")
	notKeytab := filepath.Join(t.TempDir(), "not.keytab")
	os.WriteFile(notKeytab, []byte("\x05\x02garbage"), 0o600)
	noDefault, _, _ := kerberosFiles(t, "[realms]\n EXAMPLE.COM = {\n  kdc = h:88\n }\n")
	include, _, _ := kerberosFiles(t, "includedir /etc/krb5.conf.d/\n[libdefaults]\n default_realm = CORP.LAN\n")
	fallback, _, _ := kerberosFiles(t, "[libdefaults]\n default_realm = EXAMPLE.COM\n dns_canonicalize_hostname = fallback\n")
	cfg := func(edit func(*Config)) Config {
		c := Config{BootstrapServers: []string{"broker1:9093"}, SecurityProtocol: SASLPlaintext, SASLMechanism: GSSAPI, Username: "tool",
			Kerberos: KerberosConfig{ServiceName: "kafka", KeytabFile: kt, ConfigFile: conf}}
		if edit != nil {
			edit(&c)
		}
		return c
	}
	for _, tc := range []struct {
		name      string
		cfg       Config
		env       string // KRB5_CONFIG
		field     string // "" means NewClient succeeds
		want      string
		name_, re string // the principal resolved
	}{
		{"the default realm", cfg(nil), "", "", "", "tool", "EXAMPLE.COM"},
		{"an instance and a realm", cfg(func(c *Config) { c.Username = "mm2/host1@EXAMPLE.COM" }), "", "", "", "mm2/host1", "EXAMPLE.COM"},
		{"a password and another realm", cfg(func(c *Config) { c.Username, c.Kerberos.KeytabFile, c.Password = "alice@OTHER.ORG", "", "pw" }), "", "", "", "alice", "OTHER.ORG"},
		{"KRB5_CONFIG", cfg(func(c *Config) { c.Kerberos.ConfigFile = "" }), conf, "", "", "tool", "EXAMPLE.COM"},
		{"KRB5_CONFIG with two files", cfg(func(c *Config) { c.Kerberos.ConfigFile = "" }), conf + ":/etc/krb5.conf", "Kerberos.ConfigFile", "names several files", "", ""},
		{"no krb5.conf", cfg(func(c *Config) { c.Kerberos.ConfigFile = "/nonexistent/krb5.conf" }), "", "Kerberos.ConfigFile", "cannot read the krb5.conf", "", ""},
		{"MIT's fallback", cfg(func(c *Config) { c.Kerberos.ConfigFile = fallback }), "", "Kerberos.ConfigFile", "invalid boolean value", "", ""},
		{"no default realm", cfg(func(c *Config) { c.Kerberos.ConfigFile = noDefault }), "", "Username", "sets no default_realm", "", ""},
		{"no KDC for the realm", cfg(func(c *Config) { c.Username = "tool@UNKNOWN.ORG" }), "", "Kerberos.ConfigFile", "names no KDC for realm UNKNOWN.ORG", "", ""},
		{"realms only in an included file", cfg(func(c *Config) { c.Kerberos.ConfigFile = include }), "", "Kerberos.ConfigFile", "does not follow its include and includedir lines", "", ""},
		{"no keytab", cfg(func(c *Config) { c.Kerberos.KeytabFile = "/nonexistent/tool.keytab" }), "", "Kerberos.KeytabFile", "cannot read the keytab", "", ""},
		{"not a keytab", cfg(func(c *Config) { c.Kerberos.KeytabFile = notKeytab }), "", "Kerberos.KeytabFile", "is not a keytab", "", ""},
		{"a keytab without the principal's key", cfg(func(c *Config) { c.Username = "mm2@EXAMPLE.COM" }), "", "Kerberos.KeytabFile",
			"holds no key of mm2@EXAMPLE.COM (it holds keys of: mm2/host1@EXAMPLE.COM, tool@EXAMPLE.COM)", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KRB5_CONFIG", tc.env)
			r, err := NewClient(tc.cfg)
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				if r.krb.name != tc.name_ || r.krb.realm != tc.re {
					t.Errorf("principal %s@%s, want %s@%s", r.krb.name, r.krb.realm, tc.name_, tc.re)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != tc.field || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewClient() = %v, want a *ConfigError for %s saying %q", err, tc.field, tc.want)
			}
			for _, e := range keys.Entries {
				for _, form := range []string{hex.EncodeToString(e.Key.KeyValue), base64.StdEncoding.EncodeToString(e.Key.KeyValue), string(e.Key.KeyValue)} {
					if strings.Contains(err.Error(), form) {
						t.Errorf("the error shows a key of the keytab: %v", err)
					}
				}
			}
		})
	}
}

// TestGSSAPISaramaConfig: the sarama settings of a call, with a keytab and
// with a password; sarama accepts both, and a printed Config shows the
// keytab's path but never the password.
func TestGSSAPISaramaConfig(t *testing.T) {
	conf, kt, _ := kerberosFiles(t, testKrb5Conf, "tool@EXAMPLE.COM")
	for _, tc := range []struct {
		name string
		cfg  Config
		want sarama.GSSAPIConfig
	}{
		{"keytab", Config{BootstrapServers: []string{"broker1:9093"}, SecurityProtocol: SASLSSL, SASLMechanism: GSSAPI, Username: "tool",
			Kerberos: KerberosConfig{ServiceName: "kafka", KeytabFile: kt, ConfigFile: conf}},
			sarama.GSSAPIConfig{AuthType: sarama.KRB5_KEYTAB_AUTH, KeyTabPath: kt, KerberosConfigPath: conf, ServiceName: "kafka", Username: "tool", Realm: "EXAMPLE.COM"}},
		{"password", Config{BootstrapServers: []string{"broker1:9093"}, SecurityProtocol: SASLPlaintext, SASLMechanism: GSSAPI, Username: "alice/admin@OTHER.ORG",
			Password: redact.Secret(propSecret), Kerberos: KerberosConfig{ServiceName: "kafka", ConfigFile: conf, DisablePAFXFAST: true}},
			sarama.GSSAPIConfig{AuthType: sarama.KRB5_USER_AUTH, Password: propSecret, KerberosConfigPath: conf, ServiceName: "kafka", Username: "alice/admin",
				Realm: "OTHER.ORG", DisablePAFXFAST: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewClient(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := r.saramaConfig(&callDialer{ctx: context.Background(), meter: r.meter})
			if err != nil {
				t.Fatal(err)
			}
			if sc.Net.SASL.Mechanism != sarama.SASLTypeGSSAPI || sc.Net.SASL.User != "" || sc.Net.SASL.Password != "" {
				t.Errorf("mechanism %s, user %q, password set %v", sc.Net.SASL.Mechanism, sc.Net.SASL.User, sc.Net.SASL.Password != "")
			}
			got := sc.Net.SASL.GSSAPI
			if spn := got.BuildSpn("kafka", "Broker1.Example.com"); spn != "kafka/broker1.example.com" {
				t.Errorf("BuildSpn = %q", spn)
			}
			got.BuildSpn = nil
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			for _, s := range []string{fmt.Sprint(tc.cfg), fmt.Sprintf("%#v", tc.cfg)} {
				if strings.Contains(s, propSecret) {
					t.Errorf("the config prints its password: %s", s)
				}
				if tc.cfg.Kerberos.KeytabFile != "" && !strings.Contains(s, tc.cfg.Kerberos.KeytabFile) {
					t.Errorf("the config does not show its keytab's path: %s", s)
				}
			}
		})
	}
}

func TestSPNHost(t *testing.T) {
	lookup := func(names []string, err error) func(context.Context, string) ([]string, error) {
		return func(context.Context, string) ([]string, error) { return names, err }
	}
	for _, tc := range []struct {
		host   string
		lookup func(context.Context, string) ([]string, error)
		want   string
	}{
		{"broker1.example.com", lookup(nil, errors.New("never asked")), "broker1.example.com"},
		{"Broker1.Example.COM", nil, "broker1.example.com"},
		{"localhost", nil, "localhost"},
		{"127.0.0.1", lookup([]string{"localhost.", "vm."}, nil), "localhost"},
		{"10.1.2.3", lookup([]string{"Broker7.Example.com."}, nil), "broker7.example.com"},
		{"10.1.2.3", lookup(nil, errors.New("no PTR record")), "10.1.2.3"},
		{"10.1.2.3", lookup([]string{"."}, nil), "10.1.2.3"},
		{"::1", lookup([]string{"ip6-localhost"}, nil), "ip6-localhost"},
	} {
		if got := spnHost(context.Background(), tc.host, tc.lookup); got != tc.want {
			t.Errorf("spnHost(%q) = %q, want %q", tc.host, got, tc.want)
		}
	}
}

// TestKerberosError: a KDC that answered with an error, or a login that
// failed on this side, is rejected at once; a KDC that did not answer is
// worth a retry; anything else is not a Kerberos error.
func TestKerberosError(t *testing.T) {
	kdc := func(code string) error {
		return krberror.Errorf(errors.New("KRB Error: "+code), krberror.KDCError, "AS Exchange Error: kerberos error response from KDC")
	}
	for _, tc := range []struct {
		name      string
		err       error
		rejected  bool
		retriable bool
		want      string
	}{
		{"unknown principal", kdc("(6) KDC_ERR_C_PRINCIPAL_UNKNOWN Client not found in Kerberos database"), true, false, `the KDC rejected the Kerberos login of principal "tool@EXAMPLE.COM"`},
		{"stale keytab", kdc("(24) KDC_ERR_PREAUTH_FAILED Pre-authentication information was invalid"), true, false, "rejected"},
		{"unknown service", krberror.Errorf(errors.New("KRB Error: (7) KDC_ERR_S_PRINCIPAL_UNKNOWN"), krberror.KDCError, "TGS Exchange Error"), true, false,
			"the KDC knows no principal kafka/<broker host> for this broker"},
		{"wrapped", fmt.Errorf("open: %w", kdc("(18) KDC_ERR_CLIENT_REVOKED")), true, false, "rejected"},
		{"no key for the KDC's etype", krberror.NewErrorf(krberror.EncryptingError, "error getting key from credentials: matching key not found in keytab"), true, false,
			"the Kerberos login of principal \"tool@EXAMPLE.COM\" failed"},
		{"no KDC answers", krberror.NewErrorf(krberror.NetworkingError, "AS Exchange Error: failed sending AS_REQ to KDC: dial tcp 127.0.0.1:88: connection refused"), false, true, "no KDC answered"},
		{"not Kerberos", errors.New("EOF"), false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := kerberosError("broker1:9093", "tool@EXAMPLE.COM", "kafka", tc.err)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			var se *SecurityError
			if got := errors.As(err, &se) && errors.Is(err, ErrAuthentication); got != tc.rejected {
				t.Errorf("%v: a SecurityError matching ErrAuthentication: %v, want %v", err, got, tc.rejected)
			}
			if got := retriable(err); got != tc.retriable {
				t.Errorf("retriable(%v) = %v, want %v", err, got, tc.retriable)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "broker1:9093") {
				t.Errorf("%v: want the broker and %q", err, tc.want)
			}
		})
	}
	// The broker's own rejection of a ticket.
	se := saslError("broker1:9093", "tool@EXAMPLE.COM", "GSSAPI", sarama.ErrSASLAuthenticationFailed)
	if !errors.Is(se, ErrAuthentication) || !strings.Contains(se.Error(), "rejected the Kerberos ticket") {
		t.Errorf("saslError: %v", se)
	}
}
