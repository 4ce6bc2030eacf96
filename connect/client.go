package connect

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/internal/quietretry"
	"github.com/mm2cutover/mm2cutover/redact"

	"github.com/cenkalti/backoff/v4"
)

// Bounds on what the client reads from a worker.
const (
	maxErrorBody   = 64 << 10 // error answers are short JSON documents
	maxSuccessBody = 32 << 20 // offsets of a large connector, plugin lists
	maxMessageLen  = 2048     // message kept from a non-JSON error body
)

// Client talks to one Kafka Connect REST endpoint (a worker URL or a load
// balancer in front of the workers). It is safe for concurrent use. It caches
// the worker version from GET / after the first successful read, for the
// version gates.
type Client struct {
	base       string // scheme://host[:port][/path] without trailing slash or user info
	httpClient *http.Client
	username   string
	password   string
	basicAuth  bool
	userAgent  string
	timeout    time.Duration
	logger     *slog.Logger
	policy     Retry
	pollMax    time.Duration

	mu      sync.Mutex
	version *ServerInfo
	// answered is true once the endpoint has answered a request of this
	// client: then a call that gets no answer meets a worker restarting
	// (or a rebalance), and keeps the whole retry budget, not Unreachable.
	answered atomic.Bool
}

// Option configures a Client in New; the With functions make them.
type Option interface {
	apply(*settings) error
}

type option func(*settings) error

func (o option) apply(s *settings) error { return o(s) }

type settings struct {
	httpClient *http.Client
	tlsConfig  *tls.Config
	caPEM      []byte
	certs      []tls.Certificate
	username   string
	password   string
	basicAuth  bool
	userAgent  string
	timeout    time.Duration
	logger     *slog.Logger
	retry      Retry
	poll       time.Duration
	// unknownProperties are the keys of a properties file that
	// OptionsFromProperties did not use, for New's warning.
	unknownProperties []string
}

// WithHTTPClient makes the client send its requests with hc. It cannot be
// combined with WithTLSConfig, WithCACertPEM or WithClientCertificate:
// configure TLS on hc's transport instead. The client uses a shallow copy of
// hc whose CheckRedirect follows no redirect (see ErrRedirect); hc itself
// is not changed.
func WithHTTPClient(hc *http.Client) Option {
	return option(func(s *settings) error {
		if hc == nil {
			return errors.New("connect: nil http client")
		}
		s.httpClient = hc
		return nil
	})
}

// WithBasicAuth sends HTTP basic authentication, as checked by Connect's
// BasicAuthSecurityRestExtension. The credentials never appear in errors or
// logs. A user:password part of the base URL has the same effect.
func WithBasicAuth(username, password string) Option {
	return option(func(s *settings) error {
		s.username, s.password, s.basicAuth = username, password, true
		return nil
	})
}

// WithTLSConfig uses cfg (cloned) for https base URLs: the worker's
// listeners=https://... with its ssl.* REST settings.
func WithTLSConfig(cfg *tls.Config) Option {
	return option(func(s *settings) error {
		if cfg == nil {
			return errors.New("connect: nil tls config")
		}
		s.tlsConfig = cfg.Clone()
		return nil
	})
}

// WithCACertPEM trusts the PEM-encoded CA certificates in pem (in addition to
// none of the system roots) to verify the worker's REST certificate.
func WithCACertPEM(pem []byte) Option {
	return option(func(s *settings) error {
		s.caPEM = append([]byte(nil), pem...)
		return nil
	})
}

// WithClientCertificate presents cert to workers that require TLS client
// authentication (listeners.https.ssl.client.auth=required).
func WithClientCertificate(cert tls.Certificate) Option {
	return option(func(s *settings) error {
		s.certs = append(s.certs, cert)
		return nil
	})
}

// WithTimeout bounds each HTTP request (each attempt, not the retries
// together; bound those with ctx). The default is 30 seconds; Connect itself
// gives up on a herder request after 90 seconds and answers 500 "Request timed
// out". Zero means no per-request bound.
func WithTimeout(d time.Duration) Option {
	return option(func(s *settings) error {
		if d < 0 {
			return errors.New("connect: negative timeout")
		}
		s.timeout = d
		return nil
	})
}

// WithUserAgent sets the User-Agent header, visible in the worker's request log.
func WithUserAgent(ua string) Option {
	return option(func(s *settings) error {
		s.userAgent = ua
		return nil
	})
}

// WithLogger receives debug records of each request and warnings of retries.
// The default discards everything: the library never prints.
func WithLogger(l *slog.Logger) Option {
	return option(func(s *settings) error {
		if l == nil {
			return errors.New("connect: nil logger")
		}
		s.logger = l
		return nil
	})
}

// Retry is the policy for transient failures (see IsTransient): pauses
// grow exponentially (with jitter) from Initial to Max, and the retries stop
// after Elapsed, after Attempts attempts when Attempts is positive, or when the
// call's ctx ends, whichever comes first. Zero fields take the defaults, which
// are the policy of a client without WithRetry: from 100 ms to 5 s, for up to
// 2 minutes (a Connect rebalance can take a session timeout).
// Retry{Attempts: 1} makes every call a single attempt.
//
// Unreachable bounds the retries of a call whose requests got no answer at
// all (the connection refused, reset, timed out, or the host unknown) from
// an endpoint that never answered this client: past it, the call ends with
// an *UnreachableError. An endpoint that answered once (in the call, or an
// earlier call of the client: a rebalance's 409, a worker restarting)
// keeps the whole Elapsed: a rebalance can take a session timeout, and an
// endpoint that never answered is most often a wrong URL or a worker down,
// which waiting does not fix.
type Retry struct {
	Initial     time.Duration // first pause; default 100 ms
	Max         time.Duration // longest pause; default 5 s
	Elapsed     time.Duration // give up after this long; default 2 minutes
	Unreachable time.Duration // give up after this long without any answer; default 10 s (never more than Elapsed)
	Attempts    int           // give up after this many attempts; 0 means no bound but Elapsed
}

// Defaults of Retry.
const (
	defaultRetryInitial     = 100 * time.Millisecond
	defaultRetryMax         = 5 * time.Second
	defaultRetryElapsed     = 2 * time.Minute
	defaultRetryUnreachable = 10 * time.Second
)

// unreachableBudget is how long a call retries without any answer.
func (r Retry) unreachableBudget() time.Duration {
	return min(cmpOr(r.Unreachable, defaultRetryUnreachable), cmpOr(r.Elapsed, defaultRetryElapsed))
}

func (r Retry) backOff() backoff.BackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = cmpOr(r.Initial, defaultRetryInitial)
	b.MaxInterval = cmpOr(r.Max, defaultRetryMax)
	b.MaxElapsedTime = cmpOr(r.Elapsed, defaultRetryElapsed)
	if b.MaxInterval < b.InitialInterval {
		b.MaxInterval = b.InitialInterval
	}
	b.Reset()
	if r.Attempts > 0 {
		return backoff.WithMaxRetries(b, uint64(r.Attempts-1))
	}
	return b
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// WithRetry sets the retry policy for transient failures.
func WithRetry(r Retry) Option {
	return option(func(s *settings) error {
		if r.Initial < 0 || r.Max < 0 || r.Elapsed < 0 || r.Unreachable < 0 || r.Attempts < 0 {
			return errors.New("connect: negative retry setting")
		}
		s.retry = r
		return nil
	})
}

// WithPollInterval sets the longest pause between two reads of the Wait
// helpers (they start at 100 ms and back off up to it). The default is half
// a second: a STOPPED or RUNNING state is seen at most that late, and a
// status read is cheap for the worker (at 10,000 partitions MM2 takes
// about 15 s to run after a resume on the sandbox; a 2 s cap saw it up to
// 2 s late).
func WithPollInterval(d time.Duration) Option {
	return option(func(s *settings) error {
		if d <= 0 {
			return errors.New("connect: poll interval must be positive")
		}
		s.poll = d
		return nil
	})
}

// New returns a client for the Kafka Connect REST API at baseURL, such as
// "http://connect:8083" or "https://gateway/kafka-connect" (a path prefix is
// kept). It sends nothing; the first call does.
//
// It returns an error for a base URL that is not absolute http or https, for
// conflicting options, or for CA PEM data without a certificate.
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, errors.New("connect: base url does not parse")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("connect: base url %q must be absolute http or https", u.Redacted())
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("connect: base url %q must not have a query or fragment", u.Redacted())
	}
	s := settings{timeout: 30 * time.Second, userAgent: "mm2cutover-connect", poll: 500 * time.Millisecond}
	if u.User != nil {
		s.username = u.User.Username()
		s.password, _ = u.User.Password()
		s.basicAuth = true
		u.User = nil
	}
	for _, o := range opts {
		if err := o.apply(&s); err != nil {
			return nil, err
		}
	}
	hc := s.httpClient
	tlsWanted := s.tlsConfig != nil || len(s.caPEM) > 0 || len(s.certs) > 0
	if hc != nil && tlsWanted {
		return nil, errors.New("connect: tls options cannot be combined with WithHTTPClient: configure the client's transport")
	}
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		if tlsWanted {
			cfg := s.tlsConfig
			if cfg == nil {
				cfg = &tls.Config{MinVersion: tls.VersionTLS12}
			}
			if len(s.caPEM) > 0 {
				pool := x509.NewCertPool()
				if !pool.AppendCertsFromPEM(s.caPEM) {
					return nil, errors.New("connect: no certificate found in the ca pem data")
				}
				cfg.RootCAs = pool
			}
			cfg.Certificates = append(cfg.Certificates, s.certs...)
			tr.TLSClientConfig = cfg
		}
		hc = &http.Client{Transport: tr}
	} else {
		cp := *hc // the caller's client keeps its own redirect policy
		hc = &cp
	}
	hc.CheckRedirect = noRedirect
	logger := s.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if len(s.unknownProperties) > 0 {
		logger.Warn("connect client properties this tool does not know, not used (a typo?)",
			"url", u.Redacted(), "keys", strings.Join(redact.KeyNames(s.unknownProperties), ", "))
	}
	return &Client{
		base:       strings.TrimRight(u.String(), "/"),
		httpClient: hc,
		username:   s.username,
		password:   s.password,
		basicAuth:  s.basicAuth,
		userAgent:  s.userAgent,
		timeout:    s.timeout,
		logger:     logger,
		policy:     s.retry,
		pollMax:    s.poll,
	}, nil
}

// noRedirect is the client's redirect policy: none is followed. The 3xx
// answer itself comes back to once, which makes it a *RedirectError. A
// followed redirect would turn a PUT, PATCH or DELETE answered 301 or 302
// into a GET that succeeds with nothing written, and a 307 or 308 would send
// the body (a connector configuration) to whatever origin the answer names.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// At returns a client for another worker of the same Connect cluster, at
// workerURL (a worker's advertised REST URL, as it names itself to its
// group, such as "http://10.0.3.7:8083"), with this client's credentials,
// TLS settings, timeouts and retries. A request to it is answered by that
// worker: what Connect does not forward (validate, GET /) says what that
// one worker has. The credentials go to workerURL: give it only URLs of
// the Connect cluster's own workers. It returns an error for a URL that
// is not absolute http or https.
func (c *Client) At(workerURL string) (*Client, error) {
	u, err := url.Parse(workerURL)
	if err != nil {
		return nil, errors.New("connect: worker url does not parse")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("connect: worker url %q must be absolute http or https, without user, query or fragment", u.Redacted())
	}
	return &Client{
		base: strings.TrimRight(u.String(), "/"), httpClient: c.httpClient, username: c.username, password: c.password,
		basicAuth: c.basicAuth, userAgent: c.userAgent, timeout: c.timeout, logger: c.logger, policy: c.policy, pollMax: c.pollMax,
	}, nil
}

// String describes the client without credentials.
func (c *Client) String() string { return "connect.Client(" + c.base + ")" }

// request is one REST call.
type request struct {
	method  string
	path    string // escaped, starting with "/"
	query   url.Values
	body    any    // JSON-encoded when non-nil
	rawBody []byte // sent as is when non-nil (JSON already encoded)
	repeat  Repeat
	secrets []string // values to redact from error messages
	// timeout, when positive and shorter than the client's, bounds each
	// attempt of this request: a request the worker answers without its
	// herder (GET /) need not wait as long as a PATCH.
	timeout time.Duration
	// once makes one attempt: the caller is a loop of reads that is itself
	// the retry, on its own schedule (WaitMirrorOffsets).
	once bool
}

// do sends req, retrying transient failures as req.repeat allows, and decodes
// a 2xx body into out when out is non-nil. It returns the final status code.
func (c *Client) do(ctx context.Context, req request, out any) (int, error) {
	body, err := encodeBody(req)
	if err != nil {
		return 0, err
	}
	var status int
	err = c.retry(ctx, req, func() error {
		var err error
		status, err = c.once(ctx, req, body, out)
		return err
	})
	return status, err
}

func encodeBody(req request) ([]byte, error) {
	if req.rawBody != nil {
		return req.rawBody, nil
	}
	if req.body == nil {
		return nil, nil
	}
	body, err := json.Marshal(req.body)
	if err != nil {
		return nil, fmt.Errorf("connect: %s %s: encode body: %w", req.method, req.path, err)
	}
	return body, nil
}

// retry runs attempt until it succeeds, fails with an error IsTransient does
// not accept for req.repeat, the backoff policy gives up, the endpoint gave
// no answer for the policy's Unreachable budget, or ctx ends. The
// context's error wins over the last attempt's. Each cause of a retry is
// logged once at Warn (later ones at Debug): an unreachable endpoint is
// one line, not one per attempt.
func (c *Client) retry(ctx context.Context, req request, attempt func() error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("connect: %s %s: %w", req.method, req.path, err)
	}
	var (
		lastErr  error
		n        int
		answered = c.answered.Load() // a response came back in this call, or to this client before
		start    = time.Now()
		budget   = c.policy.unreachableBudget()
		logged   = map[string]bool{}
	)
	if req.once {
		var te *transportError
		err := attempt()
		if err == nil || !errors.As(err, &te) {
			c.answered.Store(true)
		}
		return err
	}
	op := func() error {
		n++
		err := attempt()
		var te *transportError
		if err == nil || !errors.As(err, &te) {
			answered = true
			c.answered.Store(true)
		}
		if err == nil {
			return nil
		}
		lastErr = err
		unreachable := func() error {
			return &UnreachableError{URL: c.base, Method: req.method, Path: req.path, Attempts: n, For: time.Since(start).Round(100 * time.Millisecond), Err: err}
		}
		switch {
		case ctx.Err() != nil:
			return backoff.Permanent(err)
		case !IsTransient(req.repeat, err):
			if !answered && req.method == http.MethodGet && errors.As(err, &te) {
				return backoff.Permanent(unreachable()) // a read that timed out: nothing answered
			}
			return backoff.Permanent(err)
		case !answered && time.Since(start) >= budget:
			return backoff.Permanent(unreachable())
		}
		return err
	}
	notify := func(err error, wait time.Duration) {
		level, cause := slog.LevelWarn, retryCause(err)
		if logged[cause] {
			level = slog.LevelDebug
		}
		logged[cause] = true
		msg := "kafka connect request failed, retrying"
		if !answered {
			msg = fmt.Sprintf("kafka connect endpoint does not answer, retrying for up to %s", budget)
		}
		c.logger.Log(ctx, level, msg, "method", req.method, "path", req.path, "attempt", n, "wait", wait, "error", err.Error())
	}
	policy := &quietretry.UntilAnswered{BackOff: c.policy.backOff(), Answered: &answered, Start: start, Budget: budget}
	err := backoff.RetryNotify(op, backoff.WithContext(policy, ctx), notify)
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil {
		if lastErr != nil && !errors.Is(lastErr, cerr) {
			return fmt.Errorf("connect: %s %s: %w after %d attempt(s), last error: %v", req.method, req.path, cerr, n, lastErr)
		}
		if lastErr != nil {
			return lastErr
		}
		return fmt.Errorf("connect: %s %s: %w", req.method, req.path, cerr)
	}
	var ue *UnreachableError
	if errors.As(err, &ue) {
		return ue
	}
	if lastErr != nil {
		return lastErr
	}
	return err
}

// retryCause names what a retry is for, so that each is logged once: the
// status of an answer, or "no answer".
func retryCause(err error) string {
	var api *APIError
	if errors.As(err, &api) {
		return strconv.Itoa(api.StatusCode)
	}
	return "no answer"
}

// UnreachableError reports a call whose requests got no answer from the
// Connect REST endpoint at URL for the retry policy's Unreachable budget
// (Retry.Unreachable): Attempts requests in For, the last failing with
// Err. A wrong URL, a worker down, a port no one listens on or a network
// that drops the packets look alike from here. It is worth a retry once
// the endpoint answers (errkind.Retry); it unwraps to the last error.
type UnreachableError struct {
	URL          string
	Method, Path string
	Attempts     int
	For          time.Duration
	Err          error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("connect: no answer from the Kafka Connect REST API at %s (%s %s, %d attempts in %s): %v",
		e.URL, e.Method, e.Path, e.Attempts, e.For, strings.TrimPrefix(e.Err.Error(), fmt.Sprintf("connect: %s %s: ", e.Method, e.Path)))
}

// Unwrap returns the last attempt's error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// ErrorKind is errkind.Retry, or the last error's kind when that says a
// write may have happened (errkind.OutcomeUnknown) or the settings are
// wrong (errkind.Rejected).
func (e *UnreachableError) ErrorKind() errkind.Kind {
	if k := errkind.Of(e.Err); k == errkind.OutcomeUnknown || k == errkind.Rejected {
		return k
	}
	return errkind.Retry
}

// Advice says what to check.
func (e *UnreachableError) Advice() string {
	return "check the URL and that a Connect worker listens there and is reachable from here; " +
		"a longer Retry.Unreachable waits longer for a worker that is starting"
}

// once sends one attempt.
func (c *Client) once(ctx context.Context, req request, body []byte, out any) (int, error) {
	actx, timeout := ctx, c.timeout
	if req.timeout > 0 && (timeout == 0 || req.timeout < timeout) {
		timeout = req.timeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	u := c.base + req.path
	if len(req.query) > 0 {
		u += "?" + req.query.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hreq, err := http.NewRequestWithContext(actx, req.method, u, rd)
	if err != nil {
		return 0, fmt.Errorf("connect: %s %s: %w", req.method, req.path, err)
	}
	hreq.Header.Set("Accept", "application/json")
	if body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	if c.userAgent != "" {
		hreq.Header.Set("User-Agent", c.userAgent)
	}
	if c.basicAuth {
		hreq.SetBasicAuth(c.username, c.password)
	}
	start := time.Now()
	resp, err := c.httpClient.Do(hreq)
	if err != nil {
		return 0, c.transportError(ctx, actx, req, err)
	}
	defer resp.Body.Close()
	c.logger.DebugContext(ctx, "kafka connect request", "method", req.method, "path", req.path,
		"status", resp.StatusCode, "duration", time.Since(start))

	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		return resp.StatusCode, newRedirectError(req, resp)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		if rerr != nil && ctx.Err() == nil && actx.Err() == nil {
			// A partial error body still tells the status.
			c.logger.DebugContext(ctx, "kafka connect error body read failed", "error", rerr.Error())
		}
		return resp.StatusCode, newAPIError(req, resp.StatusCode, data, c.credentials())
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxSuccessBody+1))
	if err != nil {
		return resp.StatusCode, c.transportError(ctx, actx, req, err)
	}
	if len(data) > maxSuccessBody {
		return resp.StatusCode, fmt.Errorf("connect: %s %s: answer larger than %d bytes", req.method, req.path, maxSuccessBody)
	}
	if out == nil || len(bytes.TrimSpace(data)) == 0 {
		return resp.StatusCode, nil
	}
	if raw, ok := out.(*json.RawMessage); ok {
		// The caller decodes it (a GET of 10,000 offsets is about 1 MB):
		// checked, not decoded twice.
		if !json.Valid(data) {
			return resp.StatusCode, fmt.Errorf("connect: %s %s: decode %d answer: not JSON", req.method, req.path, resp.StatusCode)
		}
		*raw = data
		return resp.StatusCode, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return resp.StatusCode, fmt.Errorf("connect: %s %s: decode %d answer: %w", req.method, req.path, resp.StatusCode, err)
	}
	return resp.StatusCode, nil
}

// transportError wraps a failure to get an answer. The caller's context error
// wins; a per-request timeout is reported as such.
func (c *Client) transportError(ctx, actx context.Context, req request, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("connect: %s %s: %w", req.method, req.path, cerr)
	}
	if actx.Err() != nil {
		timeout := c.timeout
		if req.timeout > 0 && (timeout == 0 || req.timeout < timeout) {
			timeout = req.timeout
		}
		if req.method != http.MethodGet {
			return &transportError{method: req.method, err: fmt.Errorf("connect: %s %s: no answer within %s: %w: %w", req.method, req.path, timeout, ErrOutcomeUnknown, context.DeadlineExceeded)}
		}
		return &transportError{method: req.method, err: fmt.Errorf("connect: %s %s: no answer within %s: %w", req.method, req.path, timeout, context.DeadlineExceeded)}
	}
	if serr := securityError(req, err); serr != nil {
		return serr
	}
	return &transportError{method: req.method, err: fmt.Errorf("connect: %s %s: %w", req.method, req.path, err)}
}

// transportError is a request that got no answer: the connection failed
// or broke. It is worth a retry, but for a write whose request may have
// reached the worker before the connection broke: its outcome is unknown.
type transportError struct {
	method string
	err    error
}

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// ErrorKind is errkind.Retry for a read, or for a write that never left
// (the connection was refused, or the dial failed); errkind.OutcomeUnknown
// for any other write.
func (e *transportError) ErrorKind() errkind.Kind {
	if k := errkind.Of(e.err); k == errkind.Rejected {
		return k
	}
	var oe *net.OpError
	if e.method == http.MethodGet || errors.Is(e.err, syscall.ECONNREFUSED) || errors.As(e.err, &oe) && oe.Op == "dial" {
		return errkind.Retry
	}
	return errkind.OutcomeUnknown
}

// credentials returns the forms in which the client's basic-auth
// credentials could come back in an answer: the password, "user:password"
// and its base64 encoding, which is what the Authorization header carries
// (a proxy or server that echoes request headers into an error page would
// show it).
func (c *Client) credentials() []string {
	if !c.basicAuth {
		return nil
	}
	pair := c.username + ":" + c.password
	out := []string{base64.StdEncoding.EncodeToString([]byte(pair)), base64.RawStdEncoding.EncodeToString([]byte(pair)), pair}
	if c.password != "" {
		out = append(out, c.password)
	}
	return out
}

// newAPIError decodes Connect's {"error_code","message"} body; any other body
// (a proxy's HTML page, an authentication extension's plain text) is kept as
// a short message. Every occurrence of the request's secret values and of
// the client's credentials is replaced by "[redacted]".
func newAPIError(req request, status int, data []byte, credentials []string) *APIError {
	e := &APIError{Method: req.method, Path: req.path, StatusCode: status}
	secrets := append(append([]string(nil), req.secrets...), credentials...)
	var body struct {
		ErrorCode int    `json:"error_code"`
		Message   string `json:"message"`
	}
	if json.Unmarshal(data, &body) == nil && (body.ErrorCode != 0 || body.Message != "") {
		e.ErrorCode, e.Message = body.ErrorCode, redact.Text(body.Message, secrets...)
	} else {
		// Redacted before it is cut, so that no secret survives in part.
		msg := redact.Text(strings.TrimSpace(string(data)), secrets...)
		if len(msg) > maxMessageLen {
			msg = msg[:maxMessageLen] + "..."
		}
		e.Message = msg
	}
	return e
}

// connectorPath returns /connectors/{name}{suffix} with name escaped.
func connectorPath(name, suffix string) string {
	return "/connectors/" + url.PathEscape(name) + suffix
}
