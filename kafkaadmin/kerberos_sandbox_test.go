package kafkaadmin

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/redact"
)

// kerberosSource is the shared secure sandbox's source cluster on its
// Kerberos listeners (SASL_SSL, GSSAPI, localhost:<port>), and a Config
// that reaches them as principal, without its keytab or password.
func kerberosSource(t *testing.T, principal string) (*sandbox.Sandbox, Config) {
	t.Helper()
	sb := sandboxtest.SharedKerberosKafka(t)
	return sb, Config{
		BootstrapServers: sb.Source().KerberosAddrs(), SecurityProtocol: SASLSSL, SASLMechanism: GSSAPI, Username: principal,
		Kerberos: KerberosConfig{ServiceName: sandbox.KerberosServiceName, ConfigFile: sb.Krb5Conf()},
		TLS:      TLSConfig{CAFile: sb.CAFile()}, RetryTimeout: 5 * time.Second,
	}
}

// TestKerberosLogin: a client logs in at the sandbox's MIT KDC from a
// keytab and with a password, and reads a topic led by every source
// broker: one Kerberos login and one service ticket per broker
// connection, the service principal kafka/localhost built from the
// advertised address.
func TestKerberosLogin(t *testing.T) {
	ctx := testCtx(t)
	sb := sandboxtest.SharedKerberosKafka(t)
	topic := fmt.Sprintf("krb-login-%d", time.Now().UnixNano()%1e6)
	if err := sb.Source().CreateTopic(ctx, topic, 3); err != nil {
		t.Fatal(err)
	}
	kt, err := sb.KerberosKeytab(ctx, "krb-login-tool")
	if err != nil {
		t.Fatal(err)
	}
	pw, err := sb.KerberosPassword(ctx, fmt.Sprintf("krb-login-user-%d", time.Now().UnixNano()%1e6))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"keytab", func(c *Config) { c.Username, c.Kerberos.KeytabFile = kt.Principal, kt.KeytabFile }},
		{"keytab, the realm from krb5.conf", func(c *Config) {
			c.Username, c.Kerberos.KeytabFile = strings.TrimSuffix(kt.Principal, "@"+sandbox.KerberosRealm), kt.KeytabFile
		}},
		{"password", func(c *Config) { c.Username, c.Password = pw.Name, redact.Secret(pw.Password) }},
		{"KRB5_CONFIG", func(c *Config) {
			t.Setenv("KRB5_CONFIG", sb.Krb5Conf())
			c.Username, c.Kerberos.KeytabFile, c.Kerberos.ConfigFile = kt.Principal, kt.KeytabFile, ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := kerberosSource(t, "")
			tc.edit(&c)
			r, err := NewClient(c)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			id, err := r.ClusterID(ctx)
			if err != nil || id != sb.Source().ClusterID() {
				t.Fatalf("ClusterID() = %q, %v; want %q", id, err, sb.Source().ClusterID())
			}
			tps := []TopicPartition{tp(topic, 0), tp(topic, 1), tp(topic, 2)}
			if _, err := r.LogBounds(ctx, tps); err != nil {
				t.Fatal(err)
			}
			t.Logf("cluster id and the bounds of 3 partitions on %d brokers in %v, %d requests", len(c.BootstrapServers), time.Since(start).Round(time.Millisecond), r.Requests())
			a, err := r.Access(ctx, []string{topic}, nil)
			if err != nil {
				t.Fatal(err)
			}
			name, _, _ := strings.Cut(c.Username, "@")
			if a.Principal != name || a.KerberosPrincipal != name+"@"+sandbox.KerberosRealm {
				t.Errorf("Access names %q, Kerberos %q; want %q, %q", a.Principal, a.KerberosPrincipal, name, name+"@"+sandbox.KerberosRealm)
			}
		})
	}

	// A bootstrap address given as 127.0.0.1: its service principal's host
	// is the name the reverse lookup gives, as with Kafka's Java client.
	t.Run("an IP address bootstraps with its reverse name", func(t *testing.T) {
		_, c := kerberosSource(t, kt.Principal)
		c.Kerberos.KeytabFile = kt.KeytabFile
		_, port, _ := net.SplitHostPort(c.BootstrapServers[0])
		c.BootstrapServers = []string{net.JoinHostPort("127.0.0.1", port)}
		names, _ := net.DefaultResolver.LookupAddr(ctx, "127.0.0.1")
		r, err := NewClient(c)
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.ClusterID(ctx)
		switch host := spnHost(ctx, "127.0.0.1", net.DefaultResolver.LookupAddr); {
		case host == "localhost" && err != nil:
			t.Fatalf("127.0.0.1 is %v here, so the principal is kafka/localhost: %v", names, err)
		case host != "localhost" && (err == nil || !strings.Contains(err.Error(), "the KDC knows no principal kafka/<broker host>")):
			t.Fatalf("127.0.0.1 is %v here, for which the KDC has no principal: %v", names, err)
		}
		t.Logf("127.0.0.1 reverse: %v", names)
	})
}

// TestKerberosRejected: each login the KDC refuses fails at once — a
// *SecurityError matching ErrAuthentication, not retried — naming the
// principal or the service and never a password; a KDC that does not
// answer is retried until RetryTimeout, as an unreachable broker is.
func TestKerberosRejected(t *testing.T) {
	ctx := testCtx(t)
	sb := sandboxtest.SharedKerberosKafka(t)
	suffix := fmt.Sprintf("-%d", time.Now().UnixNano()%1e6)
	deleted, err := sb.KerberosKeytab(ctx, "krb-deleted"+suffix)
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.KerberosDelete(ctx, "krb-deleted"+suffix); err != nil {
		t.Fatal(err)
	}
	stale, err := sb.KerberosKeytab(ctx, "krb-stale"+suffix)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := sb.KerberosKeytab(ctx, "krb-stale"+suffix) // new keys: the first keytab is stale
	if err != nil {
		t.Fatal(err)
	}
	user, err := sb.KerberosPassword(ctx, "krb-user"+suffix)
	if err != nil {
		t.Fatal(err)
	}
	const wrong = "wrong-kerberos-password-marker"
	// A krb5.conf whose KDC is a port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	conf, err := os.ReadFile(sb.Krb5Conf())
	if err != nil {
		t.Fatal(err)
	}
	noKDC := filepath.Join(t.TempDir(), "krb5.conf")
	os.WriteFile(noKDC, []byte(strings.ReplaceAll(string(conf), sb.KDCAddr(), closed)), 0o600)

	for _, tc := range []struct {
		name     string
		edit     func(*Config)
		rejected bool
		want     string
		detail   string // the KDC's error, or the retries
	}{
		{"a deleted principal", func(c *Config) { c.Username, c.Kerberos.KeytabFile = deleted.Principal, deleted.KeytabFile }, true,
			"the KDC rejected the Kerberos login of principal \"" + deleted.Principal + "\"", "KDC_ERR_C_PRINCIPAL_UNKNOWN"},
		{"a stale keytab", func(c *Config) { c.Username, c.Kerberos.KeytabFile = stale.Principal, stale.KeytabFile }, true,
			"the KDC rejected the Kerberos login of principal \"" + stale.Principal + "\"", "KDC_ERR_PREAUTH_FAILED"},
		{"a wrong password", func(c *Config) { c.Username, c.Password = user.Name, wrong }, true,
			"the KDC rejected the Kerberos login of principal \"" + user.Name + "\"", "KDC_ERR_PREAUTH_FAILED"},
		{"a service name the KDC does not know", func(c *Config) {
			c.Username, c.Kerberos.KeytabFile, c.Kerberos.ServiceName = fresh.Principal, fresh.KeytabFile, "kafka-other"
		}, true, "the KDC knows no principal kafka-other/<broker host>", "KDC_ERR_S_PRINCIPAL_UNKNOWN"},
		{"no KDC answers", func(c *Config) {
			c.Username, c.Kerberos.KeytabFile, c.Kerberos.ConfigFile = fresh.Principal, fresh.KeytabFile, noKDC
		}, false, "no KDC answered", "gave up after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := kerberosSource(t, "")
			tc.edit(&c)
			r, err := NewClient(c)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = r.ClusterID(ctx)
			took := time.Since(start)
			t.Logf("after %v: %v", took.Round(time.Millisecond), err)
			var se *SecurityError
			if tc.rejected != (errors.As(err, &se) && errors.Is(err, ErrAuthentication)) {
				t.Fatalf("ClusterID() = %v; a *SecurityError matching ErrAuthentication: want %v", err, tc.rejected)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.detail) {
				t.Errorf("error %v does not say %q and %q", err, tc.want, tc.detail)
			}
			if tc.rejected && strings.Contains(err.Error(), "gave up after") {
				t.Errorf("a rejected login was retried: %v", err)
			}
			if strings.Contains(err.Error(), wrong) || strings.Contains(err.Error(), user.Password) {
				t.Errorf("the error shows a password: %v", err)
			}
		})
	}
}
