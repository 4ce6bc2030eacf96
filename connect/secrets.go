package connect

import (
	"sort"
	"strings"

	"github.com/mm2cutover/mm2cutover/plan"
)

// Which keys hold secrets is plan.IsSecretKey's rule, the one every package
// uses wherever a configuration is shown or stored.

// redacted replaces a secret value wherever one would otherwise be shown.
const redacted = plan.Redacted

// secretValues returns the non-empty values of the secret keys of config,
// longest first, so that a value containing another is replaced whole.
func secretValues(config map[string]string) []string {
	var vs []string
	for k, v := range config {
		if plan.IsSecretKey(k) && v != "" {
			vs = append(vs, v)
			vs = append(vs, jaasSecrets(v)...)
		}
	}
	return longestFirst(vs)
}

// longestFirst sorts secret values longest first, so that a value
// containing another is replaced whole, and drops empty ones.
func longestFirst(vs []string) []string {
	out := vs[:0:0]
	for _, v := range vs {
		if v != "" {
			out = append(out, v)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// redact replaces every occurrence of the given secret values in s.
func redact(s string, secrets []string) string {
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, redacted)
	}
	return s
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
