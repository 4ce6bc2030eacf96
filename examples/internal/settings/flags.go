package settings

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/mm2cutover/mm2cutover/clientconf"
	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/examples/internal/didyoumean"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/redact"
	"github.com/mm2cutover/mm2cutover/verify"
)

// Flags binds the settings of a cutover to a flag set. Every flag can also
// be given in the environment as MM2CUTOVER_<NAME> (dashes as underscores);
// the command line wins; an MM2CUTOVER_* variable that names no flag (nor
// one of OtherEnv) is refused. Secrets come from the environment:
// MM2CUTOVER_SOURCE_SASL_PASSWORD, MM2CUTOVER_TARGET_SASL_PASSWORD and
// MM2CUTOVER_CONNECT_PASSWORD, or from the client properties files
// (-source-client-config, -target-client-config, -connect-client-config),
// which hold them as Kafka's tools read them; never from -config.
type Flags struct {
	fs *flag.FlagSet
	// names are the flags BindFlags defined: only these are read from the
	// environment (never a binary's own flags such as -yes).
	names                                             map[string]bool
	s                                                 Settings
	srcBoot, tgtBoot, srcSec, tgtSec                  string
	srcMech, tgtMech, srcUser, tgtUser, srcCA, tgtCA  string
	topics, mm2Src, mm2Tgt, acceptExpired, acceptedBy string
	offsetsFrom, connectorProps, syncsLocation        string
	configFile                                        string
	srcClient, tgtClient, connectClient               string
	syncsRF                                           int
}

// BindFlags defines the settings' flags on fs.
func BindFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{fs: fs}
	s := &f.s
	fs.StringVar(&f.srcBoot, "source-bootstrap", "", "source cluster bootstrap servers (host:port,...)")
	fs.StringVar(&f.tgtBoot, "target-bootstrap", "", "target cluster bootstrap servers")
	fs.StringVar(&f.srcSec, "source-security-protocol", "PLAINTEXT", "PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL")
	fs.StringVar(&f.tgtSec, "target-security-protocol", "PLAINTEXT", "PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL")
	fs.StringVar(&f.srcMech, "source-sasl-mechanism", "", "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (GSSAPI and OAUTHBEARER: -source-client-config)")
	fs.StringVar(&f.tgtMech, "target-sasl-mechanism", "", "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (GSSAPI and OAUTHBEARER: -target-client-config)")
	fs.StringVar(&f.srcUser, "source-sasl-username", "", "source SASL user (password: MM2CUTOVER_SOURCE_SASL_PASSWORD)")
	fs.StringVar(&f.tgtUser, "target-sasl-username", "", "target SASL user (password: MM2CUTOVER_TARGET_SASL_PASSWORD)")
	fs.StringVar(&f.srcCA, "source-tls-ca", "", "PEM file of the CAs of the source brokers")
	fs.StringVar(&f.tgtCA, "target-tls-ca", "", "PEM file of the CAs of the target brokers")
	fs.StringVar(&f.srcClient, "source-client-config", "", "Kafka client properties file for the source cluster, as Kafka's tools take with --command-config: security.protocol, sasl.mechanism, sasl.jaas.config (PLAIN, SCRAM, OAUTHBEARER; GSSAPI from a keytab with sasl.kerberos.service.name, krb5.conf from KRB5_CONFIG), ssl.truststore.*/ssl.keystore.* (PEM, JKS, PKCS12), bootstrap.servers; instead of the -source-security/sasl/tls flags")
	fs.StringVar(&f.tgtClient, "target-client-config", "", "Kafka client properties file for the target cluster (see -source-client-config)")
	fs.StringVar(&s.ConnectURL, "connect-url", "", "Kafka Connect REST URL, e.g. http://mm2-connect:8088")
	fs.StringVar(&s.ConnectUser, "connect-user", "", "Connect REST basic-auth user (password: MM2CUTOVER_CONNECT_PASSWORD)")
	fs.StringVar(&s.ConnectCAFile, "connect-ca", "", "PEM file of the CAs of the Connect REST endpoint")
	fs.StringVar(&f.connectClient, "connect-client-config", "", "properties file of the Connect REST client's TLS: ssl.truststore.* (the workers' CA) and ssl.keystore.* (a client certificate), PEM, JKS or PKCS12; instead of -connect-ca")
	fs.DurationVar(&s.RequestTimeout, "request-timeout", 0, "bound of each request to Kafka, Connect or Flink's REST API, dial and round trip (0: 30s)")
	fs.DurationVar(&s.RetryTimeout, "retry-timeout", 0, "how long a request that failed on a transient error is retried before the step fails (0: 10s while a broker or worker does not answer at all, 30s for Kafka's transient errors, 2m for a Connect rebalance, which takes that long)")
	fs.StringVar(&s.Connector, "connector", "", "MirrorSourceConnector name (Connect keys offsets by it)")
	fs.StringVar(&s.StrimziCluster, "strimzi-cluster", "", "the KafkaConnect (with strimzi.io/use-connector-resources) or KafkaMirrorMaker2 whose Strimzi operator owns the connector: nothing is written over REST, the strimzi step renders the resources")
	fs.StringVar(&s.StrimziNamespace, "strimzi-namespace", "", "the namespace of the Strimzi resources (\"\": kubectl's current one)")
	fs.StringVar(&s.SourceAlias, "source-alias", "source", "source.cluster.alias")
	fs.StringVar(&s.TargetAlias, "target-alias", "target", "target.cluster.alias")
	fs.StringVar(&s.Group, "group", "", "the old job's consumer group")
	fs.StringVar(&f.topics, "topics", "", "source topics in scope, comma separated")
	fs.StringVar(&s.Policy, "policy", "identity", "replication policy: identity (same topic names) or default (alias.topic)")
	fs.IntVar(&s.TasksMax, "tasks-max", 0, "tasks.max of the connector; 0 chooses connect.TasksFor: one task per 250 source partitions, fewer from 11,112 to bound the workers' heap; recorded in the plan")
	fs.IntVar(&s.WorkerMaxRequestSize, "worker-producer-max-request-size", 0, "the Connect workers' producer.max.request.size, which REST does not show, for the precheck's record-size check (0: not set, Kafka's default 1048576)")
	fs.StringVar(&s.WorkerStorage.ConfigTopic, "worker-config-topic", "", "the Connect workers' config.storage.topic (the image's CONNECT_CONFIG_STORAGE_TOPIC), which REST does not show: the precheck checks it is compacted with one partition")
	fs.StringVar(&s.WorkerStorage.OffsetTopic, "worker-offset-topic", "", "the Connect workers' offset.storage.topic (CONNECT_OFFSET_STORAGE_TOPIC): the precheck checks it is compacted")
	fs.StringVar(&s.WorkerStorage.StatusTopic, "worker-status-topic", "", "the Connect workers' status.storage.topic (CONNECT_STATUS_STORAGE_TOPIC): the precheck checks it is compacted")
	fs.IntVar(&s.WorkerStorage.ReplicationFactor, "worker-storage-replication-factor", 0, "the workers' *.storage.replication.factor (CONNECT_REPLICATION_FACTOR): the precheck checks the internal topics have it (0: not checked)")
	fs.BoolVar(&s.ExactlyOnce, "exactly-once", false, "run MirrorMaker 2 exactly-once (Kafka Connect's exactly-once source support): the connector requires it (exactly.once.support=required, transaction.boundary=poll, a read_committed source consumer); every worker must run with exactly.once.source.support=enabled (the image's CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT), which the precheck asks each worker of -worker-group")
	fs.StringVar(&s.WorkerGroup, "worker-group", "", "the Connect workers' group.id (the image's CONNECT_GROUP_ID), which REST does not show: with -exactly-once the precheck asks each worker of the group and checks the task producers' transactional IDs, <group>-<connector>-<task>")
	fs.StringVar(&s.WorkerPrincipal, "worker-principal", "", "with -exactly-once: the principal the workers' producer authenticates as on the target (e.g. User:mm2), when the connector does not set producer.override.sasl.jaas.config; the precheck checks its ACLs")
	fs.StringVar(&f.mm2Src, "mm2-source-client", "", "properties file of the connector's source client settings (security.protocol, sasl.*, ssl.*; use config provider references such as ${env:MM2_SOURCE_SASL_JAAS_CONFIG} for secrets)")
	fs.StringVar(&f.mm2Tgt, "mm2-target-client", "", "properties file of the connector's target client settings")
	fs.StringVar(&f.connectorProps, "connector-properties", "", "properties file of extra connector settings (e.g. replication.factor, producer.override.*, consumer.*), merged under the keys the cutover sets itself; secrets as config provider references")
	fs.StringVar(&f.offsetsFrom, "offsets-from", "group", "where C comes from: group (the -group's committed offsets), flink-savepoint:DIR (the KafkaSource positions in a Flink job's final savepoint, exact where the group may lag it; with -flink-source-uid when it has several sources), csv:FILE (a kafka-consumer-groups --reset-offsets --dry-run --export file) or mm2:TOPIC (the offsets topic of a dedicated-mode MirrorMaker 2 on the target, e.g. mm2:mm2-offsets.source.internal; with -offsets-alias)")
	fs.StringVar(&s.FlinkSourceUID, "flink-source-uid", "", "the uid of the Flink job's KafkaSource in the savepoint (needed when the job has several sources)")
	fs.StringVar(&s.OffsetsAlias, "offsets-alias", "", "with -offsets-from mm2:TOPIC: the old MirrorMaker's source cluster alias, under which its offsets are stored")
	fs.StringVar(&s.OffsetsConnector, "offsets-connector", "MirrorSourceConnector", "with -offsets-from mm2:TOPIC: the old connector's name (dedicated mode names it MirrorSourceConnector)")
	fs.StringVar(&s.OffsetsConnectorTopic, "offsets-connector-topic", "", "with -offsets-from mm2:TOPIC: the old connector's own offsets topic, when its configuration sets offsets.storage.topic (an exactly-once connector may): read with TOPIC, its entries winning, as Connect reads them")
	fs.BoolVar(&s.OffsetsFileOverridesGroup, "offsets-file-overrides-group", false, "the -offsets-from file holds positions chosen on purpose (e.g. --to-datetime): do not require the group's commits to equal them")
	fs.StringVar(&f.syncsLocation, "offset-syncs-location", "", "Kafka Connect below 3.9 only, which always writes offset syncs: the cluster that holds the offset-syncs topic, source or target")
	fs.IntVar(&f.syncsRF, "offset-syncs-replication-factor", 0, "with -offset-syncs-location: the replication factor of the offset-syncs topic MM2 creates (default 3)")
	fs.StringVar(&s.Savepoint, "savepoint", "", "the old Flink job's final savepoint directory, recorded in the plan; with the group as the input, the precheck compares the group's commits with its KafkaSource positions (behind: duplicates, counted; ahead: fail)")
	fs.StringVar(&s.FlinkREST, "flink-rest", "", "the Flink REST API of the old job's cluster, e.g. http://flink-jobmanager:8081: the precheck requires the job FINISHED or CANCELED and the savepoint to be the last it completed (with -flink-job)")
	fs.StringVar(&s.FlinkJob, "flink-job", "", "with -flink-rest: the old Flink job's ID")
	fs.StringVar(&f.acceptExpired, "accept-expired", "", "partitions whose expired records you accept to lose, e.g. orders-3,orders-5 (orders:3 works too)")
	fs.StringVar(&f.acceptedBy, "accepted-by", "", "who accepts the loss (required with -accept-expired)")
	fs.DurationVar(&s.StabilityWindow, "stability-window", 30*time.Second, "how long the group's offsets must stay unchanged")
	fs.DurationVar(&s.StoppedWindow, "stopped-window", verify.FlinkStoppedWindow, "the window instead, when -flink-rest proves the job stopped at the savepoint of -offsets-from flink-savepoint: (as long as -stability-window keeps the whole window)")
	fs.DurationVar(&s.ReadBackTimeout, "readback-timeout", 2*time.Minute, "how long to wait for Connect's offsets to equal the plan")
	fs.DurationVar(&s.CatchUpTimeout, "catchup-timeout", 5*time.Minute, "how long to wait, after resume, for the boundary records and for MM2 to catch up")
	fs.StringVar(&f.configFile, "config", "", "settings file of MM2CUTOVER_<FLAG>=value lines (# comments); the environment and flags override it; no passwords")
	f.names = map[string]bool{}
	fs.VisitAll(func(fl *flag.Flag) { f.names[fl.Name] = true })
	delete(f.names, "config")
	return f
}

// ReadEnv sets every flag the command line did not from the environment
// and the -config file (MM2CUTOVER_<FLAG>), as Settings does first, and
// makes no settings: for a step that reads only files (report), which
// needs no cluster. Errors wrap ErrSettings.
func (f *Flags) ReadEnv() error {
	if f.configFile == "" {
		f.configFile = os.Getenv("MM2CUTOVER_CONFIG")
	}
	file, err := readConfigFile(f.configFile, f.names)
	if err != nil {
		return fmt.Errorf("%w: -config: %v", ErrSettings, err)
	}
	if err := checkEnv(os.Environ(), f.names); err != nil {
		return err
	}
	if err := fromEnv(f.fs, f.names, file, os.LookupEnv); err != nil {
		return fmt.Errorf("%w: %v", ErrSettings, err)
	}
	return nil
}

// AlsoFromEnv lets the named flags of the binary itself (such as -plan) be
// set from MM2CUTOVER_<NAME> too. Never name an approval such as -yes: an
// approval must be given on the command line.
func (f *Flags) AlsoFromEnv(names ...string) {
	for _, n := range names {
		f.names[n] = true
	}
}

// Settings returns the settings from the parsed flags and the environment.
// Errors wrap ErrSettings.
func (f *Flags) Settings() (Settings, error) {
	err := f.ReadEnv()
	if err != nil {
		return Settings{}, err
	}
	if err := f.checkValues(); err != nil {
		return Settings{}, err
	}
	s := f.s
	srcPassword, tgtPassword := os.Getenv("MM2CUTOVER_SOURCE_SASL_PASSWORD"), os.Getenv("MM2CUTOVER_TARGET_SASL_PASSWORD")
	connectPassword := os.Getenv("MM2CUTOVER_CONNECT_PASSWORD")
	for _, c := range []struct{ user, userFlag, password, passwordEnv string }{
		{f.srcUser, "source-sasl-username", srcPassword, "MM2CUTOVER_SOURCE_SASL_PASSWORD"},
		{f.tgtUser, "target-sasl-username", tgtPassword, "MM2CUTOVER_TARGET_SASL_PASSWORD"},
		{s.ConnectUser, "connect-user", connectPassword, "MM2CUTOVER_CONNECT_PASSWORD"},
	} {
		if err := checkCredential(c.user, c.userFlag, c.password, c.passwordEnv); err != nil {
			return Settings{}, err
		}
	}
	if s.ConnectCAFile != "" && !strings.HasPrefix(strings.ToLower(s.ConnectURL), "https://") {
		return Settings{}, fmt.Errorf("%w: -connect-ca needs an https -connect-url", ErrSettings)
	}
	for _, side := range []struct {
		name, file, boot, sec, mech, user, password, ca string
		out                                             *kafkaadmin.Config
	}{
		{"source", f.srcClient, f.srcBoot, f.srcSec, f.srcMech, f.srcUser, srcPassword, f.srcCA, &s.Source},
		{"target", f.tgtClient, f.tgtBoot, f.tgtSec, f.tgtMech, f.tgtUser, tgtPassword, f.tgtCA, &s.Target},
	} {
		if side.file == "" {
			if strings.EqualFold(side.mech, string(kafkaadmin.GSSAPI)) {
				return Settings{}, fmt.Errorf("%w: -%s-sasl-mechanism GSSAPI: give Kerberos in a client properties file, -%s-client-config (sasl.kerberos.service.name and a Krb5LoginModule entry with useKeyTab=true, keyTab and principal)", ErrSettings, side.name, side.name)
			}
			*side.out = kafkaConfig(side.boot, side.sec, side.mech, side.user, side.password, side.ca)
		} else {
			if side.sec != "PLAINTEXT" || side.mech != "" || side.user != "" || side.password != "" || side.ca != "" {
				return Settings{}, fmt.Errorf("%w: -%s-client-config is given: set security, SASL and TLS there, not with the -%s-security-protocol, -sasl-*, -tls-ca flags or the password variable", ErrSettings, side.name, side.name)
			}
			cfg, ignored, err := clientConfig(side.file, side.boot)
			if err != nil {
				return Settings{}, fmt.Errorf("%w: -%s-client-config: %w", ErrSettings, side.name, err)
			}
			*side.out = cfg
			if len(ignored) > 0 {
				s.Notices = append(s.Notices, fmt.Sprintf("-%s-client-config %s: Kafka client settings that do not apply to this tool, not used: %s", side.name, side.file, strings.Join(ignored, ", ")))
			}
		}
		if s.RequestTimeout > 0 {
			side.out.RequestTimeout = s.RequestTimeout
		}
		side.out.RetryTimeout, side.out.UnreachableTimeout = s.RetryTimeout, s.RetryTimeout
	}
	if f.connectClient != "" {
		if s.ConnectCAFile != "" {
			return Settings{}, fmt.Errorf("%w: -connect-client-config and -connect-ca: give the CA in one of them", ErrSettings)
		}
		if !strings.HasPrefix(strings.ToLower(s.ConnectURL), "https://") {
			return Settings{}, fmt.Errorf("%w: -connect-client-config needs an https -connect-url", ErrSettings)
		}
		props, err := clientconf.ReadProperties(f.connectClient)
		if err != nil {
			return Settings{}, fmt.Errorf("%w: -connect-client-config: %w", ErrSettings, err)
		}
		if s.ConnectOptions, err = connect.OptionsFromProperties(props); err != nil {
			return Settings{}, fmt.Errorf("%w: -connect-client-config %s: %w", ErrSettings, f.connectClient, err)
		}
	}
	s.ConnectPassword = redact.Secret(connectPassword)
	if strings.ContainsFunc(s.Connector, unicode.IsControl) {
		// Connect's own rule for connector names (NonEmptyStringWithoutControlChars).
		return Settings{}, fmt.Errorf("%w: -connector %q: a connector name may not hold control characters", ErrSettings, s.Connector)
	}
	s.Topics = splitList(f.topics)
	for _, t := range s.Topics {
		if !offsets.ValidTopic(t) {
			return Settings{}, fmt.Errorf("%w: -topics: %q is not a Kafka topic name (1 to 249 of a-z A-Z 0-9 . _ -)", ErrSettings, t)
		}
	}
	if s.SourceClient, err = readProperties(f.mm2Src); err != nil {
		return Settings{}, fmt.Errorf("%w: -mm2-source-client: %v", ErrSettings, err)
	}
	if s.TargetClient, err = readProperties(f.mm2Tgt); err != nil {
		return Settings{}, fmt.Errorf("%w: -mm2-target-client: %v", ErrSettings, err)
	}
	if s.AcceptExpired, err = acceptances(f.acceptExpired, f.acceptedBy); err != nil {
		return Settings{}, fmt.Errorf("%w: %v", ErrSettings, err)
	}
	if s.Extra, err = readProperties(f.connectorProps); err != nil {
		return Settings{}, fmt.Errorf("%w: -connector-properties: %v", ErrSettings, err)
	}
	switch from := f.offsetsFrom; {
	case from == "group" || from == "":
	case strings.HasPrefix(from, "csv:") && len(from) > len("csv:"):
		s.OffsetsFile = strings.TrimPrefix(from, "csv:")
	case strings.HasPrefix(from, "mm2:") && len(from) > len("mm2:"):
		s.OffsetsTopic = strings.TrimPrefix(from, "mm2:")
	case strings.HasPrefix(from, "flink-savepoint:") && len(from) > len("flink-savepoint:"):
		s.OffsetsSavepoint = strings.TrimPrefix(from, "flink-savepoint:")
	default:
		return Settings{}, fmt.Errorf("%w: -offsets-from %q: want group, flink-savepoint:DIR, csv:FILE or mm2:TOPIC", ErrSettings, from)
	}
	switch {
	case f.syncsLocation != "":
		s.OffsetSyncs = &connect.OffsetSyncsTopic{Location: f.syncsLocation, ReplicationFactor: f.syncsRF}
		if f.syncsLocation != "source" && f.syncsLocation != "target" {
			return Settings{}, fmt.Errorf("%w: -offset-syncs-location %q: want source or target", ErrSettings, f.syncsLocation)
		}
		if f.syncsRF < 0 {
			return Settings{}, fmt.Errorf("%w: -offset-syncs-replication-factor %d is negative", ErrSettings, f.syncsRF)
		}
	case f.syncsRF != 0:
		return Settings{}, fmt.Errorf("%w: -offset-syncs-replication-factor needs -offset-syncs-location", ErrSettings)
	}
	return s, s.Validate()
}

// envKey is the environment variable of a flag: MM2CUTOVER_<NAME>, dashes
// as underscores.
func envKey(flag string) string {
	return "MM2CUTOVER_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// FileValue returns the value the settings file (-config, else
// MM2CUTOVER_CONFIG) gives the flag name: ok is false when no file is
// named, it cannot be read or parsed, or no line sets the flag. It is for
// a binary that must know a setting (-json) to report an error of Settings
// itself.
func (f *Flags) FileValue(name string) (value string, ok bool) {
	path := f.configFile
	if path == "" {
		path = os.Getenv("MM2CUTOVER_CONFIG")
	}
	if path == "" {
		return "", false
	}
	names := map[string]bool{name: true}
	for n := range f.names {
		names[n] = true
	}
	file, err := readConfigFile(path, names)
	if err != nil {
		return "", false
	}
	return file.lookup(envKey(name))
}

// OtherEnv are the MM2CUTOVER_* environment variables that are not flags:
// the passwords, the settings file, and those of the sandbox, the tests and
// the images. checkEnv refuses any other MM2CUTOVER_* variable that names
// no flag, as readConfigFile refuses such a key.
var OtherEnv = []string{
	"MM2CUTOVER_SOURCE_SASL_PASSWORD", "MM2CUTOVER_TARGET_SASL_PASSWORD", "MM2CUTOVER_CONNECT_PASSWORD", "MM2CUTOVER_CONFIG",
	"MM2CUTOVER_SANDBOX", "MM2CUTOVER_SANDBOX_BACKEND", "MM2CUTOVER_KAFKA_VERSION", "MM2CUTOVER_FLINK_VERSION", "MM2CUTOVER_CACHE",
	"MM2CUTOVER_DEBIAN_MIRROR", "MM2CUTOVER_COLOR", "MM2CUTOVER_JOB_CRASH_AT", "MM2CUTOVER_JOB_TEST_AS_MAIN",
	// The test harness's: the Job's hold point, the Docker backend's image,
	// scripts/test's CPU burner, the alert tests' Kafka versions, the
	// command line's test binary run as the command line.
	"MM2CUTOVER_JOB_HOLD_AT", "MM2CUTOVER_DOCKER_IMAGE", "MM2CUTOVER_CPU_BURN", "MM2CUTOVER_ALERT_KAFKA_VERSIONS",
	"MM2CUTOVER_CLI_TEST_AS_MAIN",
}

// checkEnv refuses an MM2CUTOVER_* variable of environ that names no flag
// and is not one of OtherEnv: a typo such as MM2CUTOVER_GRUOP would
// otherwise be ignored while the setting it meant stays at its default.
func checkEnv(environ []string, names map[string]bool) error {
	known := map[string]bool{}
	for n := range names {
		known[envKey(n)] = true
	}
	for _, k := range OtherEnv {
		known[k] = true
	}
	var bad []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "MM2CUTOVER_") && !known[k] {
			if s := didyoumean.Suggest(k, slices.Sorted(maps.Keys(known))); len(s) > 0 {
				k += " (did you mean " + strings.Join(s, " or ") + "?)"
			}
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	return fmt.Errorf("%w: environment variables that name no setting: %s (a typo? every flag is MM2CUTOVER_<FLAG>; an approval such as -yes is given on the command line only)", ErrSettings, strings.Join(bad, ", "))
}

// clientConfig reads a Kafka client properties file into the cluster's
// config; flagBootstrap, when given, must agree with its bootstrap.servers.
func clientConfig(path, flagBootstrap string) (kafkaadmin.Config, []string, error) {
	props, err := clientconf.ReadProperties(path)
	if err != nil {
		return kafkaadmin.Config{}, nil, err
	}
	cfg, ignored, err := kafkaadmin.ConfigFromProperties(props)
	if err != nil {
		return kafkaadmin.Config{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	if boot := splitList(flagBootstrap); len(boot) > 0 {
		if len(cfg.BootstrapServers) > 0 && !slices.Equal(boot, cfg.BootstrapServers) {
			return kafkaadmin.Config{}, nil, fmt.Errorf("%s: bootstrap.servers %s differs from the bootstrap flag's %s", path, strings.Join(cfg.BootstrapServers, ","), flagBootstrap)
		}
		cfg.BootstrapServers = boot
	}
	if cfg.ClientID == "" {
		cfg.ClientID = "mm2cutover"
	}
	return cfg, ignored, nil
}

// checkValues refuses numbers and durations outside their domain, before
// anything is read or written: a negative -readback-timeout would otherwise
// create the connector, PATCH, and then report a false read-back failure.
func (f *Flags) checkValues() error {
	s := f.s
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"stability-window", s.StabilityWindow}, {"readback-timeout", s.ReadBackTimeout}, {"catchup-timeout", s.CatchUpTimeout}} {
		if d.v <= 0 {
			return fmt.Errorf("%w: -%s %v: want a positive duration", ErrSettings, d.name, d.v)
		}
	}
	if s.WorkerStorage.ReplicationFactor < -1 {
		return fmt.Errorf("%w: -worker-storage-replication-factor %d: want 0 (not checked), -1 (the brokers' default) or more", ErrSettings, s.WorkerStorage.ReplicationFactor)
	}
	if s.RequestTimeout < 0 || s.RetryTimeout < 0 {
		return fmt.Errorf("%w: -request-timeout %v, -retry-timeout %v: want 0 (the default) or a positive duration", ErrSettings, s.RequestTimeout, s.RetryTimeout)
	}
	if s.WorkerMaxRequestSize < 0 {
		return fmt.Errorf("%w: -worker-producer-max-request-size %d: want 0 (not set) or more", ErrSettings, s.WorkerMaxRequestSize)
	}
	if s.StoppedWindow < 0 {
		return fmt.Errorf("%w: -stopped-window %v: want 0 (no window) or a positive duration", ErrSettings, s.StoppedWindow)
	}
	if s.TasksMax < 0 {
		return fmt.Errorf("%w: -tasks-max %d: want 0 (chosen by the partitions) or more", ErrSettings, s.TasksMax)
	}
	return nil
}

// checkCredential refuses a password without its user, which would be
// ignored (no SASL, no basic auth), and a user without its password, which
// would be sent empty: both are a setting forgotten, not a choice.
func checkCredential(user, userFlag, password, passwordEnv string) error {
	switch {
	case password != "" && user == "":
		return fmt.Errorf("%w: %s is set but -%s is not: give the user too, or unset the password", ErrSettings, passwordEnv, userFlag)
	case user != "" && password == "":
		return fmt.Errorf("%w: -%s %q needs its password in the environment, %s", ErrSettings, userFlag, user, passwordEnv)
	}
	return nil
}

func kafkaConfig(bootstrap, protocol, mechanism, user, password, ca string) kafkaadmin.Config {
	return kafkaadmin.Config{
		BootstrapServers: splitList(bootstrap),
		ClientID:         "mm2cutover",
		SecurityProtocol: kafkaadmin.SecurityProtocol(protocol),
		SASLMechanism:    kafkaadmin.SASLMechanism(mechanism),
		Username:         user,
		Password:         redact.Secret(password),
		TLS:              kafkaadmin.TLSConfig{CAFile: ca},
	}
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// readProperties reads a Java properties file (clientconf.ReadProperties).
func readProperties(path string) (map[string]string, error) {
	if path == "" {
		return nil, nil
	}
	return clientconf.ReadProperties(path)
}

func acceptances(list, by string) ([]plan.ExpiredAcceptance, error) {
	var out []plan.ExpiredAcceptance
	for _, item := range splitList(list) {
		p, err := offsets.ParseSourcePartition(item)
		if err != nil {
			return nil, fmt.Errorf("-accept-expired: %w", err)
		}
		if by == "" {
			return nil, errors.New("-accept-expired needs -accepted-by: the plan records who accepted the loss")
		}
		out = append(out, plan.ExpiredAcceptance{Partition: p, By: by})
	}
	return out, nil
}
