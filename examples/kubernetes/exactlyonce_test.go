package kubernetes_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
)

// overlay is what the exactly-once variant's kustomizations hold: the
// base they build on and strategic-merge patches.
type overlay struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
	Patches    []struct {
		Path string `json:"path"`
	} `json:"patches"`
}

// TestExactlyOnceVariant: examples/kubernetes/exactly-once builds on the
// Connect cluster and the offset Job and only patches their ConfigMaps:
// every worker gets CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT=enabled; the Job
// creates an exactly-once connector and names the workers' group and
// offsets topic as the workers' ConfigMap does, in settings the Job takes
// (flags of examples/internal/settings).
func TestExactlyOnceVariant(t *testing.T) {
	m := load(t)
	flags := map[string]bool{}
	fs := flag.NewFlagSet("job", flag.ContinueOnError)
	settings.BindFlags(fs)
	fs.VisitAll(func(f *flag.Flag) { flags["MM2CUTOVER_"+strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))] = true })
	patched := map[string]map[string]string{}
	for _, dir := range []string{"exactly-once", "exactly-once/cutover"} {
		data, err := os.ReadFile(filepath.Join(dir, kustomization))
		if err != nil {
			t.Fatal(err)
		}
		var k overlay
		if err := yaml.UnmarshalStrict(data, &k); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		want := map[string]string{"exactly-once": "../connect", "exactly-once/cutover": "../../cutover"}[dir]
		if k.Kind != "Kustomization" || len(k.Resources) != 1 || k.Resources[0] != want {
			t.Errorf("%s: resources %v, want only %s", dir, k.Resources, want)
		}
		if _, ok := m.kustomizations[filepath.Clean(filepath.Join(dir, want))]; !ok {
			t.Errorf("%s builds on %s, which is not a kustomization of the examples", dir, want)
		}
		for _, p := range k.Patches {
			data, err := os.ReadFile(filepath.Join(dir, p.Path))
			if err != nil {
				t.Fatal(err)
			}
			var cm corev1.ConfigMap
			if err := yaml.UnmarshalStrict(data, &cm); err != nil {
				t.Fatalf("%s/%s: %v", dir, p.Path, err)
			}
			base, ok := m.configMaps[cm.Name]
			if !ok || base.Namespace != cm.Namespace {
				t.Errorf("%s/%s patches ConfigMap %s/%s, which the base does not have", dir, p.Path, cm.Namespace, cm.Name)
				continue
			}
			patched[cm.Name] = cm.Data
		}
	}
	workers, job := m.configMaps["mm2-connect-env"].Data, m.configMaps["mm2cutover-job-env"].Data
	if got := patched["mm2-connect-env"]["CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT"]; got != "enabled" {
		t.Errorf("the workers' CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT: %q, want enabled", got)
	}
	if _, ok := workers["CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT"]; ok {
		t.Error("the base sets CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT: the variant is the only place")
	}
	eos := patched["mm2cutover-job-env"]
	for k, want := range map[string]string{"MM2CUTOVER_EXACTLY_ONCE": "true", "MM2CUTOVER_WORKER_GROUP": workers["CONNECT_GROUP_ID"],
		"MM2CUTOVER_WORKER_OFFSET_TOPIC": workers["CONNECT_OFFSET_STORAGE_TOPIC"]} {
		if eos[k] != want {
			t.Errorf("the Job's %s: %q, want %q", k, eos[k], want)
		}
	}
	for k := range eos {
		if !flags[k] {
			t.Errorf("the Job's %s names no setting of the Job", k)
		}
		if _, ok := job[k]; ok {
			t.Errorf("the base Job sets %s already", k)
		}
	}
}
