package connect

import (
	"sort"
	"strings"
)

// redacted replaces a secret value wherever one would otherwise be shown.
const redacted = "[redacted]"

// isSecretKey reports whether a connector or client configuration key holds a
// secret: a JAAS configuration (it embeds passwords), any *.password key
// (ssl.keystore.password, ssl.key.password, ssl.truststore.password), inline
// private key material (ssl.keystore.key) and *.secret keys such as the OAuth
// client secret.
//
// TODO: unify with plan.Redact once both exist.
func isSecretKey(key string) bool {
	k := strings.ToLower(key)
	switch {
	case strings.HasSuffix(k, "sasl.jaas.config"),
		strings.HasSuffix(k, ".password"), k == "password",
		strings.HasSuffix(k, "ssl.keystore.key"),
		strings.HasSuffix(k, ".secret"):
		return true
	}
	return false
}

// secretValues returns the non-empty values of the secret keys of config,
// longest first, so that a value containing another is replaced whole.
func secretValues(config map[string]string) []string {
	var vs []string
	for k, v := range config {
		if isSecretKey(k) && v != "" {
			vs = append(vs, v)
			vs = append(vs, jaasSecrets(v)...)
		}
	}
	sort.Slice(vs, func(i, j int) bool { return len(vs[i]) > len(vs[j]) })
	return vs
}

// redact replaces every occurrence of the given secret values in s.
func redact(s string, secrets []string) string {
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, redacted)
	}
	return s
}

// redactConfig returns a copy of config with secret values replaced.
func redactConfig(config map[string]string) map[string]string {
	out := make(map[string]string, len(config))
	for k, v := range config {
		if isSecretKey(k) {
			v = redacted
		}
		out[k] = v
	}
	return out
}

// jaasSecrets returns the quoted values of password-like options inside a JAAS
// configuration line, such as password="..." in a PlainLoginModule entry, so
// that a worker message quoting only part of the line is redacted too.
func jaasSecrets(jaas string) []string {
	var out []string
	rest := jaas
	for {
		i := strings.Index(strings.ToLower(rest), "password=")
		if i < 0 {
			i = strings.Index(strings.ToLower(rest), "secret=")
			if i < 0 {
				return out
			}
		}
		rest = rest[i:]
		eq := strings.IndexByte(rest, '=')
		rest = rest[eq+1:]
		if !strings.HasPrefix(rest, `"`) {
			continue
		}
		end := strings.IndexByte(rest[1:], '"')
		if end < 0 {
			return out
		}
		if v := rest[1 : 1+end]; v != "" {
			out = append(out, v)
		}
		rest = rest[1+end:]
	}
}
