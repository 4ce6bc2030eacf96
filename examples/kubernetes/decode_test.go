package kubernetes_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// The directories whose YAML files are manifests, each with its own
// kustomization.yaml.
var manifestDirs = []string{"connect", "cutover", "cutover/resume"}

// The worker image's files, relative to this directory.
const (
	dockerfilePath  = "../../docker/mm2/Dockerfile"
	propertiesPath  = "../../docker/mm2/connect-mm2.properties"
	entrypointPath  = "../../docker/mm2/docker-entrypoint.sh"
	readmePath      = "README.md"
	kustomization   = "kustomization.yaml"
	workerConfigMap = "mm2-connect-env"
)

// ServiceMonitor is the part of the Prometheus Operator's ServiceMonitor
// (monitoring.coreos.com/v1) these manifests use; any other field fails the
// strict decoding, so add it here (with the CRD's exact spelling) before using it.
type ServiceMonitor struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta  `json:"metadata"`
	Spec            ServiceMonitorSpec `json:"spec"`
}

// ServiceMonitorSpec selects Services and the ports to scrape.
type ServiceMonitorSpec struct {
	Selector          metav1.LabelSelector `json:"selector"`
	NamespaceSelector *NamespaceSelector   `json:"namespaceSelector,omitempty"`
	JobLabel          string               `json:"jobLabel,omitempty"`
	Endpoints         []Endpoint           `json:"endpoints"`
}

// NamespaceSelector of a ServiceMonitor; empty means its own namespace.
type NamespaceSelector struct {
	Any        bool     `json:"any,omitempty"`
	MatchNames []string `json:"matchNames,omitempty"`
}

// Endpoint is one scraped port of the selected Services, by port name.
type Endpoint struct {
	Port          string `json:"port"`
	Path          string `json:"path,omitempty"`
	Scheme        string `json:"scheme,omitempty"`
	Interval      string `json:"interval,omitempty"`
	ScrapeTimeout string `json:"scrapeTimeout,omitempty"`
}

// PrometheusRule is the part of the Prometheus Operator's PrometheusRule
// (monitoring.coreos.com/v1) these manifests use; any other field fails the
// strict decoding.
type PrometheusRule struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta  `json:"metadata"`
	Spec            PrometheusRuleSpec `json:"spec"`
}

// PrometheusRuleSpec holds rule groups, as in a Prometheus rule file.
type PrometheusRuleSpec struct {
	Groups []RuleGroup `json:"groups"`
}

// RuleGroup is a named list of rules evaluated together.
type RuleGroup struct {
	Name     string `json:"name"`
	Interval string `json:"interval,omitempty"`
	Rules    []Rule `json:"rules"`
}

// Rule is an alerting rule (Alert set) or a recording rule (Record set).
type Rule struct {
	Alert       string            `json:"alert,omitempty"`
	Record      string            `json:"record,omitempty"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Kustomization is the part of kustomize's Kustomization these manifests use.
type Kustomization struct {
	metav1.TypeMeta `json:",inline"`
	Resources       []string `json:"resources"`
	Images          []Image  `json:"images,omitempty"`
}

// Image is a kustomize image override.
type Image struct {
	Name    string `json:"name"`
	NewName string `json:"newName,omitempty"`
	NewTag  string `json:"newTag,omitempty"`
	Digest  string `json:"digest,omitempty"`
}

// newObject returns an empty typed object for apiVersion and kind.
func newObject(apiVersion, kind string) (any, error) {
	switch apiVersion + "/" + kind {
	case "v1/Namespace":
		return &corev1.Namespace{}, nil
	case "v1/ServiceAccount":
		return &corev1.ServiceAccount{}, nil
	case "v1/ConfigMap":
		return &corev1.ConfigMap{}, nil
	case "v1/Service":
		return &corev1.Service{}, nil
	case "apps/v1/Deployment":
		return &appsv1.Deployment{}, nil
	case "batch/v1/Job":
		return &batchv1.Job{}, nil
	case "policy/v1/PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}, nil
	case "rbac.authorization.k8s.io/v1/Role":
		return &rbacv1.Role{}, nil
	case "rbac.authorization.k8s.io/v1/RoleBinding":
		return &rbacv1.RoleBinding{}, nil
	case "networking.k8s.io/v1/NetworkPolicy":
		return &networkingv1.NetworkPolicy{}, nil
	case "monitoring.coreos.com/v1/ServiceMonitor":
		return &ServiceMonitor{}, nil
	case "monitoring.coreos.com/v1/PrometheusRule":
		return &PrometheusRule{}, nil
	case "kustomize.config.k8s.io/v1beta1/Kustomization":
		return &Kustomization{}, nil
	}
	return nil, fmt.Errorf("no Go type for apiVersion %q kind %q (a Secret, for one, is never a file here)", apiVersion, kind)
}

// decodeStrict decodes one YAML document into its typed Kubernetes object the
// way the API server's strict field validation does: duplicate keys, unknown
// fields and fields spelt with the wrong case all fail.
func decodeStrict(data []byte) (any, error) {
	if docs := regexp.MustCompile(`(?m)^---\s*$`).FindAllIndex(data, -1); len(docs) > 0 {
		return nil, errors.New("more than one YAML document: keep one object per file")
	}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("yaml: %w", err)
	}
	var tm metav1.TypeMeta
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(js, &tm); err != nil {
		return nil, fmt.Errorf("apiVersion/kind: %w", err)
	}
	obj, err := newObject(tm.APIVersion, tm.Kind)
	if err != nil {
		return nil, err
	}
	strict, err := sigsjson.UnmarshalStrict(js, obj, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tm.Kind, err)
	}
	if len(strict) > 0 {
		return nil, fmt.Errorf("%s: %w", tm.Kind, errors.Join(strict...))
	}
	return obj, nil
}

// manifests is every decoded file of manifestDirs, plus indexes by kind.
type manifests struct {
	files          map[string]any // "cutover/job.yaml" -> *batchv1.Job
	namespaces     []*corev1.Namespace
	serviceAccts   map[string]*corev1.ServiceAccount
	configMaps     map[string]*corev1.ConfigMap
	services       map[string]*corev1.Service
	netpols        map[string]*networkingv1.NetworkPolicy
	deployments    []*appsv1.Deployment
	jobs           []*batchv1.Job
	pdbs           []*policyv1.PodDisruptionBudget
	roles          []*rbacv1.Role
	roleBindings   []*rbacv1.RoleBinding
	monitors       []*ServiceMonitor
	rules          []*PrometheusRule
	kustomizations map[string]*Kustomization // by directory
}

// yamlFiles lists the .yaml and .yml files of dir, as paths relative to this directory.
func yamlFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && (strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// load decodes every manifest strictly; a file that does not decode fails the test.
func load(t *testing.T) *manifests {
	t.Helper()
	m := &manifests{
		files:          map[string]any{},
		serviceAccts:   map[string]*corev1.ServiceAccount{},
		configMaps:     map[string]*corev1.ConfigMap{},
		services:       map[string]*corev1.Service{},
		netpols:        map[string]*networkingv1.NetworkPolicy{},
		kustomizations: map[string]*Kustomization{},
	}
	for _, dir := range manifestDirs {
		for _, path := range yamlFiles(t, dir) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			obj, err := decodeStrict(data)
			if err != nil {
				t.Fatalf("%s does not decode strictly: %v", path, err)
			}
			m.files[path] = obj
			switch o := obj.(type) {
			case *corev1.Namespace:
				m.namespaces = append(m.namespaces, o)
			case *corev1.ServiceAccount:
				m.serviceAccts[o.Name] = o
			case *corev1.ConfigMap:
				m.configMaps[o.Name] = o
			case *corev1.Service:
				m.services[o.Name] = o
			case *networkingv1.NetworkPolicy:
				m.netpols[o.Name] = o
			case *appsv1.Deployment:
				m.deployments = append(m.deployments, o)
			case *batchv1.Job:
				m.jobs = append(m.jobs, o)
			case *policyv1.PodDisruptionBudget:
				m.pdbs = append(m.pdbs, o)
			case *rbacv1.Role:
				m.roles = append(m.roles, o)
			case *rbacv1.RoleBinding:
				m.roleBindings = append(m.roleBindings, o)
			case *ServiceMonitor:
				m.monitors = append(m.monitors, o)
			case *PrometheusRule:
				m.rules = append(m.rules, o)
			case *Kustomization:
				if filepath.Base(path) != kustomization {
					t.Fatalf("%s: a Kustomization must be named %s", path, kustomization)
				}
				m.kustomizations[dir] = o
			}
		}
	}
	for _, c := range []struct {
		what      string
		got, want int
	}{
		{"Namespaces", len(m.namespaces), 1},
		{"Deployments", len(m.deployments), 1},
		{"Jobs", len(m.jobs), 2}, // the offset Job (cutover/) and the resume Job (cutover/resume/)
		{"PodDisruptionBudgets", len(m.pdbs), 1},
		{"ServiceMonitors", len(m.monitors), 1},
		{"PrometheusRules", len(m.rules), 1},
		{"Kustomizations", len(m.kustomizations), len(manifestDirs)},
	} {
		if c.got != c.want {
			t.Fatalf("%s: got %d, want %d", c.what, c.got, c.want)
		}
	}
	return m
}

func (m *manifests) deployment() *appsv1.Deployment { return m.deployments[0] }
func (m *manifests) job() *batchv1.Job              { return m.jobs[0] }
func (m *manifests) resumeJob() *batchv1.Job        { return m.jobs[1] }

// worker is the Connect container of the Deployment.
func (m *manifests) worker(t *testing.T) *corev1.Container {
	t.Helper()
	cs := m.deployment().Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("Deployment containers: got %d, want 1", len(cs))
	}
	return &cs[0]
}

// offsetJob is the container of the offset Job.
func (m *manifests) offsetJob(t *testing.T) *corev1.Container {
	t.Helper()
	cs := m.job().Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("Job containers: got %d, want 1", len(cs))
	}
	return &cs[0]
}

// envVar says where one environment variable of a container comes from.
type envVar struct {
	value      string // literal value, or the ConfigMap's value
	configMap  string // set when the value comes from a ConfigMap (env or envFrom)
	fieldPath  string // Downward API
	secretName string // secretKeyRef
	secretKey  string
}

// environment resolves a container's environment as the kubelet does:
// envFrom first, then env, later entries overriding earlier ones. A missing
// non-optional ConfigMap fails the test.
func (m *manifests) environment(t *testing.T, c *corev1.Container) map[string]envVar {
	t.Helper()
	env := map[string]envVar{}
	for _, ef := range c.EnvFrom {
		if ef.SecretRef != nil {
			t.Errorf("container %s: envFrom a Secret (%s) puts every key of it in the environment; use secretKeyRef per variable", c.Name, ef.SecretRef.Name)
		}
		if ef.ConfigMapRef == nil {
			continue
		}
		cm, ok := m.configMaps[ef.ConfigMapRef.Name]
		if !ok {
			if ef.ConfigMapRef.Optional == nil || !*ef.ConfigMapRef.Optional {
				t.Errorf("container %s: envFrom ConfigMap %q is not among the manifests", c.Name, ef.ConfigMapRef.Name)
			}
			continue
		}
		for k, v := range cm.Data {
			env[ef.Prefix+k] = envVar{value: v, configMap: cm.Name}
		}
	}
	for _, e := range c.Env {
		v := envVar{value: e.Value}
		if vf := e.ValueFrom; vf != nil {
			switch {
			case vf.FieldRef != nil:
				v.fieldPath = vf.FieldRef.FieldPath
			case vf.SecretKeyRef != nil:
				v.secretName, v.secretKey = vf.SecretKeyRef.Name, vf.SecretKeyRef.Key
			case vf.ConfigMapKeyRef != nil:
				cm, ok := m.configMaps[vf.ConfigMapKeyRef.Name]
				if !ok {
					t.Errorf("container %s: %s: ConfigMap %q is not among the manifests", c.Name, e.Name, vf.ConfigMapKeyRef.Name)
					continue
				}
				val, ok := cm.Data[vf.ConfigMapKeyRef.Key]
				if !ok {
					t.Errorf("container %s: %s: ConfigMap %q has no key %q", c.Name, e.Name, cm.Name, vf.ConfigMapKeyRef.Key)
				}
				v.value, v.configMap = val, cm.Name
			}
		}
		env[e.Name] = v
	}
	return env
}

// properties reads a Java properties file (key=value lines, # comments).
func properties(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	props, err := parseProperties(string(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return props
}

// property is one key=value line of a properties file.
type property struct {
	line       int
	key, value string
}

// propertyLines parses a properties file as examples/internal/settings'
// readProperties does (the Job's parser): one key=value per line, split at
// the first "=", both sides trimmed; blank lines and # or ! comments skipped.
// It has no line continuations, so a line ending in a backslash is an error.
func propertyLines(data string) ([]property, error) {
	var out []property
	sc := bufio.NewScanner(strings.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "!") {
			continue
		}
		if strings.HasSuffix(line, `\`) {
			return nil, fmt.Errorf("line %d: got a continuation, want one key=value per line (the Job's parser has no continuations)", n)
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("line %d: got %q, want key=value", n, line)
		}
		out = append(out, property{n, strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return out, sc.Err()
}

// parseProperties is propertyLines as a map; a later line wins, as in the Job.
func parseProperties(data string) (map[string]string, error) {
	lines, err := propertyLines(data)
	if err != nil {
		return nil, err
	}
	props := map[string]string{}
	for _, p := range lines {
		props[p.key] = p.value
	}
	return props, nil
}

// dockerfile is what the final stage of docker/mm2/Dockerfile declares.
type dockerfile struct {
	uid, gid int64
	expose   []int32
}

func readDockerfile(t *testing.T) dockerfile {
	t.Helper()
	data, err := os.ReadFile(dockerfilePath)
	if err != nil {
		t.Fatal(err)
	}
	var d dockerfile
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "FROM": // a new stage: only the last one counts
			d = dockerfile{}
		case "USER":
			u, g, _ := strings.Cut(f[1], ":")
			uid, err := strconv.ParseInt(u, 10, 64)
			if err != nil {
				t.Fatalf("%s: USER %q is not numeric: runAsNonRoot needs a numeric user", dockerfilePath, f[1])
			}
			d.uid, d.gid = uid, uid
			if g != "" {
				if d.gid, err = strconv.ParseInt(g, 10, 64); err != nil {
					t.Fatalf("%s: USER group %q is not numeric", dockerfilePath, g)
				}
			}
		case "EXPOSE":
			for _, p := range f[1:] {
				n, err := strconv.ParseInt(strings.TrimSuffix(p, "/tcp"), 10, 32)
				if err != nil {
					t.Fatalf("%s: EXPOSE %q", dockerfilePath, p)
				}
				d.expose = append(d.expose, int32(n))
			}
		}
	}
	if d.uid == 0 || len(d.expose) != 1 {
		t.Fatalf("%s: final stage has USER %d and EXPOSE %v, want a non-root USER and one port", dockerfilePath, d.uid, d.expose)
	}
	return d
}

// entrypointDefaults are the variables docker-entrypoint.sh gives a default
// (`export NAME=${NAME:-...}`).
func entrypointDefaults(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(entrypointPath)
	if err != nil {
		t.Fatal(err)
	}
	defaults := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s*(?:export\s+)?(\w+)=\$\{(\w+):-`).FindAllStringSubmatch(string(data), -1) {
		if m[1] == m[2] {
			defaults[m[1]] = true
		}
	}
	return defaults
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func parseInt(t *testing.T, what, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%s: %q is not an integer", what, s)
	}
	return n
}

func TestEveryManifestDecodesStrictly(t *testing.T) {
	for _, dir := range manifestDirs {
		for _, path := range yamlFiles(t, dir) {
			t.Run(path, func(t *testing.T) {
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := decodeStrict(data); err != nil {
					t.Errorf("got %v, want a strict decode", err)
				}
			})
		}
	}
}

// TestStrictDecodingRejectsMutations proves that decodeStrict is strict: each
// mutation of a valid manifest is a mistake the API server would reject or
// silently drop.
func TestStrictDecodingRejectsMutations(t *testing.T) {
	for _, tc := range []struct {
		name, file, old, new, want string
	}{
		{"unknown field in spec", "connect/deployment.yaml", "  replicas: 3\n", "  replicas: 3\n  replica: 3\n", `unknown field "spec.replica"`},
		{"misspelt probe", "connect/deployment.yaml", "livenessProbe:", "livenesProbe:", `unknown field "spec.template.spec.containers[0].livenesProbe"`},
		{"wrong case", "connect/deployment.yaml", "containerPort: 8088", "ContainerPort: 8088", `unknown field "spec.template.spec.containers[0].ports[0].ContainerPort"`},
		{"duplicate key", "connect/service.yaml", "  type: ClusterIP\n", "  type: ClusterIP\n  type: NodePort\n", `key "type" already set`},
		{"wrong type", "connect/pdb.yaml", "maxUnavailable: 1", "maxUnavailable: [1]", `maxUnavailable`},
		{"number where a string is wanted", "connect/configmap.yaml", `CONNECT_REPLICATION_FACTOR: "3"`, `CONNECT_REPLICATION_FACTOR: 3`, `cannot unmarshal number into Go struct field ConfigMap.data of type string`},
		{"unknown ServiceMonitor field", "connect/servicemonitor.yaml", "      interval: 30s\n", "      interval: 30s\n      scrapeInterval: 30s\n", `unknown field "spec.endpoints[0].scrapeInterval"`},
		{"unknown PrometheusRule field", "connect/prometheusrule.yaml", "          for: 5m\n", "          for: 5m\n          duration: 5m\n", `unknown field "spec.groups[1].rules[0].duration"`},
		{"alert expression as a list", "connect/prometheusrule.yaml", "expr: up{", "expr:\n            - up{", "cannot unmarshal array"},
		{"unknown kustomization field", "connect/kustomization.yaml", "resources:", "resource:", `unknown field "resource"`},
		{"unknown Job field", "cutover/job.yaml", "  backoffLimit: 3\n", "  backoffLimit: 3\n  retries: 3\n", `unknown field "spec.retries"`},
		{"second document", "connect/pdb.yaml", "apiVersion: policy/v1\n", "apiVersion: v1\nkind: ConfigMap\n---\napiVersion: policy/v1\n", "more than one YAML document"},
		{"unknown kind", "connect/pdb.yaml", "kind: PodDisruptionBudget", "kind: PodDisruptionBudgets", "no Go type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := decodeStrict(data); err != nil {
				t.Fatalf("unmutated %s: %v", tc.file, err)
			}
			if !bytes.Contains(data, []byte(tc.old)) {
				t.Fatalf("%s does not contain %q: update the mutation", tc.file, tc.old)
			}
			mutated := bytes.Replace(data, []byte(tc.old), []byte(tc.new), 1)
			_, err = decodeStrict(mutated)
			if err == nil {
				t.Fatalf("mutated %s decoded without error, want an error mentioning %q", tc.file, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %q, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestKustomizationListsEveryManifest(t *testing.T) {
	m := load(t)
	for _, dir := range manifestDirs {
		t.Run(dir, func(t *testing.T) {
			k := m.kustomizations[dir]
			var want []string
			for _, path := range yamlFiles(t, dir) {
				if filepath.Base(path) != kustomization {
					want = append(want, filepath.Base(path))
				}
			}
			got := slices.Clone(k.Resources)
			sort.Strings(got)
			sort.Strings(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s resources: got %v, want every manifest of the directory %v", filepath.Join(dir, kustomization), got, want)
			}
			if len(slices.Compact(slices.Clone(got))) != len(got) {
				t.Errorf("%s lists a file twice: %v", filepath.Join(dir, kustomization), got)
			}
		})
	}
}

func imageName(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}

func TestKustomizationImagesMatchContainers(t *testing.T) {
	m := load(t)
	for _, tc := range []struct {
		dir string
		c   *corev1.Container
	}{
		{"connect", m.worker(t)},
		{"cutover", m.offsetJob(t)},
	} {
		var names []string
		for _, img := range m.kustomizations[tc.dir].Images {
			names = append(names, img.Name)
		}
		if got := imageName(tc.c.Image); !slices.Contains(names, got) {
			t.Errorf("container %s image %q: got kustomize images %v in %s, want one named %q", tc.c.Name, tc.c.Image, names, tc.dir, got)
		}
	}
}
