package app

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect/connectfake"
	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/kafkaadmin/kafkafake"
)

// TestCheckConnectHidesURLCredentials: an http:// URL with user:password
// that meets a TLS endpoint is reported as a settings error with the URL
// redacted; the password was printed in clear before (CLI stderr, the Job's
// result line).
func TestCheckConnectHidesURLCredentials(t *testing.T) {
	// A TLS listener that, as Jetty's, answers plain HTTP with no HTTP at all.
	pemBytes, err := os.ReadFile("../../../clientconf/testdata/server.pem")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(pemBytes, pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
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
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	const pw = "url-password-marker-77"
	u := "http://operator:" + pw + "@" + l.Addr().String()
	s := settings.Settings{
		Source:     kafkaadmin.Config{BootstrapServers: []string{"127.0.0.1:1"}},
		Target:     kafkaadmin.Config{BootstrapServers: []string{"127.0.0.1:2"}},
		ConnectURL: u, Connector: "c", Group: "g", Topics: []string{"t"}, RetryTimeout: time.Second, Logger: slog.New(slog.DiscardHandler),
	}
	env, err := Open(s)
	if err != nil {
		t.Fatal(err)
	}
	err = CheckConnect(context.Background(), env, s)
	if !errors.Is(err, settings.ErrSettings) || !strings.Contains(err.Error(), "the endpoint speaks TLS") {
		t.Fatalf("got %v, want the settings error naming TLS", err)
	}
	if strings.Contains(err.Error(), pw) {
		t.Errorf("the error shows the URL's password: %v", err)
	}
}

// TestFirstContact: Connect and both clusters are contacted at once; the
// step reports the first that failed in the order Connect, source, target,
// and a failure ends the contacts after it (a target that would wait for
// ever is let go once the source failed). All three answering is no error.
func TestFirstContact(t *testing.T) {
	unreachable := refusedURL(t)
	brokerDown := &kafkaadmin.UnreachableError{Brokers: []string{"source-1:9092"}, Op: "cluster ID", Attempts: 3, For: time.Second, Err: errors.New("connection refused")}
	for _, tc := range []struct {
		name            string
		connectDown     bool
		askConnect      bool
		sourceDown      bool
		targetDown      bool
		targetWaits     bool // the target answers only when its contact is ended
		want            string
		targetCancelled bool
	}{
		{name: "all answer", askConnect: true},
		{name: "Connect and the source down: Connect is reported", connectDown: true, askConnect: true, sourceDown: true, want: "connect: GET /"},
		{name: "the source down, the target waiting: the source, the target let go", askConnect: true, sourceDown: true, targetWaits: true, want: "source cluster", targetCancelled: true},
		{name: "only the target down", askConnect: true, targetDown: true, want: "target cluster"},
		{name: "Connect not asked", connectDown: true, askConnect: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			worker := connectfake.New()
			defer worker.Close()
			url := worker.URL()
			if tc.connectDown {
				url = unreachable
			}
			s := settings.Settings{
				Source:     kafkaadmin.Config{BootstrapServers: []string{"source-1:9092"}},
				Target:     kafkaadmin.Config{BootstrapServers: []string{"target-1:9092"}},
				ConnectURL: url, Connector: "c", Group: "g", Topics: []string{"t"}, RetryTimeout: time.Second, Logger: slog.New(slog.DiscardHandler),
			}.WithDefaults()
			c, err := OpenConnect(s)
			if err != nil {
				t.Fatal(err)
			}
			source, target := kafkafake.New("src-id"), kafkafake.New("tgt-id")
			if tc.sourceDown {
				source.FailNext(kafkafake.OpClusterID, 1, brokerDown)
			}
			if tc.targetDown {
				target.FailNext(kafkafake.OpClusterID, 1, brokerDown)
			}
			cancelled := make(chan bool, 1)
			if tc.targetWaits {
				target.Intercept(func(ctx context.Context, call kafkafake.Call, next func() error) error {
					<-ctx.Done()
					cancelled <- true
					return ctx.Err()
				})
			}
			env := &Env{Source: source, Target: target, Connect: c}
			err = FirstContact(context.Background(), env, s, tc.askConnect)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("FirstContact: %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("FirstContact: %v, want an error saying %q", err, tc.want)
			}
			if tc.want != "" && tc.want != "source cluster" && strings.Contains(err.Error(), "source cluster") {
				t.Errorf("the error names the source, reported after %q: %v", tc.want, err)
			}
			if tc.targetCancelled {
				select {
				case <-cancelled:
				default:
					t.Error("the target's contact was not ended once the source failed")
				}
			}
			if !tc.sourceDown && len(source.Calls()) == 0 {
				t.Error("the source was not contacted")
			}
		})
	}
}

// refusedURL is an http:// URL of this machine where nothing listens.
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}
