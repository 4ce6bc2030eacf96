package connect

import (
	"sort"
	"strings"

	"github.com/mm2cutover/mm2cutover/plan"
)

// Which keys hold secrets is plan.SecretKeys' rule, the one every package
// uses wherever a configuration is shown or stored.

// redacted replaces a secret value wherever one would otherwise be shown.
const redacted = plan.Redacted

// secretValues returns the secret values of config (plan.SecretValues):
// the values of its secret keys and the passwords inside its JAAS lines,
// longest first, so that a value containing another is replaced whole.
func secretValues(config map[string]string) []string {
	return plan.SecretValues(config, nil)
}

// redact replaces every occurrence of the given secret values in s.
func redact(s string, secrets []string) string {
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, redacted)
	}
	return s
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
