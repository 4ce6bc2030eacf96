package connect_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/connect"
)

// TestF2KeyMaterialKeysRefused: client or extra settings whose keys are the
// lines of a PEM key (a properties file pasted without continuations) are
// refused before they reach Connect, a plan or a report, and the error
// shows none of them; a private key as a value is kept (it is what Connect
// needs) and ConfigString redacts it.
func TestF2KeyMaterialKeysRefused(t *testing.T) {
	const line = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgPGvl2+s6kfJa2wAh"
	base := connect.MirrorSource{Name: "c", SourceBootstrap: "s:1", TargetBootstrap: "t:1", Topics: []string{"t"}}
	for name, m := range map[string]func(*connect.MirrorSource){
		"source client": func(m *connect.MirrorSource) {
			m.SourceClient = map[string]string{"ssl.keystore.key": "-----BEGIN", line: ""}
		},
		"target client": func(m *connect.MirrorSource) { m.TargetClient = map[string]string{"-----END": "PRIVATE KEY-----"} },
		"extra":         func(m *connect.MirrorSource) { m.Extra = map[string]string{line: "="} },
	} {
		ms := base
		m(&ms)
		_, err := ms.Config()
		if !errors.Is(err, connect.ErrKeyMaterialKey) || strings.Contains(err.Error(), line[:12]) || strings.Contains(err.Error(), "-----") {
			t.Errorf("%s: %v, want ErrKeyMaterialKey without the key", name, err)
		}
	}
	ms := base
	ms.Extra = map[string]string{"x.custom.pem": "-----BEGIN PRIVATE KEY-----\n" + line + "\n-----END PRIVATE KEY-----"}
	cfg, err := ms.Config()
	if err != nil {
		t.Fatal(err)
	}
	if s := connect.ConfigString(cfg); strings.Contains(s, line[:12]) || !strings.Contains(s, "x.custom.pem=[redacted]") {
		t.Errorf("ConfigString shows the key:\n%s", s)
	}
}
