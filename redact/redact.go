// Package redact decides which Kafka, Kafka Connect and MirrorMaker 2
// configuration values are secrets and keeps them out of everything the
// cutover shows or stores: plans, audit records, logs, errors and reports.
//
// A key holds a secret when Kafka's own definitions say so — the clients'
// PASSWORD-type keys ([ClientPasswordKeys]) and those a connector plugin's
// validate answer defines as PASSWORD — and, as a fallback for keys no
// definition at hand covers, when its name says so ([SecretKeys]). A value
// equal to a known secret is a secret too, wherever it appears
// ([ConfigWith], [Text]). [Secret] is a string that prints as [Redacted] in
// every formatter, for credentials held in settings.
package redact

import (
	"encoding/json"
	"html"
	"log/slog"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Redacted replaces a secret value wherever a configuration is shown or
// stored.
const Redacted = "[redacted]"

// ClientPasswordKeys are the keys the Kafka clients define as
// ConfigDef.Type.PASSWORD, read from ProducerConfig, ConsumerConfig and
// AdminClientConfig of kafka-clients 3.7.2, 3.8.1, 3.9.1, 4.0.0, 4.1.0,
// 4.2.0 and 4.3.1 (the union; the two sasl.oauthbearer keys exist from
// 4.1, KIP-1139). MirrorSourceConnector's validate answer defines the same
// names as PASSWORD, and applies them under its client prefixes
// (source.cluster., target.consumer., ...). ssl.keystore.certificate.chain
// and ssl.truststore.certificates hold certificates, public in themselves,
// but Kafka masks them like passwords, and so does this package.
var ClientPasswordKeys = []string{
	"sasl.jaas.config",
	"sasl.oauthbearer.assertion.private.key.passphrase",
	"sasl.oauthbearer.client.credentials.client.secret",
	"ssl.key.password",
	"ssl.keystore.certificate.chain",
	"ssl.keystore.key",
	"ssl.keystore.password",
	"ssl.truststore.certificates",
	"ssl.truststore.password",
}

// IsSecretKey reports whether a Kafka, Connect or MirrorMaker 2
// configuration key holds a secret, under any prefix (source.cluster.,
// target.cluster., source.consumer., producer.override.,
// listener.name.x. and so on). It is SecretKeys(nil).
func IsSecretKey(key string) bool { return isSecretKey(key, nil) }

// SecretKeys returns the rule that says whether a configuration key holds a
// secret, in this order:
//
//   - Kafka's own definitions: the key, or its last dotted words, is one of
//     ClientPasswordKeys or of passwordKeys — the keys a plugin's validate
//     answer defines as PASSWORD (connect.ConfigInfos.PasswordKeys), which
//     count under any prefix too;
//   - then, as a fallback for keys no definition at hand covers, the names:
//     any word containing "password", "passwd", "passphrase" or "secret";
//     basic.auth.user.info (Schema Registry credentials); inline private
//     keys (*.private.key, *.api.key, *.apikey, *.secret.key,
//     *.access.key); tokens (a word ending in "token", unless the last
//     word names a location or a setting: token.endpoint.url,
//     ...token.file, ...token.ms).
//
// Matching is case-insensitive; heuristic words are separated by '.', '_'
// or '-'.
func SecretKeys(passwordKeys []string) func(key string) bool {
	keys := append([]string(nil), passwordKeys...)
	return func(key string) bool { return isSecretKey(key, keys) }
}

func isSecretKey(key string, passwordKeys []string) bool {
	k := strings.ToLower(key)
	for _, list := range [][]string{ClientPasswordKeys, passwordKeys} {
		for _, pk := range list {
			pk = strings.ToLower(pk)
			if pk != "" && (k == pk || strings.HasSuffix(k, "."+pk)) {
				return true
			}
		}
	}
	if strings.HasSuffix(k, "basic.auth.user.info") {
		return true
	}
	words := strings.FieldsFunc(k, func(r rune) bool { return r == '.' || r == '_' || r == '-' })
	if len(words) == 0 {
		return false
	}
	last := words[len(words)-1]
	if len(words) >= 2 && last == "key" {
		switch words[len(words)-2] {
		case "private", "api", "secret", "access":
			return true
		}
	}
	token := false
	for _, w := range words {
		if strings.Contains(w, "password") || strings.Contains(w, "passwd") || strings.Contains(w, "passphrase") ||
			strings.Contains(w, "secret") || w == "apikey" {
			return true
		}
		if strings.HasSuffix(w, "token") {
			token = true
		}
	}
	if token {
		switch last {
		case "url", "uri", "endpoint", "file", "path", "location", "ms", "seconds", "type", "class", "enabled", "name":
			return false
		}
		return true
	}
	return false
}

// Config returns a copy of config in which secrets are replaced by
// [Redacted] (see ConfigWith, with no keys beyond ClientPasswordKeys).
// config is not modified; a nil config gives an empty map.
func Config(config map[string]string) map[string]string { return ConfigWith(config, nil) }

// ConfigWith returns a copy of config in which:
//
//   - the value of every secret key (SecretKeys(passwordKeys)) is replaced
//     by [Redacted], unless it is wholly a config provider reference such as
//     ${file:/etc/kafka/secrets.properties:password}, which names where the
//     secret lives and is kept;
//   - every other value equal to one of those secrets, or to a password
//     inside a JAAS line (password="..."), is replaced too, and a longer
//     value containing one has it replaced by [Redacted]: a secret copied
//     under a key no rule knows is still a secret; so is a value that
//     holds a private key ([HoldsPrivateKey]), whatever its key.
//
// Secrets shorter than four characters are only replaced where they are
// whole values, so that a one-letter password does not erase every "a".
func ConfigWith(config map[string]string, passwordKeys []string) map[string]string {
	isSecret := SecretKeys(passwordKeys)
	secrets := SecretValues(config, passwordKeys)
	out := make(map[string]string, len(config))
	for k, v := range config {
		switch {
		case v == "" || isProviderRef(v):
		case isSecret(k) || slices.Contains(secrets, v) || HoldsPrivateKey(v):
			v = Redacted
		default:
			for _, s := range secrets {
				if len(s) >= 4 {
					v = strings.ReplaceAll(v, s, Redacted)
				}
			}
		}
		out[k] = v
	}
	return out
}

// KeysOnly returns a copy of config in which the value of every secret key
// (SecretKeys(passwordKeys)) is replaced by [Redacted], unless it is wholly
// a config provider reference, and every other value is kept as it is, even
// where it equals or contains a secret. It is the form to hash (a digest of
// it changes with the configuration and never with a secret), not to show:
// show [ConfigWith], which also hides a secret copied under another key.
// config is not modified; a nil config gives an empty map.
func KeysOnly(config map[string]string, passwordKeys []string) map[string]string {
	isSecret := SecretKeys(passwordKeys)
	out := make(map[string]string, len(config))
	for k, v := range config {
		if v != "" && !isProviderRef(v) && isSecret(k) {
			v = Redacted
		}
		out[k] = v
	}
	return out
}

// SecretValues returns the secret values of config under
// SecretKeys(passwordKeys), the values that hold a private key
// ([HoldsPrivateKey]) under any key, and the passwords quoted inside JAAS
// lines (password="..." or secret="..."), longest first, without config
// provider references or duplicates. Replace them in free text, such as a
// worker's error message, longest first.
func SecretValues(config map[string]string, passwordKeys []string) []string {
	isSecret := SecretKeys(passwordKeys)
	seen := map[string]bool{}
	var vs []string
	add := func(v string) {
		if v != "" && !isProviderRef(v) && !seen[v] {
			seen[v] = true
			vs = append(vs, v)
		}
	}
	for k, v := range config {
		if isSecret(k) || HoldsPrivateKey(v) {
			add(v)
			for _, inner := range jaasSecrets(v) {
				add(inner)
			}
		}
	}
	sort.Slice(vs, func(i, j int) bool {
		if len(vs[i]) != len(vs[j]) {
			return len(vs[i]) > len(vs[j])
		}
		return vs[i] < vs[j]
	})
	return vs
}

// jaasSecrets returns the values of password-like options inside a JAAS
// configuration line, such as password="..." in a PlainLoginModule entry:
// in double or single quotes (Kafka's JaasConfig strips both), or bare
// words, with blanks around '=' or not.
func jaasSecrets(jaas string) []string {
	var out []string
	lower := strings.ToLower(jaas)
	for i := 0; i < len(lower); {
		j := -1
		for _, opt := range []string{"password", "secret", "passphrase"} {
			if k := strings.Index(lower[i:], opt); k >= 0 && (j < 0 || i+k < j) {
				j = i + k
			}
		}
		if j < 0 {
			return out
		}
		rest := strings.TrimLeft(jaas[j:], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-$")
		i = len(jaas) - len(rest)
		rest = strings.TrimLeft(rest, " \t\r\n")
		if !strings.HasPrefix(rest, "=") {
			continue
		}
		rest = strings.TrimLeft(rest[1:], " \t\r\n")
		var v string
		switch {
		case rest == "":
		case rest[0] == '"' || rest[0] == '\'':
			if end := strings.IndexByte(rest[1:], rest[0]); end >= 0 {
				v = rest[1 : 1+end]
			}
		default:
			end := strings.IndexAny(rest, " \t\r\n;")
			if end < 0 {
				end = len(rest)
			}
			v = rest[:end]
		}
		if v != "" {
			out = append(out, v)
		}
		i = len(jaas) - len(rest)
	}
	return out
}

// isProviderRef reports whether v is exactly one Kafka config provider
// reference: ${provider:[path:]key}.
func isProviderRef(v string) bool {
	if !strings.HasPrefix(v, "${") || !strings.HasSuffix(v, "}") {
		return false
	}
	inner := v[2 : len(v)-1]
	return strings.Contains(inner, ":") && !strings.ContainsAny(inner, "${}")
}

// IsKeyMaterial reports whether s, a configuration key or a word of a
// message, looks like key material: it holds PEM armor ("-----BEGIN",
// "-----END"), or it is a run of at least 16 base64 characters (A-Z, a-z,
// 0-9, '+', '/', then '=' padding) with upper case letters, lower case
// letters and digits, as every line of a PEM block's body is. A PEM key
// pasted into a properties file without '\' continuations makes each of
// its lines a key (Java's Properties.load reads a line up to its first '=',
// ':' or blank as the key): a message that names keys must not name such a
// key ([KeyNames]). Kafka's configuration keys, dotted lower case words,
// never look like key material.
func IsKeyMaterial(s string) bool {
	if strings.Contains(s, "-----BEGIN") || strings.Contains(s, "-----END") {
		return true
	}
	body := strings.TrimRight(s, "=")
	if len(body) < 16 || len(s)-len(body) > 2 {
		return false
	}
	var upper, lower, digit bool
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= '0' && c <= '9':
			digit = true
		case c == '+' || c == '/':
		default:
			return false
		}
	}
	return upper && lower && digit
}

// HoldsPrivateKey reports whether the value v holds a PEM private key
// ("-----BEGIN PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----",
// "-----BEGIN ENCRYPTED PRIVATE KEY-----", ...), or a part of one: such a
// value is a secret whatever its key ([ConfigWith]).
func HoldsPrivateKey(v string) bool {
	return strings.Contains(v, "PRIVATE KEY-----") && (strings.Contains(v, "-----BEGIN") || strings.Contains(v, "-----END"))
}

// KeyNames returns keys sorted, without duplicates, for a message that
// names them: every key that looks like key material ([IsKeyMaterial]) is
// left out, and [Redacted] stands once, last, for all of them (KeyNames of
// its own result is that result).
func KeyNames(keys []string) []string {
	var out []string
	hidden := false
	for _, k := range keys {
		if k == Redacted || IsKeyMaterial(k) {
			hidden = true
			continue
		}
		out = append(out, k)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if hidden {
		out = append(out, Redacted)
	}
	return out
}

// Text replaces every occurrence of the given secret values in s with
// [Redacted], in each of their [Forms] (HTML-, JSON- and URL-escaped),
// longest first, so that a value containing another is replaced whole;
// then, so that no escaping an encoder may choose leaves a secret readable,
// every occurrence in s read with its HTML character references (&#43;,
// &#x2B;, &plus;, ...) and percent escapes (%2b) decoded. Empty values are
// ignored. Use it on text that may echo a secret: an error body from a
// server or proxy, a line of a log.
func Text(s string, secrets ...string) string {
	var vs []string
	for _, v := range secrets {
		vs = append(vs, Forms(v)...)
	}
	sort.SliceStable(vs, func(i, j int) bool { return len(vs[i]) > len(vs[j]) })
	for _, v := range vs {
		if v != "" {
			s = strings.ReplaceAll(s, v, Redacted)
		}
	}
	return redactDecoded(s, secrets)
}

// redactDecoded replaces, in s, every stretch that holds one of secrets
// once its HTML character references and percent escapes are decoded: the
// whole stretch, escapes included, becomes [Redacted].
func redactDecoded(s string, secrets []string) string {
	if !strings.ContainsAny(s, "&%") {
		return s
	}
	// decoded is s with escapes decoded; from[i] and to[i] are where the
	// escape (or byte) that gave decoded[i] starts and ends in s.
	var (
		decoded  []byte
		from, to []int
	)
	for i := 0; i < len(s); {
		n, text := escapeAt(s, i)
		if n == 0 {
			n, text = 1, s[i:i+1]
		}
		for j := 0; j < len(text); j++ {
			decoded = append(decoded, text[j])
			from, to = append(from, i), append(to, i+n)
		}
		i += n
	}
	if string(decoded) == s {
		return s
	}
	hide := make([]bool, len(s))
	for _, v := range secrets {
		if v == "" {
			continue
		}
		for at := 0; ; {
			k := strings.Index(string(decoded[at:]), v)
			if k < 0 {
				break
			}
			start, end := from[at+k], to[at+k+len(v)-1]
			for j := start; j < end; j++ {
				hide[j] = true
			}
			at += k + 1
		}
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if !hide[i] {
			b.WriteByte(s[i])
			continue
		}
		b.WriteString(Redacted)
		for i+1 < len(s) && hide[i+1] {
			i++
		}
	}
	return b.String()
}

// escapeAt reports the HTML character reference (&#43; &#x2B; &plus;) or
// percent escape (%2B, %2b) at s[i:]: its length and what it stands for,
// or 0.
func escapeAt(s string, i int) (int, string) {
	switch s[i] {
	case '%':
		if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			return 3, string([]byte{byte(v)})
		}
	case '&':
		// &#DDD; &#xHH; (';' optional, as browsers read them) or &name;.
		j := i + 1
		switch {
		case j < len(s) && s[j] == '#':
			j++
			hex := j < len(s) && (s[j] == 'x' || s[j] == 'X')
			if hex {
				j++
			}
			k := j
			for k < len(s) && k-j < 8 && (hex && isHex(s[k]) || s[k] >= '0' && s[k] <= '9') {
				k++
			}
			if k == j {
				return 0, ""
			}
			if k < len(s) && s[k] == ';' {
				k++
			}
			j = k
		default:
			k := j
			for k < len(s) && k-j < 32 && (s[k] >= 'a' && s[k] <= 'z' || s[k] >= 'A' && s[k] <= 'Z' || s[k] >= '0' && s[k] <= '9') {
				k++
			}
			if k == j || k == len(s) || s[k] != ';' {
				return 0, ""
			}
			j = k + 1
		}
		ref := s[i:j]
		if u := html.UnescapeString(ref); u != ref {
			return len(ref), u
		}
	}
	return 0, ""
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// Forms returns secret and the forms in which an encoder or a server may
// echo it: HTML-escaped (as Go's html and text/template escape, and with
// &quot;), JSON-escaped (Go's encoding, which also escapes < > &, and the
// plain one Java's encoders write), and URL-encoded (query and path). Each
// form is listed once; an empty secret gives none.
func Forms(secret string) []string {
	if secret == "" {
		return nil
	}
	forms := []string{secret}
	add := func(f string) {
		if f != "" && !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	add(html.EscapeString(secret))
	add(strings.ReplaceAll(html.EscapeString(secret), "&#34;", "&quot;"))
	if b, err := json.Marshal(secret); err == nil {
		add(string(b[1 : len(b)-1]))
	}
	var plain strings.Builder
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	if enc.Encode(secret) == nil {
		j := strings.TrimSpace(plain.String())
		add(j[1 : len(j)-1])
	}
	add(url.QueryEscape(secret))
	add(url.PathEscape(secret))
	return forms
}

// Secret is a credential held in settings: a password, a token. It prints
// as [Redacted] (or "" when empty) in every formatter — fmt's %s, %v and
// %#v, log/slog, encoding/json and encoding/text — so that a struct holding
// one can be logged or reported safely. Convert it to string only where the
// credential is used.
type Secret string

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return Redacted
}

// GoString redacts the secret for the %#v verb.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// LogValue redacts the secret for log/slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText redacts the secret for encoding/json and similar encoders.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
