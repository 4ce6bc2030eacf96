package kube

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// checkManifest is CheckNetwork's namespace: a probe server behind a
// Service, and a Pod that fetches from it by the Service's DNS name.
const checkManifest = `apiVersion: v1
kind: Namespace
metadata:
  name: mm2kube-check
---
apiVersion: v1
kind: Pod
metadata:
  name: server
  namespace: mm2kube-check
  labels: {app: server}
spec:
  containers:
  - name: probe
    image: %[1]s
    imagePullPolicy: Never
    args: [serve, ":8080"]
    ports: [{containerPort: 8080}]
---
apiVersion: v1
kind: Service
metadata:
  name: server
  namespace: mm2kube-check
spec:
  selector: {app: server}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Pod
metadata:
  name: client
  namespace: mm2kube-check
spec:
  restartPolicy: Never
  containers:
  - name: probe
    image: %[1]s
    imagePullPolicy: Never
    args: [get, "http://server.mm2kube-check.svc.cluster.local/"]
`

// WaitEstablished waits up to two minutes until the API server serves
// each CRD (names such as "crd/servicemonitors.monitoring.coreos.com").
// kubectl wait fails at once, instead of waiting, on a CRD whose status
// the API server has not written yet (".status.conditions accessor error:
// <nil>", seen in a loaded run): that answer is asked again; any other
// ends the wait.
func (c *Cluster) WaitEstablished(ctx context.Context, crds ...string) error {
	return c.waitFor(ctx, "CRDs established", 2*time.Minute, func() error {
		_, err := c.Kubectl(ctx, append([]string{"wait", "--for=condition=Established", "--timeout=60s"}, crds...)...)
		if err != nil && !strings.Contains(err.Error(), "accessor error") {
			return fmt.Errorf("%w: %w", errFailed, err)
		}
		return err
	})
}

// CheckNetwork proves the cluster's network as Pods use it: a Pod resolves
// a Service's name through cluster DNS and reaches the Pod behind it
// through the ClusterIP (kube-proxy). It removes what it made.
func CheckNetwork(ctx context.Context, c *Cluster) error {
	if err := c.ImportImage(ctx, c.bins.ProbeImage, ProbeImageRef); err != nil {
		return err
	}
	defer c.Kubectl(context.WithoutCancel(ctx), "delete", "namespace", "mm2kube-check", "--wait=false")
	// A Pod of a namespace just created is refused until the
	// controller-manager has made the namespace's "default" service
	// account (seconds under load; CI saw the refusal): apply again until
	// it exists. Any other refusal ends the check at once.
	err := c.waitFor(ctx, "the network check's service account", 2*time.Minute, func() error {
		_, err := c.KubectlIn(ctx, strings.NewReader(fmt.Sprintf(checkManifest, ProbeImageRef)), "apply", "-f", "-")
		if err != nil && !strings.Contains(err.Error(), `serviceaccount "default" not found`) {
			return fmt.Errorf("%w: %w", errFailed, err)
		}
		return err
	})
	if err != nil {
		return err
	}
	err = c.waitFor(ctx, "the network check's client Pod", 2*time.Minute, func() error {
		out, err := c.Kubectl(ctx, "-n", "mm2kube-check", "get", "pod", "client", "-o", "jsonpath={.status.phase}")
		switch {
		case err != nil:
			return err
		case out == "Succeeded":
			return nil
		case out == "Failed":
			return fmt.Errorf("client Pod %w", errFailed)
		}
		return fmt.Errorf("client Pod %s", out)
	})
	if err != nil {
		logs, _ := c.Kubectl(ctx, "-n", "mm2kube-check", "logs", "client")
		return fmt.Errorf("kube: network check: %w\nclient's log:\n%s", err, lastLines(logs, 20))
	}
	return nil
}
