package kafkaadmin

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/internal/quietretry"
	"github.com/mm2cutover/mm2cutover/redact"

	"github.com/IBM/sarama"
	"github.com/cenkalti/backoff/v4"
)

const (
	defaultClientID       = "mm2cutover"
	defaultRequestTimeout = 30 * time.Second
	defaultRetryTimeout   = 30 * time.Second
	// firstAnswerTimeout bounds how long a new connection waits for the
	// broker's first byte (the TLS handshake, the answer to ApiVersions):
	// a listener that accepts and says nothing is taken for one that does
	// not answer, not waited for RequestTimeout.
	firstAnswerTimeout = 10 * time.Second
	// defaultUnreachableTimeout is how long a call retries while no broker
	// answers at all.
	defaultUnreachableTimeout = 10 * time.Second
	firstBackoff              = 100 * time.Millisecond
	maxBackoff                = 2 * time.Second
)

// protocolVersion is the Kafka version whose request versions sarama
// starts from; sarama lowers them to what each broker advertises.
var protocolVersion = sarama.V2_8_0_0

// Client talks to one Kafka cluster for a cutover. It reads the cluster
// ID, topics, a consumer group's commits and state, the log bounds of
// partitions, records, configurations and permissions, and it writes one
// thing: a group's committed offsets ([Client.CommitOffsets]), for a
// rollback. It holds no connection between calls; each call opens what it
// needs and closes it before returning — except a step client
// ([Client.Step]), which keeps its connections and the cluster's metadata
// across the calls of one step. A Client is safe for concurrent use.
type Client struct {
	cfg    Config
	tls    *tls.Config
	tokens *tokenSource   // OAUTHBEARER only
	krb    *kerberosLogin // GSSAPI only
	log    *slog.Logger
	meter  *meter
	pool   *pool // a step client's connections and metadata (Step); nil: none kept
	// answered is true once a broker has answered a call of this client:
	// then a call that gets no answer meets a cluster restarting, and
	// keeps the whole RetryTimeout, not UnreachableTimeout.
	answered *atomic.Bool
}

// NewClient validates cfg and reads its TLS files, and with GSSAPI its
// krb5.conf and keytab (see [KerberosConfig]). It does not contact Kafka
// or a KDC. It returns a [*ConfigError] for a bad config, including one
// that a Config.Sarama function fails or completes into settings sarama
// rejects: NewClient calls that function once to find out.
func NewClient(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.BootstrapServers = append([]string(nil), cfg.BootstrapServers...)
	cfg.SecurityProtocol = cfg.protocol()
	if cfg.ClientID == "" {
		cfg.ClientID = defaultClientID
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = defaultRequestTimeout
	}
	if cfg.RetryTimeout == 0 {
		cfg.RetryTimeout = defaultRetryTimeout
	}
	if cfg.UnreachableTimeout == 0 {
		cfg.UnreachableTimeout = defaultUnreachableTimeout
	}
	tc, err := cfg.tlsConfig()
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if len(cfg.UnknownProperties) > 0 {
		// Kafka's clients name the keys they were given and do not use
		// ("These configurations '[...]' were supplied but are not used
		// yet.", AbstractConfig.logUnused) and go on: the names, never a
		// value. Here a warning: a typo's setting is not applied.
		log.Warn("kafka client properties this tool does not know, not used (a typo?)",
			"bootstrap", strings.Join(cfg.BootstrapServers, ","), "keys", strings.Join(redact.KeyNames(cfg.UnknownProperties), ", "))
	}
	r := &Client{cfg: cfg, tls: tc, log: log, meter: &meter{}, answered: new(atomic.Bool)}
	switch {
	case cfg.SASLMechanism == OAuthBearer:
		r.tokens = newTokenSource(cfg.OAuth, tc, cfg.RequestTimeout)
	case cfg.SASLMechanism == GSSAPI && cfg.protocol().sasl():
		if r.krb, err = cfg.loadKerberos(os.Getenv); err != nil {
			return nil, err
		}
	}
	if cfg.Sarama != nil {
		// The settings of a call, built once without dialing: a failing
		// completion is a configuration error now, not at the first call.
		if _, err := r.saramaConfig(&callDialer{ctx: context.Background(), tls: tc, meter: r.meter}); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// saslUser names the identity the client authenticates as, for errors: the
// SASL user, or with OAUTHBEARER the client ID or unsecured subject.
func (r *Client) saslUser() string {
	if r.cfg.SASLMechanism == OAuthBearer {
		return r.cfg.OAuth.ClientID + r.cfg.OAuth.UnsecuredSubject
	}
	return r.cfg.Username
}

// Requests returns how many Kafka requests the Client has sent so far,
// counting connection setup (ApiVersions, SASL) and retries. It is a cost
// meter: a tool can report what a step cost the brokers, and the scale
// benchmark (examples/internal/scalebench) compares readings by it.
func (r *Client) Requests() int64 {
	return r.meter.requests.Load()
}

// saramaConfig builds the sarama config of one call. sarama never retries
// or sleeps: retries are ours and select on the context.
func (r *Client) saramaConfig(d *callDialer) (*sarama.Config, error) {
	c := sarama.NewConfig()
	c.ClientID = r.cfg.ClientID
	c.Version = protocolVersion
	c.Net.DialTimeout = r.cfg.RequestTimeout
	c.Net.ReadTimeout = r.cfg.RequestTimeout
	c.Net.WriteTimeout = r.cfg.RequestTimeout
	c.Net.Proxy.Enable = true
	c.Net.Proxy.Dialer = d
	c.Metadata.Retry.Max = 0
	c.Metadata.RefreshFrequency = 0
	c.Metadata.Full = false
	c.Metadata.AllowAutoTopicCreation = false
	c.Admin.Retry.Max = 0
	if r.cfg.SecurityProtocol.sasl() {
		c.Net.SASL.Enable = true
		c.Net.SASL.Handshake = true
		c.Net.SASL.Version = sarama.SASLHandshakeV1
		c.Net.SASL.User = r.cfg.Username
		c.Net.SASL.Password = string(r.cfg.Password)
		switch r.cfg.SASLMechanism {
		case Plain:
			c.Net.SASL.Mechanism = sarama.SASLTypePlaintext
		case ScramSHA256:
			c.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA256
			c.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return newSCRAMClient(ScramSHA256) }
		case ScramSHA512:
			c.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
			c.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return newSCRAMClient(ScramSHA512) }
		case OAuthBearer:
			c.Net.SASL.Mechanism = sarama.SASLTypeOAuth
			c.Net.SASL.TokenProvider = r.tokens.provider(d.ctx)
		case GSSAPI:
			c.Net.SASL.Mechanism = sarama.SASLTypeGSSAPI
			c.Net.SASL.User, c.Net.SASL.Password = "", ""
			r.krb.gssapi(d.ctx, r.cfg, &c.Net.SASL.GSSAPI)
		}
	}
	if r.cfg.Sarama != nil {
		if err := r.cfg.Sarama(c); err != nil {
			return nil, &ConfigError{Field: "Sarama", Reason: "the completing function failed", Err: err}
		}
		if c.Net.Proxy.Enable && c.Net.Proxy.Dialer != nil && c.Net.Proxy.Dialer != proxyDialer(d) {
			d.through = c.Net.Proxy.Dialer // the caller's own: connections go through it
		}
		c.Net.Proxy.Enable = true
		c.Net.Proxy.Dialer = d
		c.Metadata.Retry.Max = 0
		c.Metadata.RefreshFrequency = 0
		c.Metadata.Full = false
		c.Metadata.AllowAutoTopicCreation = false
		c.Admin.Retry.Max = 0
		if c.Net.TLS.Enable {
			d.tls = c.Net.TLS.Config
			if d.tls == nil {
				d.tls = &tls.Config{MinVersion: tls.VersionTLS12}
			}
			c.Net.TLS.Enable, c.Net.TLS.Config = false, nil
		}
	}
	if err := c.Validate(); err != nil {
		return nil, &ConfigError{Field: "Config", Reason: "rejected by sarama", Err: err}
	}
	return c, nil
}

// proxyDialer is the type of sarama's Net.Proxy.Dialer, for comparing it
// with this package's own.
type proxyDialer = interface {
	Dial(network, addr string) (net.Conn, error)
}

// do runs fn in a session bound to ctx, closes the session, and makes the
// context's error win when the context is done. A step client's session
// uses the connections and metadata of its pool; others a fresh set.
func (r *Client) do(ctx context.Context, op string, fn func(s *session) error) error {
	if err := ctx.Err(); err != nil {
		return opError(op, err)
	}
	if r.pool != nil {
		conf, d, err := r.pool.config(r)
		if err != nil {
			return err
		}
		s := &session{r: r, ctx: ctx, conf: conf, dialer: d, brokers: make(map[string]*sarama.Broker), pool: r.pool}
		// A call whose context ends closes the connections it uses, so
		// that a request blocked on one fails at once.
		stop := context.AfterFunc(ctx, s.abort)
		err = fn(s)
		stop()
		if cerr := ctx.Err(); cerr != nil {
			return opError(op, cerr)
		}
		return opError(op, err)
	}
	d := &callDialer{
		ctx:         ctx,
		dialer:      net.Dialer{Timeout: r.cfg.RequestTimeout, KeepAlive: 30 * time.Second},
		tls:         r.tls,
		meter:       r.meter,
		firstAnswer: min(r.cfg.RequestTimeout, firstAnswerTimeout),
	}
	conf, err := r.saramaConfig(d)
	if err != nil {
		return err
	}
	s := &session{r: r, ctx: ctx, conf: conf, dialer: d, brokers: make(map[string]*sarama.Broker)}
	err = fn(s)
	s.close()
	if cerr := ctx.Err(); cerr != nil {
		return opError(op, cerr)
	}
	return opError(op, err)
}

func opError(op string, err error) error {
	if err == nil {
		return nil
	}
	var (
		ce *ConfigError
		se *SecurityError
		ae *ArgumentError
		ue *UnknownTopicsError
		ge *GroupActiveError
		te *TopicsChangedError
		pe *PartitionErrors
	)
	if errors.As(err, &ce) || errors.As(err, &se) || errors.As(err, &ae) || errors.As(err, &ue) || errors.As(err, &ge) || errors.As(err, &te) || errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("kafkaadmin: %s: %w", op, err)
}

// retry calls fn until it succeeds, fails with an error that is not
// transient, the context is done, Config.RetryTimeout has passed, or no
// broker has answered for Config.UnreachableTimeout (then an
// *UnreachableError). The schedule is backoff/v4's exponential one, as the
// connect package's: firstBackoff doubling up to maxBackoff, with jitter.
// Each cause of a retry is logged once at Warn, later ones at Debug.
func (r *Client) retry(ctx context.Context, op string, fn func(attempt int) error) error {
	start := time.Now()
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxInterval, b.MaxElapsedTime = firstBackoff, maxBackoff, r.cfg.RetryTimeout
	b.Reset()
	budget := min(cmp.Or(r.cfg.UnreachableTimeout, defaultUnreachableTimeout), r.cfg.RetryTimeout)
	var (
		attempt  int
		last     error
		answered = r.answered.Load() // a broker answered in this call, or this client before
		logged   = map[string]bool{}
	)
	err := backoff.RetryNotify(func() error {
		attempt++
		err := fn(attempt)
		if err == nil || !unanswered(err) {
			answered = true
			r.answered.Store(true)
		}
		if err == nil {
			return nil
		}
		last = err
		if ctx.Err() != nil || !retriable(err) {
			return backoff.Permanent(err)
		}
		if !answered && time.Since(start) >= budget {
			return backoff.Permanent(&UnreachableError{Brokers: r.cfg.BootstrapServers, Op: op, Attempts: attempt,
				For: time.Since(start).Round(100 * time.Millisecond), Err: err})
		}
		return err
	}, backoff.WithContext(&quietretry.UntilAnswered{BackOff: b, Answered: &answered, Start: start, Budget: budget}, ctx), func(err error, wait time.Duration) {
		level, cause := slog.LevelWarn, "answer"
		if !answered {
			cause = "no answer"
		}
		if logged[cause] {
			level = slog.LevelDebug
		}
		logged[cause] = true
		r.log.LogAttrs(ctx, level, "kafkaadmin: retrying",
			slog.String("op", op), slog.Int("attempt", attempt),
			slog.Duration("backoff", wait), slog.String("error", err.Error()))
	})
	var ue *UnreachableError
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &ue):
		return ue
	case last != nil && retriable(last):
		return markKafka(fmt.Errorf("gave up after %d attempts in %v: %w", attempt, time.Since(start).Round(time.Millisecond), last))
	}
	return markKafka(err)
}

// unanswered reports an error that no broker answered: a connection that
// failed or broke, a timeout, no broker left to ask; never an error code a
// broker sent, nor a Kerberos login whose KDC did not answer (the broker
// answered the SASL handshake; the retries are the KDC's).
func unanswered(err error) bool {
	var k sarama.KError
	if errors.As(err, &k) || errors.Is(err, errKDCUnreachable) {
		return false
	}
	var ne net.Error
	return errors.Is(err, sarama.ErrOutOfBrokers) || errors.Is(err, sarama.ErrNotConnected) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) ||
		errors.Is(err, io.EOF) || errors.As(err, &ne)
}

// UnreachableError reports a call that no broker of the cluster answered
// for Config.UnreachableTimeout: Attempts tries in For at the bootstrap
// servers Brokers, the last failing with Err. A wrong address, a cluster
// down, a port no one listens on or a network that drops the packets look
// alike from here. It is worth a retry once the cluster answers
// (errkind.Retry); it unwraps to the last error.
type UnreachableError struct {
	Brokers  []string
	Op       string
	Attempts int
	For      time.Duration
	Err      error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("kafkaadmin: no answer from the brokers at %s (%s, %d attempts in %s): %s",
		strings.Join(e.Brokers, ","), e.Op, e.Attempts, e.For, words(e.Err))
}

// Unwrap returns the last attempt's error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// ErrorKind is errkind.Retry.
func (e *UnreachableError) ErrorKind() errkind.Kind { return errkind.Retry }

// Advice says what to check.
func (e *UnreachableError) Advice() string {
	return "check the bootstrap servers and that the brokers are up and reachable from here; " +
		"a longer Config.UnreachableTimeout waits longer for a cluster that is starting"
}

// session is the state of one call: its connections, one per broker
// address, and what it learned from metadata.
type session struct {
	r       *Client
	ctx     context.Context
	conf    *sarama.Config
	dialer  *callDialer
	brokers map[string]*sarama.Broker // by address
	nodes   map[int32]string          // broker ID -> address
	leaders map[TopicPartition]int32  // from the last metadata response
	counts  map[string]int32          // partition counts of the topics seen
	coord   map[string]*sarama.Broker // group -> coordinator
	seed    int
	// pool, for a step client's call, keeps the connections, metadata and
	// coordinators across calls; brokers then holds the pool's brokers
	// this call used, under mu (a call's goroutines share it).
	pool *pool
	mu   sync.Mutex
}

// used records that the call uses a pool's broker.
func (s *session) used(b *sarama.Broker) {
	s.mu.Lock()
	s.brokers[b.Addr()] = b
	s.mu.Unlock()
}

// abort closes the connections the call of a step client used, when its
// context ended while it ran.
func (s *session) abort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range s.brokers {
		if ok, _ := b.Connected(); ok {
			_ = b.Close()
		}
	}
}

func (s *session) close() {
	for _, b := range s.brokers {
		if ok, _ := b.Connected(); ok {
			_ = b.Close()
		}
	}
	s.dialer.closeAll()
}

// broker returns the connected broker at addr, connecting if needed.
func (s *session) broker(addr string) (*sarama.Broker, error) {
	if s.pool != nil {
		return s.pool.broker(s, addr)
	}
	b := s.brokers[addr]
	if b == nil {
		b = sarama.NewBroker(addr)
		s.brokers[addr] = b
	}
	if err := b.Open(s.conf); err != nil && !errors.Is(err, sarama.ErrAlreadyConnected) {
		return nil, err
	}
	if ok, err := b.Connected(); !ok {
		return nil, s.connectError(addr, err)
	}
	return b, nil
}

// connectError words the error of a connection that could not be opened.
func (s *session) connectError(addr string, err error) error {
	if err == nil {
		err = sarama.ErrNotConnected
	}
	var se *SecurityError
	if errors.As(err, &se) {
		return se
	}
	if ke := kerberosError(addr, s.r.saslUser(), s.conf.Net.SASL.GSSAPI.ServiceName, err); ke != nil {
		return ke
	}
	if se := saslError(addr, s.r.saslUser(), string(s.conf.Net.SASL.Mechanism), err); se != nil {
		return se
	}
	if se := tlsAlertError(addr, err); se != nil {
		return se
	}
	return fmt.Errorf("connect to %s: %w", addr, err)
}

// node returns the connected broker with the given ID.
func (s *session) node(id int32) (*sarama.Broker, error) {
	addr, ok := s.nodes[id]
	if !ok {
		return nil, fmt.Errorf("broker %d: %w", id, sarama.ErrBrokerNotAvailable)
	}
	return s.broker(addr)
}

// any returns a connected bootstrap broker, trying each in turn.
func (s *session) any() (*sarama.Broker, error) {
	var errs []error
	seeds := s.r.cfg.BootstrapServers
	for range seeds {
		addr := seeds[s.seed%len(seeds)]
		b, err := s.broker(addr)
		if err == nil {
			return b, nil
		}
		var se *SecurityError
		if errors.As(err, &se) {
			return nil, se // decisive: the next bootstrap server would say the same
		}
		errs = append(errs, err)
		s.seed++
	}
	return nil, fmt.Errorf("%w: %w", sarama.ErrOutOfBrokers, errors.Join(errs...))
}

// transportFailed forgets a broker's connection after a transport error,
// so the next use reconnects.
func (s *session) transportFailed(b *sarama.Broker) {
	if ok, _ := b.Connected(); ok {
		_ = b.Close()
	}
	for g, c := range s.coord {
		if c == b {
			delete(s.coord, g)
		}
	}
}

// metadata sends one Metadata request: for the named topics, or for all
// topics when names is nil. It records broker addresses and leaders. A
// step client's call is answered from the step's snapshot when it can
// (see snapshot.answer).
func (s *session) metadata(names []string) (*sarama.MetadataResponse, error) {
	return s.metadataFresh(names, false)
}

// metadataFresh is metadata; with fresh, a step client's call reads the
// metadata again rather than from the step's snapshot (a retry after a
// leader moved).
func (s *session) metadataFresh(names []string, fresh bool) (*sarama.MetadataResponse, error) {
	var resp *sarama.MetadataResponse
	if s.pool != nil {
		s.pool.md.Lock()
		defer s.pool.md.Unlock()
		if !fresh {
			resp = s.pool.snap.answer(names, time.Now())
		}
	}
	if resp == nil {
		at := time.Now()
		b, err := s.any()
		if err != nil {
			return nil, err
		}
		s.r.log.DebugContext(s.ctx, "kafkaadmin: metadata request", "topics", topicsForLog(names), "fresh", fresh)
		req := sarama.NewMetadataRequest(s.conf.Version, names)
		req.AllowAutoTopicCreation = false
		// A step's snapshot also answers Access (topicAccess).
		req.IncludeTopicAuthorizedOperations = s.pool != nil
		resp, err = b.GetMetadata(req)
		if err != nil {
			s.transportFailed(b)
			return nil, err
		}
		if len(resp.Brokers) == 0 {
			// A starting broker can answer with an empty cluster (KAFKA-7924).
			return nil, sarama.ErrBrokerNotAvailable
		}
		if s.pool != nil {
			s.pool.snap.keep(names, resp, at)
		}
	}
	s.nodes = make(map[int32]string, len(resp.Brokers))
	for _, nb := range resp.Brokers {
		s.nodes[nb.ID()] = nb.Addr()
	}
	if s.leaders == nil {
		s.leaders = make(map[TopicPartition]int32)
		s.counts = make(map[string]int32)
	}
	for _, t := range resp.Topics {
		if err := kerr(t.Err); err == nil || err == sarama.ErrLeaderNotAvailable {
			s.counts[t.Name] = int32(len(t.Partitions))
		} else {
			delete(s.counts, t.Name)
		}
		for _, p := range t.Partitions {
			tp := TopicPartition{Topic: t.Name, Partition: p.ID}
			if p.Leader >= 0 && kerr(p.Err) != sarama.ErrLeaderNotAvailable {
				s.leaders[tp] = p.Leader
			} else {
				delete(s.leaders, tp)
			}
		}
	}
	return resp, nil
}

// topicsForLog names the topics of a metadata request for a debug log:
// "all", up to three names, or how many.
func topicsForLog(names []string) string {
	switch {
	case names == nil:
		return "all"
	case len(names) <= 3:
		return strings.Join(names, ",")
	}
	return fmt.Sprintf("%d topics", len(names))
}

// topics reads the partition counts of the named topics. Unknown topics
// give an [*UnknownTopicsError].
func (s *session) topics(names []string) (Topics, error) {
	var out Topics
	err := s.r.retry(s.ctx, "metadata", func(attempt int) error {
		resp, err := s.metadataFresh(names, attempt > 1)
		if err != nil {
			return err
		}
		out = make(Topics, len(names))
		var unknown []string
		for _, t := range resp.Topics {
			switch err := kerr(t.Err); {
			case err == nil:
				out[t.Name] = int32(len(t.Partitions))
			case errors.Is(err, sarama.ErrUnknownTopicOrPartition):
				unknown = append(unknown, t.Name)
			case errors.Is(err, sarama.ErrLeaderNotAvailable):
				return fmt.Errorf("topic %s: %w", t.Name, err)
			default:
				return fmt.Errorf("topic %s: %w", t.Name, err)
			}
		}
		for _, n := range names {
			if _, ok := out[n]; !ok && !slices.Contains(unknown, n) {
				unknown = append(unknown, n)
			}
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			return &UnknownTopicsError{Topics: unknown}
		}
		return nil
	})
	return out, err
}

// ClusterID returns the cluster's ID, as brokers report it in
// DescribeCluster (Kafka 2.8 or later) or, failing that, in Metadata.
// Errors: the context's error, or a Kafka or connection error after
// retries.
func (r *Client) ClusterID(ctx context.Context) (string, error) {
	var id string
	err := r.do(ctx, "cluster id", func(s *session) error {
		return r.retry(ctx, "cluster id", func(int) error {
			resp, err := s.describeCluster(false)
			if errors.Is(err, sarama.ErrUnsupportedVersion) {
				md, err := s.metadata(nil)
				if err != nil {
					return err
				}
				if md.ClusterID == nil {
					return errors.New("broker reports no cluster id")
				}
				id = *md.ClusterID
				return nil
			}
			if err != nil {
				return err
			}
			id = resp.ClusterID
			return nil
		})
	})
	return id, err
}

// Topics returns the partition counts of the named topics. Errors: an
// [*ArgumentError] for an empty list or name, an [*UnknownTopicsError]
// naming the topics that do not exist, the context's error, or a Kafka or
// connection error after retries.
func (r *Client) Topics(ctx context.Context, names ...string) (Topics, error) {
	if err := checkTopicNames("Topics", names); err != nil {
		return nil, err
	}
	var out Topics
	err := r.do(ctx, "topics", func(s *session) error {
		var err error
		out, err = s.topics(dedupe(names))
		return err
	})
	return out, err
}

// TopicsMatching returns the partition counts of every topic whose whole
// name matches the regular expression pattern (Go syntax), as MirrorMaker
// 2's "topics" setting matches. Internal topics, and topics whose names
// start with "__", never match. No match gives an empty Topics and no
// error. Errors: an [*ArgumentError] for a bad pattern, the context's
// error, or a Kafka or connection error after retries.
func (r *Client) TopicsMatching(ctx context.Context, pattern string) (Topics, error) {
	re, err := regexp.Compile(`^(?:` + pattern + `)$`)
	if err != nil || pattern == "" {
		return nil, &ArgumentError{Op: "TopicsMatching", Reason: fmt.Sprintf("bad pattern %q", pattern)}
	}
	var out Topics
	err = r.do(ctx, "topics matching", func(s *session) error {
		return r.retry(ctx, "metadata", func(attempt int) error {
			resp, err := s.metadataFresh(nil, attempt > 1)
			if err != nil {
				return err
			}
			out = make(Topics)
			for _, t := range resp.Topics {
				if t.IsInternal || strings.HasPrefix(t.Name, "__") || !re.MatchString(t.Name) {
					continue
				}
				if err := kerr(t.Err); err != nil {
					return fmt.Errorf("topic %s: %w", t.Name, err)
				}
				out[t.Name] = int32(len(t.Partitions))
			}
			return nil
		})
	})
	return out, err
}

func checkTopicNames(op string, names []string) error {
	if len(names) == 0 {
		return &ArgumentError{Op: op, Reason: "no topics"}
	}
	for _, n := range names {
		if n == "" {
			return &ArgumentError{Op: op, Reason: "empty topic name"}
		}
	}
	return nil
}

func dedupe(names []string) []string {
	seen := make(map[string]bool, len(names))
	out := make([]string, 0, len(names))
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
