package kafkaadmin

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/mm2cutover/mm2cutover/clientconf"
	"github.com/mm2cutover/mm2cutover/redact"
)

// Kafka's login modules and OAUTHBEARER login callback handlers, as a
// client's sasl.jaas.config and sasl.login.callback.handler.class name them.
const (
	plainLoginModule  = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramLoginModule  = "org.apache.kafka.common.security.scram.ScramLoginModule"
	oauthLoginModule  = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
	oauthLoginHandler = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
	// oauthLoginHandlerOld is the same class before Kafka 3.4 (KIP-768).
	oauthLoginHandlerOld = "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler"
	// krb5LoginModule is the JDK's Kerberos login module, which Kafka's
	// GSSAPI clients name.
	krb5LoginModule = "com.sun.security.auth.module.Krb5LoginModule"
)

// propertyKeys are the keys ConfigFromProperties applies, besides
// clientconf.TLSKeys.
var propertyKeys = []string{
	"bootstrap.servers", "client.id", "security.protocol", "sasl.mechanism", "sasl.jaas.config",
	"sasl.login.callback.handler.class", "sasl.oauthbearer.token.endpoint.url", "sasl.oauthbearer.scope",
	"sasl.oauthbearer.client.credentials.client.id", "sasl.oauthbearer.client.credentials.client.secret",
	"sasl.oauthbearer.header.urlencode", "request.timeout.ms", "sasl.kerberos.service.name",
}

// IgnoredPropertyKeys are keys of Kafka's producer, consumer and admin
// clients that ConfigFromProperties accepts without applying them: they
// tune a producer or consumer, or a part of Java's clients Go's have not,
// and change nothing of what this package reads. Keys under
// sasl.login.*, sasl.kerberos.*, metrics.* and sasl.oauthbearer.jwks.* are
// accepted likewise.
var IgnoredPropertyKeys = append(slices.Clone(clientconf.IgnoredTLSKeys),
	"acks", "batch.size", "linger.ms", "buffer.memory", "compression.type", "retries", "retry.backoff.ms",
	"retry.backoff.max.ms", "reconnect.backoff.ms", "reconnect.backoff.max.ms", "max.request.size",
	"max.in.flight.requests.per.connection", "enable.idempotence", "transactional.id", "transaction.timeout.ms",
	"delivery.timeout.ms", "key.serializer", "value.serializer", "key.deserializer", "value.deserializer",
	"group.id", "group.instance.id", "auto.offset.reset", "enable.auto.commit", "auto.commit.interval.ms",
	"isolation.level", "max.poll.records", "max.poll.interval.ms", "session.timeout.ms", "heartbeat.interval.ms",
	"fetch.min.bytes", "fetch.max.bytes", "fetch.max.wait.ms", "max.partition.fetch.bytes", "metadata.max.age.ms",
	"connections.max.idle.ms", "default.api.timeout.ms", "socket.connection.setup.timeout.ms",
	"socket.connection.setup.timeout.max.ms", "receive.buffer.bytes", "send.buffer.bytes", "client.dns.lookup",
	"client.rack", "metric.reporters", "interceptor.classes", "partitioner.class", "security.providers",
	"sasl.oauthbearer.expected.audience", "sasl.oauthbearer.expected.issuer", "sasl.oauthbearer.clock.skew.seconds",
	"sasl.oauthbearer.scope.claim.name", "sasl.oauthbearer.sub.claim.name",
)

var ignoredPrefixes = []string{"sasl.login.", "sasl.kerberos.", "metrics.", "sasl.oauthbearer.jwks.endpoint."}

// ConfigFromProperties returns the Config that a Kafka client properties
// file describes — the file Kafka's tools take with --command-config, read
// with clientconf.ReadProperties: bootstrap.servers, client.id,
// security.protocol, sasl.mechanism, sasl.jaas.config (PlainLoginModule and
// ScramLoginModule with username and password; OAuthBearerLoginModule with
// clientId, clientSecret and scope for the token endpoint of
// sasl.oauthbearer.token.endpoint.url, or unsecuredLoginStringClaim_sub for
// Kafka's unsecured tokens), the OAUTHBEARER keys of Kafka 4.1
// (sasl.oauthbearer.client.credentials.client.id and .secret,
// sasl.oauthbearer.scope), GSSAPI (Kafka's default mechanism) with
// sasl.kerberos.service.name and a Krb5LoginModule with useKeyTab=true,
// keyTab and principal (see gssapiFromProperties), the ssl.* keys of
// clientconf.TLSKeys and request.timeout.ms.
//
// It returns, besides the Config, the keys it accepted without applying them
// (IgnoredPropertyKeys), for the caller to mention. A key it does not know
// is not an error, as Kafka's own clients only warn about it: the Config
// lists it in UnknownProperties, and NewClient warns about those once, so
// that a typo such as sasl.jaas.confg is not silently dropped. Config
// provider references (${env:...}: this package does not resolve them), a
// login callback handler other than Kafka's, and a Kerberos login from a
// ticket cache or a password prompt are errors. Errors are *ConfigError
// (Field "properties") and never show a value of a secret key.
func ConfigFromProperties(props map[string]string) (Config, []string, error) {
	var ignored, unknown []string
	known := map[string]bool{}
	for _, k := range append(slices.Clone(propertyKeys), clientconf.TLSKeys...) {
		known[k] = true
	}
	for k, v := range props {
		switch {
		case known[k]:
			if strings.Contains(v, "${") && isReference(v) {
				return Config{}, nil, propErr(k, "is a config provider reference, which this tool does not resolve: give the value itself")
			}
		case slices.Contains(IgnoredPropertyKeys, k) || hasAnyPrefix(k, ignoredPrefixes):
			ignored = append(ignored, k)
		case k == "config.providers" || strings.HasPrefix(k, "config.providers."):
			return Config{}, nil, propErr(k, "config providers are not resolved by this tool: give the values themselves")
		default:
			unknown = append(unknown, k)
		}
	}
	slices.Sort(ignored)

	c := Config{
		BootstrapServers: splitComma(props["bootstrap.servers"]),
		ClientID:         props["client.id"],
		SecurityProtocol: SecurityProtocol(strings.ToUpper(props["security.protocol"])),
		SASLMechanism:    SASLMechanism(strings.ToUpper(props["sasl.mechanism"])),
	}
	if len(unknown) > 0 {
		c.UnknownProperties = redact.KeyNames(unknown)
	}
	if v, ok := props["request.timeout.ms"]; ok {
		ms, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || ms <= 0 {
			return Config{}, nil, propErr("request.timeout.ms", fmt.Sprintf("%q is not a positive number of milliseconds", v))
		}
		c.RequestTimeout = time.Duration(ms) * time.Millisecond
	}
	tlsProps := map[string]string{}
	for _, k := range clientconf.TLSKeys {
		if v, ok := props[k]; ok {
			tlsProps[k] = v
		}
	}
	if len(tlsProps) > 0 {
		st, err := clientconf.TLSFromProperties(tlsProps, "")
		if err != nil {
			return Config{}, nil, &ConfigError{Field: "properties", Reason: "ssl settings rejected", Err: err}
		}
		c.TLS.Stores = st
		if !c.protocol().tls() {
			return Config{}, nil, propErr("security.protocol", fmt.Sprintf("ssl.* settings given but %s does not use TLS", c.protocol()))
		}
	}
	if err := c.saslFromProperties(props); err != nil {
		return Config{}, nil, err
	}
	if _, ok := props["sasl.kerberos.service.name"]; ok && c.SASLMechanism != GSSAPI {
		ignored = append(ignored, "sasl.kerberos.service.name") // only GSSAPI uses it
		slices.Sort(ignored)
	}
	return c, ignored, nil
}

func (c *Config) saslFromProperties(props map[string]string) error {
	jaas := props["sasl.jaas.config"]
	oauthKeys := []string{"sasl.login.callback.handler.class", "sasl.oauthbearer.token.endpoint.url", "sasl.oauthbearer.scope",
		"sasl.oauthbearer.client.credentials.client.id", "sasl.oauthbearer.client.credentials.client.secret", "sasl.oauthbearer.header.urlencode"}
	if !c.protocol().sasl() {
		for _, k := range append([]string{"sasl.mechanism", "sasl.jaas.config"}, oauthKeys...) {
			if _, ok := props[k]; ok {
				return propErr(k, fmt.Sprintf("given but security.protocol %s does not use SASL", c.protocol()))
			}
		}
		return nil
	}
	if c.SASLMechanism == "" {
		c.SASLMechanism = "GSSAPI" // Kafka's default
	}
	switch c.SASLMechanism {
	case Plain, ScramSHA256, ScramSHA512, OAuthBearer, GSSAPI:
	default:
		return propErr("sasl.mechanism", fmt.Sprintf("%q is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, GSSAPI", string(c.SASLMechanism)))
	}
	if c.SASLMechanism != OAuthBearer {
		for _, k := range oauthKeys {
			if _, ok := props[k]; ok {
				return propErr(k, "given but sasl.mechanism is "+string(c.SASLMechanism))
			}
		}
	}
	if jaas == "" {
		if c.SASLMechanism == GSSAPI {
			return propErr("sasl.jaas.config", "required with sasl.mechanism GSSAPI (the default mechanism): this tool reads no JAAS file (java.security.auth.login.config), give "+krb5LoginModule+" required useKeyTab=true keyTab=... principal=...;")
		}
		return propErr("sasl.jaas.config", "required with sasl.mechanism "+string(c.SASLMechanism))
	}
	module, opts, err := parseJAAS(jaas)
	if err != nil {
		return propErr("sasl.jaas.config", err.Error())
	}
	if c.SASLMechanism == GSSAPI {
		return c.gssapiFromProperties(props, module, opts)
	}
	take := func(allowed ...string) error {
		var extra []string
		for k := range opts {
			if !slices.Contains(allowed, k) && !strings.HasPrefix(k, "extension_") && !strings.HasPrefix(k, "unsecuredLoginExtension_") {
				extra = append(extra, k)
			}
		}
		if len(extra) > 0 {
			slices.Sort(extra)
			return propErr("sasl.jaas.config", fmt.Sprintf("options %s are not known for %s", strings.Join(extra, ", "), module))
		}
		return nil
	}
	switch c.SASLMechanism {
	case Plain, ScramSHA256, ScramSHA512:
		want := plainLoginModule
		if c.SASLMechanism != Plain {
			want = scramLoginModule
		}
		if module != want {
			return propErr("sasl.jaas.config", fmt.Sprintf("%s with sasl.mechanism %s: want %s", module, c.SASLMechanism, want))
		}
		if err := take("username", "password"); err != nil {
			return err
		}
		for k := range opts {
			if strings.HasPrefix(k, "extension_") || strings.HasPrefix(k, "unsecuredLoginExtension_") {
				return propErr("sasl.jaas.config", "option "+k+" is for OAUTHBEARER")
			}
		}
		c.Username, c.Password = opts["username"], redact.Secret(opts["password"])
		if c.Username == "" || c.Password == "" {
			return propErr("sasl.jaas.config", "needs username and password")
		}
		return nil
	}
	if module != oauthLoginModule {
		return propErr("sasl.jaas.config", fmt.Sprintf("%s with sasl.mechanism OAUTHBEARER: want %s", module, oauthLoginModule))
	}
	if err := take("clientId", "clientSecret", "scope", "unsecuredLoginStringClaim_sub", "unsecuredLoginLifetimeSeconds"); err != nil {
		return err
	}
	if v := props["sasl.oauthbearer.header.urlencode"]; v != "" && !strings.EqualFold(v, "false") {
		return propErr("sasl.oauthbearer.header.urlencode", "only false (Kafka's default) is supported")
	}
	o := OAuthConfig{
		TokenEndpointURL: props["sasl.oauthbearer.token.endpoint.url"],
		ClientID:         firstOf(props["sasl.oauthbearer.client.credentials.client.id"], opts["clientId"]),
		ClientSecret:     redact.Secret(firstOf(props["sasl.oauthbearer.client.credentials.client.secret"], opts["clientSecret"])),
		Scope:            firstOf(props["sasl.oauthbearer.scope"], opts["scope"]),
		UnsecuredSubject: opts["unsecuredLoginStringClaim_sub"],
	}
	for k, v := range opts {
		name, ok := strings.CutPrefix(k, "extension_")
		if !ok {
			name, ok = strings.CutPrefix(k, "unsecuredLoginExtension_")
		}
		if ok {
			if o.Extensions == nil {
				o.Extensions = map[string]string{}
			}
			o.Extensions[name] = v
		}
	}
	handler, hasHandler := props["sasl.login.callback.handler.class"]
	switch {
	case o.TokenEndpointURL != "":
		if hasHandler && handler != oauthLoginHandler && handler != oauthLoginHandlerOld {
			return propErr("sasl.login.callback.handler.class", fmt.Sprintf("%q: only Kafka's %s is supported", handler, oauthLoginHandler))
		}
		if o.UnsecuredSubject != "" {
			return propErr("sasl.jaas.config", "unsecuredLoginStringClaim_sub is for Kafka's unsecured tokens, without a token endpoint")
		}
	case hasHandler:
		return propErr("sasl.login.callback.handler.class", "given without sasl.oauthbearer.token.endpoint.url")
	case o.UnsecuredSubject == "":
		return propErr("sasl.jaas.config", "OAUTHBEARER needs sasl.oauthbearer.token.endpoint.url with clientId and clientSecret, or unsecuredLoginStringClaim_sub for Kafka's unsecured tokens")
	}
	c.OAuth = o
	return nil
}

// krb5Options are the Krb5LoginModule options gssapiFromProperties
// accepts: those it applies, those that change nothing for a client that
// logs in from a keytab, and Kafka's own serviceName.
var krb5Options = []string{"useKeyTab", "keyTab", "principal", "serviceName", "storeKey", "doNotPrompt",
	"refreshKrb5Config", "renewTGT", "isInitiator", "debug", "useTicketCache", "ticketCache"}

// gssapiFromProperties fills the GSSAPI settings from the JAAS entry of
// sasl.jaas.config (module and its options) and sasl.kerberos.service.name:
// the JDK's Krb5LoginModule with useKeyTab=true, keyTab (the keytab
// file) and principal (name[/instance][@REALM]) — the login Kafka's
// documentation gives clients — and the service name from
// sasl.kerberos.service.name or the JAAS option serviceName, which Kafka
// requires and refuses when both are given and differ
// (KerberosLogin.getServiceName). A login from a ticket cache
// (useTicketCache) or a password prompt is refused: this tool reads
// neither. The krb5.conf is the client's (KerberosConfig.ConfigFile).
func (c *Config) gssapiFromProperties(props map[string]string, module string, opts map[string]string) error {
	if module != krb5LoginModule {
		return propErr("sasl.jaas.config", fmt.Sprintf("%s with sasl.mechanism GSSAPI: want %s", module, krb5LoginModule))
	}
	var extra []string
	for k := range opts {
		if !slices.Contains(krb5Options, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return propErr("sasl.jaas.config", fmt.Sprintf("options %s are not known for %s", strings.Join(extra, ", "), module))
	}
	isTrue := func(k string) bool { return strings.EqualFold(opts[k], "true") } // as Krb5LoginModule reads them
	switch v, given := opts["isInitiator"]; {
	case isTrue("useTicketCache"):
		return propErr("sasl.jaas.config", "useTicketCache=true: this tool reads no ticket cache; log in from a keytab: useKeyTab=true keyTab=... principal=...")
	case given && !strings.EqualFold(v, "true"):
		return propErr("sasl.jaas.config", "isInitiator="+v+" is for a server: a client initiates")
	case !isTrue("useKeyTab"):
		return propErr("sasl.jaas.config", "needs useKeyTab=true with keyTab and principal: this tool logs in from a keytab (it prompts for no password)")
	case opts["keyTab"] == "":
		return propErr("sasl.jaas.config", "useKeyTab=true needs keyTab, the keytab file (this tool looks up no default keytab)")
	case opts["principal"] == "":
		return propErr("sasl.jaas.config", "needs principal, the client's Kerberos principal: name[/instance][@REALM]")
	}
	if _, _, err := splitPrincipal(opts["principal"]); err != nil {
		return propErr("sasl.jaas.config", fmt.Sprintf("principal %q: %v", opts["principal"], err))
	}
	fromProps, fromJAAS := strings.TrimSpace(props["sasl.kerberos.service.name"]), opts["serviceName"]
	switch {
	case fromProps != "" && fromJAAS != "" && fromProps != fromJAAS:
		return propErr("sasl.kerberos.service.name", fmt.Sprintf("%q conflicts with serviceName %q of sasl.jaas.config (Kafka's clients refuse the two)", fromProps, fromJAAS))
	case fromProps == "" && fromJAAS == "":
		return propErr("sasl.kerberos.service.name", "required with sasl.mechanism GSSAPI (Kafka has no default; usually kafka, the first part of the brokers' principal), or serviceName in sasl.jaas.config")
	}
	c.Username = opts["principal"]
	c.Kerberos = KerberosConfig{ServiceName: firstOf(fromJAAS, fromProps), KeytabFile: opts["keyTab"]}
	return nil
}

func propErr(key, reason string) error {
	return &ConfigError{Field: "properties", Reason: key + ": " + reason}
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func splitComma(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// isReference reports whether v holds a config provider reference
// ${provider:[path:]key}.
func isReference(v string) bool {
	i := strings.Index(v, "${")
	if i < 0 {
		return false
	}
	end := strings.IndexByte(v[i:], '}')
	return end > 0 && strings.Contains(v[i:i+end], ":")
}

// parseJAAS parses a client's sasl.jaas.config as Kafka's JaasConfig does
// (kafka-clients 3.7 to 4.3: a java.io.StreamTokenizer with its default
// syntax, '-', '_' and '$' as word characters, // and /* */ comments): one
// login module entry, "<class> <flag> key=value ... ;". A value is a word
// (a letter, '_' or '$', then letters, digits, '.', '-', '_', '$'), or a
// string in double or single quotes, which are stripped, with Java's
// backslash escapes; a quoted string ends at its closing quote or at the end
// of its line. A '/' outside quotes starts a comment to the end of the line
// (two of them too), "/*" one to "*/". A later option replaces an earlier
// one of the same name. Beyond Kafka: the login module must be a Java class
// name with its package, and one entry only (a client's JaasContext takes
// one). Its errors name neither a value nor the login module or the control
// flag given (a secret pasted in their place would show).
func parseJAAS(s string) (module string, opts map[string]string, err error) {
	toks, unclosed := jaasTokens(s)
	fail := func(format string, args ...any) (string, map[string]string, error) {
		msg := fmt.Sprintf(format, args...)
		if unclosed {
			msg += " (a quoted value is not closed before its line ends)"
		}
		return "", nil, errors.New(msg)
	}
	if len(toks) == 0 {
		return fail("no login module: want <login module> required key=value ... ;")
	}
	if !toks[0].str {
		return fail("the entry does not start with a login module: want <login module> required key=value ... ;")
	}
	if len(toks) < 2 {
		return fail("no control flag after the login module: want required")
	}
	switch f := toks[1]; {
	case !f.str:
		return fail("no control flag after the login module: want required")
	default:
		switch strings.ToLower(f.text) {
		case "required", "requisite", "sufficient", "optional":
		default:
			return fail("the control flag is not required, requisite, sufficient or optional")
		}
	}
	opts = map[string]string{}
	last := ""
	i := 2
	for ; i < len(toks) && toks[i].char != ';'; i += 3 {
		key := toks[i]
		if !key.str || i+2 >= len(toks) || toks[i+1].char != '=' || !toks[i+2].str {
			if last == "" {
				return fail("the first option has no value: want key=value pairs, then one ';'")
			}
			return fail("the option after %s has no value: want key=value pairs, then one ';'", last)
		}
		opts[key.text] = toks[i+2].text
		last = key.text
	}
	if i == len(toks) {
		return fail("the entry does not end with ';'")
	}
	if i+1 < len(toks) {
		return fail("more than one login module: a client takes one")
	}
	module = toks[0].text
	if !javaClassName(module) || slices.Contains(slices.Collect(maps.Values(opts)), module) {
		return fail("the login module is not a Java class name with its package (it is not shown)")
	}
	return module, opts, nil
}

// javaClassName reports whether s is a qualified Java class name:
// identifiers joined by dots, at least two.
func javaClassName(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || p[0] >= '0' && p[0] <= '9' {
			return false
		}
		for _, r := range p {
			if !(r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
				return false
			}
		}
	}
	return true
}

// jaasToken is a token of java.io.StreamTokenizer: a word or a quoted
// string (str, with text), or an ordinary character (char), such as ';',
// '=' or a number (which has no string value).
type jaasToken struct {
	text string
	str  bool
	char rune
}

// jaasTokens splits s as JaasConfig's StreamTokenizer does. unclosed
// reports a quoted string that its line or the text ended.
func jaasTokens(s string) (toks []jaasToken, unclosed bool) {
	rs := []rune(s)
	isWordStart := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || r == '$' || r >= 160 && r <= 255 || r >= 256
	}
	isWordPart := func(r rune) bool { return isWordStart(r) || r >= '0' && r <= '9' || r == '.' || r == '-' }
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case r <= ' ':
			i++
		case r == '/':
			switch {
			case i+1 < len(rs) && rs[i+1] == '*':
				end := -1
				for j := i + 2; j+1 < len(rs); j++ {
					if rs[j] == '*' && rs[j+1] == '/' {
						end = j + 2
						break
					}
				}
				if end < 0 {
					return toks, unclosed // StreamTokenizer: end of input
				}
				i = end
			default: // "//", and a lone '/', a comment character
				for i < len(rs) && rs[i] != '\n' && rs[i] != '\r' {
					i++
				}
			}
		case r == '"' || r == '\'':
			var b strings.Builder
			j := i + 1
			for j < len(rs) && rs[j] != r && rs[j] != '\n' && rs[j] != '\r' {
				c := rs[j]
				j++
				if c == '\\' && j < len(rs) {
					c = rs[j]
					j++
					switch {
					case c >= '0' && c <= '7':
						// Octal, up to \377.
						v, first := c-'0', c
						if j < len(rs) && rs[j] >= '0' && rs[j] <= '7' {
							v = v*8 + rs[j] - '0'
							j++
							if first <= '3' && j < len(rs) && rs[j] >= '0' && rs[j] <= '7' {
								v = v*8 + rs[j] - '0'
								j++
							}
						}
						c = v
					case c == 'a':
						c = 7
					case c == 'b':
						c = '\b'
					case c == 'f':
						c = '\f'
					case c == 'n':
						c = '\n'
					case c == 'r':
						c = '\r'
					case c == 't':
						c = '\t'
					case c == 'v':
						c = '\v'
					}
				}
				b.WriteRune(c)
			}
			if j < len(rs) && rs[j] == r {
				j++
			} else {
				unclosed = true
			}
			toks = append(toks, jaasToken{text: b.String(), str: true})
			i = j
		case r >= '0' && r <= '9' || r == '.' || r == '-' && i+1 < len(rs) && (rs[i+1] == '.' || rs[i+1] >= '0' && rs[i+1] <= '9'):
			// A number: no string value.
			j := i + 1
			for j < len(rs) && (rs[j] >= '0' && rs[j] <= '9' || rs[j] == '.') {
				j++
			}
			toks = append(toks, jaasToken{char: '0'})
			i = j
		case isWordStart(r):
			j := i + 1
			for j < len(rs) && isWordPart(rs[j]) {
				j++
			}
			toks = append(toks, jaasToken{text: string(rs[i:j]), str: true})
			i = j
		default:
			toks = append(toks, jaasToken{char: r})
			i++
		}
	}
	return toks, unclosed
}
