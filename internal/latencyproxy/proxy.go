// Package latencyproxy forwards TCP connections on this machine with a
// delay added each way, so that the sandbox's clusters and workers can be
// reached as over a network between regions: this kernel has no netem
// qdisc, and a proxy in front of each listener (its address advertised in
// the listener's place) adds the delay in user space instead.
//
// A proxy keeps the order of the bytes of each direction and adds the
// same delay to each: a request and its answer cross it in one round trip
// of twice the delay (plus what the kernel and the scheduler add). It
// does not limit bandwidth.
package latencyproxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// Proxy forwards the connections made to Addr to a target address, each
// byte delayed by a fixed time in each direction.
type Proxy struct {
	ln     net.Listener
	target string
	delay  time.Duration

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Start listens on listen (host:port; port 0 picks a free one) and
// forwards every connection to target with oneWay added to each
// direction: a round trip of 2*oneWay.
func Start(listen, target string, oneWay time.Duration) (*Proxy, error) {
	if oneWay < 0 {
		return nil, errors.New("latencyproxy: negative delay")
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, delay: oneWay, conns: make(map[net.Conn]struct{})}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the address the proxy listens on, to advertise in the target's
// place.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops listening, closes every connection and waits for the
// forwarding goroutines to end.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) forget(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		if !p.track(client) {
			return
		}
		p.wg.Add(1)
		go p.serve(client)
	}
}

// serve connects to the target (after the delay, as a SYN crossing the
// link would arrive) and forwards both directions until both end.
func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	defer p.forget(client)
	time.Sleep(p.delay)
	server, err := net.DialTimeout("tcp", p.target, 10*time.Second)
	if err != nil {
		return
	}
	if !p.track(server) {
		return
	}
	defer p.forget(server)
	var dirs sync.WaitGroup
	dirs.Go(func() { p.pipe(server, client) })
	dirs.Go(func() { p.pipe(client, server) })
	dirs.Wait()
}

// chunk is what one read returned, with when it may be written.
type chunk struct {
	data []byte
	at   time.Time
}

// pipe copies src to dst, each read written p.delay after it was read, in
// order; at src's end it half-closes dst.
func (p *Proxy) pipe(dst, src net.Conn) {
	queue := make(chan chunk, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range queue {
			if d := time.Until(c.at); d > 0 {
				time.Sleep(d)
			}
			if _, err := dst.Write(c.data); err != nil {
				src.Close() // the other side is gone: stop reading
				for range queue {
				}
				return
			}
		}
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		} else {
			dst.Close()
		}
	}()
	for {
		buf := make([]byte, 64<<10)
		n, err := src.Read(buf)
		if n > 0 {
			queue <- chunk{data: buf[:n], at: time.Now().Add(p.delay)}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				dst.Close()
			}
			break
		}
	}
	close(queue)
	<-done
}
