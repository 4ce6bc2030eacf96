package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/mm2cutover/mm2cutover/clientconf"
	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/cutover"
	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/verify"
)

// Cluster is what the steps read and write on a Kafka cluster, through
// the small interfaces of package verify: a *kafkaadmin.Client, which Open
// makes, or a cluster in memory in the steps' tests (kafkaadmin/kafkafake).
// The precheck and the acceptance after resume read more, and the check
// of the cluster MM2's producer writes to dials another bootstrap: those
// need the client itself (see Env.clients).
type Cluster = cutover.Cluster

var _ Cluster = (*kafkaadmin.Client)(nil)

// Env holds the clients of the three systems a cutover talks to.
type Env struct {
	Source  Cluster         // the source cluster, where the group and the data are
	Target  Cluster         // the target cluster
	Connect *connect.Client // the Connect cluster running MM2

	// observed is the precheck's observation of the clusters, which the
	// library's first step moments later uses instead of reading every
	// fact again.
	observed *verify.Observation
	// cutover is the library's cutover of the plan the steps of this Env
	// run (Env.Cutover); approve, audit and onStep are what its hooks ask
	// and call, set by the step running.
	cutover *cutover.Cutover
	approve bool
	audit   *Audit
	onStep  func(string)
}

// Open builds the clients from the settings; it contacts nothing. Close
// the Env when the step is done.
func Open(s settings.Settings) (*Env, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	s = s.WithDefaults()
	src, tgt := s.Source, s.Target
	src.Logger, tgt.Logger = s.Logger, s.Logger
	source, err := kafkaadmin.NewClient(src)
	if err != nil {
		return nil, fmt.Errorf("%w: source cluster: %w", settings.ErrSettings, err)
	}
	target, err := kafkaadmin.NewClient(tgt)
	if err != nil {
		return nil, fmt.Errorf("%w: target cluster: %w", settings.ErrSettings, err)
	}
	for _, n := range s.Notices {
		s.Logger.Info(n)
	}
	c, err := OpenConnect(s)
	if err != nil {
		return nil, err
	}
	// A process runs one step (or `run`, its steps one after the other):
	// its clients keep their connections and the clusters' metadata across
	// the step's reads (kafkaadmin.Client.Step), until Close.
	return &Env{Source: source.Step(), Target: target.Step(), Connect: c}, nil
}

// Close closes the connections the Env's Kafka clients keep. It returns
// nil.
func (env *Env) Close() error {
	if source, target, err := env.clients(); err == nil {
		_ = source.Close()
		_ = target.Close()
	}
	return nil
}

// errNotClients: a step that needs the Kafka clients themselves was given
// clusters of another kind (a test's, in memory).
var errNotClients = errors.New("cutover: this step needs *kafkaadmin.Client for both clusters")

// clients returns the Kafka clients of the Env, for the steps that need
// them whole (Cluster says which).
func (env *Env) clients() (source, target *kafkaadmin.Client, err error) {
	source, ok := env.Source.(*kafkaadmin.Client)
	target, ok2 := env.Target.(*kafkaadmin.Client)
	if !ok || !ok2 {
		return nil, nil, errNotClients
	}
	return source, target, nil
}

// OpenConnect builds the Connect REST client of the settings (URL, request
// timeout, retry budget, basic auth, CA, client certificate); it contacts
// nothing. Open uses it; the version step uses it alone, when only the
// Connect URL is known.
func OpenConnect(s settings.Settings) (*connect.Client, error) {
	s = s.WithDefaults()
	opts := []connect.Option{connect.WithLogger(s.Logger), connect.WithUserAgent("mm2cutover/" + s.ToolVersion)}
	if s.RequestTimeout > 0 {
		opts = append(opts, connect.WithTimeout(s.RequestTimeout))
	}
	if s.RetryTimeout > 0 {
		opts = append(opts, connect.WithRetry(connect.Retry{Elapsed: s.RetryTimeout, Unreachable: s.RetryTimeout}))
	}
	opts = append(opts, s.ConnectOptions...)
	if s.ConnectUser != "" {
		opts = append(opts, connect.WithBasicAuth(s.ConnectUser, string(s.ConnectPassword)))
	}
	if s.ConnectCAFile != "" {
		pem, err := clientconf.ReadFile(s.ConnectCAFile) // bounded: /dev/zero is not read whole
		if err != nil {
			return nil, fmt.Errorf("%w: connect CA file: %w", settings.ErrSettings, err)
		}
		opts = append(opts, connect.WithCACertPEM(pem))
	}
	c, err := connect.New(s.ConnectURL, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", settings.ErrSettings, err)
	}
	return c, nil
}

// CheckConnect asks the Connect REST API for its version (GET /), so that
// a step fails at once, before it reads or writes anything, when the
// endpoint rejects the settings: credentials refused (401, 403) or a
// certificate that does not verify (ExitStatus gives 2 for both), or an
// http:// URL for an endpoint that speaks TLS (an error matching
// settings.ErrSettings; Go's client reports only a "malformed HTTP response"
// there). A worker that cannot be reached, after the client's retries, is
// the error as it came (ExitStatus gives 1: worth a retry).
func CheckConnect(ctx context.Context, env *Env, s settings.Settings) error {
	_, err := env.Connect.ServerInfo(ctx)
	if err == nil || rejected(err) {
		return err
	}
	var (
		api *connect.APIError
		ne  net.Error
	)
	timedOut := errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded)
	if u, perr := url.Parse(s.ConnectURL); perr == nil && u.Scheme == "http" && !errors.As(err, &api) && !timedOut && speaksTLS(ctx, u.Host) {
		return fmt.Errorf("%w: -connect-url %s: the endpoint speaks TLS: use https:// (and -connect-ca for a private CA): %w", settings.ErrSettings, u.Redacted(), err)
	}
	return err
}

// FirstContact is the first contact with Connect (CheckConnect, unless
// askConnect is false) and with the two clusters (their IDs), all three at
// once: over a network each is a connection of several round trips (TLS,
// SASL), and one after the other they cost a step about 0.2 s more behind
// 20 ms. It still reports one endpoint, the first that failed in the
// order Connect, source, target, and a failure ends the contacts after it
// in that order, whose answers would not be reported: an endpoint that does
// not answer ends the step here, in seconds and with one line (kafkaadmin's
// UnreachableError), rather than behind the precheck's reads.
func FirstContact(ctx context.Context, env *Env, s settings.Settings, askConnect bool) error {
	contacts := [3]func(context.Context) error{
		func(ctx context.Context) error {
			if !askConnect {
				return nil
			}
			return CheckConnect(ctx, env, s)
		},
		func(ctx context.Context) error {
			if _, err := env.Source.ClusterID(ctx); err != nil {
				return fmt.Errorf("source cluster: %w", err)
			}
			return nil
		},
		func(ctx context.Context) error {
			if _, err := env.Target.ClusterID(ctx); err != nil {
				return fmt.Errorf("target cluster: %w", err)
			}
			return nil
		},
	}
	var (
		errs    [len(contacts)]error
		ctxs    [len(contacts)]context.Context
		cancels [len(contacts)]context.CancelFunc
		wg      sync.WaitGroup
	)
	for i := range contacts {
		ctxs[i], cancels[i] = context.WithCancel(ctx)
		defer cancels[i]()
	}
	for i, contact := range contacts {
		wg.Go(func() {
			if errs[i] = contact(ctxs[i]); errs[i] != nil {
				for _, cancel := range cancels[i+1:] {
					cancel()
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// speaksTLS reports whether a TLS handshake with the endpoint at host
// completes. It sends nothing over the connection and trusts nothing it
// learns: it only tells an operator who gave http:// for an https endpoint
// what went wrong.
func speaksTLS(ctx context.Context, host string) bool {
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "80")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} // a probe: no request is sent
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// CostMessage is the message of the debug line LogCost writes, which the
// scale benchmark (examples/internal/scalebench) reads from the command
// line's stderr.
const CostMessage = "kafka cost"

// LogCost logs, at debug level, what the step cost each Kafka cluster: its
// requests by kind and its connections (kafkaadmin.Client.Cost). Clusters
// of another kind (a test's, in memory) log nothing.
func (env *Env) LogCost(ctx context.Context, log *slog.Logger) {
	source, target, err := env.clients()
	if err != nil || log == nil {
		return
	}
	sc, tc := source.Cost(), target.Cost()
	log.LogAttrs(ctx, slog.LevelDebug, CostMessage,
		slog.Int64("source_requests", sc.Requests), slog.Int64("source_connections", sc.Connections), slog.String("source", sc.String()),
		slog.Int64("target_requests", tc.Requests), slog.Int64("target_connections", tc.Connections), slog.String("target", tc.String()))
}
