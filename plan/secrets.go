package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// Redacted replaces a secret value wherever a configuration is shown or
// stored.
const Redacted = "[redacted]"

// IsSecretKey reports whether a Kafka, Connect or MirrorMaker 2 configuration
// key holds a secret, under any prefix (source.cluster., target.cluster.,
// source.consumer., producer.override., listener.name.x. and so on):
//
//   - a JAAS configuration (sasl.jaas.config), which embeds credentials
//   - any key with a word containing "password", "passwd" or "secret"
//     (ssl.key.password, ssl.keystore.password, ...client.secret)
//   - basic.auth.user.info (Schema Registry credentials)
//   - inline private keys: ssl.keystore.key, *.private.key, *.api.key, *.apikey
//   - tokens: a key with a word ending in "token", unless its last word names
//     a location or a setting rather than the token (token.endpoint.url,
//     ...token.file, ...token.ms)
//
// Matching is case-insensitive; words are separated by '.', '_' or '-'.
func IsSecretKey(key string) bool {
	k := strings.ToLower(key)
	if strings.HasSuffix(k, "sasl.jaas.config") || strings.HasSuffix(k, "basic.auth.user.info") ||
		strings.HasSuffix(k, "ssl.keystore.key") {
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
		if strings.Contains(w, "password") || strings.Contains(w, "passwd") || strings.Contains(w, "secret") || w == "apikey" {
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

// Redact returns a copy of config in which the value of every secret key
// ([IsSecretKey]) is replaced by [Redacted]. A value that is wholly a config
// provider reference such as ${file:/etc/kafka/secrets.properties:password}
// names where the secret lives, not the secret, and is kept. config is not
// modified; a nil config gives an empty map.
func Redact(config map[string]string) map[string]string {
	out := make(map[string]string, len(config))
	for k, v := range config {
		if IsSecretKey(k) && v != "" && !isProviderRef(v) {
			v = Redacted
		}
		out[k] = v
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

// ConfigDigest returns "sha256:" and the hex SHA-256 of the canonical form of
// a connector configuration after [Redact]: a JSON object with keys sorted
// bytewise and no whitespace. Two configurations that differ only in secret
// values have the same digest, so a digest never leaks or confirms a secret;
// changing any other key or value changes it.
func ConfigDigest(config map[string]string) string {
	b, _ := json.Marshal(Redact(config)) // a map[string]string always marshals
	return digest(b)
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// validDigest reports whether s has the form "sha256:" and 64 lowercase hex
// digits.
func validDigest(s string) bool {
	h, ok := strings.CutPrefix(s, "sha256:")
	if !ok || len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
