package app

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
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
