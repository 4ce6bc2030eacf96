package kubernetes_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/mm2cutover/mm2cutover/internal/kube/kubetest"
)

// exampleSite is the site overlay the manifests ship: its values in one
// file (values/site.yaml), its stages each a kustomization over a base.
const exampleSite = "sites/example"

// siteStages are a site's stages and the base directory each applies, in
// the order they are applied.
var siteStages = []struct{ name, base string }{{"connect", "connect"}, {"cutover", "cutover"}, {"resume", "cutover/resume"}}

// siteValues is values/site.yaml. Decoded strictly: a value added to the
// file must be added here, with the places it must reach (siteTargets).
type siteValues struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	Images          struct {
		Worker string `json:"worker"`
		Job    string `json:"job"`
	} `json:"images"`
	Source    siteCluster `json:"source"`
	Target    siteCluster `json:"target"`
	APIServer struct {
		CIDR string `json:"cidr"`
		Port int32  `json:"port"`
	} `json:"apiServer"`
	MonitoringNamespace string `json:"monitoringNamespace"`
	Connect             struct {
		GroupID           string `json:"groupId"`
		ConfigTopic       string `json:"configTopic"`
		OffsetTopic       string `json:"offsetTopic"`
		StatusTopic       string `json:"statusTopic"`
		ReplicationFactor string `json:"replicationFactor"`
		Heap              string `json:"heap"`
		Memory            string `json:"memory"`
	} `json:"connect"`
	Cutover struct {
		Group       string `json:"group"`
		Topics      string `json:"topics"`
		Connector   string `json:"connector"`
		SourceAlias string `json:"sourceAlias"`
	} `json:"cutover"`
	ConnectorClients struct {
		Source string `json:"source"`
		Target string `json:"target"`
	} `json:"connectorClients"`
}

// siteCluster is one Kafka cluster's values.
type siteCluster struct {
	Bootstrap        string `json:"bootstrap"`
	CIDR             string `json:"cidr"`
	Port             int32  `json:"port"`
	SecurityProtocol string `json:"securityProtocol"`
	SASLMechanism    string `json:"saslMechanism"`
}

// readSiteValues decodes a site.yaml strictly.
func readSiteValues(t *testing.T, path string) siteValues {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSONStrict(b)
	if err != nil {
		t.Fatal(err)
	}
	var v siteValues
	strict, err := sigsjson.UnmarshalStrict(js, &v, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil || len(strict) > 0 {
		t.Fatalf("%s: %v %v (a value added to site.yaml needs its place in siteValues and siteTargets)", path, err, strict)
	}
	if v.Kind != "SiteValues" || v.Metadata.Annotations["config.kubernetes.io/local-config"] != "true" {
		t.Fatalf("%s: want a SiteValues object annotated config.kubernetes.io/local-config (kustomize leaves it out of its output)", path)
	}
	return v
}

// siteTargets says where each value of a site must land in the rendered
// manifests, as the paths flatten gives: kind/name/field path, list items
// by name where they have one. tag is the release's image tag.
func siteTargets(v siteValues, tag string) map[string]string {
	w, j := "Deployment/mm2-connect/spec.template.spec.containers[connect]", "ConfigMap/mm2cutover-job-env/data."
	c, np, jp := "ConfigMap/mm2-connect-env/data.", "NetworkPolicy/mm2-connect/spec.", "NetworkPolicy/mm2cutover-job/spec."
	port := func(p int32) string { return fmt.Sprint(p) }
	return map[string]string{
		w + ".image":                     v.Images.Worker + ":" + tag,
		w + ".resources.requests.memory": v.Connect.Memory,
		w + ".resources.limits.memory":   v.Connect.Memory,
		"Job/mm2cutover-offsets/spec.template.spec.containers[offsets].image":               v.Images.Job + ":" + tag,
		"Job/mm2cutover-resume/spec.template.spec.initContainers[resume].image":             v.Images.Job + ":" + tag,
		"Job/mm2cutover-resume/spec.template.spec.containers[verify].image":                 v.Images.Job + ":" + tag,
		c + "CONNECT_BOOTSTRAP_SERVERS":                                                     v.Target.Bootstrap,
		c + "CONNECT_SECURITY_PROTOCOL":                                                     v.Target.SecurityProtocol,
		c + "CONNECT_SASL_MECHANISM":                                                        v.Target.SASLMechanism,
		c + "CONNECT_GROUP_ID":                                                              v.Connect.GroupID,
		c + "CONNECT_CONFIG_STORAGE_TOPIC":                                                  v.Connect.ConfigTopic,
		c + "CONNECT_OFFSET_STORAGE_TOPIC":                                                  v.Connect.OffsetTopic,
		c + "CONNECT_STATUS_STORAGE_TOPIC":                                                  v.Connect.StatusTopic,
		c + "CONNECT_REPLICATION_FACTOR":                                                    v.Connect.ReplicationFactor,
		c + "KAFKA_HEAP_OPTS":                                                               v.Connect.Heap,
		j + "MM2CUTOVER_SOURCE_BOOTSTRAP":                                                   v.Source.Bootstrap,
		j + "MM2CUTOVER_TARGET_BOOTSTRAP":                                                   v.Target.Bootstrap,
		j + "MM2CUTOVER_SOURCE_SECURITY_PROTOCOL":                                           v.Source.SecurityProtocol,
		j + "MM2CUTOVER_SOURCE_SASL_MECHANISM":                                              v.Source.SASLMechanism,
		j + "MM2CUTOVER_TARGET_SECURITY_PROTOCOL":                                           v.Target.SecurityProtocol,
		j + "MM2CUTOVER_TARGET_SASL_MECHANISM":                                              v.Target.SASLMechanism,
		j + "MM2CUTOVER_GROUP":                                                              v.Cutover.Group,
		j + "MM2CUTOVER_TOPICS":                                                             v.Cutover.Topics,
		j + "MM2CUTOVER_CONNECTOR":                                                          v.Cutover.Connector,
		j + "MM2CUTOVER_SOURCE_ALIAS":                                                       v.Cutover.SourceAlias,
		"ConfigMap/mm2cutover-connector-clients/data.source-client.properties":              v.ConnectorClients.Source,
		"ConfigMap/mm2cutover-connector-clients/data.target-client.properties":              v.ConnectorClients.Target,
		np + "egress[1].to[0].ipBlock.cidr":                                                 v.Source.CIDR,
		np + "egress[1].ports[0].port":                                                      port(v.Source.Port),
		np + "egress[2].to[0].ipBlock.cidr":                                                 v.Target.CIDR,
		np + "egress[2].ports[0].port":                                                      port(v.Target.Port),
		np + "ingress[1].from[0].namespaceSelector.matchLabels.kubernetes.io/metadata.name": v.MonitoringNamespace,
		jp + "egress[1].to[0].ipBlock.cidr":                                                 v.Source.CIDR,
		jp + "egress[1].ports[0].port":                                                      port(v.Source.Port),
		jp + "egress[2].to[0].ipBlock.cidr":                                                 v.Target.CIDR,
		jp + "egress[2].ports[0].port":                                                      port(v.Target.Port),
		jp + "egress[4].to[0].ipBlock.cidr":                                                 v.APIServer.CIDR,
		jp + "egress[4].ports[0].port":                                                      port(v.APIServer.Port),
	}
}

// flatten returns every leaf of the objects of a multi-document YAML as
// kind/name/path -> value; list items that have a name are indexed by it.
func flatten(t *testing.T, docs string) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				walk(prefix+"."+k, e)
			}
		case []any:
			for i, e := range v {
				key := fmt.Sprint(i)
				if m, ok := e.(map[string]any); ok {
					if n, ok := m["name"].(string); ok {
						key = n
					}
				}
				walk(prefix+"["+key+"]", e)
			}
		default:
			out[prefix] = fmt.Sprint(v)
		}
	}
	for _, doc := range strings.Split(docs, "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("rendered YAML: %v", err)
		}
		meta, _ := obj["metadata"].(map[string]any)
		id := fmt.Sprintf("%v/%v/", obj["kind"], meta["name"])
		for k, e := range obj {
			walk(id+k, e)
		}
	}
	// The leading "." of a top-level field.
	fixed := map[string]string{}
	for k, v := range out {
		fixed[strings.Replace(k, "/.", "/", 1)] = v
	}
	return fixed
}

// writeSite writes a site overlay in dir with the example's component (its
// kustomization.yaml) and the values v, its stages over this module's bases.
func writeSite(t *testing.T, dir string, v siteValues) {
	t.Helper()
	values := filepath.Join(dir, "values")
	if err := os.MkdirAll(values, 0o755); err != nil {
		t.Fatal(err)
	}
	component, err := os.ReadFile(filepath.Join(exampleSite, "values", kustomization))
	if err != nil {
		t.Fatal(err)
	}
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{kustomization: component, "site.yaml": data} {
		if err := os.WriteFile(filepath.Join(values, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, st := range siteStages {
		abs, _ := filepath.Abs(st.base)
		rel, err := filepath.Rel(filepath.Join(dir, st.name), abs) // kustomize takes a base only as a relative path
		if err != nil {
			t.Fatal(err)
		}
		k := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\ncomponents:\n  - ../values\n", rel)
		if err := os.MkdirAll(filepath.Join(dir, st.name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, st.name, kustomization), []byte(k), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// otherSite is a site whose every value differs from the example's.
func otherSite(v siteValues) siteValues {
	v.Images.Worker, v.Images.Job = "registry.site.test:5000/kafka/mm2-connect", "registry.site.test:5000/kafka/mm2cutover-job"
	v.Source = siteCluster{"10.91.0.1:9094,10.91.0.2:9094", "10.91.0.0/24", 9094, "SASL_SSL", "SCRAM-SHA-512"}
	v.Target = siteCluster{"10.92.0.1:9095", "10.92.0.0/24", 9095, "SSL", "SCRAM-SHA-256"}
	v.APIServer.CIDR, v.APIServer.Port = "10.93.0.5/32", 443
	v.MonitoringNamespace = "observability"
	v.Connect.GroupID, v.Connect.ConfigTopic, v.Connect.OffsetTopic, v.Connect.StatusTopic = "site-connect", "site-connect-configs", "site-connect-offsets", "site-connect-status"
	v.Connect.ReplicationFactor, v.Connect.Heap, v.Connect.Memory = "2", "-Xms3g -Xmx3g", "4Gi"
	v.Cutover.Group, v.Cutover.Topics, v.Cutover.Connector, v.Cutover.SourceAlias = "site-flink", "site-a,site-b", "site-mm2", "site-src"
	v.ConnectorClients.Source = "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config=${env:MM2_SOURCE_SASL_JAAS_CONFIG}\n"
	v.ConnectorClients.Target = "security.protocol=SSL\n"
	return v
}

// TestSiteValues renders, with the test cluster's kubectl, the example site
// and a site whose every value differs, stage by stage, and compares each
// with its base: the example's values are the bases' own (so the example
// renders the bases, images aside), and the other site's values land at
// every place siteTargets lists and nowhere else. Then the API server
// validates the other site's manifests (server-side dry run, strict); the
// example's are validated by TestServerSideValidation.
func TestSiteValues(t *testing.T) {
	c := kubetest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	example := readSiteValues(t, filepath.Join(exampleSite, "values", "site.yaml"))
	tag := load(t).kustomizations["connect"].Images[0].NewTag
	render := func(dir string) map[string]string {
		t.Helper()
		out, err := c.Kubectl(ctx, "kustomize", dir)
		if err != nil {
			t.Fatalf("kubectl kustomize %s: %v", dir, err)
		}
		return flatten(t, out)
	}
	renderAll := func(site string) (map[string]string, map[string]string) {
		base, rendered := map[string]string{}, map[string]string{}
		for _, st := range siteStages {
			for k, v := range render(st.base) {
				base[k] = v
			}
			for k, v := range render(filepath.Join(site, st.name)) {
				rendered[k] = v
			}
		}
		return base, rendered
	}

	// The example renders the bases, but for the registry of its images.
	base, got := renderAll(exampleSite)
	targets := siteTargets(example, tag)
	for k, want := range targets {
		if !strings.HasSuffix(k, ".image") && base[k] != want {
			t.Errorf("the example's %s: base %q, site.yaml %q: keep the example's values the bases' own", k, base[k], want)
		}
	}
	checkSiteRender(t, base, got, targets)

	// Another site: every value reaches its places, nothing else changes.
	other := otherSite(example)
	dir := t.TempDir()
	writeSite(t, dir, other)
	base, got = renderAll(dir)
	targets = siteTargets(other, tag)
	for k, want := range targets {
		if base[k] == want {
			t.Fatalf("the other site's %s equals the base's %q: the test would not see it move", k, want)
		}
	}
	checkSiteRender(t, base, got, targets)

	applyNamespace(ctx, t, c)
	installCRDs(ctx, t, c)
	for _, st := range siteStages {
		out, err := c.Kubectl(ctx, "kustomize", filepath.Join(dir, st.name))
		if err != nil {
			t.Fatal(err)
		}
		_, warnings, err := c.KubectlStreams(ctx, bytes.NewReader([]byte(out)), "apply", "-f", "-", "--dry-run=server", "--validate=strict")
		if err != nil || warnings != "" {
			t.Errorf("the other site's %s: %v %s", st.name, err, warnings)
		}
	}
}

// checkSiteRender: got is base with exactly the targets changed to their
// values; no object is added or lost (the SiteValues object stays out).
func checkSiteRender(t *testing.T, base, got, targets map[string]string) {
	t.Helper()
	var problems []string
	for k, want := range targets {
		if g, ok := got[k]; !ok {
			problems = append(problems, fmt.Sprintf("%s: missing in the site's render", k))
		} else if g != want {
			problems = append(problems, fmt.Sprintf("%s: %q, want %q", k, g, want))
		}
	}
	for k, g := range got {
		if _, ok := targets[k]; ok {
			continue
		}
		if b, ok := base[k]; !ok {
			problems = append(problems, fmt.Sprintf("%s: in the site's render only (%q)", k, g))
		} else if b != g {
			problems = append(problems, fmt.Sprintf("%s: the site changed %q to %q, which site.yaml does not set", k, b, g))
		}
	}
	for k := range base {
		if _, ok := got[k]; !ok {
			problems = append(problems, fmt.Sprintf("%s: lost in the site's render", k))
		}
	}
	slices.Sort(problems)
	for _, p := range problems {
		t.Error(p)
	}
}
