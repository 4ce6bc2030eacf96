package kubernetes_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/kube"
	"github.com/mm2cutover/mm2cutover/internal/kube/kubetest"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
)

// TestMain closes the Kubernetes cluster and the sandbox the tests share,
// if they started them.
func TestMain(m *testing.M) { kubetest.Main(m, sandboxtest.Close) }

// prometheusOperator is the Go module whose example/prometheus-operator-crd
// holds the CRDs of the ServiceMonitor and PrometheusRule kinds the manifests
// use; the Go module proxy serves it.
const prometheusOperator = "github.com/prometheus-operator/prometheus-operator@v0.85.0"

// installCRDs installs the ServiceMonitor and PrometheusRule CRDs (server
// side: they are too large for the last-applied annotation) and waits until
// the API server serves them.
func installCRDs(ctx context.Context, t *testing.T, c *kube.Cluster) {
	t.Helper()
	dir, err := kube.ModuleDir(ctx, prometheusOperator)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, kind := range []string{"servicemonitors", "prometheusrules"} {
		path := filepath.Join(dir, "example", "prometheus-operator-crd", "monitoring.coreos.com_"+kind+".yaml")
		if _, err := c.Kubectl(ctx, "apply", "--server-side", "--force-conflicts", "-f", path); err != nil {
			t.Fatal(err)
		}
		names = append(names, "crd/"+kind+".monitoring.coreos.com")
	}
	if err := c.WaitEstablished(ctx, names...); err != nil {
		t.Fatal(err)
	}
}

// applyNamespace creates the manifests' Namespace for real: the server
// validates a namespaced object only in a namespace that exists.
func applyNamespace(ctx context.Context, t *testing.T, c *kube.Cluster) {
	t.Helper()
	if _, err := c.Kubectl(ctx, "apply", "-f", "connect/namespace.yaml"); err != nil {
		t.Fatal(err)
	}
}

// TestServerSideValidation sends every manifest, as kustomize renders each
// directory (the bases and the example site's stages), to a real API server with server-side dry run and strict field
// validation: schemas, defaulting, admission (Pod Security "restricted" for
// the pods of the Deployment and both Jobs), and the CRDs' OpenAPI schemas
// for the ServiceMonitor and PrometheusRule. Then each edit of a value the
// API server rejects (some of which the typed decoding accepts) must fail.
func TestServerSideValidation(t *testing.T) {
	c := kubetest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	applyNamespace(ctx, t, c)
	installCRDs(ctx, t, c)
	dirs := slices.Clone(manifestDirs)
	for _, st := range siteStages {
		dirs = append(dirs, filepath.Join(exampleSite, st.name))
	}
	for _, dir := range dirs {
		out, warnings, err := c.KubectlStreams(ctx, nil, "apply", "-k", dir, "--dry-run=server", "--validate=strict")
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		// Pod Security admission only warns about a Deployment's or a Job's
		// template; the Pods themselves would be refused.
		if warnings != "" {
			t.Errorf("%s: the API server warns: %s", dir, warnings)
		}
		t.Logf("%s (server dry run):\n%s", dir, strings.TrimSpace(out))
	}
	_, warnings, err := c.KubectlStreams(ctx, strings.NewReader(strings.Replace(mustRead(t, "cutover/job.yaml"), "type: RuntimeDefault", "type: Unconfined", 1)),
		"apply", "--dry-run=server", "--validate=strict", "-f", "-")
	if want := `would violate PodSecurity "restricted:latest"`; err != nil || !strings.Contains(warnings, want) {
		t.Errorf("a Job without a seccomp profile: got %v, warnings %q; want a warning %q", err, warnings, want)
	}

	for _, tc := range []struct {
		name, file, old, new, want string
	}{
		{"PDB with both minAvailable and maxUnavailable", "connect/pdb.yaml", "  maxUnavailable: 1\n", "  maxUnavailable: 1\n  minAvailable: 2\n",
			"minAvailable and maxUnavailable cannot be both set"},
		{"maxSkew 0", "connect/deployment.yaml", "- maxSkew: 1", "- maxSkew: 0", "must be greater than zero"},
		{"negative revisionHistoryLimit", "connect/deployment.yaml", "revisionHistoryLimit: 5", "revisionHistoryLimit: -3", "must be greater than or equal to 0"},
		{"label value with a space", "connect/service.yaml", "app.kubernetes.io/component: rest", `app.kubernetes.io/component: "rest api!"`,
			"a valid label must be an empty string or consist of alphanumeric characters"},
		{"misspelt field", "connect/deployment.yaml", "minReadySeconds: 30", "minReadySecond: 30", `unknown field "spec.minReadySecond"`},
		{"scrape interval not a duration (CRD schema)", "connect/servicemonitor.yaml", "interval: 30s", "interval: 30 seconds", "spec.endpoints[0].interval"},
		{"unknown field of a CRD", "connect/servicemonitor.yaml", "interval: 30s", "intervall: 30s", `unknown field "spec.endpoints[0].intervall"`},
		{"Job podFailurePolicy on a container it does not have", "cutover/job.yaml", "containerName: offsets", "containerName: offset",
			"must be one of the container or initContainer names in the pod template"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := mustRead(t, tc.file)
			mutated := strings.Replace(b, tc.old, tc.new, 1)
			if mutated == b {
				t.Fatalf("%s has no %q to edit", tc.file, tc.old)
			}
			_, err := c.KubectlIn(ctx, strings.NewReader(mutated), "apply", "--dry-run=server", "--validate=strict", "-f", "-")
			var ke *kube.KubectlError
			if !errors.As(err, &ke) || !strings.Contains(ke.Stderr, tc.want) {
				t.Fatalf("got %v, want the API server to refuse it with %q", err, tc.want)
			}
			t.Logf("refused: %s", lastLines(ke.Stderr, 3))
		})
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
