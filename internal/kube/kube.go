// Package kube runs a real single-node Kubernetes on this machine for tests
// and demos, built from the package registries only: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, containerd with runc, the
// kubelet, kube-proxy (iptables mode) and CoreDNS, so that Services,
// ClusterIPs and DNS names work as in production.
//
// Build compiles the programs once per version into the cache (see
// build.go; the first build takes about 7 minutes on 2 cores), Start runs
// a cluster and Close removes everything it made. Debian's containerd,
// runc and CNI plugins (bridge, host-local, loopback, portmap), iproute2,
// nsenter, iptables, gcc and podman (for the pause image) must be
// installed, and the process must be root.
//
// Where it runs: every program of the cluster runs in a network namespace
// of its own, mm2kube-N for a free slot N (several clusters can run at
// once), joined to this machine by a veth pair. The Pods are network
// namespaces on a bridge inside it. This machine reaches the node at
// NodeIP, the Pods at their IPs and the Services at their ClusterIPs
// through routes to the veth; the Pods reach this machine at HostIP (give
// it to servers the Pods must reach, such as the Kafka brokers of
// internal/sandbox), and nothing else: the node's namespace has no default
// route, so no Pod packet leaves the machine. NetworkPolicy objects are
// accepted by the API server but not enforced (the bridge plugin has no
// policy engine).
//
// Typical use from a test binary:
//
//	c, err := kube.Start(ctx, kube.Config{Logger: log})
//	defer c.Close()
//	c.Kubectl(ctx, "apply", "--server-side", "-f", "manifest.yaml")
//	c.LoadPodmanImage(ctx, podman, "localhost/my-image:1", "registry.example.com/my-image:1")
package kube

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Config says how to start a cluster. The zero value builds into and runs
// from the default cache.
type Config struct {
	// CacheDir holds the built programs ("" means the user cache
	// directory's mm2cutover folder, or MM2CUTOVER_CACHE).
	CacheDir string
	// WorkDir is the parent of the cluster's folder ("" means the system's
	// temporary directory). The folder, with etcd's data, the images and
	// the Pods' volumes, is removed by Close.
	WorkDir string
	// Logger receives progress; nil discards it.
	Logger *slog.Logger
}

// Cluster is a running single-node Kubernetes.
type Cluster struct {
	bins           Binaries
	dir            string
	net            network
	slot           *slotLock
	pki            *pki
	kubeconfig     string
	containerdSock string
	cgroup         string
	nodeName       string
	procs          []*process
	client         *http.Client
	log            *slog.Logger
	sysctls        map[string]string // machine-wide values the kubelet changes, restored by Close
}

// Start builds the programs if needed (Build), then starts a cluster and
// waits until its node is Ready, kube-proxy has synced and cluster DNS
// answers. On failure everything already started is removed, and the
// error carries the end of the failing program's log.
func Start(ctx context.Context, cfg Config) (_ *Cluster, err error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("kube: a cluster needs root (network namespaces, mounts, cgroups)")
	}
	if err := checkTools(); err != nil {
		return nil, err
	}
	if cfg.CacheDir == "" {
		cfg.CacheDir = DefaultCacheDir()
	}
	bins, err := Build(ctx, cfg.CacheDir, log)
	if err != nil {
		return nil, err
	}
	slot, err := takeSlot()
	if err != nil {
		return nil, err
	}
	n := newNetwork(slot.slot)
	c := &Cluster{bins: bins, net: n, slot: slot, log: log, cgroup: n.ns, nodeName: n.ns}
	// A cluster of this slot whose process was killed left its folder's
	// name behind: remove whatever it left.
	if old, err := os.ReadFile(slot.dirFile()); err == nil {
		log.Info("kube: removing what a killed cluster left in this slot", "slot", slot.slot, "dir", string(old))
		sweep(n, strings.TrimSpace(string(old)), c.cgroup)
	} else {
		sweep(n, "", c.cgroup)
	}
	if c.dir, err = os.MkdirTemp(cfg.WorkDir, "mm2kube-"); err != nil {
		slot.release()
		return nil, err
	}
	if err := os.WriteFile(slot.dirFile(), []byte(c.dir+"\n"), 0o644); err != nil {
		os.RemoveAll(c.dir)
		slot.release()
		return nil, err
	}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	start := time.Now()
	if err := n.setup(ctx); err != nil {
		return nil, err
	}
	if err := c.writePKI(); err != nil {
		return nil, err
	}
	if err := c.startControlPlane(ctx); err != nil {
		return nil, err
	}
	log.Info("kube: API server ready", "url", c.APIServerURL(), "seconds", time.Since(start).Seconds())
	if err := c.startNode(ctx); err != nil {
		return nil, err
	}
	log.Info("kube: node ready", "node", c.nodeName, "seconds", time.Since(start).Seconds())
	if err := c.startDNS(ctx); err != nil {
		return nil, err
	}
	log.Info("kube: cluster ready", "kubeconfig", c.kubeconfig, "seconds", time.Since(start).Round(100*time.Millisecond).Seconds())
	return c, nil
}

// DefaultCacheDir is MM2CUTOVER_CACHE, else the user cache directory's
// mm2cutover folder: the cache the Kafka jars and images share.
func DefaultCacheDir() string {
	if d := os.Getenv("MM2CUTOVER_CACHE"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "mm2cutover")
}

// ErrMissingTool is returned by Start when a program the cluster needs is
// not installed (.ci/run installs them).
var ErrMissingTool = errors.New("kube: a program the cluster needs is not installed")

func checkTools() error {
	var missing []string
	for _, t := range []string{"containerd", "containerd-shim-runc-v2", "ctr", "runc", "ip", "nsenter", "iptables", "conntrack", "gcc", "podman"} {
		if _, err := exec.LookPath(t); err != nil {
			missing = append(missing, t)
		}
	}
	for _, p := range []string{"bridge", "host-local", "loopback", "portmap"} {
		if _, err := os.Stat(filepath.Join(cniBinDir, p)); err != nil {
			missing = append(missing, cniBinDir+"/"+p)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s (apt-get install containerd runc containernetworking-plugins iproute2 util-linux iptables conntrack gcc podman)",
			ErrMissingTool, strings.Join(missing, ", "))
	}
	return nil
}

// cniBinDir is where Debian's containernetworking-plugins puts the plugins.
const cniBinDir = "/usr/lib/cni"

func (c *Cluster) path(elem ...string) string {
	return filepath.Join(append([]string{c.dir}, elem...)...)
}

func (c *Cluster) writePKI() error {
	p, err := newPKI(c.path("pki"))
	if err != nil {
		return err
	}
	c.pki = p
	n := c.net
	ips := []net.IP{net.IP(n.nodeIP.AsSlice()), net.IP(n.serviceIP(1).AsSlice()), net.ParseIP("127.0.0.1")}
	dns := []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost"}
	for _, cert := range []struct {
		name, cn string
		orgs     []string
		server   bool
	}{
		{"apiserver", "kube-apiserver", nil, true},
		{"apiserver-kubelet-client", "kube-apiserver-kubelet-client", []string{"system:masters"}, false},
		{"admin", "mm2kube-admin", []string{"system:masters"}, false},
		{"controller-manager", "system:kube-controller-manager", nil, false},
		{"scheduler", "system:kube-scheduler", nil, false},
		{"kubelet", "system:node:" + c.nodeName, []string{"system:nodes"}, false},
		{"kubelet-serving", c.nodeName, nil, true},
		{"proxy", "system:kube-proxy", nil, false},
		{"coredns", "system:coredns", nil, false},
	} {
		certIPs, certDNS := []net.IP(nil), []string(nil)
		if cert.name == "apiserver" {
			certIPs, certDNS = ips, dns
		} else if cert.name == "kubelet-serving" {
			certIPs, certDNS = []net.IP{net.IP(n.nodeIP.AsSlice())}, []string{c.nodeName}
		}
		if err := p.issue(cert.name, cert.cn, cert.orgs, certIPs, certDNS, cert.server); err != nil {
			return err
		}
	}
	if err := p.serviceAccountKeys(); err != nil {
		return err
	}
	for _, name := range []string{"admin", "controller-manager", "scheduler", "kubelet", "proxy", "coredns"} {
		path, err := p.kubeconfig(name, c.APIServerURL())
		if err != nil {
			return err
		}
		if name == "admin" {
			c.kubeconfig = path
		}
	}
	cert, err := tls.LoadX509KeyPair(p.path("admin", "crt"), p.path("admin", "key"))
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AddCert(p.caCert)
	c.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool},
	}}
	return nil
}

// startControlPlane starts etcd, the API server, the controller manager
// and the scheduler inside the node's namespace.
func (c *Cluster) startControlPlane(ctx context.Context) error {
	n, p := c.net, c.pki
	etcd, err := c.start(ctx, "etcd", nil, n.in(c.bins.Etcd,
		"--name=mm2kube", "--data-dir="+c.path("etcd"),
		"--listen-client-urls=http://127.0.0.1:2379", "--advertise-client-urls=http://127.0.0.1:2379",
		"--listen-peer-urls=http://127.0.0.1:2380", "--initial-advertise-peer-urls=http://127.0.0.1:2380",
		"--initial-cluster=mm2kube=http://127.0.0.1:2380",
		// A test cluster: losing etcd's data on a machine crash is fine,
		// and fsync on a disk shared with many JVMs is slow.
		"--unsafe-no-fsync", "--log-level=warn")...)
	if err != nil {
		return err
	}
	_ = etcd
	if _, err := c.start(ctx, "kube-apiserver", nil, n.in(c.bins.APIServer,
		"--etcd-servers=http://127.0.0.1:2379",
		"--bind-address="+n.nodeIP.String(), "--advertise-address="+n.nodeIP.String(), "--secure-port=6443",
		"--service-cluster-ip-range="+n.svcNet.String(),
		"--client-ca-file="+p.path("ca", "crt"),
		"--tls-cert-file="+p.path("apiserver", "crt"), "--tls-private-key-file="+p.path("apiserver", "key"),
		"--kubelet-client-certificate="+p.path("apiserver-kubelet-client", "crt"),
		"--kubelet-client-key="+p.path("apiserver-kubelet-client", "key"),
		// The node's name resolves nowhere here (the node has no route to
		// this machine's name servers): reach the kubelet at its address.
		"--kubelet-preferred-address-types=InternalIP",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+p.path("sa", "pub"), "--service-account-signing-key-file="+p.path("sa", "key"),
		"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
		// As most clusters: Pod Security admission, not this flag, refuses privileged Pods.
		"--allow-privileged=true",
		"--profiling=false", "--v=1")...); err != nil {
		return err
	}
	if err := c.waitFor(ctx, "kube-apiserver", 2*time.Minute, func() error {
		return c.getOK(ctx, c.APIServerURL()+"/readyz")
	}); err != nil {
		return err
	}
	if _, err := c.start(ctx, "kube-controller-manager", nil, n.in(c.bins.ControllerManager,
		"--kubeconfig="+p.path("controller-manager", "kubeconfig"),
		"--authentication-kubeconfig="+p.path("controller-manager", "kubeconfig"),
		"--authorization-kubeconfig="+p.path("controller-manager", "kubeconfig"),
		// No front proxy: nothing to look up for request-header authentication.
		"--authentication-skip-lookup",
		"--bind-address=127.0.0.1", "--leader-elect=false",
		"--service-account-private-key-file="+p.path("sa", "key"), "--root-ca-file="+p.path("ca", "crt"),
		"--use-service-account-credentials=true",
		"--cluster-signing-cert-file="+p.path("ca", "crt"), "--cluster-signing-key-file="+p.path("ca", "key"),
		"--allocate-node-cidrs=true", "--cluster-cidr="+n.podNet.String(), "--node-cidr-mask-size=24",
		"--service-cluster-ip-range="+n.svcNet.String(),
		"--profiling=false", "--v=1")...); err != nil {
		return err
	}
	if _, err := c.start(ctx, "kube-scheduler", nil, n.in(c.bins.Scheduler,
		"--kubeconfig="+p.path("scheduler", "kubeconfig"),
		"--authentication-kubeconfig="+p.path("scheduler", "kubeconfig"),
		"--authorization-kubeconfig="+p.path("scheduler", "kubeconfig"),
		"--authentication-skip-lookup",
		"--bind-address=127.0.0.1", "--leader-elect=false", "--profiling=false", "--v=1")...); err != nil {
		return err
	}
	return nil
}

// startNode starts containerd, imports the pause image, and starts the
// kubelet and kube-proxy; it returns once the node is Ready and kube-proxy
// reports healthy.
func (c *Cluster) startNode(ctx context.Context) error {
	n := c.net
	if err := makeCgroup(c.cgroup); err != nil {
		return err
	}
	if err := c.writeNodeConfig(); err != nil {
		return err
	}
	if _, err := c.start(ctx, "containerd", nil, n.in("containerd", "--config", c.path("containerd", "config.toml"))...); err != nil {
		return err
	}
	if err := c.waitFor(ctx, "containerd", time.Minute, func() error {
		_, err := c.ctr(ctx, "version")
		return err
	}); err != nil {
		return err
	}
	if err := c.ImportImage(ctx, c.bins.PauseImage, PauseImageRef); err != nil {
		return err
	}
	c.sysctls = readSysctls()
	p := c.pki
	if _, err := c.start(ctx, "kubelet", nil, n.in(c.bins.Kubelet,
		"--config="+c.path("kubelet", "config.yaml"),
		"--kubeconfig="+p.path("kubelet", "kubeconfig"),
		"--root-dir="+c.path("kubelet", "root"),
		"--cert-dir="+c.path("kubelet", "pki"),
		"--hostname-override="+c.nodeName, "--node-ip="+n.nodeIP.String(), "--v=1")...); err != nil {
		return err
	}
	if _, err := c.start(ctx, "kube-proxy", nil, n.in(c.bins.Proxy, "--config="+c.path("kube-proxy.yaml"), "--v=1")...); err != nil {
		return err
	}
	if err := c.waitFor(ctx, "the node to be Ready", 3*time.Minute, c.nodeReady(ctx)); err != nil {
		return err
	}
	return c.waitFor(ctx, "kube-proxy", 2*time.Minute, func() error {
		resp, err := http.Get("http://" + net.JoinHostPort(n.nodeIP.String(), "10256") + "/healthz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("kube-proxy healthz: %s", resp.Status)
		}
		return nil
	})
}

func (c *Cluster) nodeReady(ctx context.Context) func() error {
	return func() error {
		var node struct {
			Status struct {
				Conditions []struct{ Type, Status, Message string }
			}
		}
		if err := c.GetJSON(ctx, "/api/v1/nodes/"+c.nodeName, &node); err != nil {
			return err
		}
		for _, cond := range node.Status.Conditions {
			if cond.Type == "Ready" {
				if cond.Status == "True" {
					return nil
				}
				return fmt.Errorf("node not ready: %s", cond.Message)
			}
		}
		return errors.New("node has no Ready condition yet")
	}
}

// startDNS makes the kube-dns Service (ClusterIP DNSServiceIP, its
// endpoint CoreDNS on the node's address) and starts CoreDNS.
func (c *Cluster) startDNS(ctx context.Context) error {
	n := c.net
	manifest := fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:coredns
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: system:coredns
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:coredns
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: system:coredns
---
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels:
    k8s-app: kube-dns
spec:
  clusterIP: %[1]s
  ports:
  - {name: dns, port: 53, protocol: UDP, targetPort: 53}
  - {name: dns-tcp, port: 53, protocol: TCP, targetPort: 53}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kube-dns-node
  namespace: kube-system
  labels:
    kubernetes.io/service-name: kube-dns
    endpointslice.kubernetes.io/managed-by: mm2kube
addressType: IPv4
endpoints:
- addresses: [%[2]s]
  conditions: {ready: true}
ports:
- {name: dns, port: 53, protocol: UDP}
- {name: dns-tcp, port: 53, protocol: TCP}
`, n.serviceIP(10), n.nodeIP)
	if _, err := c.KubectlIn(ctx, strings.NewReader(manifest), "apply", "-f", "-"); err != nil {
		return err
	}
	corefile := fmt.Sprintf(`.:53 {
    bind %[1]s
    errors
    ready %[1]s:8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig %[2]s
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 30
}
`, n.nodeIP, c.pki.path("coredns", "kubeconfig"))
	if err := os.WriteFile(c.path("Corefile"), []byte(corefile), 0o644); err != nil {
		return err
	}
	if _, err := c.start(ctx, "coredns", nil, n.in(c.bins.CoreDNS, "-conf", c.path("Corefile"))...); err != nil {
		return err
	}
	return c.waitFor(ctx, "CoreDNS", time.Minute, func() error {
		return c.getOK(ctx, "http://"+net.JoinHostPort(n.nodeIP.String(), "8181")+"/ready")
	})
}

// start starts a program of the cluster, logging to logs/<name>.log, and
// fails at once if it exits within its first half second.
func (c *Cluster) start(ctx context.Context, name string, env []string, argv ...string) (*process, error) {
	if err := os.MkdirAll(c.path("logs"), 0o755); err != nil {
		return nil, err
	}
	p, err := startProcess(name, c.path("logs", name+".log"), env, argv...)
	if err != nil {
		return nil, err
	}
	c.procs = append(c.procs, p)
	select {
	case <-p.done:
		return nil, fmt.Errorf("kube: %s exited at start: %v\n%s", name, p.err, p.tail(30))
	case <-time.After(500 * time.Millisecond):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return p, nil
}

// waitFor polls check every 250 ms until it returns nil, timeout passes
// or a program of the cluster exits (its log's end is in the error).
func (c *Cluster) waitFor(ctx context.Context, what string, timeout time.Duration, check func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		err := check()
		if err == nil || errors.Is(err, errFailed) {
			return err
		}
		for _, p := range c.procs {
			if perr, ok := p.exited(); ok {
				return fmt.Errorf("kube: %s exited while waiting for %s: %v\n%s", p.name, what, perr, p.tail(30))
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube: waiting for %s: %w (last: %v)", what, ctx.Err(), err)
		case <-t.C:
		}
	}
}

// errFailed, returned by a check, ends waitFor at once.
var errFailed = errors.New("failed")

func (c *Cluster) getOK(ctx context.Context, url string) error {
	_, err := c.get(ctx, url, 4096)
	return err
}

// get returns the body of a GET of url as the cluster's administrator (up
// to limit bytes), or an error naming the status and the answer.
func (c *Cluster) get(ctx context.Context, url string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(b)))
	}
	return b, nil
}

// GetJSON decodes the API server's answer to GET path (such as
// /api/v1/nodes) into v, as the cluster's administrator.
func (c *Cluster) GetJSON(ctx context.Context, path string, v any) error {
	b, err := c.get(ctx, c.APIServerURL()+path, 64<<20)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// APIServerURL is the API server's address, reachable from this machine and
// from the Pods (which also reach it as the kubernetes Service).
func (c *Cluster) APIServerURL() string {
	return "https://" + net.JoinHostPort(c.net.nodeIP.String(), "6443")
}

// Kubeconfig returns the path of the administrator's kubeconfig
// (system:masters), for kubectl and client libraries.
func (c *Cluster) Kubeconfig() string { return c.kubeconfig }

// KubectlPath returns the kubectl built with the cluster's version.
func (c *Cluster) KubectlPath() string { return c.bins.Kubectl }

// Binaries returns the programs the cluster runs.
func (c *Cluster) Binaries() Binaries { return c.bins }

// HostIP is this machine's address on the veth to the node: the one
// address outside the node that Pods can reach. Servers the Pods must
// reach (the sandbox's brokers) listen on it.
func (c *Cluster) HostIP() netip.Addr { return c.net.hostIP }

// NodeIP is the node's address (the API server, the kubelet, CoreDNS and
// NodePorts listen on it).
func (c *Cluster) NodeIP() netip.Addr { return c.net.nodeIP }

// NodeName is the name of the cluster's one node.
func (c *Cluster) NodeName() string { return c.nodeName }

// PodCIDR is the range the Pods' addresses come from.
func (c *Cluster) PodCIDR() netip.Prefix { return c.net.podNet }

// ServiceCIDR is the range of Service ClusterIPs.
func (c *Cluster) ServiceCIDR() netip.Prefix { return c.net.svcNet }

// DNSServiceIP is the ClusterIP of kube-system/kube-dns, the Pods' name
// server.
func (c *Cluster) DNSServiceIP() netip.Addr { return c.net.serviceIP(10) }

// Dir is the cluster's folder (logs/ holds each program's log).
func (c *Cluster) Dir() string { return c.dir }

// KubectlCmd returns a kubectl command for the cluster's administrator.
func (c *Cluster) KubectlCmd(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.bins.Kubectl, append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + c.dir}
	return cmd
}

// Kubectl runs kubectl with args and returns its standard output; an
// error carries its standard error.
func (c *Cluster) Kubectl(ctx context.Context, args ...string) (string, error) {
	return c.KubectlIn(ctx, nil, args...)
}

// KubectlIn is Kubectl with stdin as kubectl's standard input (for
// `apply -f -`).
func (c *Cluster) KubectlIn(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	out, _, err := c.KubectlStreams(ctx, stdin, args...)
	return out, err
}

// KubectlStreams is KubectlIn that also returns what kubectl wrote on
// standard error when it succeeded (the API server's warnings).
func (c *Cluster) KubectlStreams(ctx context.Context, stdin io.Reader, args ...string) (stdout, stderr string, err error) {
	cmd := c.KubectlCmd(ctx, args...)
	cmd.Stdin = stdin
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	stderr = strings.TrimSpace(errb.String())
	if err != nil {
		return string(out), stderr, &KubectlError{Args: args, Err: err, Stderr: stderr}
	}
	return string(out), stderr, nil
}

// KubectlError is a kubectl run that failed: Stderr is what it said (the
// API server's refusal, for one).
type KubectlError struct {
	Args   []string
	Err    error
	Stderr string
}

func (e *KubectlError) Error() string {
	return fmt.Sprintf("kubectl %s: %v: %s", strings.Join(e.Args, " "), e.Err, e.Stderr)
}

func (e *KubectlError) Unwrap() error { return e.Err }

// LogTails returns the last n lines of each program's log, for a failing
// test to show.
func (c *Cluster) LogTails(n int) string {
	var b strings.Builder
	for _, p := range c.procs {
		fmt.Fprintf(&b, "----- %s, last %d lines -----\n%s\n", p.name, n, p.tail(n))
	}
	return b.String()
}

// Close deletes the Pods (so that the kubelet tears their sandboxes down),
// stops every program, then removes whatever is left: containers and
// their shims, mounts, cgroups, the network namespace, the routes, and the
// cluster's folder. It restores the kernel settings the kubelet changed.
func (c *Cluster) Close() error {
	if c.slot == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if c.kubeconfig != "" && len(c.procs) > 0 {
		c.drainPods(ctx)
	}
	// The reverse of the start order: CoreDNS, kube-proxy and the kubelet
	// first, etcd last.
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].stop(10 * time.Second)
	}
	sweep(c.net, c.dir, c.cgroup)
	restoreSysctls(c.sysctls)
	c.slot.release()
	c.slot = nil
	return nil
}

// drainPods deletes every Pod at once and waits (bounded) until the
// kubelet has stopped their containers and sandboxes (no containerd task
// left), so that their network namespaces are removed by the CNI plugins
// rather than swept.
func (c *Cluster) drainPods(ctx context.Context) {
	if _, err := c.Kubectl(ctx, "delete", "pods", "--all", "--all-namespaces", "--grace-period=0", "--force", "--wait=false"); err != nil {
		c.log.Warn("kube: deleting the Pods at close", "err", err)
		return
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		out, err := c.ctr(ctx, "tasks", "list", "-q")
		if err == nil && strings.TrimSpace(out) == "" {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// The machine-wide kernel settings the kubelet sets on start (its
// setupKernelTunables: a node's defaults), restored by Close.
var kubeletSysctls = []string{"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops", "kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes"}

func readSysctls() map[string]string {
	m := map[string]string{}
	for _, k := range kubeletSysctls {
		if b, err := os.ReadFile("/proc/sys/" + k); err == nil {
			m[k] = strings.TrimSpace(string(b))
		}
	}
	return m
}

func restoreSysctls(m map[string]string) {
	for k, v := range m {
		os.WriteFile("/proc/sys/"+k, []byte(v+"\n"), 0o644)
	}
}
