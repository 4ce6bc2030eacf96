package kube

import (
	"fmt"
	"os"
	"path/filepath"
)

// writeNodeConfig writes containerd's, the CNI plugins', the kubelet's and
// kube-proxy's configuration into the cluster's folder.
func (c *Cluster) writeNodeConfig() error {
	n, p := c.net, c.pki
	cd := c.path("containerd")
	c.containerdSock = filepath.Join(cd, "containerd.sock")
	files := map[string]string{
		// restrict_oom_score_adj: root on this VM may not lower an OOM score,
		// and without it every Pod sandbox fails ("can't get final child's
		// PID from pipe"). netns_mounts_under_state_dir keeps the Pods'
		// network namespaces in the cluster's folder, where Close finds them.
		filepath.Join(cd, "config.toml"): fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
[grpc]
  address = %[3]q
[ttrpc]
  address = %[4]q
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[6]q
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[7]q
    conf_dir = %[8]q
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "runc"
        Root = %[9]q
        SystemdCgroup = false
`, filepath.Join(cd, "root"), filepath.Join(cd, "state"), c.containerdSock, c.containerdSock+".ttrpc",
			filepath.Join(cd, "opt"), PauseImageRef, cniBinDir, c.path("cni", "net.d"), filepath.Join(cd, "runc")),

		// The Pods' network: veths on the harness's bridge, addresses from
		// the node's Pod range, the default route through the node, which
		// routes only to this machine. No masquerading: Pods are seen with
		// their own addresses.
		c.path("cni", "net.d", "10-mm2kube.conflist"): fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "mm2kube",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %[1]q,
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": %[2]q, "gateway": %[3]q}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": %[4]q
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, n.bridge, n.podNet.String(), n.podGW.String(), c.path("cni", "ipam")),

		c.path("kubelet", "config.yaml"): fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %[1]q}
authorization: {mode: Webhook}
address: %[2]q
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
tlsCertFile: %[3]q
tlsPrivateKeyFile: %[4]q
containerRuntimeEndpoint: unix://%[5]s
cgroupDriver: cgroupfs
cgroupRoot: /%[6]s
failSwapOn: false
clusterDNS: [%[7]q]
clusterDomain: cluster.local
resolvConf: ""
podCIDR: %[8]q
podLogsDir: %[9]q
maxPods: 60
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 200Mi
  nodefs.available: 1%%
  imagefs.available: 1%%
  nodefs.inodesFree: 1%%
containerLogMaxSize: 20Mi
shutdownGracePeriod: 0s
`, p.path("ca", "crt"), n.nodeIP.String(), p.path("kubelet-serving", "crt"), p.path("kubelet-serving", "key"),
			c.containerdSock, c.cgroup, c.DNSServiceIP().String(), n.podNet.String(), c.path("kubelet", "pod-logs")),

		// conntrack maxPerCore 0 and the zero timeouts leave the
		// machine-wide conntrack sysctls alone.
		c.path("kube-proxy.yaml"): fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %[1]q
mode: iptables
clusterCIDR: %[2]q
hostnameOverride: %[3]q
healthzBindAddress: %[4]s:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: [%[4]s/32]
iptables:
  localhostNodePorts: false
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`, p.path("proxy", "kubeconfig"), n.podNet.String(), c.nodeName, n.nodeIP.String()),
	}
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}
