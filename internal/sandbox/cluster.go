package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/mm2cutover/mm2cutover/internal/jvmcds"
)

// Broker is one KRaft cluster: a single node, or several (Config.SourceBrokers, Config.TargetBrokers),
// each a broker and a controller in one JVM. Its fault handles (Start, Stop)
// act on every node; Nodes gives the handles of each.
type Broker struct {
	name      string
	bootstrap string // the first node's client listener
	clusterID string
	nodes     []*Node
	sec       *security // nil for a PLAINTEXT cluster
	users     []User    // a secure cluster's SCRAM and PLAIN users
	argfiles  []string  // kafka-storage argument files, removed once formatted
}

// Node is one broker (and controller) of a cluster.
type Node struct {
	cluster  *Broker
	id       int32
	addr     string // client listener: PLAINTEXT, or SASL_SSL in a secure sandbox; advertised
	listen   string // where the client listener binds: addr, or behind Config.Latency's proxy
	internal string // inter-broker listener, PLAINTEXT; addr in a plain sandbox
	mtls     string // a secure sandbox's mTLS listener (SSL, client certificates required)
	oauth    string // a secure sandbox's OAUTHBEARER listener (SASL_SSL)
	kerberos string // a Kerberos sandbox's GSSAPI listener (SASL_SSL), localhost:<port>
	proc     runner // nil when attached
	format   func(context.Context) error
}

// newBroker builds (does not start) a cluster of n nodes on 127.0.0.1 (the
// client listeners on Config.BrokerHost when given), each
// with a client listener, a controller listener and, in a secure sandbox, a
// PLAINTEXT inter-broker listener. Every node is a controller: with three,
// the quorum survives one stopped node. rf is Config.ReplicationFactor.
func (s *Sandbox) newBroker(name string, n, rf int, java, dist, confDir string, env []string) (*Broker, error) {
	perNode := 2
	if s.sec != nil {
		perNode = 5 // client, inter-broker, mTLS, OAUTHBEARER, controller
		if s.sec.kdc != nil {
			perNode = 6 // and GSSAPI, before the controller
		}
	}
	ports, err := freePorts("127.0.0.1", n*perNode)
	if err != nil {
		return nil, err
	}
	b := &Broker{name: name, clusterID: newClusterID(), sec: s.sec}
	if s.sec != nil {
		b.users = newUsers(name)
	}
	var voters []string
	for i := range n {
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", i+1, ports[i*perNode+perNode-1]))
	}
	replicas := strconv.Itoa(replicationFactor(n, rf))
	var argfiles []string
	for i := range n {
		p := ports[i*perNode : (i+1)*perNode]
		nd := &Node{cluster: b, id: int32(i + 1), addr: fmt.Sprintf("%s:%d", s.host, p[0])}
		nd.listen = nd.addr
		if s.latency > 0 {
			if nd.addr, err = s.proxy(nd.listen); err != nil {
				return nil, err
			}
		}
		nd.internal = nd.addr
		dir := filepath.Join(s.workDir, name)
		if n > 1 {
			dir = filepath.Join(s.workDir, fmt.Sprintf("%s-%d", name, nd.id))
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		props := []string{
			"process.roles=broker,controller",
			"node.id=" + strconv.Itoa(int(nd.id)),
			"controller.quorum.voters=" + strings.Join(voters, ","),
		}
		controller := p[perNode-1]
		if s.sec == nil {
			props = append(props,
				fmt.Sprintf("listeners=PLAINTEXT://%s,CONTROLLER://127.0.0.1:%d", nd.listen, controller),
				"advertised.listeners=PLAINTEXT://"+nd.addr,
				"controller.listener.names=CONTROLLER",
				"inter.broker.listener.name=PLAINTEXT",
				"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
			)
		} else {
			nd.internal = fmt.Sprintf("127.0.0.1:%d", p[1])
			nd.mtls, nd.oauth = fmt.Sprintf("127.0.0.1:%d", p[2]), fmt.Sprintf("127.0.0.1:%d", p[3])
			if s.sec.kdc != nil {
				nd.kerberos = fmt.Sprintf("%s:%d", kerberosHost, p[4])
			}
			props = append(props, s.sec.brokerProps(nd, controller)...)
			if s.authz {
				props = append(props, authorizerProps(s.sec.kdc != nil)...)
			}
		}
		props = append(props,
			"log.dirs="+filepath.Join(dir, "data"),
			"auto.create.topics.enable=false",
			"num.partitions=1",
		)
		if n > 1 {
			props = append(props, "default.replication.factor="+replicas)
		}
		props = append(props,
			"offsets.topic.replication.factor="+replicas,
			"offsets.topic.num.partitions=5",
			"transaction.state.log.replication.factor="+replicas,
			"transaction.state.log.min.isr=1",
			"transaction.state.log.num.partitions=5",
			"share.coordinator.state.topic.replication.factor="+replicas,
			"share.coordinator.state.topic.min.isr=1",
			"group.initial.rebalance.delay.ms=0",
			// A fetch that waits in the purgatory stays referenced from the
			// watch list of each of its partitions until the broker purges
			// completed operations, by default after 1,000 of them. An MM2
			// task fetching 10,000 idle partitions parks a fetch every
			// fetch.max.wait.ms, so 1,000 of those need gigabytes: the
			// sandbox's 768 MB source broker ran out of heap (1.35 million
			// FetchRequest.PartitionData live) after a few scalebench runs.
			"fetch.purgatory.purge.interval.requests=10",
			"",
		)
		propsPath := filepath.Join(dir, "server.properties")
		if err := os.WriteFile(propsPath, []byte(strings.Join(props, "\n")), 0o644); err != nil {
			return nil, err
		}
		argv := append([]string{java}, strings.Fields(heapFlags+" "+jvmFlags)...)
		argv = append(argv,
			"-Dlog4j2.configurationFile="+filepath.Join(confDir, "connect-log4j2.properties"),
			"-Dlog4j.configuration=file:"+filepath.Join(confDir, "connect-log4j.properties"))
		if s.sec != nil && s.sec.kdc != nil {
			argv = append(argv, s.sec.kdc.jvmFlag())
		}
		argv = append(argv, "-cp", filepath.Join(dist, "libs", "*"), "kafka.Kafka", propsPath)
		label := name + " broker"
		if n > 1 {
			label = fmt.Sprintf("%s broker %d", name, nd.id)
		}
		nodeEnv := env
		if s.sec != nil {
			nodeEnv = append(append([]string{}, env...), brokerEnv(b.users)...)
		}
		b.nodes = append(b.nodes, nd)
		if s.docker != nil {
			nd.proc = s.docker.runner(label, brokerArgv(formatCmd(argv, b.clusterID), argv), nodeEnv, filepath.Join(dir, "broker.log"))
			continue
		}
		nd.proc = &process{name: label, argv: argv, env: nodeEnv, dir: dir, log: filepath.Join(dir, "broker.log"),
			cds: s.classArchive(s.java, s.libs, "broker")}
		args := formatCmd(argv, b.clusterID)
		if s.sec != nil {
			// The SCRAM credentials go to kafka-storage in a java @argfile
			// in the secrets directory, not on its command line.
			path := filepath.Join(s.secretDir, fmt.Sprintf("format-%s-%d.args", name, nd.id))
			if args, err = formatArgs(args, b.users, path); err != nil {
				return nil, err
			}
			argfiles = append(argfiles, path)
		}
		formatCDS := s.classArchive(s.java, s.libs, "storage-format")
		nd.format = func(ctx context.Context) error {
			args := args
			opts, done := formatCDS.Options()
			if len(opts) > 0 {
				args, _ = jvmcds.WithOptions(args, nil, "", opts)
			}
			cmd := exec.CommandContext(ctx, args[0], args[1:]...)
			cmd.Env, cmd.Dir = nodeEnv, dir
			out, err := cmd.CombinedOutput()
			done(jvmcds.ExitedByItself(err))
			if err != nil {
				return fmt.Errorf("format %s: %v\n%s", label, err, lastLines(string(out), 20))
			}
			return nil
		}
	}
	b.bootstrap = b.nodes[0].addr
	b.argfiles = argfiles
	return b, nil
}

func removeAll(paths []string) {
	for _, p := range paths {
		os.Remove(p)
	}
}

// formatAndStart formats every node's storage (in parallel), then starts
// all nodes at once (a quorum of several controllers elects a leader only when a
// majority runs) and waits until each answers metadata requests listing
// every node.
func (b *Broker) formatAndStart(ctx context.Context) error {
	errs := make([]error, len(b.nodes))
	var wg sync.WaitGroup
	for i, nd := range b.nodes {
		if nd.format != nil {
			wg.Go(func() { errs[i] = nd.format(ctx) })
		}
	}
	wg.Wait()
	removeAll(b.argfiles)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return b.start(ctx)
}

// Bootstrap returns the address of the cluster's first node: its client
// listener (PLAINTEXT, or SASL_SSL in a secure sandbox). Addrs lists every
// node's.
func (b *Broker) Bootstrap() string { return b.bootstrap }

// Addrs returns the client listener address of every node, in node order.
func (b *Broker) Addrs() []string {
	var out []string
	for _, nd := range b.nodes {
		out = append(out, nd.addr)
	}
	return out
}

// ClusterID returns the cluster's KRaft cluster ID.
func (b *Broker) ClusterID() string { return b.clusterID }

// Nodes returns the cluster's brokers in node ID order (1, 2, ...).
func (b *Broker) Nodes() []*Node { return b.nodes }

// Start starts every stopped node of the cluster (same ports and data) at
// once and waits until each answers metadata requests that list every node.
// It first waits for one of the machine's JVM start slots (StartSlotsEnv).
func (b *Broker) Start(ctx context.Context) error {
	if len(b.nodes) == 0 || b.nodes[0].proc == nil {
		return ErrNotOwner
	}
	return inStartSlot(ctx, b.name+" cluster", b.start)
}

// start is Start without the start slot: the caller holds one. The nodes
// start together under that one slot, since each waits for all of them.
func (b *Broker) start(ctx context.Context) error {
	errs := make([]error, len(b.nodes))
	var wg sync.WaitGroup
	for i, nd := range b.nodes {
		wg.Go(func() { errs[i] = nd.start(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Stop stops every node of the cluster gracefully and waits for them to exit.
func (b *Broker) Stop(ctx context.Context) error {
	if len(b.nodes) == 0 || b.nodes[0].proc == nil {
		return ErrNotOwner
	}
	var errs []error
	for i := len(b.nodes) - 1; i >= 0; i-- {
		errs = append(errs, b.nodes[i].Stop(ctx))
	}
	return errors.Join(errs...)
}

// ID returns the node's broker ID (node.id).
func (nd *Node) ID() int32 { return nd.id }

// Addr returns the node's client listener address.
func (nd *Node) Addr() string { return nd.addr }

// InternalAddr returns the node's inter-broker listener address. It is
// PLAINTEXT: in a secure sandbox, the one port a client can reach without
// TLS or SASL (for tests of a client that speaks TLS to a plain port).
func (nd *Node) InternalAddr() string { return nd.internal }

// Start starts a stopped node and waits until it answers metadata requests
// that list every node of its cluster. It first waits for one of the
// machine's JVM start slots (StartSlotsEnv).
func (nd *Node) Start(ctx context.Context) error {
	if nd.proc == nil {
		return ErrNotOwner
	}
	return inStartSlot(ctx, nd.proc.label(), nd.start)
}

// start is Start without the start slot: the caller holds one.
func (nd *Node) start(ctx context.Context) error {
	if err := nd.proc.start(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	want := len(nd.cluster.nodes)
	if err := waitUntil(ctx, nd.proc, func(ctx context.Context) error {
		return brokerReady(ctx, nd.addr, nd.cluster.SaramaConfig(), want)
	}); err != nil {
		return fmt.Errorf("%s at %s not ready: %w\n%s", nd.proc.label(), nd.addr, err, nd.proc.tail(40))
	}
	return nil
}

// Stop stops the node gracefully (controlled shutdown: its partitions'
// leadership moves to the other nodes first) and waits for it to exit.
func (nd *Node) Stop(ctx context.Context) error {
	if nd.proc == nil {
		return ErrNotOwner
	}
	if err := nd.proc.stop(ctx); err != nil && !isSignalExit(err) {
		return err
	}
	return nil
}

// replicationFactor is the default replication factor of a cluster of n
// nodes for Config.ReplicationFactor rf: every node for 0, else rf capped
// at n.
func replicationFactor(n, rf int) int {
	if rf <= 0 || rf > n {
		return n
	}
	return rf
}
