package kafkaadmin

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/redact"
)

// secureClusters maps every node address of a secure cluster to the
// cluster, so that the helpers of sandbox_test.go, which take a bootstrap
// address, reach it with its TLS and SASL settings.
var secureClusters sync.Map // string -> *sandbox.Broker

// secureSource returns the three-broker source cluster of the shared
// secure sandbox (SASL_SSL).
func secureSource(t testing.TB) (*sandbox.Sandbox, *sandbox.Broker) {
	t.Helper()
	sb := sandboxtest.SharedSecureKafka(t)
	for _, b := range []*sandbox.Broker{sb.Source(), sb.Target()} {
		caFiles.Store(b, sb.CAFile())
		for _, a := range b.Addrs() {
			secureClusters.Store(a, b)
		}
	}
	return sb, sb.Source()
}

// clusterSarama returns saramaConf() completed with the security settings
// of the cluster at bootstrap, if it is a secure one.
func clusterSarama(bootstrap string) *sarama.Config {
	c := saramaConf()
	v, ok := secureClusters.Load(bootstrap)
	if !ok {
		return c
	}
	s := v.(*sandbox.Broker).SaramaConfig()
	c.Net.TLS, c.Net.SASL = s.Net.TLS, s.Net.SASL
	return c
}

// clusterConfig returns the Client configuration for the cluster at
// bootstrap: SASL_SSL with SCRAM-SHA-512 as the admin user, every node as
// a bootstrap server, when it is a secure one.
func clusterConfig(bootstrap string) Config {
	c := Config{BootstrapServers: []string{bootstrap}}
	v, ok := secureClusters.Load(bootstrap)
	if !ok {
		return c
	}
	b := v.(*sandbox.Broker)
	c.BootstrapServers = b.Addrs()
	c.SecurityProtocol = SASLSSL
	c.SASLMechanism = ScramSHA512
	c.Username = b.Admin().Name
	c.Password = redact.Secret(b.Admin().Password)
	c.TLS.CAFile = caFileOf(b)
	return c
}

var caFiles sync.Map // *sandbox.Broker -> CA file path

func caFileOf(b *sandbox.Broker) string {
	v, _ := caFiles.Load(b)
	s, _ := v.(string)
	return s
}

// onBothSources runs test against the shared plain sandbox's source (one
// broker, PLAINTEXT) and the shared secure sandbox's source (three
// brokers, SASL_SSL with SCRAM-SHA-512).
func onBothSources(t *testing.T, test func(t *testing.T, src *sandbox.Broker)) {
	t.Run("plain", func(t *testing.T) { test(t, sandboxtest.Shared(t).Source()) })
	t.Run("secure", func(t *testing.T) {
		_, src := secureSource(t)
		test(t, src)
	})
}

// TestSecureMechanisms reads the cluster ID over SASL_SSL with each
// mechanism the brokers enable.
func TestSecureMechanisms(t *testing.T) {
	sb, src := secureSource(t)
	for _, m := range []SASLMechanism{ScramSHA512, ScramSHA256, Plain} {
		t.Run(string(m), func(t *testing.T) {
			r, err := NewClient(Config{
				BootstrapServers: src.Addrs(), SecurityProtocol: SASLSSL, SASLMechanism: m,
				Username: src.Admin().Name, Password: redact.Secret(src.Admin().Password),
				TLS: TLSConfig{CAFile: sb.CAFile()},
			})
			if err != nil {
				t.Fatal(err)
			}
			id, err := r.ClusterID(testCtx(t))
			if err != nil || id != src.ClusterID() {
				t.Fatalf("ClusterID() = %q, %v; want %q", id, err, src.ClusterID())
			}
		})
	}
}

// TestSecureFaults: each misconfiguration fails at once, without retries,
// with a *SecurityError that names the cause and never the password.
func TestSecureFaults(t *testing.T) {
	sb, src := secureSource(t)
	node := src.Nodes()[0]
	good := func() Config {
		return Config{
			BootstrapServers: []string{node.Addr()}, SecurityProtocol: SASLSSL, SASLMechanism: ScramSHA512,
			Username: src.Admin().Name, Password: redact.Secret(src.Admin().Password), TLS: TLSConfig{CAFile: sb.CAFile()},
		}
	}
	const wrongPassword = "wrong-password-marker"
	for _, tc := range []struct {
		name string
		edit func(*Config)
		kind error
		want string // in the message
	}{
		{"wrong password", func(c *Config) { c.Password = wrongPassword }, ErrAuthentication, `rejected user "admin" with SCRAM-SHA-512`},
		{"wrong password PLAIN", func(c *Config) { c.SASLMechanism, c.Password = Plain, wrongPassword }, ErrAuthentication, `rejected user "admin" with PLAIN`},
		{"unknown user", func(c *Config) { c.Username = "nobody" }, ErrAuthentication, `rejected user "nobody"`},
		{"wrong CA", func(c *Config) { c.TLS.CAFile = sandboxtest.OtherCA(t) }, ErrTLS, "certificate does not verify"},
		{"SSL against PLAINTEXT port", func(c *Config) {
			c.BootstrapServers = []string{node.InternalAddr()}
		}, ErrSecurityProtocol, "not an SSL or SASL_SSL listener"},
		{"PLAINTEXT against SSL port", func(c *Config) {
			*c = Config{BootstrapServers: []string{node.Addr()}}
		}, ErrSecurityProtocol, "the listener speaks TLS"},
		{"SASL_PLAINTEXT against SSL port", func(c *Config) {
			c.SecurityProtocol, c.TLS = SASLPlaintext, TLSConfig{}
		}, ErrSecurityProtocol, "the listener speaks TLS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := good()
			tc.edit(&c)
			r, err := NewClient(c)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = r.ClusterID(testCtx(t))
			t.Logf("after %v: %v", time.Since(start).Round(time.Millisecond), err)
			var se *SecurityError
			if !errors.As(err, &se) || !errors.Is(err, tc.kind) {
				t.Fatalf("ClusterID() = %v, want a *SecurityError matching %v", err, tc.kind)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "gave up after") {
				t.Errorf("error was retried: %v", err)
			}
			if strings.Contains(err.Error(), wrongPassword) || strings.Contains(err.Error(), src.Admin().Password) {
				t.Errorf("error shows a password: %v", err)
			}
		})
	}
}

// TestSecureBringYourOwnSarama: Config.Sarama completes the client
// settings; here it does what this package could do itself (SCRAM-SHA-512
// over TLS) the way a caller with another mechanism would, with its own
// SCRAM client and TLS configuration.
func TestSecureBringYourOwnSarama(t *testing.T) {
	sb, src := secureSource(t)
	own := src.SaramaConfig() // TLS trusting the sandbox CA, SASL PLAIN as admin
	called := 0
	r, err := NewClient(Config{
		BootstrapServers: src.Addrs(),
		Sarama: func(c *sarama.Config) error {
			called++
			c.Net.TLS = own.Net.TLS
			c.Net.SASL.Enable = true
			c.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
			c.Net.SASL.User, c.Net.SASL.Password = src.Admin().Name, src.Admin().Password
			c.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return newSCRAMClient(ScramSHA512) }
			c.Net.Proxy.Enable = false // the package keeps its own dialer whatever the function does
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	id, err := r.ClusterID(testCtx(t))
	if err != nil || id != src.ClusterID() {
		t.Fatalf("ClusterID() = %q, %v; want %q", id, err, src.ClusterID())
	}
	if called != 2 || r.Requests() == 0 {
		t.Errorf("function called %d times, %d requests counted; want 2 (NewClient's check, the call) and some", called, r.Requests())
	}
	_ = sb
}

// TestSecureLeadershipMovesDuringReads moves the leaders of a topic's
// partitions between the three source brokers (reassignment to a rotated
// replica order, then a preferred leader election) while LogBounds reads
// them in a loop: every read must return every partition's right bounds,
// retrying NOT_LEADER answers against the new leaders.
func TestSecureLeadershipMovesDuringReads(t *testing.T) {
	_, src := secureSource(t)
	bs := src.Bootstrap()
	a := testAdmin(t, bs)
	topic := uniq(t, "t")
	const parts = 6
	if err := a.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: parts, ReplicationFactor: 3}, false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.DeleteTopic(topic) })
	want := make(map[TopicPartition]offsets.LogBounds)
	for p := int32(0); p < parts; p++ {
		n := int(p) + 1
		produce(t, bs, topic, p, n)
		want[tp(topic, p)] = offsets.LogBounds{Start: 0, End: int64(n), StableEnd: int64(n)}
	}
	leaders := func() map[int32]int32 {
		md, err := a.DescribeTopics([]string{topic})
		if err != nil || len(md) != 1 {
			t.Fatalf("describe %s: %v", topic, err)
		}
		out := make(map[int32]int32)
		for _, p := range md[0].Partitions {
			out[p.ID] = p.Leader
		}
		return out
	}
	distinct := func(m map[int32]int32) int {
		seen := map[int32]bool{}
		for _, l := range m {
			seen[l] = true
		}
		return len(seen)
	}
	before := leaders()
	if distinct(before) < 2 {
		t.Fatalf("leaders not spread over the brokers: %v", before)
	}

	r := newTestClient(t, bs)
	ctx := testCtx(t)
	stop := make(chan struct{})
	type result struct {
		reads int
		err   error
	}
	done := make(chan result)
	var reads atomic.Int64
	go func() {
		var res result
		defer func() { done <- res }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			got, err := r.LogBounds(ctx, Topics{topic: parts}.Partitions())
			res.reads++
			reads.Add(1)
			if err != nil {
				res.err = err
				return
			}
			for k, w := range want {
				if got[k] != w {
					res.err = fmt.Errorf("read %d: bounds %s = %+v, want %+v", res.reads, k, got[k], w)
					return
				}
			}
		}
	}()

	moved := 0
	for round := 1; round <= 6; round++ {
		// Let the reader read a few times between two moves.
		for n := reads.Load(); reads.Load() < n+3; {
			select {
			case res := <-done:
				t.Fatalf("reader stopped after %d reads: %v", res.reads, res.err)
			case <-time.After(50 * time.Millisecond):
			}
		}
		md, err := a.DescribeTopics([]string{topic})
		if err != nil {
			t.Fatal(err)
		}
		assign := make([][]int32, parts)
		for _, p := range md[0].Partitions {
			assign[p.ID] = append(append([]int32{}, p.Replicas[1:]...), p.Replicas[0])
		}
		if err := a.AlterPartitionReassignments(topic, assign); err != nil {
			t.Fatalf("reassign %s to %v: %v", topic, assign, err)
		}
		deadline := time.Now().Add(time.Minute)
		for {
			all := map[string][]int32{topic: {0, 1, 2, 3, 4, 5}}
			if _, err := a.ElectLeaders(sarama.PreferredElection, all); err != nil {
				t.Logf("round %d: elect leaders: %v", round, err)
			}
			now := leaders()
			changed := 0
			for p, l := range now {
				if l != before[p] {
					changed++
				}
			}
			if changed == parts {
				moved += changed
				before = now
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: leaders %v did not all move", round, now)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	close(stop)
	res := <-done
	if res.err != nil {
		t.Fatalf("LogBounds during leadership moves: %v", res.err)
	}
	t.Logf("%d leadership moves during %d reads, every read complete and right", moved, res.reads)
}
