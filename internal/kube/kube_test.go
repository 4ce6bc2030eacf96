package kube

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNetworkAddresses: each slot's ranges are its own, and none is a
// range that reaches off the machine through this package's routes.
func TestNetworkAddresses(t *testing.T) {
	seen := map[netip.Prefix]int{}
	for slot := range maxSlots {
		n := newNetwork(slot)
		for _, p := range []netip.Prefix{n.linkNet, n.podNet, n.svcNet} {
			if !netip.MustParsePrefix("10.0.0.0/8").Overlaps(p) || p.Bits() != 24 {
				t.Errorf("slot %d: %s is not a /24 of 10/8", slot, p)
			}
			if other, ok := seen[p]; ok {
				t.Errorf("slot %d and %d share %s", slot, other, p)
			}
			seen[p] = slot
		}
		if !n.linkNet.Contains(n.hostIP) || !n.linkNet.Contains(n.nodeIP) || !n.podNet.Contains(n.podGW) || !n.svcNet.Contains(n.serviceIP(10)) {
			t.Errorf("slot %d: addresses outside their ranges: %+v", slot, n)
		}
		if len(n.hostVeth) > 15 || len(n.nodeVeth) > 15 {
			t.Errorf("slot %d: interface names %q %q longer than IFNAMSIZ", slot, n.hostVeth, n.nodeVeth)
		}
	}
}

// TestRecipeKeys: a build recipe's cache key names its version and changes
// with its files.
func TestRecipeKeys(t *testing.T) {
	for _, r := range []recipeBuild{kubernetesRecipe(), etcdRecipe(), corednsRecipe(), probeRecipe()} {
		k, err := r.key()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(k, r.name+"-"+r.version+"-") {
			t.Errorf("key %q does not start with %s-%s-", k, r.name, r.version)
		}
		r.ldflags += " -X x.y=z"
		if k2, _ := r.key(); k2 == k {
			t.Errorf("%s: other ldflags, same key %s", r.name, k)
		}
	}
}

// TestCluster starts a cluster of its own, checks that Pods resolve and
// reach a Service, and that Close leaves nothing behind: no network
// namespace, veth, route, cgroup, process naming its folder, or folder.
func TestCluster(t *testing.T) {
	if testing.Short() {
		if os.Getenv("CI") == "true" {
			t.Fatal("Kubernetes test skipped by -short, which CI=true does not allow")
		}
		t.Skip("Kubernetes test: runs without -short")
	}
	if os.Geteuid() != 0 && os.Getenv("CI") != "true" {
		t.Skip("a cluster needs root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	start := time.Now()
	c, err := Start(ctx, Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster ready in %v (slot %d, node %s)", time.Since(start).Round(100*time.Millisecond), c.net.slot, c.NodeIP())
	closed := false
	defer func() {
		if !closed {
			c.Close()
		}
	}()
	start = time.Now()
	if err := CheckNetwork(ctx, c); err != nil {
		t.Log(c.LogTails(30))
		t.Fatal(err)
	}
	t.Logf("network check in %v", time.Since(start).Round(100*time.Millisecond))
	out, err := c.Kubectl(ctx, "version", "-o", "json")
	if err != nil || !strings.Contains(out, `"gitVersion": "`+KubernetesVersion+`"`) {
		t.Errorf("kubectl version: %v\n%s", err, out)
	}

	n, dir := c.net, c.dir
	start = time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	t.Logf("closed in %v", time.Since(start).Round(100*time.Millisecond))
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("cluster folder %s: %v, want it gone", dir, err)
	}
	if _, err := os.Stat(n.nsPath); !os.IsNotExist(err) {
		t.Errorf("network namespace %s: %v, want it gone", n.nsPath, err)
	}
	if out, _ := run(ctx, "ip", "-o", "link", "show"); strings.Contains(out, n.hostVeth) {
		t.Errorf("veth %s left:\n%s", n.hostVeth, out)
	}
	if out, _ := run(ctx, "ip", "-4", "route", "show"); strings.Contains(out, n.podNet.String()) || strings.Contains(out, n.svcNet.String()) {
		t.Errorf("routes left:\n%s", out)
	}
	for _, h := range cgroupHierarchies() {
		if _, err := os.Stat(filepath.Join(h, n.ns)); !os.IsNotExist(err) {
			t.Errorf("cgroup %s left", filepath.Join(h, n.ns))
		}
	}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if b, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline")); err == nil && strings.Contains(string(b), dir) {
			t.Errorf("process %s still names %s: %q", p.Name(), dir, b)
		}
	}
}
