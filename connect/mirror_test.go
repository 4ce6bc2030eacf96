package connect_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/errkind"
)

// TestMirrorSourceExtra: settings beside the builder's own are added; one
// that would change what the builder sets, or a client setting that
// belongs in SourceClient or TargetClient, is refused by name, its value
// never shown.
func TestMirrorSourceExtra(t *testing.T) {
	base := connect.MirrorSource{Name: "mm2", SourceBootstrap: "src:9092", TargetBootstrap: "tgt:9092", Topics: []string{"orders"}}
	for _, tc := range []struct {
		name  string
		extra map[string]string
		clash string // "" when accepted
	}{
		{"a setting of its own", map[string]string{"replication.factor": "3", "errors.tolerance": "none"}, ""},
		{"the builder's own value again", map[string]string{"source.consumer.auto.offset.reset": "earliest", "tasks.max": "1"}, ""},
		{"a setting the builder leaves unset", map[string]string{"source.consumer.isolation.level": "read_committed"}, ""},
		{"the reset policy changed", map[string]string{"source.consumer.auto.offset.reset": "latest"}, "source.consumer.auto.offset.reset"},
		{"offset syncs turned back on", map[string]string{"emit.offset-syncs.enabled": "true"}, "emit.offset-syncs.enabled"},
		{"another alias", map[string]string{"source.cluster.alias": "other"}, "source.cluster.alias"},
		{"topics widened", map[string]string{"topics": ".*"}, "topics"},
		{"a client's secret", map[string]string{"source.cluster.sasl.jaas.config": "hunter2-secret"}, "source.cluster.sasl.jaas.config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := base
			m.Extra = tc.extra
			cfg, err := m.Config()
			if tc.clash == "" {
				if err != nil {
					t.Fatalf("Config = %v", err)
				}
				for k, v := range tc.extra {
					if cfg[k] != v {
						t.Errorf("%s = %q, want %q", k, cfg[k], v)
					}
				}
				return
			}
			if !errors.Is(err, connect.ErrExtraClash) || errkind.Of(err) != errkind.Rejected || !strings.Contains(err.Error(), tc.clash) {
				t.Fatalf("Config = %v, want a rejection matching ErrExtraClash naming %s", err, tc.clash)
			}
			for _, v := range tc.extra {
				if strings.Contains(err.Error(), v) {
					t.Errorf("the error shows the value %q: %v", v, err)
				}
			}
		})
	}
}
