package kafkaadmin

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// countingDialer is a caller's own dialer (a SOCKS proxy or a tunnel in
// real use): it counts the connections it makes.
type countingDialer struct{ n atomic.Int64 }

func (d *countingDialer) Dial(network, addr string) (net.Conn, error) {
	d.n.Add(1)
	return net.Dial(network, addr)
}

// TestSaramaDialerIsUsed: a dialer set through Config.Sarama makes the
// client's connections (it was replaced silently by the package's own,
// and got no call); without one, or with the proxy disabled, the package
// dials itself. The "broker" closes every connection: only the dials count.
func TestSaramaDialerIsUsed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	for _, tt := range []struct {
		name   string
		enable bool
		want   bool
	}{
		{"the caller's dialer", true, true},
		{"proxy disabled by the caller", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := &countingDialer{}
			r, err := NewClient(Config{
				BootstrapServers: []string{ln.Addr().String()},
				RequestTimeout:   2 * time.Second, RetryTimeout: time.Second,
				Sarama: func(c *sarama.Config) error {
					c.Net.Proxy.Enable, c.Net.Proxy.Dialer = tt.enable, d
					return nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := r.ClusterID(ctx); err == nil {
				t.Fatal("ClusterID from a listener that closes every connection: no error")
			}
			if got := d.n.Load() > 0; got != tt.want {
				t.Errorf("the caller's dialer made %d connections; want some: %v", d.n.Load(), tt.want)
			}
		})
	}
}
