package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/IBM/sarama"
	krb5config "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/krberror"

	"github.com/mm2cutover/mm2cutover/clientconf"
	"github.com/mm2cutover/mm2cutover/errkind"
)

// KerberosConfig holds the settings of SASL GSSAPI (SASLMechanism
// [GSSAPI]) besides the principal (Config.Username) and its password
// (Config.Password), as a Kafka client takes them from
// sasl.kerberos.service.name and the Krb5LoginModule options of
// sasl.jaas.config ([ConfigFromProperties]). A keytab's path is no
// secret and shows when a Config is printed; the keytab's keys never do.
type KerberosConfig struct {
	// ServiceName is the first part of the brokers' principal
	// (sasl.kerberos.service.name, or the JAAS option serviceName):
	// the client asks for a ticket to ServiceName/<host>@<realm>, host being
	// the broker's host as its address names it — an IP address replaced
	// by the name its reverse lookup gives, as Kafka's Java client does —
	// in lower case. Required; Kafka has no default (usually "kafka").
	ServiceName string
	// KeytabFile holds the keys of the principal (the Krb5LoginModule's
	// keyTab with useKeyTab=true). Empty means Config.Password
	// authenticates the principal instead.
	KeytabFile string
	// ConfigFile is the krb5.conf naming the realms' KDCs and the default
	// realm. Empty means the file $KRB5_CONFIG names (one file; MIT's
	// libraries read the same variable), else /etc/krb5.conf. Java reads
	// the file of -Djava.security.krb5.conf instead. The Go client follows
	// no include or includedir line, and refuses values it does not know
	// (dns_canonicalize_hostname = fallback, a value MIT added in 1.18).
	ConfigFile string
	// DisablePAFXFAST leaves out of the login the PA-REQ-ENC-PA-REP
	// pre-authentication data the Go client sends by default: some KDCs,
	// Active Directory among them, refuse it.
	DisablePAFXFAST bool
}

// IsZero reports whether k sets nothing.
func (k KerberosConfig) IsZero() bool { return k == KerberosConfig{} }

// String describes the settings; they hold no secret.
func (k KerberosConfig) String() string {
	return fmt.Sprintf("{ServiceName:%q KeytabFile:%q ConfigFile:%q DisablePAFXFAST:%v}", k.ServiceName, k.KeytabFile, k.ConfigFile, k.DisablePAFXFAST)
}

// defaultKrb5Conf is the krb5.conf of a client that names none.
const defaultKrb5Conf = "/etc/krb5.conf"

// includes matches the include and includedir lines of a krb5.conf.
var includes = regexp.MustCompile(`(?m)^\s*include(dir)?\s`)

// splitPrincipal splits a Kerberos principal name[/instance][@REALM] into
// its name (with the instance) and its realm ("" when it names none).
func splitPrincipal(p string) (name, realm string, err error) {
	name, realm, hasRealm := strings.Cut(p, "@")
	switch {
	case name == "":
		return "", "", errors.New("empty name")
	case hasRealm && realm == "":
		return "", "", errors.New("empty realm after @")
	case strings.Contains(realm, "@"):
		return "", "", errors.New("more than one @ (enterprise principals are not supported)")
	case strings.ContainsFunc(p, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return "", "", errors.New("a blank or control character")
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" {
			return "", "", errors.New("an empty component between slashes")
		}
	}
	return name, realm, nil
}

// validateKerberos checks the GSSAPI settings without reading a file.
func (c Config) validateKerberos() error {
	if c.Username == "" {
		return &ConfigError{Field: "Username", Reason: "required with GSSAPI: the client's Kerberos principal, name[/instance][@REALM]"}
	}
	if _, _, err := splitPrincipal(c.Username); err != nil {
		return &ConfigError{Field: "Username", Reason: fmt.Sprintf("Kerberos principal %q: %v", c.Username, err)}
	}
	k := c.Kerberos
	switch {
	case k.ServiceName == "":
		return &ConfigError{Field: "Kerberos.ServiceName", Reason: "required with GSSAPI: the first part of the brokers' principal, sasl.kerberos.service.name (usually kafka)"}
	case strings.ContainsAny(k.ServiceName, "/@ \t\r\n"):
		return &ConfigError{Field: "Kerberos.ServiceName", Reason: fmt.Sprintf("%q: a service name holds no /, @ or blank (the host and realm are added)", k.ServiceName)}
	case k.KeytabFile != "" && c.Password != "":
		return &ConfigError{Field: "Kerberos.KeytabFile", Reason: "given with a Password: a keytab or a password proves the principal, not both"}
	case k.KeytabFile == "" && c.Password == "":
		return &ConfigError{Field: "Password", Reason: "GSSAPI needs the principal's Password or a Kerberos.KeytabFile"}
	}
	return nil
}

// kerberosLogin is what NewClient read for GSSAPI: the principal split,
// its realm resolved, the files checked.
type kerberosLogin struct {
	name, realm string // the principal
	configFile  string
}

// loadKerberos reads krb5.conf and the keytab once, so that a setting no
// login can succeed with is a *ConfigError of NewClient: a krb5.conf that
// does not parse or names no KDC for the realm, a principal without a
// realm and no default_realm, a keytab that holds no key for the
// principal. sarama reads both files again on every connection. getenv
// is os.Getenv, or a test's.
func (c Config) loadKerberos(getenv func(string) string) (*kerberosLogin, error) {
	k := c.Kerberos
	path := k.ConfigFile
	if path == "" {
		path = getenv("KRB5_CONFIG")
		if strings.Contains(path, ":") {
			return nil, &ConfigError{Field: "Kerberos.ConfigFile", Reason: fmt.Sprintf("KRB5_CONFIG=%s names several files and the Go Kerberos client reads one: set Kerberos.ConfigFile (or KRB5_CONFIG) to one file", path)}
		}
		if path == "" {
			path = defaultKrb5Conf
		}
	}
	b, err := clientconf.ReadFile(path)
	if err != nil {
		return nil, &ConfigError{Field: "Kerberos.ConfigFile", Reason: "cannot read the krb5.conf", Err: err}
	}
	kc, err := krb5config.NewFromString(string(b))
	if err != nil {
		// UnsupportedDirective (v4 settings) too: sarama refuses the file then.
		return nil, &ConfigError{Field: "Kerberos.ConfigFile", Reason: path + " is not a krb5.conf the Go Kerberos client reads", Err: err}
	}
	name, realm, _ := splitPrincipal(c.Username) // checked by Validate
	if realm == "" {
		realm = kc.LibDefaults.DefaultRealm
		if realm == "" {
			return nil, &ConfigError{Field: "Username", Reason: fmt.Sprintf("Kerberos principal %q names no realm and %s sets no default_realm: give name@REALM", c.Username, path)}
		}
	}
	if !kc.LibDefaults.DNSLookupKDC && !slices.ContainsFunc(kc.Realms, func(r krb5config.Realm) bool { return r.Realm == realm && len(r.KDC) > 0 }) {
		reason := fmt.Sprintf("%s names no KDC for realm %s (a kdc line in its [realms] section) and does not look KDCs up in DNS (dns_lookup_kdc)", path, realm)
		if includes.Match(b) {
			reason += "; the Go Kerberos client does not follow its include and includedir lines"
		}
		return nil, &ConfigError{Field: "Kerberos.ConfigFile", Reason: reason}
	}
	if k.KeytabFile != "" {
		if err := checkKeytab(k.KeytabFile, name, realm); err != nil {
			return nil, err
		}
	}
	return &kerberosLogin{name: name, realm: realm, configFile: path}, nil
}

// checkKeytab reports a *ConfigError unless the keytab at path holds a key
// of name@realm. Errors name the principals the keytab holds, never a key.
func checkKeytab(path, name, realm string) error {
	b, err := clientconf.ReadFile(path)
	if err != nil {
		return &ConfigError{Field: "Kerberos.KeytabFile", Reason: "cannot read the keytab", Err: err}
	}
	kt := keytab.New()
	if err := kt.Unmarshal(b); err != nil {
		// gokrb5's parse errors describe the format, never the bytes.
		return &ConfigError{Field: "Kerberos.KeytabFile", Reason: path + " is not a keytab", Err: err}
	}
	var held []string
	for _, e := range kt.Entries {
		p := strings.Join(e.Principal.Components, "/") + "@" + e.Principal.Realm
		if p == name+"@"+realm {
			return nil
		}
		if !slices.Contains(held, p) {
			held = append(held, p)
		}
	}
	slices.Sort(held)
	return &ConfigError{Field: "Kerberos.KeytabFile", Reason: fmt.Sprintf("%s holds no key of %s@%s (it holds keys of: %s)", path, name, realm, strings.Join(held, ", "))}
}

// gssapi fills sarama's GSSAPI settings of one call. The service
// principal's host is found as Kafka's Java client finds it (spnHost),
// within the call's context.
func (l *kerberosLogin) gssapi(ctx context.Context, c Config, g *sarama.GSSAPIConfig) {
	*g = sarama.GSSAPIConfig{
		AuthType:           sarama.KRB5_USER_AUTH,
		Password:           string(c.Password),
		KerberosConfigPath: l.configFile,
		ServiceName:        c.Kerberos.ServiceName,
		Username:           l.name,
		Realm:              l.realm,
		DisablePAFXFAST:    c.Kerberos.DisablePAFXFAST,
		BuildSpn: func(service, host string) string {
			return service + "/" + spnHost(ctx, host, net.DefaultResolver.LookupAddr)
		},
	}
	if c.Kerberos.KeytabFile != "" {
		g.AuthType, g.KeyTabPath, g.Password = sarama.KRB5_KEYTAB_AUTH, c.Kerberos.KeytabFile, ""
	}
}

// spnHost returns the host part of the service principal of a broker
// whose address names host, as Kafka's Java client builds it: the host
// as the socket's InetAddress.getHostName gives it (SaslChannelBuilder) — a
// name as it is, an IP address replaced by the first name its reverse
// lookup finds, or kept when there is none — then in lower case, as Java's
// Kerberos (PrincipalName, a host-based service) and MIT's do. Java may
// also replace a short name by the longer one DNS gives
// (dns_canonicalize_hostname, true by default there); this does not: give
// the brokers' full host names.
func spnHost(ctx context.Context, host string, lookupAddr func(context.Context, string) ([]string, error)) string {
	if ip, err := netip.ParseAddr(host); err == nil {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if names, err := lookupAddr(ctx, ip.String()); err == nil && len(names) > 0 && strings.TrimSuffix(names[0], ".") != "" {
			host = strings.TrimSuffix(names[0], ".")
		}
	}
	return strings.ToLower(host)
}

// errKDCUnreachable marks a Kerberos login that found no KDC answering:
// as transient as a broker that does not answer.
var errKDCUnreachable = errkind.New(errkind.Retry, "kafkaadmin: no KDC answered")

// kerberosError classifies a failed Kerberos login at the KDC, for the
// broker at addr, or returns nil when err is not one. Only the type of
// gokrb5's error and its root cause decide: a KDC that answered with an
// error (an unknown principal, a key that does not match: "rejected") and
// a login that failed on this side (a keytab without the key the KDC
// asks for) are a *SecurityError, not retried; a KDC that did not answer
// is worth a retry. A KDC that knows no principal for the broker's service
// gets advice about the service name and host.
func kerberosError(addr, principal, service string, err error) error {
	var ke krberror.Krberror
	if !errors.As(err, &ke) {
		return nil
	}
	switch ke.RootCause {
	case krberror.NetworkingError:
		return fmt.Errorf("%w (broker %s): %w", errKDCUnreachable, addr, err)
	case krberror.KDCError:
		reason := fmt.Sprintf("the KDC rejected the Kerberos login of principal %q", principal)
		if strings.Contains(ke.Error(), "KDC_ERR_S_PRINCIPAL_UNKNOWN") {
			reason = fmt.Sprintf("the KDC knows no principal %s/<broker host> for this broker (check the service name, sasl.kerberos.service.name, and that the broker's address names the host of its principal)", service)
		}
		return &SecurityError{Addr: addr, Kind: ErrAuthentication, Reason: reason, Err: err}
	}
	return &SecurityError{Addr: addr, Kind: ErrAuthentication, Err: err,
		Reason: fmt.Sprintf("the Kerberos login of principal %q failed (a keytab or password that does not match the principal's keys in the KDC?)", principal)}
}
