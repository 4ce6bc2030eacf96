package connect

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Krb5LoginModule is the JDK's Kerberos login module, which the
// sasl.jaas.config of Kafka's GSSAPI clients names.
const Krb5LoginModule = "com.sun.security.auth.module.Krb5LoginModule"

// GSSAPIClient returns client settings for [MirrorSource] (SourceClient or
// TargetClient) that log MirrorMaker 2's clients of one cluster in with
// Kerberos from a keytab: security.protocol (SASL_SSL or SASL_PLAINTEXT),
// sasl.mechanism GSSAPI, sasl.kerberos.service.name (the first part of the
// brokers' principal, usually "kafka") and a Krb5LoginModule entry with
// useKeyTab, storeKey, keyTab and principal (name[/instance]@REALM), as
// Kafka's documentation gives it. Add ssl.* settings for SASL_SSL.
//
// The keytab and the realm's krb5.conf are files of every worker: the
// worker's JVM reads krb5.conf from -Djava.security.krb5.conf (KAFKA_OPTS
// in the worker image), else /etc/krb5.conf. The keytab's path is no
// secret and the settings hold no key; the configuration stored in Connect
// names the file only. It returns an error for a value Kafka's JAAS parser
// would not read back as given (a quote, a backslash, a control
// character) and for a missing one.
func GSSAPIClient(securityProtocol, serviceName, principal, keytabFile string) (map[string]string, error) {
	if securityProtocol != "SASL_SSL" && securityProtocol != "SASL_PLAINTEXT" {
		return nil, fmt.Errorf("connect: gssapi client: security protocol %q: want SASL_SSL or SASL_PLAINTEXT", securityProtocol)
	}
	for _, v := range []struct{ name, value string }{{"service name", serviceName}, {"principal", principal}, {"keytab file", keytabFile}} {
		if v.value == "" || strings.ContainsFunc(v.value, func(r rune) bool { return r == '"' || r == '\\' || r < ' ' || r == 0x7f }) {
			return nil, fmt.Errorf("connect: gssapi client: %s %q is empty or holds a quote, a backslash or a control character", v.name, v.value)
		}
	}
	if strings.ContainsAny(serviceName, "/@ ") {
		return nil, fmt.Errorf("connect: gssapi client: service name %q: the first part of the brokers' principal holds no /, @ or blank", serviceName)
	}
	return map[string]string{
		"security.protocol":          securityProtocol,
		"sasl.mechanism":             "GSSAPI",
		"sasl.kerberos.service.name": serviceName,
		"sasl.jaas.config":           fmt.Sprintf(`%s required useKeyTab=true storeKey=true keyTab="%s" principal="%s";`, Krb5LoginModule, keytabFile, principal),
	}, nil
}

// jaasOptionRE matches one option of a JAAS entry, bare or double-quoted
// (with backslash escapes), as Kafka's JaasConfig reads it.
var (
	jaasOptionRE = regexp.MustCompile(`(?:^|[\s;])([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;"=]+))`)
	jaasEscapeRE = regexp.MustCompile(`\\(.)`)
)

// jaasEntry is what lintKerberos reads of a literal sasl.jaas.config: its
// login module and options.
type jaasEntry struct {
	module  string
	options map[string]string
}

// parseJAASEntry reads the login module and the options of one JAAS entry,
// "<module> <flag> key=value ... ;". It is lenient: a lint reads what it
// can, and Connect's validate and the clients refuse the rest.
func parseJAASEntry(s string) (jaasEntry, error) {
	fields := strings.Fields(s)
	if len(fields) < 2 {
		return jaasEntry{}, errors.New("not a JAAS entry")
	}
	e := jaasEntry{module: fields[0], options: map[string]string{}}
	for _, m := range jaasOptionRE.FindAllStringSubmatch(s, -1) {
		v := m[3]
		if m[3] == "" {
			v = jaasEscapeRE.ReplaceAllString(m[2], "$1")
		}
		e.options[m[1]] = v
	}
	return e, nil
}

// isKerberosJAAS reports whether v is a literal Krb5LoginModule entry
// without a password-like option: it names a keytab, a ticket cache and a
// principal, and holds no secret.
func isKerberosJAAS(v string) bool {
	e, err := parseJAASEntry(v)
	if err != nil || e.module != Krb5LoginModule {
		return false
	}
	for k := range e.options {
		if l := strings.ToLower(k); strings.Contains(l, "password") || strings.Contains(l, "secret") {
			return false
		}
	}
	return true
}

// lintKerberos checks the GSSAPI settings of MirrorSourceConnector's
// clients of each cluster (source.cluster.*, target.cluster.*), where
// security.protocol is SASL_SSL or SASL_PLAINTEXT and sasl.mechanism is
// GSSAPI or, as in Kafka, not set:
//
//   - an error when neither sasl.kerberos.service.name nor the JAAS
//     entry's serviceName is given, or the two differ: Kafka's clients
//     refuse both (KerberosLogin.getServiceName), and MM2's tasks fail;
//   - a warning when sasl.jaas.config is not set (the clients would read
//     the worker JVM's JAAS file, which the worker image does not write)
//     or logs in from a ticket cache (nothing renews one on a worker);
//   - a warning naming the keytab: every worker must hold it and run with
//     the realm's krb5.conf, which no check here can see.
func lintKerberos(config map[string]string, add func(sev Severity, key, msg, advice string)) {
	for _, side := range []string{"source.cluster.", "target.cluster."} {
		protocol := strings.ToUpper(strings.TrimSpace(config[side+"security.protocol"]))
		mechanism := strings.ToUpper(strings.TrimSpace(config[side+"sasl.mechanism"]))
		if (protocol != "SASL_SSL" && protocol != "SASL_PLAINTEXT") || (mechanism != "" && mechanism != "GSSAPI") {
			continue
		}
		jaas, hasJAAS := config[side+"sasl.jaas.config"]
		service := strings.TrimSpace(config[side+"sasl.kerberos.service.name"])
		if !hasJAAS {
			add(SeverityWarning, side+"sasl.jaas.config", "not set with GSSAPI: the clients look for a KafkaClient entry in the worker JVM's JAAS file (java.security.auth.login.config), which the worker image does not write",
				"set a Krb5LoginModule entry: "+Krb5LoginModule+" required useKeyTab=true storeKey=true keyTab=\"...\" principal=\"...\";")
		}
		if isProviderRef(jaas) {
			if service == "" {
				add(SeverityWarning, side+"sasl.kerberos.service.name", "not set with GSSAPI, and the JAAS entry is a config provider reference: unless it names a serviceName, MM2's clients fail (No serviceName defined in either JAAS or Kafka config)",
					"set it to the first part of the brokers' principal, usually kafka")
			}
			continue
		}
		e, err := parseJAASEntry(jaas)
		switch {
		case hasJAAS && err != nil:
			add(SeverityError, side+"sasl.jaas.config", "is not a JAAS entry (<login module> required key=value ... ;)", "log in with "+Krb5LoginModule)
			continue
		case hasJAAS && e.module != Krb5LoginModule:
			add(SeverityError, side+"sasl.jaas.config", fmt.Sprintf("names %s, not %s, with GSSAPI", e.module, Krb5LoginModule), "log in with "+Krb5LoginModule)
			continue
		}
		switch inJAAS := e.options["serviceName"]; {
		case service == "" && inJAAS == "":
			add(SeverityError, side+"sasl.kerberos.service.name", "not set with GSSAPI, and the JAAS entry names no serviceName: MM2's clients fail (No serviceName defined in either JAAS or Kafka config)",
				"set it to the first part of the brokers' principal, usually kafka")
		case service != "" && inJAAS != "" && service != inJAAS:
			add(SeverityError, side+"sasl.kerberos.service.name", fmt.Sprintf("is %q but the JAAS entry's serviceName is %q: Kafka's clients refuse the two", service, inJAAS),
				"give the service name once")
		}
		switch {
		case strings.EqualFold(e.options["useTicketCache"], "true") && !strings.EqualFold(e.options["useKeyTab"], "true"):
			add(SeverityWarning, side+"sasl.jaas.config", "logs in from a ticket cache: on a worker nothing renews it, and the clients fail when its tickets expire",
				"log in from a keytab: useKeyTab=true keyTab=... principal=...")
		case strings.EqualFold(e.options["useKeyTab"], "true") && e.options["keyTab"] != "":
			add(SeverityWarning, side+"sasl.jaas.config", fmt.Sprintf("logs in as %s from keytab %s: every worker must hold that file and run with the realm's krb5.conf, which this check cannot see",
				orDefault(e.options["principal"], "(no principal)"), e.options["keyTab"]),
				"mount the keytab on every worker and give the JVM -Djava.security.krb5.conf=... (KAFKA_OPTS) or /etc/krb5.conf")
		}
	}
}

// isProviderRef reports whether v is exactly one config provider
// reference, ${provider:[path:]key}.
func isProviderRef(v string) bool {
	if !strings.HasPrefix(v, "${") || !strings.HasSuffix(v, "}") {
		return false
	}
	inner := v[2 : len(v)-1]
	return strings.Contains(inner, ":") && !strings.ContainsAny(inner, "${}")
}
