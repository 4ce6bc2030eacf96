package kafkaadmin

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"time"
)

// callDialer opens the connections of one Client call. Every connection is
// bound to the call's context: when the context is done the socket is
// closed, so a sarama request blocked on it fails at once. closeAll closes
// whatever is still open when the call ends. It implements the Dial method
// sarama expects from Config.Net.Proxy.Dialer, and does TLS itself so that
// the requests it counts are Kafka frames rather than TLS records.
type callDialer struct {
	ctx    context.Context
	dialer net.Dialer
	// through, when not nil, is the dialer a Config.Sarama function set
	// (Net.Proxy.Dialer: a SOCKS proxy, a tunnel): the raw connection is
	// made by it, and this dialer still does TLS, cancellation and counting.
	through interface {
		Dial(network, addr string) (net.Conn, error)
	}
	tls   *tls.Config
	meter *meter
	// firstAnswer, when positive, bounds the TLS handshake and the wait
	// for a new connection's first byte (firstAnswerConn).
	firstAnswer time.Duration

	mu     sync.Mutex
	conns  map[*countingConn]struct{}
	closed bool
}

func (d *callDialer) Dial(network, addr string) (net.Conn, error) {
	return d.DialContext(d.ctx, network, addr)
}

func (d *callDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if err := d.ctx.Err(); err != nil {
		return nil, err
	}
	raw, err := d.dialRaw(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(d.ctx, func() { raw.Close() })
	var c net.Conn = raw
	if d.tls != nil {
		cfg := d.tls.Clone()
		if cfg.ServerName == "" {
			host, _, _ := net.SplitHostPort(addr)
			cfg.ServerName = host
		}
		tc := tls.Client(raw, cfg)
		hctx := ctx
		if d.firstAnswer > 0 {
			var cancel context.CancelFunc
			hctx, cancel = context.WithTimeout(ctx, d.firstAnswer)
			defer cancel()
		}
		if err := tc.HandshakeContext(hctx); err != nil {
			stop()
			raw.Close()
			if cerr := d.ctx.Err(); cerr != nil {
				return nil, cerr
			}
			return nil, handshakeError(addr, err)
		}
		c = tc
	}
	if d.firstAnswer > 0 && d.tls == nil {
		c = newFirstAnswerConn(c, time.Now().Add(d.firstAnswer))
	}
	cc := &countingConn{Conn: c, meter: d.meter, stop: stop, owner: d, addr: addr, plain: d.tls == nil}
	d.meter.connections.Add(1)
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		cc.Close()
		return nil, net.ErrClosed
	}
	if d.conns == nil {
		d.conns = make(map[*countingConn]struct{})
	}
	d.conns[cc] = struct{}{}
	d.mu.Unlock()
	return cc, nil
}

// firstAnswerConn holds every read deadline of a new connection to at most
// "by" until its first byte arrives: a listener that accepts and never
// answers (a black hole, a port of another protocol that waits for its
// client to speak) ends the attempt then, as a refused connection would,
// rather than after sarama's ReadTimeout. Once the broker has answered,
// the deadlines are sarama's own.
type firstAnswerConn struct {
	net.Conn
	mu       sync.Mutex
	by       time.Time
	want     time.Time // the read deadline last asked for, unclamped
	answered bool
}

// newFirstAnswerConn wraps c, whose first byte must arrive by "by".
func newFirstAnswerConn(c net.Conn, by time.Time) *firstAnswerConn {
	_ = c.SetReadDeadline(by)
	return &firstAnswerConn{Conn: c, by: by}
}

func (c *firstAnswerConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		if !c.answered {
			c.answered = true
			_ = c.Conn.SetReadDeadline(c.want) // the deadline sarama asked for
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *firstAnswerConn) SetReadDeadline(t time.Time) error {
	return c.Conn.SetReadDeadline(c.clamp(t))
}

func (c *firstAnswerConn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetWriteDeadline(t); err != nil {
		return err
	}
	return c.Conn.SetReadDeadline(c.clamp(t))
}

// clamp records t and returns it, or "by" when no byte has arrived yet and
// t is later (or none).
func (c *firstAnswerConn) clamp(t time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.want = t
	if !c.answered && (t.IsZero() || t.After(c.by)) {
		return c.by
	}
	return t
}

// dialRaw opens the TCP connection: through the caller's dialer when one
// was set (with its DialContext when it has one), else this package's.
func (d *callDialer) dialRaw(ctx context.Context, network, addr string) (net.Conn, error) {
	switch t := d.through.(type) {
	case nil:
		return d.dialer.DialContext(ctx, network, addr)
	case interface {
		DialContext(ctx context.Context, network, addr string) (net.Conn, error)
	}:
		return t.DialContext(ctx, network, addr)
	default:
		return t.Dial(network, addr)
	}
}

// closeAll closes the connections still open and refuses new ones.
func (d *callDialer) closeAll() {
	d.mu.Lock()
	d.closed = true
	conns := d.conns
	d.conns = nil
	d.mu.Unlock()
	for c := range conns {
		c.Close()
	}
}

func (d *callDialer) forget(c *countingConn) {
	d.mu.Lock()
	delete(d.conns, c)
	d.mu.Unlock()
}

// countingConn counts the Kafka requests written to it, by API key. A Kafka
// request is a frame: a 4-byte big-endian size, then that many bytes, the
// first two of which are the API key. sarama writes to a connection from
// one goroutine at a time.
type countingConn struct {
	net.Conn
	meter    *meter
	stop     func() bool
	owner    *callDialer
	frames   frameCounter
	once     sync.Once
	addr     string
	plain    bool  // no TLS: the first answer is checked for a TLS record
	read     bool  // something was read already
	mismatch error // set once the listener was found to speak TLS
}

// Read fails with a [*SecurityError] when a plain connection's first
// answer shows that the listener speaks TLS: either a TLS record (a
// handshake or an alert, content type 22 or 21, version 3.x), or the
// connection closed before any byte and a TLS handshake with the same
// address succeeds. Kafka's SSL listeners answer a plain client with a TLS
// alert and close; sarama would take the alert for the size of a response
// and end in EOF, which would be retried like a restarting broker's until
// RetryTimeout.
func (c *countingConn) Read(p []byte) (int, error) {
	if c.mismatch != nil {
		return 0, c.mismatch
	}
	n, err := c.Conn.Read(p)
	if !c.plain || c.read {
		return n, err
	}
	if n > 0 {
		c.read = true
		if (p[0] == 21 || p[0] == 22) && (n < 2 || p[1] == 3) {
			return 0, c.speaksTLS(errTLSAnswer)
		}
		return n, err
	}
	if (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) && c.owner.probeTLS(c.addr) {
		c.read = true
		return 0, c.speaksTLS(err)
	}
	return n, err
}

// speaksTLS records the mismatch: every later read and write of the
// connection fails with it too (sarama tries a second ApiVersions request
// after a failed first one, which would otherwise end in a bare EOF).
func (c *countingConn) speaksTLS(err error) error {
	c.mismatch = &SecurityError{Addr: c.addr, Kind: ErrSecurityProtocol, Err: err,
		Reason: "the listener speaks TLS: use SSL or SASL_SSL for this port"}
	return c.mismatch
}

// probeTLS reports whether a TLS handshake with addr gets as far as the
// server's certificate. Nothing is sent after the handshake; the
// certificate is not checked, only the protocol.
func (d *callDialer) probeTLS(addr string) bool {
	ctx, cancel := context.WithTimeout(d.ctx, 5*time.Second)
	defer cancel()
	raw, err := d.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer raw.Close()
	// InsecureSkipVerify: the probe identifies the protocol and sends nothing.
	tc := tls.Client(raw, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12})
	return tc.HandshakeContext(ctx) == nil
}

func (c *countingConn) Write(p []byte) (int, error) {
	if c.mismatch != nil {
		return 0, c.mismatch
	}
	n, err := c.Conn.Write(p)
	c.frames.scan(p[:n], c.meter.request)
	return n, err
}

func (c *countingConn) Close() error {
	var err error
	c.once.Do(func() {
		c.stop()
		err = c.Conn.Close()
		c.owner.forget(c)
	})
	return err
}

// frameCounter finds the Kafka requests in a byte stream that may be split
// anywhere: length-prefixed frames whose first two bytes are the API key.
type frameCounter struct {
	header    [6]byte // the size, then the API key
	headerLen int
	remaining uint32 // of the current frame, after its header
}

// scan consumes written bytes, calls seen with the API key of each request
// whose header completed in them, and returns how many did.
func (f *frameCounter) scan(p []byte, seen func(apiKey int16)) int {
	frames := 0
	for len(p) > 0 {
		if f.remaining > 0 {
			k := min(uint32(len(p)), f.remaining)
			f.remaining -= k
			p = p[k:]
			continue
		}
		k := copy(f.header[f.headerLen:], p)
		f.headerLen += k
		p = p[k:]
		if f.headerLen == len(f.header) {
			// A request holds at least its API key, version and correlation ID.
			f.remaining = max(binary.BigEndian.Uint32(f.header[:4]), 2) - 2
			f.headerLen = 0
			frames++
			if seen != nil {
				seen(int16(binary.BigEndian.Uint16(f.header[4:])))
			}
		}
	}
	return frames
}
