package latencyproxy

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// echo serves one line-echo server on loopback and returns its address.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// A round trip through the proxy takes at least twice its delay, the bytes
// arrive whole and in order, and Close ends the connections.
func TestProxyDelaysEachWay(t *testing.T) {
	const oneWay = 15 * time.Millisecond
	p, err := Start("127.0.0.1:0", echo(t), oneWay)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for i := range 3 {
		start := time.Now()
		msg := []byte("ping " + string(rune('a'+i)) + "\n")
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line != string(msg) {
			t.Errorf("echoed %q, want %q", line, msg)
		}
		if rtt := time.Since(start); rtt < 2*oneWay {
			t.Errorf("round trip %v, want at least %v", rtt, 2*oneWay)
		}
	}
	big := make([]byte, 1<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	go func() { _, _ = c.Write(big) }()
	got := make([]byte, len(big))
	if _, err := io.ReadFull(r, got); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != big[i] {
			t.Fatalf("byte %d is %d, want %d", i, got[i], big[i])
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.ReadByte(); err == nil {
		t.Error("read after Close succeeded, want the connection closed")
	}
}
