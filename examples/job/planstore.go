package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
)

// The plan the Job builds is kept in a ConfigMap of its own namespace
// (MM2CUTOVER_PLAN_CONFIGMAP, key plan.json), written before any offset is:
// the operator reviews it there, and the steps after the Job (resume,
// verify, status, rollback) mount it. A retried Job finds it there and
// applies the same plan rather than build another. The Job reaches the
// Kubernetes API with its service account's token; its Role allows get and
// update on that one ConfigMap and nothing else (examples/kubernetes/cutover).

// planKey is the ConfigMap's key for the plan, the file name the steps
// after the Job mount it as.
const planKey = "plan.json"

// serviceAccountDir is where Kubernetes mounts the Pod's service account
// token, CA and namespace.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// errStoreSettings matches a plan store that cannot be used as configured
// (not in a Pod, no token mounted, the ConfigMap or the Role missing): no
// retry helps, and the Job exits 2.
var errStoreSettings = fmt.Errorf("%w: the plan ConfigMap", settings.ErrSettings)

// planStore reads and writes one ConfigMap through the Kubernetes API.
type planStore struct {
	url    string // .../api/v1/namespaces/NS/configmaps/NAME
	ns     string
	name   string
	token  string
	client *http.Client
}

// newPlanStore returns the store for the ConfigMap name in the Pod's own
// namespace, from the in-cluster service account (token, CA, namespace) and
// the API server address Kubernetes gives every Pod
// (KUBERNETES_SERVICE_HOST and _PORT).
func newPlanStore(name string) (*planStore, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, fmt.Errorf("%w %s: not in a Kubernetes Pod (no KUBERNETES_SERVICE_HOST)", errStoreSettings, name)
	}
	read := func(f string) (string, error) {
		b, err := os.ReadFile(serviceAccountDir + "/" + f)
		if err != nil {
			return "", fmt.Errorf("%w %s: the Pod's service account %s: %w (automountServiceAccountToken must be true)", errStoreSettings, name, f, err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	token, err := read("token")
	if err != nil {
		return nil, err
	}
	ns, err := read("namespace")
	if err != nil {
		return nil, err
	}
	ca, err := read("ca.crt")
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(ca)) {
		return nil, fmt.Errorf("%w %s: no certificate in the service account's ca.crt", errStoreSettings, name)
	}
	return &planStore{
		url:   "https://" + net.JoinHostPort(host, port) + "/api/v1/namespaces/" + url.PathEscape(ns) + "/configmaps/" + url.PathEscape(name),
		ns:    ns,
		name:  name,
		token: token,
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		}},
	}, nil
}

// configMap is the part of a ConfigMap the store reads and writes.
type configMap struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name            string            `json:"name"`
		Namespace       string            `json:"namespace"`
		ResourceVersion string            `json:"resourceVersion,omitempty"`
		Labels          map[string]string `json:"labels,omitempty"`
		Annotations     map[string]string `json:"annotations,omitempty"`
	} `json:"metadata"`
	Data       map[string]string `json:"data,omitempty"`
	BinaryData map[string]string `json:"binaryData,omitempty"`
}

// load returns the ConfigMap; its plan is Data[planKey], absent until a
// Job stored one (or an operator put a reviewed plan there).
func (s *planStore) load(ctx context.Context) (*configMap, error) {
	var cm configMap
	if err := s.do(ctx, http.MethodGet, nil, &cm); err != nil {
		return nil, err
	}
	return &cm, nil
}

// save writes plan into cm (as loaded) with cm's resourceVersion, so that a
// plan another attempt stored in between is never overwritten: the API
// server answers 409 and save returns an error.
func (s *planStore) save(ctx context.Context, cm *configMap, plan []byte, fingerprint string) error {
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	if cm.Metadata.Annotations == nil {
		cm.Metadata.Annotations = map[string]string{}
	}
	cm.Data[planKey] = string(plan)
	cm.Metadata.Annotations["mm2cutover.io/plan-fingerprint"] = fingerprint
	cm.APIVersion, cm.Kind = "v1", "ConfigMap"
	b, err := json.Marshal(cm)
	if err != nil {
		return err
	}
	return s.do(ctx, http.MethodPut, b, nil)
}

func (s *planStore) do(ctx context.Context, method string, body []byte, into any) error {
	req, err := http.NewRequestWithContext(ctx, method, s.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("plan ConfigMap %s/%s: %w", s.ns, s.name, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var status struct{ Message string }
		json.Unmarshal(b, &status)
		err := fmt.Errorf("plan ConfigMap %s/%s: %s %s: %s", s.ns, s.name, method, resp.Status, status.Message)
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
			// The Role, the binding or the ConfigMap itself is missing: the
			// manifests were not applied as written.
			return fmt.Errorf("%w: %w", errStoreSettings, err)
		}
		return err
	}
	if into != nil {
		return json.Unmarshal(b, into)
	}
	return nil
}
