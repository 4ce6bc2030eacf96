package kafkaadmin

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

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
)

// propertyKeys are the keys ConfigFromProperties applies, besides
// clientconf.TLSKeys.
var propertyKeys = []string{
	"bootstrap.servers", "client.id", "security.protocol", "sasl.mechanism", "sasl.jaas.config",
	"sasl.login.callback.handler.class", "sasl.oauthbearer.token.endpoint.url", "sasl.oauthbearer.scope",
	"sasl.oauthbearer.client.credentials.client.id", "sasl.oauthbearer.client.credentials.client.secret",
	"sasl.oauthbearer.header.urlencode", "request.timeout.ms",
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
// sasl.oauthbearer.scope), the ssl.* keys of clientconf.TLSKeys and
// request.timeout.ms.
//
// It returns, besides the Config, the keys it accepted without applying them
// (IgnoredPropertyKeys), for the caller to mention. A key it does not know
// is not an error, as Kafka's own clients only warn about it: the Config
// lists it in UnknownProperties, and NewClient warns about those once, so
// that a typo such as sasl.jaas.confg is not silently dropped. GSSAPI,
// config provider references (${env:...}: this package does not resolve
// them) and a login callback handler other than Kafka's are errors.
// Errors are *ConfigError (Field "properties") and never show a value of a
// secret key.
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
	case "GSSAPI":
		return propErr("sasl.mechanism", "GSSAPI (Kerberos, Kafka's default mechanism) is not supported: set PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER, or bring your own sarama settings (Config.Sarama)")
	case Plain, ScramSHA256, ScramSHA512, OAuthBearer:
	default:
		return propErr("sasl.mechanism", fmt.Sprintf("%q is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER", string(c.SASLMechanism)))
	}
	if c.SASLMechanism != OAuthBearer {
		for _, k := range oauthKeys {
			if _, ok := props[k]; ok {
				return propErr(k, "given but sasl.mechanism is "+string(c.SASLMechanism))
			}
		}
	}
	if jaas == "" {
		return propErr("sasl.jaas.config", "required with sasl.mechanism "+string(c.SASLMechanism))
	}
	module, opts, err := parseJAAS(jaas)
	if err != nil {
		return propErr("sasl.jaas.config", err.Error())
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

// parseJAAS parses a client's sasl.jaas.config: one login module entry,
// "<class> <flag> key=value ... ;", values bare or double-quoted with
// backslash escapes, as Kafka's JaasConfig reads it (a StreamTokenizer).
// Its errors name options, never their values.
func parseJAAS(s string) (module string, opts map[string]string, err error) {
	toks, err := jaasTokens(s)
	if err != nil {
		return "", nil, err
	}
	if len(toks) < 3 || toks[len(toks)-1].text != ";" || toks[len(toks)-1].quoted {
		return "", nil, fmt.Errorf("want one entry: <login module> required key=value ... ;")
	}
	module, flag := toks[0].text, strings.ToLower(toks[1].text)
	switch flag {
	case "required", "requisite", "sufficient", "optional":
	default:
		return "", nil, fmt.Errorf("control flag %q: want required", toks[1].text)
	}
	opts = map[string]string{}
	body := toks[2 : len(toks)-1]
	for i := 0; i < len(body); i += 3 {
		if i+2 >= len(body) || body[i+1].text != "=" || body[i+1].quoted || body[i].quoted {
			return "", nil, fmt.Errorf("options after %s: want key=value pairs, then one ';'", module)
		}
		if _, dup := opts[body[i].text]; dup {
			return "", nil, fmt.Errorf("option %s given twice", body[i].text)
		}
		opts[body[i].text] = body[i+2].text
	}
	return module, opts, nil
}

type jaasToken struct {
	text   string
	quoted bool
}

func jaasTokens(s string) ([]jaasToken, error) {
	var out []jaasToken
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '=' || c == ';':
			out = append(out, jaasToken{text: string(c)})
			i++
		case c == '"':
			var b strings.Builder
			i++
			closed := false
			for i < len(s) {
				if s[i] == '\\' && i+1 < len(s) {
					b.WriteByte(s[i+1])
					i += 2
					continue
				}
				if s[i] == '"' {
					closed = true
					i++
					break
				}
				b.WriteByte(s[i])
				i++
			}
			if !closed {
				return nil, fmt.Errorf("a quoted value is not closed")
			}
			out = append(out, jaasToken{text: b.String(), quoted: true})
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r=;\"", rune(s[j])) {
				j++
			}
			out = append(out, jaasToken{text: s[i:j]})
			i = j
		}
	}
	return out, nil
}
