package kube

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// slotDir holds one lock file per cluster slot and the folder each slot's
// cluster uses, so that a cluster left behind by a killed process is
// cleaned up by the next one that takes its slot.
const slotDir = "/run/mm2kube"

// maxSlots bounds the clusters that run at once on one machine.
const maxSlots = 32

// network is the addressing of one cluster slot N. Everything the cluster
// runs lives in the network namespace mm2kube-N, joined to this machine's
// own namespace by one veth pair: hostIP (10.250.N.1) on this side, nodeIP
// (10.250.N.2) on the node's. The Pods sit on the bridge mm2kbr0 inside the
// node's namespace (10.251.N.0/24, gateway .1); Service ClusterIPs are
// 10.252.N.0/24. This machine routes the Pod and Service ranges to the
// node, and the node has no default route: nothing a Pod sends can leave
// the machine.
type network struct {
	slot               int
	ns, nsPath         string
	hostVeth, nodeVeth string
	bridge             string
	hostIP, nodeIP     netip.Addr
	podGW              netip.Addr
	linkNet, podNet    netip.Prefix
	svcNet             netip.Prefix
}

func newNetwork(slot int) network {
	a := func(b2, b3, b4 int) netip.Addr { return netip.AddrFrom4([4]byte{10, byte(b2), byte(b3), byte(b4)}) }
	ns := fmt.Sprintf("mm2kube-%d", slot)
	return network{
		slot: slot, ns: ns, nsPath: "/run/netns/" + ns,
		hostVeth: fmt.Sprintf("mm2k%dh", slot), nodeVeth: fmt.Sprintf("mm2k%dn", slot), bridge: "mm2kbr0",
		hostIP: a(250, slot, 1), nodeIP: a(250, slot, 2), podGW: a(251, slot, 1),
		linkNet: netip.PrefixFrom(a(250, slot, 0), 24),
		podNet:  netip.PrefixFrom(a(251, slot, 0), 24),
		svcNet:  netip.PrefixFrom(a(252, slot, 0), 24),
	}
}

// serviceIP returns the i-th address of the Service range (1: the
// kubernetes Service, 10: cluster DNS).
func (n network) serviceIP(i int) netip.Addr {
	b := n.svcNet.Addr().As4()
	b[3] = byte(i)
	return netip.AddrFrom4(b)
}

// in returns argv run inside the node's network namespace (only the
// network namespace: the mount namespace stays this machine's, so that the
// kubelet, containerd and runc see the same mounts).
func (n network) in(argv ...string) []string {
	return append([]string{"nsenter", "--net=" + n.nsPath, "--"}, argv...)
}

// setup makes the namespace, the veth pair, the bridge and the routes.
func (n network) setup(ctx context.Context) error {
	if err := n.checkFree(ctx); err != nil {
		return err
	}
	for _, argv := range [][]string{
		{"ip", "netns", "add", n.ns},
		{"ip", "link", "add", n.hostVeth, "type", "veth", "peer", "name", n.nodeVeth},
		{"ip", "link", "set", n.nodeVeth, "netns", n.ns},
		{"ip", "addr", "add", n.hostIP.String() + "/24", "dev", n.hostVeth},
		{"ip", "link", "set", n.hostVeth, "up"},
		{"ip", "-n", n.ns, "link", "set", "lo", "up"},
		{"ip", "-n", n.ns, "addr", "add", n.nodeIP.String() + "/24", "dev", n.nodeVeth},
		{"ip", "-n", n.ns, "link", "set", n.nodeVeth, "up"},
		{"ip", "-n", n.ns, "link", "add", n.bridge, "type", "bridge"},
		{"ip", "-n", n.ns, "addr", "add", n.podGW.String() + "/24", "dev", n.bridge},
		{"ip", "-n", n.ns, "link", "set", n.bridge, "up"},
		{"ip", "route", "add", n.podNet.String(), "via", n.nodeIP.String(), "dev", n.hostVeth},
		{"ip", "route", "add", n.svcNet.String(), "via", n.nodeIP.String(), "dev", n.hostVeth},
		// The node forwards between the Pods and this machine's side of the
		// veth, and bridged Pod-to-Pod traffic passes iptables, so that a
		// Pod reaches a Service whose endpoint is on the same bridge.
		n.in("sysctl", "-qw", "net.ipv4.ip_forward=1", "net.bridge.bridge-nf-call-iptables=1"),
	} {
		if _, err := run(ctx, argv...); err != nil {
			return err
		}
	}
	return nil
}

// checkFree refuses ranges this machine already uses (an interface
// address or a route in 10.250-252.N), so that the cluster never shadows a
// real network.
func (n network) checkFree(ctx context.Context) error {
	out, err := run(ctx, "ip", "-4", "-o", "addr", "show")
	if err != nil {
		return err
	}
	routes, err := run(ctx, "ip", "-4", "route", "show")
	if err != nil {
		return err
	}
	var used []string
	for _, line := range strings.Split(out+"\n"+routes, "\n") {
		for _, f := range strings.Fields(line) {
			p, err := netip.ParsePrefix(f)
			if err != nil {
				if a, err2 := netip.ParseAddr(f); err2 == nil {
					p = netip.PrefixFrom(a, 32)
				} else {
					continue
				}
			}
			for _, mine := range []netip.Prefix{n.linkNet, n.podNet, n.svcNet} {
				if p.Overlaps(mine) && !slices.Contains(used, line) {
					used = append(used, strings.TrimSpace(line))
				}
			}
		}
	}
	if len(used) > 0 {
		return fmt.Errorf("kube: slot %d's addresses (%s, %s, %s) are in use on this machine: %s",
			n.slot, n.linkNet, n.podNet, n.svcNet, strings.Join(used, "; "))
	}
	return nil
}

// teardown removes what setup made; deleting the namespace removes the
// node's side of the veth, the bridge and every iptables rule kube-proxy
// wrote. Errors are ignored: it also cleans up after a partial setup.
func (n network) teardown() {
	ctx := context.Background()
	run(ctx, "ip", "route", "del", n.podNet.String())
	run(ctx, "ip", "route", "del", n.svcNet.String())
	run(ctx, "ip", "link", "del", n.hostVeth)
	run(ctx, "ip", "netns", "del", n.ns)
}

// slotLock is a held cluster slot.
type slotLock struct {
	slot int
	f    *os.File
}

// takeSlot takes the first free slot (a non-blocking flock on
// /run/mm2kube/slot-N.lock). The lock lasts as long as the file is open.
func takeSlot() (*slotLock, error) {
	if err := os.MkdirAll(slotDir, 0o755); err != nil {
		return nil, err
	}
	for i := range maxSlots {
		f, err := os.OpenFile(filepath.Join(slotDir, fmt.Sprintf("slot-%d.lock", i)), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				continue
			}
			return nil, err
		}
		return &slotLock{slot: i, f: f}, nil
	}
	return nil, fmt.Errorf("kube: all %d cluster slots are taken on this machine", maxSlots)
}

func (l *slotLock) dirFile() string {
	return filepath.Join(slotDir, fmt.Sprintf("slot-%d.dir", l.slot))
}

func (l *slotLock) release() {
	os.Remove(l.dirFile())
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
}

// sweep removes what a cluster of this slot may have left behind when its
// process was killed before Close: processes that name its folder
// (containerd's shims outlive containerd), the processes of its Pods' cgroups,
// mounts under its folder, its network, its cgroups and its folder.
func sweep(n network, dir, cgroup string) {
	if dir != "" {
		killNaming(dir)
	}
	killCgroup(cgroup)
	if dir != "" {
		unmountUnder(dir)
	}
	n.teardown()
	removeCgroup(cgroup)
	if dir != "" {
		removeLogLinks(dir)
		os.RemoveAll(dir)
	}
}

// killNaming kills every process whose command line names dir.
func killNaming(dir string) {
	ents, _ := os.ReadDir("/proc")
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), dir) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// cgroupHierarchies are the mounted cgroup hierarchies (v1 controllers and
// the unified one) under /sys/fs/cgroup, or /sys/fs/cgroup itself on a
// pure v2 machine.
func cgroupHierarchies() []string {
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		return []string{"/sys/fs/cgroup"}
	}
	ents, _ := os.ReadDir("/sys/fs/cgroup")
	var hs []string
	for _, e := range ents {
		p := filepath.Join("/sys/fs/cgroup", e.Name())
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			hs = append(hs, p)
		}
	}
	return hs
}

// killCgroup kills every process in the cgroup tree named cgroup, in every
// hierarchy.
func killCgroup(cgroup string) {
	for _, h := range cgroupHierarchies() {
		filepath.WalkDir(filepath.Join(h, cgroup), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
				return nil
			}
			b, _ := os.ReadFile(p)
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			return nil
		})
	}
}

// removeCgroup removes the cgroup tree named cgroup, deepest first.
func removeCgroup(cgroup string) {
	for _, h := range cgroupHierarchies() {
		var dirs []string
		filepath.WalkDir(filepath.Join(h, cgroup), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			syscall.Rmdir(dirs[i])
		}
	}
}

// makeCgroup makes the cgroup named cgroup in every hierarchy, with the
// cpuset of its parent (a new v1 cpuset has none, and no task may join it).
func makeCgroup(cgroup string) error {
	for _, h := range cgroupHierarchies() {
		p := filepath.Join(h, cgroup)
		if err := os.MkdirAll(p, 0o755); err != nil {
			return fmt.Errorf("kube: cgroup %s: %w", p, err)
		}
		if filepath.Base(h) == "cpuset" {
			for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
				b, err := os.ReadFile(filepath.Join(h, f))
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(p, f), b, 0o644); err != nil {
					return fmt.Errorf("kube: cgroup %s: %w", p, err)
				}
			}
		}
	}
	return nil
}

// unmountUnder detaches every mount below dir, deepest first.
func unmountUnder(dir string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return
	}
	defer f.Close()
	var mounts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) > 4 && (fs[4] == dir || strings.HasPrefix(fs[4], dir+"/")) {
			mounts = append(mounts, fs[4])
		}
	}
	slices.SortFunc(mounts, func(a, b string) int { return len(b) - len(a) })
	for _, m := range mounts {
		syscall.Unmount(m, syscall.MNT_DETACH)
	}
}

// removeLogLinks removes the kubelet's links in /var/log/containers that
// point into dir (the kubelet always writes them there).
func removeLogLinks(dir string) {
	ents, _ := os.ReadDir("/var/log/containers")
	for _, e := range ents {
		p := filepath.Join("/var/log/containers", e.Name())
		if to, err := os.Readlink(p); err == nil && strings.HasPrefix(to, dir+"/") {
			os.Remove(p)
		}
	}
}

// run runs argv and returns its standard output; a failure carries its
// standard error.
func run(ctx context.Context, argv ...string) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
