package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestTailFileShowsTheCause: a broker that exits at start logs its cause
// once, then hundreds of lines of shutdown; the tail shows the cause's
// ERROR line before the last lines. A log without errors is the tail alone.
func TestTailFileShowsTheCause(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, lines []string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	shutdown := make([]string, 100)
	for i := range shutdown {
		shutdown[i] = "[2026-12-02 10:14:24,051] INFO shutting down part " + string(rune('a'+i%26))
	}
	cause := "[2026-12-02 10:14:20,000] ERROR Exiting Kafka due to fatal exception (kafka.Kafka$)"
	crashed := write("crashed.log", append([]string{"[2026-12-02 10:14:19,000] INFO starting", cause}, shutdown...))
	got := tailFile(crashed, 40)
	if !strings.HasPrefix(got, "(first errors of the log)\n"+cause+"\n(last lines of the log)\n") || strings.Count(got, "\n") != 42 {
		t.Errorf("tail of a crashed broker's log:\n%s", got)
	}
	quiet := write("quiet.log", shutdown)
	if got := tailFile(quiet, 40); strings.Contains(got, "(first errors") || strings.Count(got, "\n") != 39 {
		t.Errorf("tail of a log without errors:\n%s", got)
	}
	if got := tailFile(write("short.log", []string{cause}), 40); got != cause {
		t.Errorf("tail of a one-line log = %q", got)
	}
}

// TestFreePortsReserved: the ports are below the ephemeral range, distinct,
// free, and not handed out again while reserved (another sandbox of the
// machine picking ports before this one's JVMs bind them).
func TestFreePortsReserved(t *testing.T) {
	if ephemeralLow()-portLow < 1000 {
		t.Skipf("the ephemeral range starts at %d: freePorts asks the kernel", ephemeralLow())
	}
	first, err := freePorts("127.0.0.1", 50)
	if err != nil {
		t.Fatal(err)
	}
	second, err := freePorts("127.0.0.1", 50)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range append(first, second...) {
		if p < portLow || p >= min(portHigh, ephemeralLow()) {
			t.Errorf("port %d outside %d-%d", p, portLow, min(portHigh, ephemeralLow())-1)
		}
		if seen[p] {
			t.Errorf("port %d handed out twice", p)
		}
		seen[p] = true
	}
	// A reservation older than reserveFor is taken over; a fresh one not.
	p := first[0]
	if reserve(p) {
		t.Errorf("port %d reserved again right away", p)
	}
	old := time.Now().Add(-reserveFor - time.Minute)
	if err := os.Chtimes(filepath.Join(portsDir(), strconv.Itoa(p)), old, old); err != nil {
		t.Fatal(err)
	}
	if !reserve(p) {
		t.Errorf("port %d: a reservation older than %v not taken over", p, reserveFor)
	}
}
