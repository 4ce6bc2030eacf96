package kafkaadmin

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

// StepMetadataAge is how long a step client ([Client.Step]) answers its
// calls from one reading of a topic's metadata (partition counts, leaders,
// brokers) before it reads it again. A step that writes (an apply, a
// resume) reads its facts moments before its writes, well within it; a
// plan's reads after a longer stability window read the metadata again.
// The facts that change while a cutover waits — a group's members and
// commits, log bounds, end offsets — are never kept: every call reads them.
const StepMetadataAge = 3 * time.Second

// Step returns a client for one step of a tool (a plan, an apply, a
// resume): it has r's settings and counts into r's meter ([Client.Cost]),
// and unlike r it keeps, until Close, what its calls share:
//
//   - one connection per broker, opened at its first use and used by every
//     call after it (Kafka answers a connection's requests one at a time,
//     so concurrent calls to one broker queue on it), instead of the
//     connections each call of r opens and closes — over TLS and SASL each
//     costs several round trips before its first request;
//   - the cluster's metadata, read once for the topics the calls name and
//     shared by them for StepMetadataAge (a call that finds a leader moved,
//     or a topic not yet readable, reads it again at once);
//   - the cluster's description (its ID, brokers and the operations the
//     principal may perform on it), read once;
//   - each group's coordinator, found once (found again when it moved).
//
// Calls of a step client may run concurrently. A call whose context ends
// closes the connections it was using; the next call opens them again.
// Close the step client when the step is done: it closes its connections.
func (r *Client) Step() *Client {
	c := &Client{cfg: r.cfg, tls: r.tls, tokens: r.tokens, krb: r.krb, log: r.log, meter: r.meter, answered: r.answered}
	ctx, cancel := context.WithCancel(context.Background())
	c.pool = &pool{ctx: ctx, cancel: cancel, brokers: make(map[string]*pooled), coord: make(map[string]string)}
	return c
}

// Close closes the connections a step client ([Client.Step]) keeps; its
// calls fail after it. It is a no-op on a client from NewClient, which
// keeps none. It returns nil.
func (r *Client) Close() error {
	if r.pool == nil {
		return nil
	}
	p := r.pool
	p.mu.Lock()
	p.closed = true
	brokers := p.brokers
	p.brokers = map[string]*pooled{}
	p.mu.Unlock()
	p.cancel()
	for _, pb := range brokers {
		pb.mu.Lock()
		if pb.b != nil {
			if ok, _ := pb.b.Connected(); ok {
				_ = pb.b.Close()
			}
		}
		pb.mu.Unlock()
	}
	if p.dialer != nil {
		p.dialer.closeAll()
	}
	return nil
}

// errStepClosed is the error of a call to a step client after Close.
var errStepClosed = errors.New("kafkaadmin: the step client is closed")

// pool is what a step client keeps across its calls.
type pool struct {
	ctx    context.Context // ends at Close
	cancel context.CancelFunc

	confOnce sync.Once
	conf     *sarama.Config
	confErr  error
	dialer   *callDialer

	mu      sync.Mutex
	closed  bool
	brokers map[string]*pooled // by address
	coord   map[string]string  // group -> coordinator address

	// finding serializes the finding of coordinators, so that concurrent
	// calls for one group send one FindCoordinator.
	finding sync.Mutex

	// dc serializes the DescribeCluster requests; cluster is the step's
	// answer (with the cluster's authorized operations), read at clusterAt.
	dc        sync.Mutex
	cluster   *sarama.DescribeClusterResponse
	clusterAt time.Time

	// md serializes the metadata reads, so that concurrent calls that need
	// the same topics send one request; snap is guarded by it.
	md   sync.Mutex
	snap snapshot
}

// pooled is one broker's connection in a pool; mu serializes opening it.
type pooled struct {
	mu sync.Mutex
	b  *sarama.Broker
}

// snapshot is the metadata a step read: per topic, its answer and when it
// was read, and the brokers and cluster ID of the last answer.
type snapshot struct {
	version   int16
	brokers   []*sarama.Broker
	clusterID *string
	topics    map[string]snapTopic
	all       time.Time // when a read of all topics was answered; zero: never
}

type snapTopic struct {
	meta *sarama.TopicMetadata
	at   time.Time
}

// config returns the sarama settings of the pool's connections, built once
// with a dialer bound to the pool's life rather than to a call.
func (p *pool) config(r *Client) (*sarama.Config, *callDialer, error) {
	p.confOnce.Do(func() {
		d := &callDialer{
			ctx:    p.ctx,
			dialer: net.Dialer{Timeout: r.cfg.RequestTimeout, KeepAlive: 30 * time.Second},
			tls:    r.tls,
			meter:  r.meter,
			// A broker that accepts and never answers ends the step's
			// first call in seconds, as it does a Client's.
			firstAnswer: min(r.cfg.RequestTimeout, firstAnswerTimeout),
		}
		p.conf, p.confErr = r.saramaConfig(d)
		p.dialer = d
	})
	return p.conf, p.dialer, p.confErr
}

// broker returns the pool's connected broker at addr, connecting it if
// needed.
func (p *pool) broker(s *session, addr string) (*sarama.Broker, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errStepClosed
	}
	pb := p.brokers[addr]
	if pb == nil {
		pb = &pooled{}
		p.brokers[addr] = pb
	}
	p.mu.Unlock()
	pb.mu.Lock()
	defer pb.mu.Unlock()
	if pb.b == nil {
		pb.b = sarama.NewBroker(addr)
	}
	b := pb.b
	s.used(b)
	if ok, _ := b.Connected(); ok {
		return b, nil
	}
	if err := b.Open(s.conf); err != nil && !errors.Is(err, sarama.ErrAlreadyConnected) {
		return nil, err
	}
	if ok, err := b.Connected(); !ok {
		return nil, s.connectError(addr, err)
	}
	return b, nil
}

// cachedCoordinator returns the address of the group's coordinator found
// earlier in the step, or "".
func (p *pool) cachedCoordinator(group string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.coord[group]
}

func (p *pool) setCoordinator(group, addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if addr == "" {
		delete(p.coord, group)
	} else {
		p.coord[group] = addr
	}
}

// answer answers a metadata read of names (nil: all topics) from the
// snapshot, or returns nil when it cannot: a topic not read yet, read
// longer than StepMetadataAge ago, or read with an error other than that
// it does not exist, or a partition without a leader.
func (sn *snapshot) answer(names []string, now time.Time) *sarama.MetadataResponse {
	if len(sn.brokers) == 0 {
		return nil
	}
	fresh := func(at time.Time) bool { return !at.IsZero() && now.Sub(at) < StepMetadataAge }
	if names == nil {
		if !fresh(sn.all) {
			return nil
		}
		for n, t := range sn.topics {
			if kerr(t.meta.Err) == nil {
				names = append(names, n)
			}
		}
		slices.Sort(names)
	}
	resp := &sarama.MetadataResponse{Version: sn.version, Brokers: sn.brokers, ClusterID: sn.clusterID}
	for _, n := range names {
		t, ok := sn.topics[n]
		if !ok || !fresh(t.at) {
			return nil
		}
		switch err := kerr(t.meta.Err); {
		case err == nil:
		case errors.Is(err, sarama.ErrUnknownTopicOrPartition):
		default:
			return nil
		}
		for _, pm := range t.meta.Partitions {
			if pm.Leader < 0 || kerr(pm.Err) == sarama.ErrLeaderNotAvailable {
				return nil
			}
		}
		resp.Topics = append(resp.Topics, t.meta)
	}
	return resp
}

// keep adds an answer to the snapshot.
func (sn *snapshot) keep(names []string, resp *sarama.MetadataResponse, at time.Time) {
	sn.version, sn.brokers, sn.clusterID = resp.Version, resp.Brokers, resp.ClusterID
	if sn.topics == nil {
		sn.topics = make(map[string]snapTopic)
	}
	for _, t := range resp.Topics {
		sn.topics[t.Name] = snapTopic{meta: t, at: at}
	}
	if names == nil {
		sn.all = at
	}
}
