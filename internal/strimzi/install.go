package strimzi

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/containers"
	"github.com/mm2cutover/mm2cutover/internal/kube"
)

// The operator runs as a Pod, as Strimzi ships it (its Deployment, its
// ServiceAccount and RBAC, its ConfigMap), rather than as a process with a
// kubeconfig: what is tested is then what users install, the operator
// reaches the Connect workers' REST API by the Service names it computes
// (cluster DNS answers them only inside the cluster), and its RBAC is
// exercised by the API server.

// Install puts the operator on c in namespace ns, watching ns: the images
// imported into the cluster under the names Strimzi's Deployment gives
// them with quay.io/strimzi/ read localhost/strimzi/ (so nothing is ever
// pulled), every CRD Strimzi ships (server-side apply), the RBAC with its
// subjects in ns, the ConfigMap, and the Deployment with three changes: the
// image names above, and a startup probe that gives the JVM ten minutes on
// a loaded machine before the liveness probe counts (the shipped liveness
// probe allows about 100 s), and fabric8's request timeout raised from 10 s
// to 60 s (KUBERNETES_REQUEST_TIMEOUT). It returns when the operator's Pod
// is ready.
func Install(ctx context.Context, c *kube.Cluster, p *containers.Podman, a Artifacts, imgs Images, ns string) error {
	for ref, as := range map[string]string{imgs.Operator: ClusterOperatorImage, imgs.Kafka: KafkaImage} {
		if err := c.LoadPodmanImage(ctx, p, ref, as); err != nil {
			return err
		}
	}
	if _, err := c.KubectlIn(ctx, strings.NewReader(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"`+ns+`"}}`), "apply", "-f", "-"); err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(a.Install, "*.yaml"))
	if err != nil {
		return err
	}
	slices.Sort(files)
	var crds []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		text := localImages(strings.ReplaceAll(string(b), "namespace: myproject", "namespace: "+ns))
		switch base := filepath.Base(f); {
		case strings.Contains(base, "-Crd-"):
			crds = append(crds, f)
			if _, err := c.Kubectl(ctx, "apply", "--server-side", "--force-conflicts", "-f", f); err != nil {
				return err
			}
		case strings.Contains(base, "-Deployment-"):
			if text, err = deployment(ctx, c, text, ns); err != nil {
				return err
			}
			fallthrough
		default:
			if _, err := c.KubectlIn(ctx, strings.NewReader(text), "apply", "-n", ns, "-f", "-"); err != nil {
				return fmt.Errorf("strimzi: %s: %w", filepath.Base(f), err)
			}
		}
	}
	var established []string
	for _, f := range crds {
		name, err := c.Kubectl(ctx, "create", "--dry-run=client", "-f", f, "-o", "jsonpath={.metadata.name}")
		if err != nil {
			return err
		}
		established = append(established, "crd/"+strings.TrimSpace(name))
	}
	if err := c.WaitEstablished(ctx, established...); err != nil {
		return err
	}
	return WaitOperator(ctx, c, ns, 15*time.Minute)
}

// WaitOperator waits until the operator's Deployment in ns has rolled out.
func WaitOperator(ctx context.Context, c *kube.Cluster, ns string, timeout time.Duration) error {
	out, err := c.Kubectl(ctx, "-n", ns, "rollout", "status", "deployment/strimzi-cluster-operator", fmt.Sprintf("--timeout=%s", timeout))
	if err != nil {
		logs, _ := c.Kubectl(ctx, "-n", ns, "logs", "deployment/strimzi-cluster-operator", "--tail=40")
		pods, _ := c.Kubectl(ctx, "-n", ns, "get", "pods", "-o", "wide")
		return fmt.Errorf("strimzi: the operator did not roll out: %w\n%s\n%s\n%s", err, out, pods, logs)
	}
	return nil
}

// localImages renames Strimzi's images as Install imports them.
func localImages(text string) string {
	return strings.ReplaceAll(text, "quay.io/strimzi/", "localhost/strimzi/")
}

// deployment returns the operator's Deployment with its image never pulled
// and a startup probe.
func deployment(ctx context.Context, c *kube.Cluster, yaml, ns string) (string, error) {
	out, err := c.KubectlIn(ctx, strings.NewReader(yaml), "create", "--dry-run=client", "-n", ns, "-f", "-", "-o", "json")
	if err != nil {
		return "", err
	}
	var d map[string]any
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		return "", err
	}
	spec, _ := d["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	pod, _ := tmpl["spec"].(map[string]any)
	ctrs, _ := pod["containers"].([]any)
	if len(ctrs) != 1 {
		return "", fmt.Errorf("strimzi: the operator's Deployment has %d containers, want 1", len(ctrs))
	}
	ctr := ctrs[0].(map[string]any)
	ctr["imagePullPolicy"] = "Never"
	// fabric8's request timeout, 10 s by default: seen on a machine at load
	// 40, the operator's first informer lists timed out and it restarted,
	// twice, before it ran.
	env, _ := ctr["env"].([]any)
	ctr["env"] = append(env, map[string]any{"name": "KUBERNETES_REQUEST_TIMEOUT", "value": "60000"})
	ctr["startupProbe"] = map[string]any{"httpGet": map[string]any{"path": "/healthy", "port": "http"}, "periodSeconds": 10, "failureThreshold": 60}
	b, err := json.Marshal(d)
	return string(b), err
}
