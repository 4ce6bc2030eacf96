package sandbox

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The ports a sandbox's processes listen on are chosen before they start,
// and a JVM binds its ports 10 s to minutes later on a busy machine. A port
// the kernel hands out for bind(0) comes from the ephemeral range, the
// range every outgoing connection takes its local port from: in that
// window a client's connection, or another sandbox's bind(0), can take the
// port, and the broker exits at start. So freePorts picks ports below the
// ephemeral range (and below Kubernetes' NodePort range, 30000-32767), and
// reserves each for reserveFor with a file that every test process of the
// machine honours.
const (
	portLow    = 15000
	portHigh   = 30000 // exclusive: the NodePort range starts here
	reserveFor = 15 * time.Minute
)

// portsDir holds one file per reserved port.
func portsDir() string { return filepath.Join(os.TempDir(), "mm2cutover-ports") }

// freePorts returns n TCP ports free on host, reserved for this process
// for reserveFor (see above). Where the ephemeral range leaves no room
// below it, it asks the kernel (bind to port 0), as before.
func freePorts(host string, n int) ([]int, error) {
	low, high := portLow, min(portHigh, ephemeralLow())
	if high-low < 1000 || os.MkdirAll(portsDir(), 0o755) != nil {
		return kernelPorts(host, n)
	}
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries > 100*n {
			return nil, fmt.Errorf("no free port on %s in %d-%d after %d tries", host, low, high-1, tries)
		}
		p := low + rand.IntN(high-low)
		if !reserve(p) {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err != nil {
			continue // taken by a process that does not reserve
		}
		l.Close()
		ports = append(ports, p)
	}
	return ports, nil
}

// reserve takes port p for reserveFor: its file is created, or is older
// than reserveFor (a reservation long used or abandoned).
func reserve(p int) bool {
	path := filepath.Join(portsDir(), strconv.Itoa(p))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err == nil {
		f.Close()
		return true
	}
	if !errors.Is(err, os.ErrExist) {
		return false
	}
	fi, err := os.Stat(path)
	if err != nil || time.Since(fi.ModTime()) < reserveFor {
		return false
	}
	now := time.Now()
	return os.Chtimes(path, now, now) == nil
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's
// net.ipv4.ip_local_port_range; 32768 when it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	if f := strings.Fields(string(b)); len(f) == 2 {
		if v, err := strconv.Atoi(f[0]); err == nil {
			return v
		}
	}
	return 32768
}

// kernelPorts asks the kernel for n free TCP ports on host.
func kernelPorts(host string, n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, fmt.Errorf("no free port on %s: %w", host, err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
