package main

import (
	"bytes"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect/connectfake"
	"github.com/mm2cutover/mm2cutover/examples/internal/app"
)

// refusedAddr is an address of this machine where nothing listens: a
// connection there is refused at once.
func refusedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// blackHole is a listener that accepts every connection and never says a
// word, as a port behind a firewall that drops the answers, or a server
// of another protocol waiting for its client to speak, looks.
func blackHole(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c) // held open, never answered
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// TestUnreachableFailsFast: a Connect REST API or a Kafka cluster that does
// not answer — a refused port, or a listener that accepts and says nothing
// — ends the step in seconds with a few lines on stderr: each endpoint that
// does not answer noted once as it is retried (Connect and both clusters
// are contacted at once, app.FirstContact), then the error naming the first
// of them in the order Connect, source, target and what was tried, and what
// to do, naming the flags that point at it and -retry-timeout. It was 117 s
// and 33 lines for Connect, 59 s for Kafka. The bound is the 15 s:
// the waits are timers (10 s of retries, 5 s or 10 s for a first answer),
// not work, so a loaded machine does not stretch them much.
func TestUnreachableFailsFast(t *testing.T) {
	worker := connectfake.New()
	defer worker.Close()
	broker := refusedAddr(t)
	for _, tc := range []struct {
		name              string
		connectURL, kafka string
		says              []string
		down              int // endpoints that do not answer: Connect, and the clusters (both at the one address)
	}{
		{"Connect: a refused port", "http://" + refusedAddr(t), broker, []string{"no answer from the Kafka Connect REST API", "connection refused", "-connect-url", "-retry-timeout"}, 3},
		{"Connect: a black hole", "http://" + blackHole(t), broker, []string{"no answer from the Kafka Connect REST API", "no answer within 5s", "-connect-url"}, 3},
		{"Kafka: a refused port", worker.URL(), refusedAddr(t), []string{"no answer from the brokers at", "-source-bootstrap", "-retry-timeout"}, 2},
		{"Kafka: a black hole", worker.URL(), blackHole(t), []string{"no answer from the brokers at", "-source-bootstrap", "-retry-timeout"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			start := time.Now()
			code := run([]string{"-source-bootstrap", tc.kafka, "-target-bootstrap", tc.kafka, "-connect-url", tc.connectURL,
				"-connector", "mm2", "-group", "flink", "-topics", "orders", "-plan", t.TempDir() + "/plan.json", "precheck"}, &out, &errb)
			took := time.Since(start)
			stderr := strings.TrimSpace(errb.String())
			t.Logf("exit %d after %s:\n%s", code, took.Round(100*time.Millisecond), stderr)
			if code != app.ExitError {
				t.Errorf("exit %d, want %d (worth a retry once the endpoint answers)", code, app.ExitError)
			}
			if took > 15*time.Second {
				t.Errorf("the step took %s, want at most 15s", took.Round(100*time.Millisecond))
			}
			lines := strings.Split(stderr, "\n")
			if len(lines) > 2+tc.down {
				t.Errorf("%d lines on stderr, want at most %d: a retry noted once for each of the %d endpoints down, the error, what to do", len(lines), 2+tc.down, tc.down)
			}
			if got := strings.Count(stderr, "cutover: "); got != 2 {
				t.Errorf("%d lines of the step's own report, want 2 (the error, what to do)", got)
			}
			for _, want := range tc.says {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr does not say %q", want)
				}
			}
		})
	}
}
