package kubernetes_test

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const (
	restPortName    = "rest"
	metricsPortName = "metrics"
	restService     = "mm2-connect"
	metricsService  = "mm2-connect-metrics"
	jobConfigMap    = "mm2cutover-job-env"
	planConfigMap   = "mm2cutover-plan"
)

// selects reports whether a label selector selects a set of labels. An empty
// selector selects everything, a nil one nothing (as in NetworkPolicy peers).
func selects(t *testing.T, sel *metav1.LabelSelector, lbls map[string]string) bool {
	t.Helper()
	if sel == nil {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatalf("selector %v: %v", sel, err)
	}
	return s.Matches(labels.Set(lbls))
}

// containerPort resolves a port reference (a name or a number) against a
// container's declared ports, as Services, probes and NetworkPolicies do.
func containerPort(c *corev1.Container, ref intstr.IntOrString) (corev1.ContainerPort, bool) {
	for _, p := range c.Ports {
		if (ref.Type == intstr.String && p.Name == ref.StrVal) || (ref.Type == intstr.Int && p.ContainerPort == ref.IntVal) {
			return p, true
		}
	}
	return corev1.ContainerPort{}, false
}

func namedPort(t *testing.T, c *corev1.Container, name string) int32 {
	t.Helper()
	p, ok := containerPort(c, intstr.FromString(name))
	if !ok {
		t.Fatalf("container %s has no port named %q", c.Name, name)
	}
	return p.ContainerPort
}

// servicePort finds a Service port by name.
func servicePort(t *testing.T, svc *corev1.Service, name string) corev1.ServicePort {
	t.Helper()
	for _, p := range svc.Spec.Ports {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("Service %s has no port named %q", svc.Name, name)
	return corev1.ServicePort{}
}

// portsAllow reports whether a NetworkPolicy rule's ports admit TCP/UDP
// traffic to number on the destination container dst (named ports resolve
// against it; nil dst means the destination is outside the cluster).
func portsAllow(ports []networkingv1.NetworkPolicyPort, dst *corev1.Container, proto corev1.Protocol, number int32) bool {
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		pp := corev1.ProtocolTCP
		if p.Protocol != nil {
			pp = *p.Protocol
		}
		if pp != proto {
			continue
		}
		if p.Port == nil {
			return true
		}
		if p.Port.Type == intstr.String {
			if dst != nil {
				if cp, ok := containerPort(dst, *p.Port); ok && cp.ContainerPort == number {
					return true
				}
			}
			continue
		}
		hi := p.Port.IntVal
		if p.EndPort != nil {
			hi = *p.EndPort
		}
		if p.Port.IntVal <= number && number <= hi {
			return true
		}
	}
	return false
}

// podPeer reports whether a peer selects pods with these labels in the policy's
// own namespace (a podSelector without a namespaceSelector).
func podPeer(t *testing.T, peer networkingv1.NetworkPolicyPeer, lbls map[string]string) bool {
	return peer.NamespaceSelector == nil && peer.IPBlock == nil && selects(t, peer.PodSelector, lbls)
}

// ingressFromPods: does np admit pods labelled from on port number of dst?
func ingressFromPods(t *testing.T, np *networkingv1.NetworkPolicy, from map[string]string, dst *corev1.Container, number int32) bool {
	for _, r := range np.Spec.Ingress {
		if !portsAllow(r.Ports, dst, corev1.ProtocolTCP, number) {
			continue
		}
		for _, peer := range r.From {
			if podPeer(t, peer, from) {
				return true
			}
		}
	}
	return false
}

// egressToPods: does np let its pods reach pods labelled to on port number of dst?
func egressToPods(t *testing.T, np *networkingv1.NetworkPolicy, to map[string]string, dst *corev1.Container, number int32) bool {
	for _, r := range np.Spec.Egress {
		if !portsAllow(r.Ports, dst, corev1.ProtocolTCP, number) {
			continue
		}
		for _, peer := range r.To {
			if podPeer(t, peer, to) {
				return true
			}
		}
	}
	return false
}

// egressToAddress: does np let its pods reach host:port outside the cluster?
// An IP must lie in an ipBlock (and outside its exceptions); a DNS name can only
// be checked for its port, against any ipBlock or namespace peer.
func egressToAddress(t *testing.T, np *networkingv1.NetworkPolicy, hostport string) error {
	host, portStr, err := net.SplitHostPort(hostport)
	if err != nil {
		return fmt.Errorf("bootstrap address %q: %v", hostport, err)
	}
	port, err := strconv.ParseInt(portStr, 10, 32)
	if err != nil {
		return fmt.Errorf("bootstrap address %q: port %q", hostport, portStr)
	}
	ip, ipErr := netip.ParseAddr(host)
	for _, r := range np.Spec.Egress {
		if !portsAllow(r.Ports, nil, corev1.ProtocolTCP, int32(port)) {
			continue
		}
		for _, peer := range r.To {
			if peer.IPBlock == nil {
				if ipErr != nil && peer.NamespaceSelector != nil {
					return nil
				}
				continue
			}
			if ipErr != nil {
				return nil
			}
			if prefixContains(t, peer.IPBlock.CIDR, ip) && !slices.ContainsFunc(peer.IPBlock.Except, func(e string) bool { return prefixContains(t, e, ip) }) {
				return nil
			}
		}
	}
	return fmt.Errorf("NetworkPolicy %s: no egress rule admits %s (TCP %d)", np.Name, hostport, port)
}

func prefixContains(t *testing.T, cidr string, ip netip.Addr) bool {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		t.Fatalf("ipBlock %q: %v", cidr, err)
	}
	return p.Contains(ip)
}

func TestPortsAgree(t *testing.T) {
	m := load(t)
	d := readDockerfile(t)
	w := m.worker(t)
	job := m.offsetJob(t)
	env := m.environment(t, w)
	jobEnv := m.environment(t, job)
	rest := namedPort(t, w, restPortName)
	metrics := namedPort(t, w, metricsPortName)
	workerLabels := m.deployment().Spec.Template.Labels
	jobLabels := m.job().Spec.Template.Labels
	workerNP := m.netpols["mm2-connect"]
	jobNP := m.netpols["mm2cutover-job"]
	if workerNP == nil || jobNP == nil {
		t.Fatalf("NetworkPolicies: got %v, want mm2-connect and mm2cutover-job", sortedKeys(m.netpols))
	}

	resolveTarget := func(svcName, portName string) int32 {
		svc := m.services[svcName]
		if svc == nil {
			t.Fatalf("no Service %s", svcName)
		}
		p := servicePort(t, svc, portName)
		cp, ok := containerPort(w, p.TargetPort)
		if !ok {
			t.Fatalf("Service %s port %s: targetPort %s names no port of container %s", svcName, portName, p.TargetPort.String(), w.Name)
		}
		if cp.Name != portName {
			t.Errorf("Service %s port %s: targets container port %q, want the port of the same name", svcName, portName, cp.Name)
		}
		return cp.ContainerPort
	}
	probePort := func(p *corev1.Probe) int32 {
		if p == nil || p.HTTPGet == nil {
			t.Fatal("probe is not an httpGet")
		}
		cp, ok := containerPort(w, p.HTTPGet.Port)
		if !ok {
			t.Fatalf("probe port %s names no port of container %s", p.HTTPGet.Port.String(), w.Name)
		}
		return cp.ContainerPort
	}
	envPort := func(e map[string]envVar, name string) int32 {
		v, ok := e[name]
		if !ok {
			t.Fatalf("%s is not set", name)
		}
		return int32(parseInt(t, name, v.value))
	}
	boolPort := func(ok bool, n int32) int32 {
		if ok {
			return n
		}
		return 0
	}
	connectURL, err := url.Parse(jobEnv["MM2CUTOVER_CONNECT_URL"].value)
	if err != nil {
		t.Fatalf("MM2CUTOVER_CONNECT_URL: %v", err)
	}
	urlPort := func() int32 {
		if connectURL.Port() == "" {
			t.Fatalf("MM2CUTOVER_CONNECT_URL %q has no port", connectURL)
		}
		return int32(parseInt(t, "MM2CUTOVER_CONNECT_URL port", connectURL.Port()))
	}
	var monitorPort int32
	if sm := m.monitors[0]; len(sm.Spec.Endpoints) != 1 {
		t.Errorf("ServiceMonitor endpoints: got %d, want 1", len(sm.Spec.Endpoints))
	} else {
		for _, svc := range m.services {
			if !selects(t, &sm.Spec.Selector, svc.Labels) {
				continue
			}
			if monitorPort != 0 {
				t.Errorf("ServiceMonitor selects more than one Service (%s too)", svc.Name)
			}
			monitorPort = resolveTarget(svc.Name, sm.Spec.Endpoints[0].Port)
		}
	}
	monitoringNamespace := func() int32 {
		for _, r := range workerNP.Spec.Ingress {
			for _, peer := range r.From {
				if peer.NamespaceSelector != nil && peer.PodSelector == nil && portsAllow(r.Ports, w, corev1.ProtocolTCP, metrics) {
					return metrics
				}
			}
		}
		return 0
	}

	for _, tc := range []struct {
		what      string
		got, want int32
	}{
		{"container port rest vs Dockerfile EXPOSE", rest, d.expose[0]},
		{"CONNECT_REST_PORT (worker ConfigMap)", envPort(env, "CONNECT_REST_PORT"), rest},
		{"JMX_EXPORTER_PORT (worker ConfigMap) vs container port metrics", envPort(env, "JMX_EXPORTER_PORT"), metrics},
		{"Service mm2-connect port rest", servicePort(t, m.services[restService], restPortName).Port, rest},
		{"Service mm2-connect targetPort rest", resolveTarget(restService, restPortName), rest},
		{"Service mm2-connect-metrics port metrics", servicePort(t, m.services[metricsService], metricsPortName).Port, metrics},
		{"Service mm2-connect-metrics targetPort metrics", resolveTarget(metricsService, metricsPortName), metrics},
		{"ServiceMonitor endpoint port", monitorPort, metrics},
		{"startupProbe port", probePort(w.StartupProbe), rest},
		{"livenessProbe port", probePort(w.LivenessProbe), rest},
		{"readinessProbe port", probePort(w.ReadinessProbe), rest},
		{"NetworkPolicy mm2-connect ingress worker to worker", boolPort(ingressFromPods(t, workerNP, workerLabels, w, rest), rest), rest},
		{"NetworkPolicy mm2-connect ingress from the Job", boolPort(ingressFromPods(t, workerNP, jobLabels, w, rest), rest), rest},
		{"NetworkPolicy mm2-connect egress worker to worker", boolPort(egressToPods(t, workerNP, workerLabels, w, rest), rest), rest},
		{"NetworkPolicy mm2-connect ingress from the monitoring namespace", monitoringNamespace(), metrics},
		{"NetworkPolicy mm2cutover-job egress to the workers", boolPort(egressToPods(t, jobNP, workerLabels, w, rest), rest), rest},
		{"MM2CUTOVER_CONNECT_URL port vs Service mm2-connect", urlPort(), servicePort(t, m.services[restService], restPortName).Port},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.what, tc.got, tc.want)
		}
	}

	if host := connectURL.Hostname(); host != restService && !strings.HasPrefix(host, restService+"."+m.services[restService].Namespace+".") {
		t.Errorf("MM2CUTOVER_CONNECT_URL host: got %q, want the Service %s", host, restService)
	}
	if connectURL.Scheme != "http" {
		t.Errorf("MM2CUTOVER_CONNECT_URL scheme: got %q, want http (the worker's listener)", connectURL.Scheme)
	}
	// REST is unauthenticated: it must never be open to any pod or namespace.
	for _, r := range workerNP.Spec.Ingress {
		if !portsAllow(r.Ports, w, corev1.ProtocolTCP, rest) {
			continue
		}
		if len(r.From) == 0 {
			t.Errorf("NetworkPolicy %s: an ingress rule admits anyone on REST %d", workerNP.Name, rest)
		}
		for _, peer := range r.From {
			if peer.NamespaceSelector != nil || peer.IPBlock != nil || (peer.PodSelector != nil && len(peer.PodSelector.MatchLabels) == 0 && len(peer.PodSelector.MatchExpressions) == 0) {
				t.Errorf("NetworkPolicy %s: REST %d open to %v, want only the workers and the Job", workerNP.Name, rest, peer)
			}
		}
	}
}

func TestProbes(t *testing.T) {
	w := load(t).worker(t)
	for _, tc := range []struct {
		name  string
		probe *corev1.Probe
		paths []string
	}{
		// The REST root answers without the herder: a FAILED connector or a
		// rebalance must never restart a worker.
		{"startupProbe", w.StartupProbe, []string{"/"}},
		{"livenessProbe", w.LivenessProbe, []string{"/"}},
		{"readinessProbe", w.ReadinessProbe, []string{"/health", "/connectors", "/"}},
	} {
		if tc.probe == nil || tc.probe.HTTPGet == nil {
			t.Errorf("%s: got %v, want an httpGet probe", tc.name, tc.probe)
			continue
		}
		if got := tc.probe.HTTPGet.Path; !slices.Contains(tc.paths, got) {
			t.Errorf("%s path: got %q, want one of %q", tc.name, got, tc.paths)
		}
		if s := tc.probe.HTTPGet.Scheme; s != "" && s != corev1.URISchemeHTTP {
			t.Errorf("%s scheme: got %q, want HTTP (the worker's listener)", tc.name, s)
		}
	}
}

func TestWorkerEnvironment(t *testing.T) {
	m := load(t)
	w := m.worker(t)
	env := m.environment(t, w)
	defaults := entrypointDefaults(t)

	for _, tc := range []struct {
		name  string
		check func(envVar) error
	}{
		{"CONNECT_BOOTSTRAP_SERVERS", func(v envVar) error {
			if v.configMap == "" || v.value == "" {
				return fmt.Errorf("got %+v, want a non-empty value from a ConfigMap", v)
			}
			return nil
		}},
		{"POD_IP", func(v envVar) error {
			if v.fieldPath != "status.podIP" {
				return fmt.Errorf("got %+v, want fieldRef status.podIP (each worker advertises its own address)", v)
			}
			return nil
		}},
		{"CONNECT_SASL_JAAS_CONFIG", func(v envVar) error {
			if v.secretName == "" || v.secretKey == "" {
				return fmt.Errorf("got %+v, want a secretKeyRef", v)
			}
			return nil
		}},
	} {
		v, ok := env[tc.name]
		if !ok {
			t.Errorf("%s: not set, want it set", tc.name)
			continue
		}
		if err := tc.check(v); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}

	// Every ${env:NAME} of the worker properties is set here or defaulted by the entrypoint.
	props := properties(t, propertiesPath)
	ref := regexp.MustCompile(`\$\{env:(\w+)\}`)
	for _, k := range sortedKeys(props) {
		for _, mm := range ref.FindAllStringSubmatch(props[k], -1) {
			if _, set := env[mm[1]]; !set && !defaults[mm[1]] {
				t.Errorf("%s=%s: %s is neither set by the Deployment nor defaulted by %s", k, props[k], mm[1], entrypointPath)
			}
		}
	}

	// The entrypoint's SASL default needs the JAAS configuration.
	protocol := "SASL_PLAINTEXT" // docker-entrypoint.sh's default
	if v, ok := env["CONNECT_SECURITY_PROTOCOL"]; ok {
		protocol = v.value
	}
	if strings.HasPrefix(protocol, "SASL_") && env["CONNECT_SASL_JAAS_CONFIG"].secretName == "" {
		t.Errorf("CONNECT_SECURITY_PROTOCOL=%s: got no CONNECT_SASL_JAAS_CONFIG from a Secret, want one (the entrypoint refuses to start)", protocol)
	}

	// Never the Service address: the container has no command or args, so the
	// image's entrypoint runs and execs the JVM that receives SIGTERM.
	if len(w.Command) > 0 || len(w.Args) > 0 {
		t.Errorf("container %s: got command %q args %q, want none (the image's entrypoint execs the JVM so SIGTERM reaches Connect)", w.Name, w.Command, w.Args)
	}
	if v := env["CONNECT_REST_HOST"].value; v != "" && v != "0.0.0.0" {
		t.Errorf("CONNECT_REST_HOST: got %q, want unset or 0.0.0.0 (listen on the Pod IP and on localhost for probes)", v)
	}
}

var secretName = regexp.MustCompile(`(?i)password|passwd|secret|token|jaas|credential|api[_-]?key|private[_-]?key`)
var secretValue = regexp.MustCompile(`(?i)password\s*=|LoginModule|BEGIN [A-Z ]*PRIVATE KEY|secret\s*=|token\s*=`)

// providerRef is a value that is wholly one reference to the worker's
// EnvVarConfigProvider (config.providers=env in connect-mm2.properties).
var providerRef = regexp.MustCompile(`^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$`)

// clientProperties says whether a ConfigMap key holds a client properties
// file for the connector, checked line by line.
func clientProperties(key string) bool { return strings.HasSuffix(key, ".properties") }

// configMapSecretProblems lists the entries of cm that look like secrets. An
// entry must neither be named like a secret nor hold a secret-looking value,
// with one exception: in a *.properties entry (the connector's client
// settings, which the Job copies into the connector configuration), a
// secret-looking property such as sasl.jaas.config is allowed when its value
// is wholly a ${env:NAME} reference, which only the workers resolve.
func configMapSecretProblems(cm *corev1.ConfigMap) []string {
	var out []string
	for _, k := range sortedKeys(cm.Data) {
		v := cm.Data[k]
		if secretName.MatchString(k) {
			out = append(out, fmt.Sprintf("ConfigMap %s key %s looks like a secret: got it in a ConfigMap, want it in a Secret", cm.Name, k))
			continue
		}
		if !clientProperties(k) {
			if secretValue.MatchString(v) {
				out = append(out, fmt.Sprintf("ConfigMap %s key %s looks like a secret: got it in a ConfigMap, want it in a Secret", cm.Name, k))
			}
			continue
		}
		lines, err := propertyLines(v)
		if err != nil {
			out = append(out, fmt.Sprintf("ConfigMap %s key %s: %v", cm.Name, k, err))
			continue
		}
		for _, p := range lines {
			switch {
			case providerRef.MatchString(p.value):
			case secretName.MatchString(p.key):
				out = append(out, fmt.Sprintf("ConfigMap %s key %s line %d: %s is a literal: got it in a ConfigMap (and so in Connect's config topic), want wholly a ${env:NAME} reference resolved by the workers", cm.Name, k, p.line, p.key))
			case secretValue.MatchString(p.value):
				out = append(out, fmt.Sprintf("ConfigMap %s key %s line %d: %s looks like a secret: got a literal, want wholly a ${env:NAME} reference resolved by the workers", cm.Name, k, p.line, p.key))
			}
		}
	}
	return out
}

func TestSecretsComeOnlyFromSecrets(t *testing.T) {
	m := load(t)
	for _, name := range sortedKeys(m.configMaps) {
		cm := m.configMaps[name]
		for _, p := range configMapSecretProblems(cm) {
			t.Error(p)
		}
		if len(cm.BinaryData) > 0 {
			t.Errorf("ConfigMap %s: got binaryData keys %v, want none", name, sortedKeys(cm.BinaryData))
		}
	}
	for _, c := range []*corev1.Container{m.worker(t), m.offsetJob(t)} {
		env := m.environment(t, c)
		for _, k := range sortedKeys(env) {
			v := env[k]
			if (secretName.MatchString(k) || secretValue.MatchString(v.value)) && v.secretName == "" {
				t.Errorf("container %s: %s looks like a secret: got %+v, want a secretKeyRef", c.Name, k, v)
			}
		}
	}
}

// TestSecretCheckRejectsLiteralClientSecrets proves that the provider
// reference exception of configMapSecretProblems is no loophole: each mutation
// of the connector's client properties puts a secret in the ConfigMap.
func TestSecretCheckRejectsLiteralClientSecrets(t *testing.T) {
	// ref is a line of the source client's block scalar; an added line gets its indent.
	const file, ref, indent = "cutover/connector-clients.yaml", "sasl.jaas.config=${env:MM2_SOURCE_SASL_JAAS_CONFIG}\n", "    "
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	problems := func(t *testing.T, data []byte) []string {
		t.Helper()
		obj, err := decodeStrict(data)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			t.Fatalf("%s: got %T, want a ConfigMap", file, obj)
		}
		return configMapSecretProblems(cm)
	}
	if got := problems(t, data); len(got) > 0 {
		t.Fatalf("unmutated %s: got %q, want no problem", file, got)
	}
	for _, tc := range []struct{ name, old, new, want string }{
		{"literal JAAS", ref,
			`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="mm2" password="hunter2";` + "\n",
			"sasl.jaas.config is a literal"},
		{"reference inside a literal JAAS", ref,
			`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="mm2" password="${env:MM2_SOURCE_PASSWORD}";` + "\n",
			"sasl.jaas.config is a literal"},
		{"reference with a tail", ref, "sasl.jaas.config=${env:MM2_SOURCE_SASL_JAAS_CONFIG};\n", "sasl.jaas.config is a literal"},
		{"file provider, which the workers do not declare", ref, "sasl.jaas.config=${file:/etc/kafka/jaas.properties:source}\n", "sasl.jaas.config is a literal"},
		{"literal keystore password", ref, ref + indent + "ssl.keystore.password=changeit\n", "ssl.keystore.password is a literal"},
		{"login module under another key", ref, ref + indent + "sasl.login.module=org.apache.kafka.common.security.plain.PlainLoginModule required;\n", "sasl.login.module looks like a secret"},
		{"JAAS split over lines", ref, "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n" + indent + "  username=\"mm2\" password=\"hunter2\";\n", "continuation"},
		{"secret-named ConfigMap key, even as a reference", "  source-client.properties: |\n", "  MM2_SOURCE_SASL_JAAS_CONFIG: \"${env:X}\"\n  source-client.properties: |\n", "key MM2_SOURCE_SASL_JAAS_CONFIG looks like a secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !bytes.Contains(data, []byte(tc.old)) {
				t.Fatalf("%s does not contain %q: update the mutation", file, tc.old)
			}
			got := problems(t, bytes.Replace(data, []byte(tc.old), []byte(tc.new), 1))
			if !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("got problems %q, want one mentioning %q", got, tc.want)
			}
		})
	}
	// A reference is accepted under any secret-looking key: the keystore
	// password, too, may come from the workers' environment.
	if got := problems(t, bytes.Replace(data, []byte(ref), []byte(ref+indent+"ssl.keystore.password=${env:MM2_SOURCE_KEYSTORE_PASSWORD}\n"), 1)); len(got) > 0 {
		t.Errorf("ssl.keystore.password as a reference: got %q, want no problem", got)
	}
}

// TestSecretsAreDocumented: every Secret key the pods read is created by the
// README's `kubectl create secret generic` commands, since no Secret is a file here.
func TestSecretsAreDocumented(t *testing.T) {
	m := load(t)
	data, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{} // "name/key"
	cmd := regexp.MustCompile(`create secret generic ([a-z0-9.-]+)((?:[^\n]*\\\n)*[^\n]*)`)
	key := regexp.MustCompile(`--from-file=([A-Za-z0-9._-]+)=`)
	for _, c := range cmd.FindAllStringSubmatch(string(data), -1) {
		for _, k := range key.FindAllStringSubmatch(c[2], -1) {
			documented[c[1]+"/"+k[1]] = true
		}
	}
	if strings.Contains(string(data), "--from-literal") {
		t.Errorf("%s: got --from-literal, want --from-file (a literal lands in the shell history)", readmePath)
	}
	var used []string
	for _, c := range []*corev1.Container{m.worker(t), m.offsetJob(t)} {
		for _, k := range sortedKeys(m.environment(t, c)) {
			if v := m.environment(t, c)[k]; v.secretName != "" {
				used = append(used, v.secretName+"/"+v.secretKey)
				if !documented[v.secretName+"/"+v.secretKey] {
					t.Errorf("container %s: %s reads Secret %s key %s: got no `kubectl create secret generic %s ... --from-file=%s=...` in %s, want one",
						c.Name, k, v.secretName, v.secretKey, v.secretName, v.secretKey, readmePath)
				}
			}
		}
	}
	for _, k := range sortedKeys(documented) {
		if !slices.Contains(used, k) {
			t.Errorf("%s creates Secret key %s that no container reads", readmePath, k)
		}
	}
}

func TestSecurityContext(t *testing.T) {
	m := load(t)
	d, jd := readDockerfile(t), readJobDockerfile(t)
	for _, tc := range []struct {
		name     string
		pod      *corev1.PodSpec
		uid, gid int64
		image    string // the Dockerfile of the pod's image
		token    bool   // mounts its service account's token (TestPlanRole checks what it allows)
	}{
		{"Deployment mm2-connect", &m.deployment().Spec.Template.Spec, d.uid, d.gid, dockerfilePath, false},
		{"Job mm2cutover-offsets", &m.job().Spec.Template.Spec, jd.uid, jd.gid, jobDockerfilePath, true},
		{"Job mm2cutover-resume", &m.resumeJob().Spec.Template.Spec, jd.uid, jd.gid, jobDockerfilePath, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			psc := tc.pod.SecurityContext
			if psc == nil {
				t.Fatal("no pod securityContext")
			}
			eq := func(what string, got *int64, want int64) {
				if got == nil || *got != want {
					t.Errorf("%s: got %v, want %d (%s)", what, deref(got), want, tc.image)
				}
			}
			eq("runAsUser", psc.RunAsUser, tc.uid)
			eq("runAsGroup", psc.RunAsGroup, tc.gid)
			eq("fsGroup", psc.FSGroup, tc.gid)
			if psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
				t.Errorf("runAsNonRoot: got %v, want true", deref(psc.RunAsNonRoot))
			}
			if psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("seccompProfile: got %v, want RuntimeDefault", psc.SeccompProfile)
			}
			if a := tc.pod.AutomountServiceAccountToken; a == nil || *a != tc.token {
				t.Errorf("automountServiceAccountToken: got %v, want %v (only the offset Job calls the Kubernetes API, to keep the plan)", deref(a), tc.token)
			}
			if sa := tc.pod.ServiceAccountName; m.serviceAccts[sa] == nil {
				t.Errorf("serviceAccountName: got %q, want one of %v", sa, sortedKeys(m.serviceAccts))
			}
			if tc.pod.HostNetwork || tc.pod.HostPID || tc.pod.HostIPC {
				t.Error("got host namespaces, want none")
			}
			tmpDirs := map[string]bool{}
			for _, v := range tc.pod.Volumes {
				if v.EmptyDir != nil {
					tmpDirs[v.Name] = true
				}
			}
			for _, c := range slices.Concat(tc.pod.InitContainers, tc.pod.Containers) {
				sc := c.SecurityContext
				if sc == nil {
					t.Errorf("container %s: no securityContext", c.Name)
					continue
				}
				if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
					t.Errorf("container %s allowPrivilegeEscalation: got %v, want false", c.Name, deref(sc.AllowPrivilegeEscalation))
				}
				if sc.Privileged != nil && *sc.Privileged {
					t.Errorf("container %s: privileged", c.Name)
				}
				if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
					t.Errorf("container %s capabilities: got %v, want drop [ALL] and no add", c.Name, sc.Capabilities)
				}
				if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
					t.Errorf("container %s readOnlyRootFilesystem: got %v, want true", c.Name, deref(sc.ReadOnlyRootFilesystem))
				}
				if sc.RunAsUser != nil && *sc.RunAsUser != tc.uid {
					t.Errorf("container %s runAsUser: got %d, want %d", c.Name, *sc.RunAsUser, tc.uid)
				}
				if !slices.ContainsFunc(c.VolumeMounts, func(vm corev1.VolumeMount) bool { return vm.MountPath == "/tmp" && tmpDirs[vm.Name] }) {
					t.Errorf("container %s: got no emptyDir on /tmp, want one (read-only root, JVM and codec temp files)", c.Name)
				}
			}
		})
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestLabelsAndSelectors(t *testing.T) {
	m := load(t)
	dep := m.deployment()
	podLabels := dep.Spec.Template.Labels
	jobPodLabels := m.job().Spec.Template.Labels
	workerNP, jobNP := m.netpols["mm2-connect"], m.netpols["mm2cutover-job"]
	sm := m.monitors[0]
	type sel struct {
		what string
		sel  *metav1.LabelSelector
	}
	// Every selector meant for the workers selects them and not the Job's pods.
	workerSelectors := []sel{
		{"Deployment selector", dep.Spec.Selector},
		{"Service mm2-connect selector", &metav1.LabelSelector{MatchLabels: m.services[restService].Spec.Selector}},
		{"Service mm2-connect-metrics selector", &metav1.LabelSelector{MatchLabels: m.services[metricsService].Spec.Selector}},
		{"PodDisruptionBudget selector", m.pdbs[0].Spec.Selector},
		{"NetworkPolicy mm2-connect podSelector", &workerNP.Spec.PodSelector},
	}
	for i, c := range dep.Spec.Template.Spec.TopologySpreadConstraints {
		workerSelectors = append(workerSelectors, sel{fmt.Sprintf("topologySpreadConstraints[%d] (%s) labelSelector", i, c.TopologyKey), c.LabelSelector})
	}
	for _, s := range workerSelectors {
		if s.sel == nil || (len(s.sel.MatchLabels) == 0 && len(s.sel.MatchExpressions) == 0) {
			t.Errorf("%s: got %v, want a non-empty selector", s.what, s.sel)
			continue
		}
		if !selects(t, s.sel, podLabels) {
			t.Errorf("%s %q: got no match, want it to select the worker pods %v", s.what, metav1.FormatLabelSelector(s.sel), podLabels)
		}
		if selects(t, s.sel, jobPodLabels) {
			t.Errorf("%s %q: got a match on the Job's pods %v, want only the workers", s.what, metav1.FormatLabelSelector(s.sel), jobPodLabels)
		}
	}
	if !selects(t, &jobNP.Spec.PodSelector, jobPodLabels) || selects(t, &jobNP.Spec.PodSelector, podLabels) {
		t.Errorf("NetworkPolicy mm2cutover-job podSelector %q: want the Job's pods %v only", metav1.FormatLabelSelector(&jobNP.Spec.PodSelector), jobPodLabels)
	}
	if !selects(t, &sm.Spec.Selector, m.services[metricsService].Labels) {
		t.Errorf("ServiceMonitor selector %q: does not select Service %s labels %v", metav1.FormatLabelSelector(&sm.Spec.Selector), metricsService, m.services[metricsService].Labels)
	}
	if selects(t, &sm.Spec.Selector, m.services[restService].Labels) {
		t.Errorf("ServiceMonitor selector %q: selects Service %s too, want only %s", metav1.FormatLabelSelector(&sm.Spec.Selector), restService, metricsService)
	}
	if ns := sm.Spec.NamespaceSelector; ns != nil && (ns.Any || !slices.Equal(ns.MatchNames, []string{m.namespaces[0].Name})) {
		t.Errorf("ServiceMonitor namespaceSelector: got %+v, want its own namespace %s", *ns, m.namespaces[0].Name)
	}
	if len(dep.Spec.Template.Spec.TopologySpreadConstraints) == 0 && dep.Spec.Template.Spec.Affinity == nil {
		t.Error("Deployment: got neither topologySpreadConstraints nor affinity, want workers spread across nodes")
	}
	for path, obj := range m.files {
		if meta, ok := obj.(metav1.Object); ok {
			if _, isNS := obj.(*corev1.Namespace); !isNS && meta.GetNamespace() != m.namespaces[0].Name {
				t.Errorf("%s namespace: got %q, want %q (namespace.yaml)", path, meta.GetNamespace(), m.namespaces[0].Name)
			}
		}
	}
}

func TestLifecycle(t *testing.T) {
	m := load(t)
	dep := m.deployment()
	props := properties(t, propertiesPath)
	flushMs := parseInt(t, "offset.flush.timeout.ms", props["offset.flush.timeout.ms"])
	taskStopMs := int64(5000) // task.shutdown.graceful.timeout.ms, Connect's default
	if v, ok := props["task.shutdown.graceful.timeout.ms"]; ok {
		taskStopMs = parseInt(t, "task.shutdown.graceful.timeout.ms", v)
	}
	grace := dep.Spec.Template.Spec.TerminationGracePeriodSeconds
	if grace == nil || *grace*1000 <= flushMs+taskStopMs {
		t.Errorf("terminationGracePeriodSeconds: got %v, want more than offset.flush.timeout.ms (%d ms) + task stop (%d ms) so that SIGKILL never cuts the offset commit",
			deref(grace), flushMs, taskStopMs)
	}
	for _, tc := range []struct {
		what      string
		got, want any
	}{
		{"Deployment replicas", deref(dep.Spec.Replicas), int32(3)},
		{"rollingUpdate maxSurge (no extra worker, no extra rebalance)", dep.Spec.Strategy.RollingUpdate.MaxSurge.String(), "0"},
		{"rollingUpdate maxUnavailable (one worker at a time)", dep.Spec.Strategy.RollingUpdate.MaxUnavailable.String(), "1"},
		{"PodDisruptionBudget maxUnavailable", m.pdbs[0].Spec.MaxUnavailable.String(), "1"},
		{"Service mm2-connect type", m.services[restService].Spec.Type, corev1.ServiceTypeClusterIP},
		{"Job restartPolicy", m.job().Spec.Template.Spec.RestartPolicy, corev1.RestartPolicyNever},
	} {
		if fmt.Sprint(tc.got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: got %v, want %v", tc.what, tc.got, tc.want)
		}
	}
	if b := m.job().Spec.BackoffLimit; b == nil || *b < 1 || *b > 6 {
		t.Errorf("Job backoffLimit: got %v, want 1..6 (the Job is idempotent: a few retries, bounded)", deref(b))
	}
	if a := m.job().Spec.ActiveDeadlineSeconds; a == nil {
		t.Error("Job activeDeadlineSeconds: got none, want a bound on the whole Job")
	}
	checkPodFailurePolicy(t, m.job())
}

// checkPodFailurePolicy: the Job fails at once on the binary's exit statuses
// that a retry cannot change (bad settings, a failed check, a refusal, an
// error nobody classified), read
// from examples/internal/app/exit.go, and retries the others.
func checkPodFailurePolicy(t *testing.T, job *batchv1.Job) {
	t.Helper()
	src, err := os.ReadFile("../internal/app/exit.go")
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]int32{}
	for _, m := range regexp.MustCompile(`(?m)^\s*(Exit\w+)\s*=\s*(\d+)`).FindAllStringSubmatch(string(src), -1) {
		n, _ := strconv.Atoi(m[2])
		codes[m[1]] = int32(n)
	}
	want := []int32{codes["ExitUsage"], codes["ExitCheckFailed"], codes["ExitRefused"], codes["ExitUnclassified"]}
	if len(codes) < 4 || codes["ExitError"] == 0 {
		t.Fatalf("exit statuses read from exit.go: %v", codes)
	}
	pfp := job.Spec.PodFailurePolicy
	if pfp == nil {
		t.Fatal("Job podFailurePolicy: got none, want FailJob on the exit statuses a retry cannot fix")
	}
	var got []int32
	container := job.Spec.Template.Spec.Containers[0].Name
	for _, r := range pfp.Rules {
		if r.Action == batchv1.PodFailurePolicyActionFailJob && r.OnExitCodes != nil &&
			r.OnExitCodes.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn &&
			r.OnExitCodes.ContainerName != nil && *r.OnExitCodes.ContainerName == container {
			got = append(got, r.OnExitCodes.Values...)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("podFailurePolicy FailJob exit codes: got %v, want %v (ExitUsage, ExitCheckFailed, ExitRefused, ExitUnclassified)", got, want)
	}
	for _, c := range got {
		if c == codes["ExitError"] {
			t.Errorf("podFailurePolicy fails the Job on %d (ExitError), which a retry can fix", c)
		}
	}
}

// heapMax parses -Xmx from JVM options.
func heapMax(t *testing.T, opts string) int64 {
	t.Helper()
	mm := regexp.MustCompile(`-Xmx(\d+)([kKmMgG]?)`).FindStringSubmatch(opts)
	if mm == nil {
		t.Fatalf("KAFKA_HEAP_OPTS %q has no -Xmx", opts)
	}
	n := parseInt(t, "-Xmx", mm[1])
	switch strings.ToLower(mm[2]) {
	case "k":
		n <<= 10
	case "m":
		n <<= 20
	case "g":
		n <<= 30
	}
	return n
}

func TestResources(t *testing.T) {
	m := load(t)
	w := m.worker(t)
	env := m.environment(t, w)
	heapOpts := "-Xms1g -Xmx1g" // docker-entrypoint.sh's default
	if v, ok := env["KAFKA_HEAP_OPTS"]; ok {
		heapOpts = v.value
	}
	heap := heapMax(t, heapOpts)
	limit, ok := w.Resources.Limits[corev1.ResourceMemory]
	if !ok {
		t.Fatal("worker memory limit: got none, want one")
	}
	if want := heap + 512<<20; limit.Value() < want {
		t.Errorf("worker memory limit: got %s, want at least %s (-Xmx %s plus 512Mi off-heap)", limit.String(), resource.NewQuantity(want, resource.BinarySI), resource.NewQuantity(heap, resource.BinarySI))
	}
	for _, c := range []*corev1.Container{w, m.offsetJob(t)} {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if _, ok := c.Resources.Requests[r]; !ok {
				t.Errorf("container %s: got no %s request, want one", c.Name, r)
			}
		}
		if req, lim := c.Resources.Requests[corev1.ResourceMemory], c.Resources.Limits[corev1.ResourceMemory]; lim.Cmp(req) < 0 {
			t.Errorf("container %s: memory limit %s below request %s", c.Name, lim.String(), req.String())
		}
	}
}

func TestKafkaAndDNSEgress(t *testing.T) {
	m := load(t)
	workerEnv := m.environment(t, m.worker(t))
	jobEnv := m.environment(t, m.offsetJob(t))
	if got, want := jobEnv["MM2CUTOVER_TARGET_BOOTSTRAP"].value, workerEnv["CONNECT_BOOTSTRAP_SERVERS"].value; got != want {
		t.Errorf("MM2CUTOVER_TARGET_BOOTSTRAP: got %q, want CONNECT_BOOTSTRAP_SERVERS %q (Connect's topics live on the target)", got, want)
	}
	// The connector's tasks run on the workers, so they reach both clusters too.
	bootstraps := []string{"MM2CUTOVER_SOURCE_BOOTSTRAP", "MM2CUTOVER_TARGET_BOOTSTRAP"}
	for _, np := range []*networkingv1.NetworkPolicy{m.netpols["mm2-connect"], m.netpols["mm2cutover-job"]} {
		for _, name := range bootstraps {
			for _, addr := range strings.Split(jobEnv[name].value, ",") {
				if err := egressToAddress(t, np, strings.TrimSpace(addr)); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
		}
		for _, proto := range []corev1.Protocol{corev1.ProtocolUDP, corev1.ProtocolTCP} {
			if !slices.ContainsFunc(np.Spec.Egress, func(r networkingv1.NetworkPolicyEgressRule) bool {
				return portsAllow(r.Ports, nil, proto, 53) && len(r.To) > 0
			}) {
				t.Errorf("NetworkPolicy %s: got no egress to DNS %s 53, want one", np.Name, proto)
			}
		}
		if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) || !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
			t.Errorf("NetworkPolicy %s policyTypes: got %v, want Ingress and Egress", np.Name, np.Spec.PolicyTypes)
		}
	}
}

func TestJobConfiguration(t *testing.T) {
	m := load(t)
	c := m.offsetJob(t)
	env := m.environment(t, c)
	for _, name := range []string{
		"MM2CUTOVER_CONNECT_URL", "MM2CUTOVER_SOURCE_BOOTSTRAP", "MM2CUTOVER_TARGET_BOOTSTRAP", "MM2CUTOVER_GROUP",
		"MM2CUTOVER_TOPICS", "MM2CUTOVER_CONNECTOR", "MM2CUTOVER_SOURCE_ALIAS",
	} {
		if v, ok := env[name]; !ok || v.value == "" || v.configMap != jobConfigMap {
			t.Errorf("%s: got %+v, want a non-empty value from ConfigMap %s", name, v, jobConfigMap)
		}
	}
	// An optional plan: MM2CUTOVER_PLAN must name a file on the plan ConfigMap's volume.
	var planMount string
	for _, vm := range c.VolumeMounts {
		for _, v := range m.job().Spec.Template.Spec.Volumes {
			if v.Name == vm.Name && v.ConfigMap != nil && v.ConfigMap.Name == planConfigMap {
				planMount = vm.MountPath
			}
		}
	}
	if p, ok := env["MM2CUTOVER_PLAN"]; ok && (planMount == "" || !strings.HasPrefix(p.value, planMount+"/")) {
		t.Errorf("MM2CUTOVER_PLAN: got %q, want a file under the plan ConfigMap's mount %q", p.value, planMount)
	}
	if planMount != "/plan" {
		t.Errorf("plan ConfigMap mount: got %q, want /plan (MM2CUTOVER_PLAN=/plan/plan.json)", planMount)
	}
}

// mountedFile resolves an absolute path in container c of the Job to the
// ConfigMap key that the kubelet puts there: the path must lie on a read-only
// mount of a ConfigMap volume, the ConfigMap must be among the manifests and
// not optional, and the key must exist. It returns the key's content.
func (m *manifests) mountedFile(c *corev1.Container, pod *corev1.PodSpec, path string) (string, error) {
	for _, vm := range c.VolumeMounts {
		var rel string
		switch {
		case vm.SubPath != "" && path == vm.MountPath:
			rel = vm.SubPath
		case vm.SubPath == "" && strings.HasPrefix(path, strings.TrimSuffix(vm.MountPath, "/")+"/"):
			rel = strings.TrimPrefix(path, strings.TrimSuffix(vm.MountPath, "/")+"/")
		default:
			continue
		}
		i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == vm.Name })
		if i < 0 || pod.Volumes[i].ConfigMap == nil {
			return "", fmt.Errorf("%s is on mount %s (volume %s), want a ConfigMap volume", path, vm.MountPath, vm.Name)
		}
		src := pod.Volumes[i].ConfigMap
		if !vm.ReadOnly {
			return "", fmt.Errorf("mount %s of ConfigMap %s: got readOnly false, want true", vm.MountPath, src.Name)
		}
		if src.Optional != nil && *src.Optional {
			return "", fmt.Errorf("volume %s: ConfigMap %s is optional, want it required (the Job cannot run without %s)", vm.Name, src.Name, path)
		}
		cm, ok := m.configMaps[src.Name]
		if !ok {
			return "", fmt.Errorf("volume %s: ConfigMap %s is not among the manifests", vm.Name, src.Name)
		}
		key := rel
		if len(src.Items) > 0 {
			key = ""
			for _, it := range src.Items {
				if it.Path == rel {
					key = it.Key
				}
			}
			if key == "" {
				return "", fmt.Errorf("volume %s: no item of ConfigMap %s has path %q", vm.Name, src.Name, rel)
			}
		}
		data, ok := cm.Data[key]
		if !ok {
			return "", fmt.Errorf("%s: ConfigMap %s has no key %q (keys %v)", path, cm.Name, key, sortedKeys(cm.Data))
		}
		return data, nil
	}
	return "", fmt.Errorf("%s is on no volume mount of container %s", path, c.Name)
}

// TestConnectorClientFiles: the Job names the connector's client properties
// files, they are mounted from a ConfigMap, they connect the way the Job's
// own clients do, and every secret in them is a ${env:NAME} reference that
// the workers resolve from a Secret, so that no credential is ever stored in
// a ConfigMap or in Connect's config topic.
func TestConnectorClientFiles(t *testing.T) {
	m := load(t)
	job := m.offsetJob(t)
	jobEnv := m.environment(t, job)
	workerEnv := m.environment(t, m.worker(t))
	ref := regexp.MustCompile(`\$\{env:(\w+)\}`)
	for _, tc := range []struct {
		cluster, fileVar, protocolVar string
	}{
		{"source", "MM2CUTOVER_MM2_SOURCE_CLIENT", "MM2CUTOVER_SOURCE_SECURITY_PROTOCOL"},
		{"target", "MM2CUTOVER_MM2_TARGET_CLIENT", "MM2CUTOVER_TARGET_SECURITY_PROTOCOL"},
	} {
		t.Run(tc.cluster, func(t *testing.T) {
			path := jobEnv[tc.fileVar].value
			if !strings.HasPrefix(path, "/") {
				t.Fatalf("%s: got %q, want an absolute path (the connector's %s.cluster.* settings)", tc.fileVar, path, tc.cluster)
			}
			data, err := m.mountedFile(job, &m.job().Spec.Template.Spec, path)
			if err != nil {
				t.Fatalf("%s=%s: %v", tc.fileVar, path, err)
			}
			props, err := parseProperties(data)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			for k := range props {
				if strings.HasPrefix(k, "source.cluster.") || strings.HasPrefix(k, "target.cluster.") {
					t.Errorf("%s: key %s: got a cluster prefix, want none (the Job adds %s.cluster.)", path, k, tc.cluster)
				}
			}

			// The connector's clients reach the cluster the way the Job's do.
			protocol := props["security.protocol"]
			if protocol == "" {
				protocol = "PLAINTEXT" // the Kafka clients' default
			}
			want := "PLAINTEXT" // the Job's flag default
			if v, ok := jobEnv[tc.protocolVar]; ok {
				want = v.value
			}
			if protocol != want {
				t.Errorf("%s security.protocol: got %q, want %s %q", path, protocol, tc.protocolVar, want)
			}
			if strings.HasPrefix(protocol, "SASL_") {
				for _, k := range []string{"sasl.mechanism", "sasl.jaas.config"} {
					if props[k] == "" {
						t.Errorf("%s: security.protocol=%s: got no %s, want one", path, protocol, k)
					}
				}
			}

			// Every reference resolves on the workers; every secret is a
			// reference to a variable the workers take from a Secret.
			for _, k := range sortedKeys(props) {
				v := props[k]
				for _, mm := range ref.FindAllStringSubmatch(v, -1) {
					if _, ok := workerEnv[mm[1]]; !ok {
						t.Errorf("%s: %s=%s: %s is not set on the worker container, want it set (EnvVarConfigProvider resolves it there)", path, k, v, mm[1])
					}
				}
				if !secretName.MatchString(k) && !secretValue.MatchString(v) {
					continue
				}
				mm := providerRef.FindStringSubmatch(v)
				if mm == nil {
					t.Errorf("%s: %s: got a literal, want wholly a ${env:NAME} reference", path, k)
					continue
				}
				if w := workerEnv[mm[1]]; w.secretName == "" {
					t.Errorf("%s: %s=%s: worker %s got %+v, want a secretKeyRef", path, k, v, mm[1], w)
				}
			}

			// A client logging in with the workers' own JAAS configuration (the
			// target admin) must use the workers' protocol and mechanism.
			if props["sasl.jaas.config"] == "${env:CONNECT_SASL_JAAS_CONFIG}" {
				for _, c := range []struct{ key, workerVar, dflt string }{
					{"security.protocol", "CONNECT_SECURITY_PROTOCOL", "SASL_PLAINTEXT"}, // docker-entrypoint.sh's defaults
					{"sasl.mechanism", "CONNECT_SASL_MECHANISM", "PLAIN"},
				} {
					want := c.dflt
					if v, ok := workerEnv[c.workerVar]; ok {
						want = v.value
					}
					if got := props[c.key]; got != want {
						t.Errorf("%s %s: got %q, want %s %q (the JAAS configuration is the workers')", path, c.key, got, c.workerVar, want)
					}
				}
			}
		})
	}
}
