package main

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// countingDialer is the raw floor's sarama dialer (Net.Proxy.Dialer): it
// counts connections and Kafka requests as kafkaadmin's meter does, and
// does TLS itself when tls is set, so that the requests it counts are
// Kafka frames rather than TLS records.
type countingDialer struct {
	tls         *tls.Config
	connections atomic.Int64
	requests    atomic.Int64
}

func (d *countingDialer) Dial(network, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if d.tls != nil {
		cfg := d.tls.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		c = tc
	}
	d.connections.Add(1)
	return &frameConn{Conn: c, requests: &d.requests}, nil
}

func (d *countingDialer) cost() stepCost {
	r, c := d.requests.Load(), d.connections.Load()
	return stepCost{Step: "raw", Requests: r, Connections: c, Source: fmt.Sprintf("%d requests on %d connections", r, c)}
}

// frameConn counts the length-prefixed frames written to it.
type frameConn struct {
	net.Conn
	requests *atomic.Int64
	mu       sync.Mutex
	header   [4]byte
	have     int
	left     uint32
}

func (c *frameConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	for q := p[:n]; len(q) > 0; {
		if c.left > 0 {
			k := min(uint32(len(q)), c.left)
			c.left -= k
			q = q[k:]
			continue
		}
		k := copy(c.header[c.have:], q)
		c.have += k
		q = q[k:]
		if c.have == len(c.header) {
			c.left, c.have = binary.BigEndian.Uint32(c.header[:]), 0
			c.requests.Add(1)
		}
	}
	return n, err
}
