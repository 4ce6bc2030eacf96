package cutover

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// -request-timeout bounds each request to Flink's REST API too: a
// JobManager that accepts the connection and never answers fails the
// precheck's flink-stopped check instead of stalling it.
func TestF3RequestTimeoutAppliesToFlink(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // never answered
		}
	}()
	c, err := flinkClient(Settings{FlinkREST: "http://" + l.Addr().String(), RequestTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := c.Job(context.Background(), "j1"); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("got %v, want the request timeout", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("no answer and no error a minute after a 100 ms -request-timeout")
	}
}
