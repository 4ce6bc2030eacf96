package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/mm2cutover/mm2cutover/redact"
)

// ConfigDigest returns "sha256:" and the hex SHA-256 of the canonical form of
// a connector configuration: without its "name" key (Kafka Connect adds it
// to every stored configuration; the plan records the name on its own),
// the values of secret keys replaced by redact.Redacted (redact.KeysOnly:
// other values are hashed as they are, even where one equals or contains a
// secret), as a JSON object with keys sorted bytewise and no whitespace. So
// the digest of the configuration a caller creates a connector with equals
// the digest of what GET /connectors/{name}/config returns. Two
// configurations that differ only in secret values have the same digest,
// so a digest never leaks or confirms a secret and a password rotation
// never changes it; changing any other key or value changes it. It leaves
// out "name" and [ClaimKey] (the claim of the apply that created the
// connector, which is not the plan's to predict). This is the
// rule of schema versions 3 and 4; [Plan.CheckConfig] applies each older version's
// own rule.
func ConfigDigest(config map[string]string) string {
	c := redact.KeysOnly(withoutClaim(config), nil)
	delete(c, "name")
	b, _ := json.Marshal(c) // a map[string]string always marshals
	return digest(b)
}

// configDigestV2 is the digest schema version 2 plans record: as
// ConfigDigest, but with every value equal to or containing a secret
// redacted too (redact.Config), so that a password equal to an ordinary
// value made its rotation change the digest.
func configDigestV2(config map[string]string) string {
	c := redact.Config(config)
	delete(c, "name")
	b, _ := json.Marshal(c) // a map[string]string always marshals
	return digest(b)
}

// configDigestV1 is the digest schema version 1 plans record: the
// configuration as given, "name" included, redacted as in version 2.
func configDigestV1(config map[string]string) string {
	b, _ := json.Marshal(redact.Config(config)) // a map[string]string always marshals
	return digest(b)
}

// configDigestOf is the digest rule of a plan's schema version.
func configDigestOf(version int, config map[string]string) string {
	config = withoutClaim(config)
	switch version {
	case 1:
		return configDigestV1(config)
	case 2:
		return configDigestV2(config)
	}
	return ConfigDigest(config)
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
