package plan

import "testing"

// TestConfigDigestOf: each schema version keeps its own digest rule. Where
// a password equals an ordinary value, versions 1 and 2 redacted that value
// too; version 3 hashes it, so the three digests differ, and only version
// 3's stays the same when the password is rotated.
func TestConfigDigestOf(t *testing.T) {
	cfg := func(password string) map[string]string {
		return map[string]string{"name": "m", "topics": "orders", "source.cluster.ssl.key.password": password}
	}
	v1, v2, v3 := configDigestOf(1, cfg("orders")), configDigestOf(2, cfg("orders")), configDigestOf(3, cfg("orders"))
	if v1 == v2 || v2 == v3 || v1 == v3 {
		t.Errorf("digests of versions 1, 2, 3: %s %s %s, want three different ones", v1, v2, v3)
	}
	if v3 != ConfigDigest(cfg("orders")) || v3 != configDigestOf(3, cfg("rotated")) {
		t.Errorf("version 3's digest is not ConfigDigest, or changed with the password")
	}
	if configDigestOf(2, cfg("rotated")) == v2 {
		t.Errorf("version 2's rule no longer redacts values equal to a secret")
	}
}
