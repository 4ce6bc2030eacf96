// Package sandbox runs real Apache Kafka and Kafka Connect on this machine for
// tests and demos: two independent KRaft clusters, "source" (one node, or
// Config.SourceBrokers) and "target" (one node, or Config.TargetBrokers), and zero or more Kafka
// Connect distributed workers whose management cluster is the target, with
// MirrorMaker 2's connectors on their class path.
//
// With Config.Secure the clusters listen for clients on SASL_SSL (SCRAM and
// PLAIN) and the workers serve REST over HTTPS with basic auth; see
// secure.go for what runs and where the credentials are. With
// Config.Kerberos too, a real MIT Kerberos KDC runs beside them and every
// broker has a GSSAPI listener (kerberos.go).
//
// The jars come from, in order, Config.KafkaHome (an Apache Kafka
// distribution), or a cache directory filled from Maven Central by the
// pom.xml beside this file (mvn dependency:copy-dependencies). Every process
// is a JVM in its own process group with a parent-death signal, so none
// outlives the program that started it; Close stops them all and removes the
// working directory.
//
// Workers start through the worker image's own files (package docker/mm2):
// docker-entrypoint.sh with connect-mm2.properties, configured by environment
// variables exactly as in Kubernetes, except PLAINTEXT (unless Secure) and
// replication factor 1. Each worker listens on and advertises its own
// loopback address (127.0.0.2, 127.0.0.3, ...) and port, so a write sent to
// a worker that is not the leader is really forwarded.
//
// A running sandbox can be shared by several test binaries: WriteState
// records its addresses in a file and Attach connects to it. An attached
// Sandbox has no fault handles (Stop, Start, Kill return ErrNotOwner).
package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	mm2 "github.com/mm2cutover/mm2cutover/docker/mm2"
	"github.com/mm2cutover/mm2cutover/internal/jvmcds"
	"github.com/mm2cutover/mm2cutover/internal/latencyproxy"
)

// DefaultKafkaVersion is the newest Apache Kafka release whose broker,
// connect-runtime, connect-mirror and connect-mirror-client jars all resolve
// from Maven Central here (4.4.0's connect-mirror does not).
const DefaultKafkaVersion = "4.3.1"

// StateEnv names the environment variable that holds the path of a running
// sandbox's state file (see WriteState and Attach).
const StateEnv = "MM2CUTOVER_SANDBOX"

const (
	pollInterval   = 200 * time.Millisecond
	startTimeout   = 5 * time.Minute // per JVM; workers took over 3 minutes at load average 100+ on 2 cores
	stopTimeout    = 60 * time.Second
	mirrorSource   = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
	workerGroupID  = "mm2-sandbox"
	firstWorkerIP4 = 2 // workers advertise 127.0.0.2, 127.0.0.3, ...
)

// ErrStopHung is returned by Stop when the process did not exit within its
// grace period after SIGTERM and was killed. Kafka Connect 4.3.1 does this
// now and then: its shutdown hook stops the REST server while Jetty's own
// shutdown hook destroys it, and the join that follows never returns. A Pod
// is then killed at the end of its grace period, as here.
var ErrStopHung = errors.New("did not exit after SIGTERM")

// workerStopGrace bounds a worker's graceful stop: Connect commits its
// tasks' offsets within offset.flush.timeout.ms (30 s) after stopping them.
const workerStopGrace = 45 * time.Second

// ErrNotOwner is returned by the fault handles of an attached sandbox: only
// the process that started a sandbox can stop, start or kill its processes.
var ErrNotOwner = errors.New("sandbox is attached, not owned: start a dedicated sandbox for fault tests")

// Config says what to start. The zero value starts the two Kafka clusters of
// DefaultKafkaVersion from the default cache and no Connect worker.
type Config struct {
	// KafkaVersion is the Apache Kafka version to fetch ("" means
	// DefaultKafkaVersion). Ignored when KafkaHome is set.
	KafkaVersion string
	// KafkaHome is an Apache Kafka distribution (a directory with libs/).
	KafkaHome string
	// CacheDir holds fetched distributions as kafka-<version>/libs
	// ("" means the user cache directory's mm2cutover folder).
	CacheDir string
	// WorkDir is where data directories and logs go ("" means a new
	// temporary directory, removed by Close).
	WorkDir string
	// Workers is the number of Kafka Connect workers to start; 0 starts none.
	Workers int
	// SourceBrokers is the number of brokers of the source cluster (0
	// means 1). With several, topics are replicated to all of them by
	// default, so that leaders are spread and can move.
	SourceBrokers int
	// TargetBrokers is the number of brokers of the target cluster (0
	// means 1), Connect's management cluster.
	TargetBrokers int
	// ReplicationFactor is the default replication factor of a cluster of
	// several brokers (topics, consumer offsets, transactions). 0
	// replicates to every broker; 1 spreads the partitions over the brokers,
	// one replica each, so that N brokers hold N times the partitions of one
	// (a broker holds at most about 15,000 here: a process may open 20,000
	// files). Larger values are capped at the cluster's size.
	ReplicationFactor int
	// WorkerHeap is the maximum heap (-Xmx, as "2g" or "1536m") of each
	// Connect worker ("" means 768m, the brokers' heap). MM2's tasks hold
	// a consumer and a producer each: a worker starting 50 tasks of 1,000
	// partitions ran out of 768m (Kafka 4.3.1).
	WorkerHeap string
	// Secure starts SASL_SSL brokers (SCRAM-SHA-512, SCRAM-SHA-256, PLAIN)
	// and Connect workers with HTTPS REST and basic auth, with certificates
	// and passwords generated at start (see secure.go). Not with Docker.
	Secure bool
	// Kerberos, with Secure, also starts a real MIT Kerberos KDC (the
	// krb5-kdc and krb5-admin-server packages; Start fails with
	// ErrNoKerberos without them) and gives every broker a GSSAPI listener
	// (SASL_SSL, localhost:<port>); the Connect workers' own clients log in
	// through it from a keytab. See kerberos.go.
	Kerberos bool
	// Authorizer, with Secure, runs both clusters with Kafka's
	// StandardAuthorizer: only the admin and mm2 users (and the brokers
	// themselves) are super users; any other principal may do only what
	// ACLs allow (see authz.go).
	Authorizer bool
	// Docker runs every JVM as a container of DockerImage through
	// github.com/ory/dockertest (host network, the work directory mounted
	// at the same path) instead of a local process; Start fails with
	// ErrNoDocker when no daemon answers at DOCKER_HOST. Any engine that
	// serves the Docker API will do: the project's CI uses podman's
	// (`podman system service`). dockertest is linked into a command of
	// its own module (internal/dockerbackend), which Start builds with the
	// go command from the repository's source.
	Docker bool
	// DockerImage is the image of the Docker backend ("" means
	// apache/kafka:<KafkaVersion>): an Apache Kafka distribution at
	// /opt/kafka (at least its libs/), java and bash on PATH. It is never
	// pulled when the engine already has it.
	DockerImage string
	// ExactlyOnce starts every worker with exactly-once source support
	// (the image's CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT=enabled, KIP-618).
	// Worker.SetEnv changes it for one worker's next start.
	ExactlyOnce bool
	// JMXExporter starts every worker with the Prometheus JMX exporter agent
	// (JMXExporterAgent) and the image's jmx-exporter.yaml, each on a free
	// port: Worker.MetricsURL is its endpoint.
	JMXExporter bool
	// Latency, when positive, is a round trip added to every connection of
	// a client to a broker's client listener (PLAINTEXT, or SASL_SSL in a
	// secure sandbox) and to a worker's REST API: a proxy of package
	// internal/latencyproxy in this process, half of it each way, listens
	// in front of each, and the brokers advertise the proxy's address, so
	// that a client reaches every broker through one (inter-broker and
	// controller traffic stays direct in a secure sandbox). The kernel here
	// has no netem. Not with Docker or BrokerHost; a sandbox with it
	// writes no state file (its proxies live in this process).
	Latency time.Duration
	// BrokerHost is the address of this machine the brokers' client
	// listeners bind and advertise ("" means 127.0.0.1): for clients that
	// cannot reach this machine's loopback, such as the Pods of
	// internal/kube, give its HostIP. Not with Secure or Docker.
	BrokerHost string
	// Logger receives progress; nil discards it.
	Logger *slog.Logger
}

// ConfigFromEnv returns a Config filled from the environment:
// MM2CUTOVER_KAFKA_VERSION, KAFKA_HOME, MM2CUTOVER_CACHE,
// MM2CUTOVER_SANDBOX_BACKEND=docker for the Docker backend and
// MM2CUTOVER_DOCKER_IMAGE for its image.
func ConfigFromEnv() Config {
	return Config{
		KafkaVersion: os.Getenv("MM2CUTOVER_KAFKA_VERSION"),
		KafkaHome:    os.Getenv("KAFKA_HOME"),
		CacheDir:     os.Getenv("MM2CUTOVER_CACHE"),
		Docker:       os.Getenv("MM2CUTOVER_SANDBOX_BACKEND") == "docker",
		DockerImage:  os.Getenv("MM2CUTOVER_DOCKER_IMAGE"),
	}
}

// KafkaDistribution returns the directory of the Apache Kafka
// distribution a process sandbox of cfg runs (its libs/ holds the jars),
// fetching the jars into the cache on first use, and the Kafka version.
// Errors wrap ErrNoKafka.
func KafkaDistribution(ctx context.Context, cfg Config) (dir, version string, err error) {
	if cfg.KafkaVersion == "" {
		cfg.KafkaVersion = DefaultKafkaVersion
	}
	if cfg.CacheDir == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return "", "", fmt.Errorf("%w: no cache directory: %v", ErrNoKafka, err)
		}
		cfg.CacheDir = filepath.Join(d, "mm2cutover")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if dir, err = distribution(ctx, cfg, log); err != nil {
		return "", "", err
	}
	return dir, versionOf(dir, cfg.KafkaVersion), nil
}

// Sandbox is a running set of Kafka clusters and Connect workers.
type Sandbox struct {
	version string
	libs    string
	source  *Broker
	target  *Broker
	workers []*Worker

	owned     bool
	docker    *dockerBackend // nil for local processes
	workDir   string
	rmDir     bool
	sec       *security // nil unless Config.Secure
	authz     bool      // Config.Authorizer
	secretDir string    // credentials and keys; always removed by Close
	log       *slog.Logger
	host      string // the brokers' client listener address (Config.BrokerHost)
	latency   time.Duration
	proxies   []*latencyproxy.Proxy // Config.Latency's, closed last by Close

	jmxAgent string // the JMX exporter agent jar in the work directory; "" without Config.JMXExporter

	exactlyOnce bool // Config.ExactlyOnce

	dist, heap string    // the Kafka distribution and the workers' heap flags, for AddWorkers
	env        []string  // the base environment of every process
	groups     []*Worker // the workers of AddWorkers' groups

	cacheDir   string   // Config.CacheDir, resolved
	java       string   // the java binary of local JVMs; "" with the Docker backend
	prometheus []runner // Prometheus servers StartPrometheus started
}

// proxy starts a latency proxy (Config.Latency) in front of addr and
// returns the address it listens on.
func (s *Sandbox) proxy(addr string) (string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	p, err := latencyproxy.Start(net.JoinHostPort(host, "0"), addr, s.latency/2)
	if err != nil {
		return "", fmt.Errorf("sandbox: latency proxy for %s: %w", addr, err)
	}
	s.proxies = append(s.proxies, p)
	return p.Addr(), nil
}

// Worker is one Kafka Connect distributed worker.
type Worker struct {
	url        string
	metricsURL string       // "" without Config.JMXExporter
	proc       runner       // nil when attached
	client     *http.Client // for its REST API (HTTPS in a secure sandbox)
	auth       User         // basic-auth user for readiness checks; zero when plain
	local      User         // a basic-auth user only this worker knows; zero when plain
}

// Start starts the source and target clusters and cfg.Workers Connect workers
// (see start). Ports are picked free, then bound by the JVMs; when another
// process took one in between, Start tries again with new ports, up to
// three times.
func Start(ctx context.Context, cfg Config) (*Sandbox, error) {
	for attempt := 1; ; attempt++ {
		s, err := start(ctx, cfg)
		if err == nil || attempt == 3 || !strings.Contains(err.Error(), "Address already in use") {
			return s, err
		}
		if cfg.Logger != nil {
			cfg.Logger.Warn("sandbox: a port was taken before the JVM bound it; starting again", "attempt", attempt)
		}
	}
}

// start starts the source and target clusters and cfg.Workers Connect workers
// and waits until each is usable: a broker answers metadata requests; a worker
// answers GET / and lists MirrorSourceConnector under GET /connector-plugins.
// On failure everything already started is stopped, and the error carries the
// tail of the failing process's log. Errors wrap ErrNoKafka when no
// distribution can be found or fetched.
func start(ctx context.Context, cfg Config) (_ *Sandbox, err error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.KafkaVersion == "" {
		cfg.KafkaVersion = DefaultKafkaVersion
	}
	if !validHeap(cfg.WorkerHeap) {
		return nil, fmt.Errorf("sandbox: worker heap %q is not a size such as 2g or 1536m", cfg.WorkerHeap)
	}
	if cfg.CacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("no cache directory: %w", err)
		}
		cfg.CacheDir = filepath.Join(dir, "mm2cutover")
	}
	s := &Sandbox{owned: true, log: log, workDir: cfg.WorkDir, cacheDir: cfg.CacheDir, host: cfg.BrokerHost, latency: cfg.Latency}
	if cfg.Latency < 0 || cfg.Latency > 0 && (cfg.Docker || cfg.BrokerHost != "") {
		return nil, errors.New("sandbox: Latency must be positive, and is not supported with Docker or BrokerHost")
	}
	if s.host == "" {
		s.host = "127.0.0.1"
	} else if cfg.Secure || cfg.Docker {
		return nil, errors.New("sandbox: BrokerHost is not supported with Secure or Docker")
	}
	if s.workDir == "" {
		if s.workDir, err = os.MkdirTemp("", "mm2sandbox-"); err != nil {
			return nil, err
		}
		s.rmDir = true
	}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if cfg.Secure {
		if cfg.Docker {
			return nil, errors.New("sandbox: Secure is not supported with the Docker backend")
		}
		if s.secretDir, err = os.MkdirTemp("", "mm2sandbox-secrets-"); err != nil {
			return nil, err
		}
		if s.sec, err = newSecurity(s.secretDir, cfg.Workers); err != nil {
			return nil, err
		}
		if cfg.Kerberos {
			if s.sec.kdc, err = startKDC(ctx, filepath.Join(s.secretDir, "kdc"), log); err != nil {
				return nil, err
			}
		}
	}
	if cfg.Kerberos && !cfg.Secure {
		return nil, errors.New("sandbox: Kerberos needs Secure (its listener is SASL_SSL)")
	}
	if cfg.Authorizer && !cfg.Secure {
		return nil, errors.New("sandbox: Authorizer needs Secure (ACLs name SASL users)")
	}
	s.authz = cfg.Authorizer
	s.exactlyOnce = cfg.ExactlyOnce
	java, dist := "java", dockerKafkaHome
	if cfg.Docker {
		s.version = cfg.KafkaVersion
		image := cfg.DockerImage
		if image == "" {
			image = "apache/kafka:" + cfg.KafkaVersion
		}
		if s.docker, err = newDockerBackend(ctx, image, s.workDir); err != nil {
			return nil, err
		}
		// Host-side tools of tests (kafka-consumer-groups) use the same
		// jars where they can be had; the containers do not need them.
		if local, err := distribution(ctx, cfg, log); err == nil {
			s.libs = filepath.Join(local, "libs")
		}
	} else {
		if java, err = exec.LookPath("java"); err != nil {
			return nil, fmt.Errorf("%w: java is not installed (Java 17 or newer is needed)", ErrNoKafka)
		}
		if dist, err = distribution(ctx, cfg, log); err != nil {
			return nil, err
		}
		s.version, s.libs = versionOf(dist, cfg.KafkaVersion), filepath.Join(dist, "libs")
		s.java = java
	}
	confDir := filepath.Join(s.workDir, "mm2")
	if err := os.CopyFS(confDir, mm2.Files); err != nil {
		return nil, fmt.Errorf("write worker image files: %w", err)
	}
	if err := os.Chmod(filepath.Join(confDir, "docker-entrypoint.sh"), 0o755); err != nil {
		return nil, err
	}
	var env []string
	if s.docker == nil {
		env = baseEnv()
	}
	if cfg.JMXExporter && cfg.Workers > 0 {
		agent, err := JMXExporterAgent(ctx, cfg.CacheDir, log)
		if err != nil {
			return nil, err
		}
		// A copy in the work directory, which the Docker backend mounts too.
		s.jmxAgent = filepath.Join(confDir, filepath.Base(agent))
		if err := copyFile(agent, s.jmxAgent); err != nil {
			return nil, err
		}
	}

	// One start slot for the whole sandbox (startslots.go): its JVMs start
	// together, the clusters before the workers.
	release, err := takeStartSlot(ctx, log, "sandbox")
	if err != nil {
		return nil, err
	}
	defer release()
	// The two clusters format and start in parallel; each takes a few seconds.
	if s.source, err = s.newBroker("source", max(cfg.SourceBrokers, 1), cfg.ReplicationFactor, java, dist, confDir, env); err != nil {
		return nil, err
	}
	if s.target, err = s.newBroker("target", max(cfg.TargetBrokers, 1), cfg.ReplicationFactor, java, dist, confDir, env); err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, b := range []*Broker{s.source, s.target} {
		wg.Go(func() { errs[i] = b.formatAndStart(ctx) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	log.Info("kafka clusters ready", "source", s.source.bootstrap, "target", s.target.bootstrap)

	s.dist, s.heap, s.env = dist, workerHeap(cfg.WorkerHeap), env
	for i := range cfg.Workers {
		w, err := s.newWorker(i, dist, confDir, workerHeap(cfg.WorkerHeap), env)
		if err != nil {
			return nil, err
		}
		s.workers = append(s.workers, w)
	}
	errs = make([]error, len(s.workers))
	for i, w := range s.workers {
		wg.Go(func() { errs[i] = w.start(ctx) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(s.workers) > 0 {
		log.Info("connect workers ready", "urls", s.workerURLs())
	}
	return s, nil
}

// classArchive returns the class data sharing archive of the role's local
// JVMs run by java on the Kafka jars in libs; nil, for none, without a
// java binary (the Docker backend).
func (s *Sandbox) classArchive(java, libs, role string) *jvmcds.Archive {
	return jvmcds.New(s.cacheDir, java, filepath.Join(libs, "*"), role)
}

// baseEnv is the environment of every process: enough to find java, nothing
// of the caller's Kafka settings (KAFKA_OPTS and the like would leak in).
func baseEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "JAVA_HOME", "LANG", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// versionOf reads the Kafka version from the broker jar's name.
func versionOf(dist, fallback string) string {
	m, _ := filepath.Glob(filepath.Join(dist, "libs", "kafka_2.13-*.jar"))
	for _, jar := range m {
		v := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(jar), "kafka_2.13-"), ".jar")
		if !strings.ContainsAny(v, "-") { // skip -test, -sources
			return v
		}
	}
	return fallback
}

// Flags that fit several JVMs on 2 cores: small heaps, the serial collector
// and the client compiler, which starts fastest.
const (
	heapFlags = "-Xms128m -Xmx768m"
	jvmFlags  = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true"
)

// formatCmd returns the kafka-storage format command of a new cluster, for
// the broker command line argv (java flags..., main class, properties file).
func formatCmd(argv []string, clusterID string) []string {
	n := len(argv)
	return append(append([]string{}, argv[:n-2]...), "kafka.tools.StorageTool", "format", "-t", clusterID, "-c", argv[n-1])
}

// newClusterID returns a random KRaft cluster ID: 16 bytes, base64url
// without padding. Like Kafka's Uuid.randomUuid it never starts with '-':
// kafka-storage would read such an ID as an option and fail (exit 1).
func newClusterID() string {
	b := make([]byte, 16)
	for {
		rand.Read(b) // never fails: crypto/rand panics rather than return an error
		if id := base64.RawURLEncoding.EncodeToString(b); id[0] != '-' {
			return id
		}
	}
}

// workerHeap returns the KAFKA_HEAP_OPTS of a worker whose maximum heap is
// xmx ("" means the brokers' heapFlags).
func workerHeap(xmx string) string {
	if xmx == "" {
		return heapFlags
	}
	return "-Xms128m -Xmx" + xmx
}

// validHeap reports whether xmx is "" or a size -Xmx takes: digits and
// an optional unit k, m or g.
func validHeap(xmx string) bool {
	if xmx == "" {
		return true
	}
	digits := strings.TrimRight(xmx, "kKmMgG")
	if len(xmx)-len(digits) > 1 {
		return false
	}
	n, err := strconv.Atoi(digits)
	return err == nil && n > 0
}

func (s *Sandbox) newWorker(i int, dist, confDir, heap string, env []string) (*Worker, error) {
	host := fmt.Sprintf("127.0.0.%d", firstWorkerIP4+i)
	ports, err := freePorts(host, 1)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(s.workDir, fmt.Sprintf("worker-%d", i))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	env = append(append([]string{}, env...),
		"KAFKA_HOME="+dist,
		"MM2_CONF_DIR="+confDir,
		"KAFKA_HEAP_OPTS="+heap,
		"KAFKA_JVM_PERFORMANCE_OPTS="+jvmFlags,
	)
	env = append(env, s.WorkerEnv(host, ports[0])...)
	if s.exactlyOnce {
		env = append(env, "CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT=enabled")
	}
	w := &Worker{url: fmt.Sprintf("http://%s:%d", host, ports[0]), client: s.HTTPClient()}
	restAddr := net.JoinHostPort(host, strconv.Itoa(ports[0])) // where clients reach the REST API
	if s.latency > 0 {
		px, err := s.proxy(restAddr)
		if err != nil {
			return nil, err
		}
		restAddr = px
		w.url = "http://" + restAddr
	}
	if s.jmxAgent != "" {
		menv, murl, err := s.jmxExporterEnv()
		if err != nil {
			return nil, err
		}
		env, w.metricsURL = append(env, menv...), murl
	}
	if s.sec != nil {
		secEnv, local, err := s.workerEnv(dir, i)
		if err != nil {
			return nil, err
		}
		env = append(env, secEnv...)
		w.url = "https://" + restAddr
		w.auth, w.local = s.sec.rest, local
	}
	name, argv := fmt.Sprintf("connect worker %d", i), []string{filepath.Join(confDir, "docker-entrypoint.sh")}
	if s.docker != nil {
		w.proc = s.docker.runner(name, argv, env, filepath.Join(dir, "worker.log"))
	} else {
		p := &process{name: name, argv: argv, env: env, dir: dir, log: filepath.Join(dir, "worker.log"), cdsEnv: "KAFKA_JVM_PERFORMANCE_OPTS"}
		if s.jmxAgent == "" {
			// A JVM with a Java agent writes no archive: it exits with
			// "Must enable AllowArchivingWithJavaAgent", a diagnostic
			// option for tests of the JVM itself.
			p.cds = s.classArchive(s.java, s.libs, "worker")
		}
		w.proc = p
	}
	return w, nil
}

// WorkerEnv returns the docker/mm2 entrypoint's environment for one more
// worker of the sandbox's Connect group listening on and advertising
// host:port: the target cluster as bootstrap, the group and its three
// topics, replication factor 1, the security settings. It holds no
// KAFKA_HOME, MM2_CONF_DIR or JVM flags, so that the worker image, run on
// the host network, can join the group with it. The security settings are
// PLAINTEXT's: a secure sandbox's workers get theirs from workerEnv
// (secure.go), which names files of its secrets directory.
func (s *Sandbox) WorkerEnv(host string, port int) []string {
	return []string{
		"CONNECT_BOOTSTRAP_SERVERS=" + s.target.bootstrap,
		"CONNECT_GROUP_ID=" + workerGroupID,
		"CONNECT_CONFIG_STORAGE_TOPIC=" + workerGroupID + "-configs",
		"CONNECT_OFFSET_STORAGE_TOPIC=" + workerGroupID + "-offsets",
		"CONNECT_STATUS_STORAGE_TOPIC=" + workerGroupID + "-status",
		"CONNECT_REPLICATION_FACTOR=1",
		"CONNECT_SECURITY_PROTOCOL=PLAINTEXT",
		"CONNECT_REST_HOST=" + host,
		"CONNECT_REST_PORT=" + strconv.Itoa(port),
		"POD_IP=" + host,
	}
}

// KafkaVersion returns the Apache Kafka version the sandbox runs.
func (s *Sandbox) KafkaVersion() string { return s.version }

// KafkaLibs returns the directory of the Kafka jars the sandbox runs ("" when attached).
func (s *Sandbox) KafkaLibs() string { return s.libs }

// Source returns the source cluster.
func (s *Sandbox) Source() *Broker { return s.source }

// Target returns the target cluster, which is also Connect's management cluster.
func (s *Sandbox) Target() *Broker { return s.target }

// Workers returns the Connect workers in start order.
func (s *Sandbox) Workers() []*Worker { return s.workers }

// ConnectURL returns the REST URL of the first Connect worker, or "" when
// the sandbox has none.
func (s *Sandbox) ConnectURL() string {
	if len(s.workers) == 0 {
		return ""
	}
	return s.workers[0].url
}

func (s *Sandbox) workerURLs() []string {
	var urls []string
	for _, w := range s.workers {
		urls = append(urls, w.url)
	}
	return urls
}

// WorkDir returns the directory that holds the data and logs.
func (s *Sandbox) WorkDir() string { return s.workDir }

// LogTails returns the last n lines of every process log, labelled, for a
// failing test to show. An attached sandbox has none.
func (s *Sandbox) LogTails(n int) string {
	var b strings.Builder
	for _, p := range append(s.processes(), s.prometheus...) {
		fmt.Fprintf(&b, "----- %s (%s), last %d lines -----\n%s\n", p.label(), p.logPath(), n, p.tail(n))
	}
	if k := s.kdc(); k != nil {
		fmt.Fprintf(&b, "----- kerberos kdc (%s), last %d lines -----\n%s\n", filepath.Join(k.dir, "kdc.log"), n, k.tail(n))
	}
	return b.String()
}

func (s *Sandbox) processes() []runner {
	var ps []runner
	for _, w := range slices.Concat(s.workers, s.groups) {
		if w.proc != nil {
			ps = append(ps, w.proc)
		}
	}
	for _, b := range []*Broker{s.source, s.target} {
		if b == nil {
			continue
		}
		for _, nd := range b.nodes {
			if nd.proc != nil {
				ps = append(ps, nd.proc)
			}
		}
	}
	return ps
}

// Close stops the Prometheus servers and the workers, then the brokers
// (SIGTERM, SIGKILL after a minute: a process killed so is logged, not an
// error), and removes the working directory it created. It does nothing to
// an attached sandbox's processes.
func (s *Sandbox) Close() error {
	if !s.owned {
		return nil
	}
	defer func() {
		for _, p := range s.proxies {
			p.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	var errs []error
	stopAll := func(ps []runner) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, p := range ps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				switch err := p.stop(ctx); {
				case err == nil || isSignalExit(err):
				case errors.Is(err, ErrStopHung):
					// Connect 4.3.1 now and then hangs on SIGTERM (see
					// ErrStopHung); killed at the end of its grace period, as a
					// Pod is, it is gone all the same.
					s.log.Warn("sandbox: killed at close", "process", p.label(), "error", err)
				default:
					mu.Lock()
					errs = append(errs, fmt.Errorf("stop %s: %w", p.label(), err))
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}
	stopAll(s.prometheus)
	ps := s.processes()
	nw := 0
	for _, w := range slices.Concat(s.workers, s.groups) {
		if w.proc != nil {
			nw++
		}
	}
	stopAll(ps[:nw])
	stopAll(ps[nw:])
	for _, p := range ps {
		if err := p.remove(); err != nil {
			errs = append(errs, err)
		}
	}
	if s.rmDir {
		if err := os.RemoveAll(s.workDir); err != nil {
			errs = append(errs, err)
		}
	}
	s.sec.close()
	if s.secretDir != "" {
		if err := os.RemoveAll(s.secretDir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// isSignalExit reports whether err is a JVM's exit after SIGTERM (status 143)
// or a kill: the expected ends of a stopped process.
func isSignalExit(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	return ee.ExitCode() == 143 || ee.ExitCode() == -1
}

// URL returns the worker's REST URL, its advertised address (https:// in
// a secure sandbox).
func (w *Worker) URL() string { return w.url }

// LocalUser returns a basic-auth user that only this worker accepts (the
// zero User in a plain sandbox). Every worker also accepts
// Sandbox.ConnectUser. A request a worker forwards to the leader carries
// the caller's Authorization header and is authenticated there again: with
// LocalUser of a worker that is not the leader, a forwarded write fails.
func (w *Worker) LocalUser() User { return w.local }

// Start starts a stopped worker and waits until it is usable: GET / answers
// and GET /connector-plugins lists MirrorSourceConnector. It first waits for
// one of the machine's JVM start slots (StartSlotsEnv).
func (w *Worker) Start(ctx context.Context) error {
	if w.proc == nil {
		return ErrNotOwner
	}
	return inStartSlot(ctx, w.proc.label(), w.start)
}

// start is Start without the start slot: the caller holds one.
func (w *Worker) start(ctx context.Context) error {
	if err := w.proc.start(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if err := waitUntil(ctx, w.proc, func(ctx context.Context) error { return workerReady(ctx, w.client, w.url, w.auth) }); err != nil {
		return fmt.Errorf("%s at %s not ready: %w\n%s", w.proc.label(), w.url, err, w.proc.tail(40))
	}
	return nil
}

// Stop sends SIGTERM to the worker and waits until it has exited: Connect
// stops its tasks and commits their offsets first. A worker that has not
// exited after 45 s (or when ctx ends) is killed, and Stop returns an error
// matching ErrStopHung; it returns an error too if the worker exited badly.
func (w *Worker) Stop(ctx context.Context) error {
	if w.proc == nil {
		return ErrNotOwner
	}
	ctx, cancel := context.WithTimeout(ctx, workerStopGrace)
	defer cancel()
	if err := w.proc.stop(ctx); err != nil && !isSignalExit(err) {
		return err
	}
	return nil
}

// SetEnv sets environment variables ("NAME=value") of the worker's next
// Start, replacing those of the same names: a worker stopped, given
// CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT=disabled and started again is a
// group's one worker without exactly-once support.
func (w *Worker) SetEnv(kv ...string) error {
	if w.proc == nil {
		return ErrNotOwner
	}
	w.proc.setEnv(kv)
	return nil
}

// AddWorkers starts n more Connect workers in a Connect group of their
// own on the target (group.id group, internal topics <group>-configs,
// -offsets and -status), with exactly-once source support when
// exactlyOnce: a second Connect cluster beside the first on the same Kafka
// clusters (say, an at-least-once one beside an exactly-once one). They
// are not among Workers; Close stops them. Not in a secure sandbox.
func (s *Sandbox) AddWorkers(ctx context.Context, group string, n int, exactlyOnce bool) ([]*Worker, error) {
	if !s.owned {
		return nil, ErrNotOwner
	}
	if s.sec != nil {
		return nil, errors.New("sandbox: AddWorkers is not supported in a secure sandbox")
	}
	if group == "" || group == workerGroupID {
		return nil, fmt.Errorf("sandbox: AddWorkers needs a group other than %q", workerGroupID)
	}
	confDir := filepath.Join(s.workDir, "mm2")
	var added []*Worker
	for range n {
		w, err := s.newWorker(len(s.workers)+len(s.groups), s.dist, confDir, s.heap, s.env)
		if err != nil {
			return nil, err
		}
		support := "disabled"
		if exactlyOnce {
			support = "enabled"
		}
		w.proc.setEnv([]string{"CONNECT_GROUP_ID=" + group, "CONNECT_CONFIG_STORAGE_TOPIC=" + group + "-configs",
			"CONNECT_OFFSET_STORAGE_TOPIC=" + group + "-offsets", "CONNECT_STATUS_STORAGE_TOPIC=" + group + "-status",
			"CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT=" + support})
		s.groups = append(s.groups, w)
		added = append(added, w)
	}
	errs := make([]error, len(added))
	var wg sync.WaitGroup
	for i, w := range added {
		wg.Go(func() { errs[i] = w.Start(ctx) })
	}
	wg.Wait()
	return added, errors.Join(errs...)
}

// WorkerGroupID is the group.id of the sandbox's Connect workers.
const WorkerGroupID = workerGroupID

// Kill sends SIGKILL to the worker: no task stop, no offset commit.
func (w *Worker) Kill() error {
	if w.proc == nil {
		return ErrNotOwner
	}
	return w.proc.kill()
}

// DumpThreads has the worker's JVM write a thread dump to its log (SIGQUIT),
// for a test to show what a worker that stopped making progress is doing.
// The Docker backend does not support it (errors.ErrUnsupported).
func (w *Worker) DumpThreads() error {
	if w.proc == nil {
		return ErrNotOwner
	}
	p, ok := w.proc.(*process)
	if !ok {
		return errors.ErrUnsupported
	}
	return p.signal(syscall.SIGQUIT)
}

// Log returns the path of the worker's log file ("" when attached).
func (w *Worker) Log() string {
	if w.proc == nil {
		return ""
	}
	return w.proc.logPath()
}

// waitUntil polls ready until it succeeds, ctx ends, or the process exits.
func waitUntil(ctx context.Context, p runner, ready func(context.Context) error) error {
	done, exitErr := p.wait()
	for {
		err := ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("process exited: %v", exitErr())
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-time.After(pollInterval):
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// state is the file format of WriteState and Attach.
type state struct {
	KafkaVersion string       `json:"kafka_version"`
	Source       brokerState  `json:"source"`
	Target       brokerState  `json:"target"`
	Workers      []workerInfo `json:"workers"`
}

type brokerState struct {
	Bootstrap string   `json:"bootstrap"`
	ClusterID string   `json:"cluster_id"`
	Addrs     []string `json:"addrs,omitempty"`
}

type workerInfo struct {
	URL string `json:"url"`
}

// WriteState writes the sandbox's addresses to path, for Attach. A secure
// sandbox cannot be shared this way: its state would be credentials in a
// file.
func (s *Sandbox) WriteState(path string) error {
	if s.sec != nil {
		return errors.New("sandbox: a secure sandbox writes no state file (it would hold its credentials)")
	}
	if s.latency > 0 {
		return errors.New("sandbox: a sandbox with Latency writes no state file (its proxies end with this process)")
	}
	st := state{
		KafkaVersion: s.version,
		Source:       brokerState{s.source.bootstrap, s.source.clusterID, s.source.Addrs()},
		Target:       brokerState{s.target.bootstrap, s.target.clusterID, s.target.Addrs()},
	}
	for _, w := range s.workers {
		st.Workers = append(st.Workers, workerInfo{w.url})
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// attachedBroker is a cluster another process started: one node per
// recorded address, without fault handles.
func attachedBroker(name string, st brokerState) *Broker {
	b := &Broker{name: name, bootstrap: st.Bootstrap, clusterID: st.ClusterID}
	addrs := st.Addrs
	if len(addrs) == 0 {
		addrs = []string{st.Bootstrap}
	}
	for i, a := range addrs {
		b.nodes = append(b.nodes, &Node{cluster: b, id: int32(i + 1), addr: a, internal: a})
	}
	return b
}

// Attach connects to a sandbox another process started and described with
// WriteState, after checking that its brokers and workers answer.
func Attach(ctx context.Context, path string) (*Sandbox, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("attach sandbox: %w", err)
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("attach sandbox: %s: %w", path, err)
	}
	s := &Sandbox{
		version: st.KafkaVersion,
		source:  attachedBroker("source", st.Source),
		target:  attachedBroker("target", st.Target),
		log:     slog.New(slog.DiscardHandler),
	}
	for _, w := range st.Workers {
		s.workers = append(s.workers, &Worker{url: w.URL, client: &http.Client{}})
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, br := range []*Broker{s.source, s.target} {
		if err := brokerReady(ctx, br.bootstrap, br.SaramaConfig(), 1); err != nil {
			return nil, fmt.Errorf("attach sandbox: %s broker %s: %w", br.name, br.bootstrap, err)
		}
	}
	for _, w := range s.workers {
		if err := workerReady(ctx, w.client, w.url, User{}); err != nil {
			return nil, fmt.Errorf("attach sandbox: worker %s: %w", w.url, err)
		}
	}
	return s, nil
}
