//go:build sandbox

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/mm2cutover/mm2cutover/clientconf"
	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/internal/flinklike"
	"github.com/mm2cutover/mm2cutover/internal/kafkaretry"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/redact"
)

// The cutover on a secure sandbox (sandbox.Config.Secure), as an operator
// runs it: every step through the command line itself (run), with the
// clusters on SASL_SSL and SCRAM-SHA-512 (a source of three brokers), the
// Connect REST API over HTTPS with basic auth, every password from the
// environment, and the connector's clients on SASL_SSL too. It is
// `cutover -sandbox -secure`, and TestSecureCutover, which also scans
// everything the steps printed and wrote for the passwords.

// secureScenario is two topics (6 and 3 partitions) replicated by an old
// job that stopped: C = log end on most partitions, C ten records short of
// it on orders-0 to orders-2 (MM2 copies those), and C = 0 on the empty
// payments-2.
type secureScenario struct {
	sb               *sandbox.Sandbox
	dir              string
	topics           map[string]int32
	group, connector string
	// inline writes the MM2 users' passwords into the connector's client
	// settings in clear (sasl.jaas.config) and marker values into other
	// password-type settings, to show that they never come out; otherwise
	// the settings reference the workers' environment (${env:...}), as
	// they should in production.
	inline  bool
	markers []string
	// listener is the brokers' listener the tool and the connector's clients
	// use, each configured by a client properties file: "" for SASL_SSL with
	// SCRAM-SHA-512 (the tool's settings as flags), "mtls" (client
	// certificates, the principals their common names), "oauth"
	// (OAUTHBEARER: the tool with client credentials from the sandbox's
	// token endpoint, the connector with Kafka's unsecured tokens) or
	// "kerberos" (GSSAPI: a principal and a keytab each for the tool and
	// MM2's source and target clients, from the sandbox's KDC; the tool
	// finds krb5.conf through KRB5_CONFIG). For the last three the
	// principals are not super users: they get ACLs on the scenario's
	// prefix.
	listener string
	prefix   string
	toolCert sandbox.ClientCert
	oauth    sandbox.OAuthClient
	keytabs  []sandbox.KerberosClient
	// setenv sets the passwords in the environment the command line
	// reads them from.
	setenv         func(key, value string)
	stdout, stderr io.Writer
	log            *slog.Logger
	// steps is what every step printed, for the secret scan.
	steps []stepOutput
}

// stepOutput is one command line run: its arguments, exit status and
// output.
type stepOutput struct {
	Args           []string
	Code           int
	Stdout, Stderr string
}

// secureRecords is the number of records per partition before the cutover
// (and again after resume); secureBehind how many the old job left on
// orders-0 to orders-2 for MM2.
const secureRecords, secureBehind = 50, 10

func newSecureScenario(sb *sandbox.Sandbox, prefix string, inline bool, setenv func(k, v string), stdout, stderr io.Writer, log *slog.Logger) (*secureScenario, error) {
	dir, err := os.MkdirTemp("", "mm2cutover-secure-")
	if err != nil {
		return nil, err
	}
	sc := &secureScenario{
		sb: sb, dir: dir, inline: inline, setenv: setenv, stdout: stdout, stderr: stderr, log: log, prefix: prefix,
		topics:    map[string]int32{prefix + "orders": 6, prefix + "payments": 3},
		group:     prefix + "old-job",
		connector: prefix + "mm2",
	}
	if inline {
		for _, what := range []string{"source-passphrase", "source-client-secret", "target-passphrase", "target-client-secret", "consumer-client-secret"} {
			sc.markers = append(sc.markers, "marker-"+what+"-"+randomHex())
		}
	}
	return sc, sc.writeFiles()
}

func randomHex() string {
	b := make([]byte, 8)
	rand.Read(b) // never fails
	return hex.EncodeToString(b)
}

// Secrets returns every credential of the scenario: the sandbox's users'
// passwords (admin and MM2 users of both clusters, the REST user), the
// markers, the tool's keystore password and OAuth client secret.
func (sc *secureScenario) Secrets() []string {
	s := []string{sc.sb.Source().Admin().Password, sc.sb.Target().Admin().Password,
		sc.sb.Source().MM2().Password, sc.sb.Target().MM2().Password, sc.sb.ConnectUser().Password}
	for _, v := range []string{sc.toolCert.Password, sc.oauth.Secret} {
		if v != "" {
			s = append(s, v)
		}
	}
	for _, kt := range sc.keytabs {
		s = append(s, keytabSecrets(kt.KeytabFile)...)
	}
	return append(s, sc.markers...)
}

// keytabSecrets returns what of a keytab must never be shown: the whole
// file in base64 and hex, and each key in raw bytes, hex and base64. A
// keytab that cannot be read gives a marker no output holds, so that the
// scan cannot pass for want of secrets.
func keytabSecrets(path string) []string {
	b, err := os.ReadFile(path)
	kt := keytab.New()
	if err == nil {
		err = kt.Unmarshal(b)
	}
	if err != nil || len(kt.Entries) == 0 {
		return []string{"unreadable keytab " + path + " " + randomHex()}
	}
	out := []string{base64.StdEncoding.EncodeToString(b), hex.EncodeToString(b)}
	for _, e := range kt.Entries {
		k := e.Key.KeyValue
		out = append(out, string(k), hex.EncodeToString(k), base64.StdEncoding.EncodeToString(k), base64.RawURLEncoding.EncodeToString(k))
	}
	return out
}

// newListenerScenario is the scenario on the mTLS or OAUTHBEARER listeners
// (listener "mtls" or "oauth"): the tool's principal <prefix>tool and the
// connector's <prefix>mm2 are granted every operation on the scenario's
// topics and group, and nothing else.
func newListenerScenario(ctx context.Context, sb *sandbox.Sandbox, prefix, listener string, setenv func(k, v string), stdout, stderr io.Writer, log *slog.Logger) (*secureScenario, error) {
	dir, err := os.MkdirTemp("", "mm2cutover-secure-")
	if err != nil {
		return nil, err
	}
	sc := &secureScenario{
		sb: sb, dir: dir, setenv: setenv, stdout: stdout, stderr: stderr, log: log, listener: listener, prefix: prefix,
		topics:    map[string]int32{prefix + "orders": 6, prefix + "payments": 3},
		group:     prefix + "old-job",
		connector: prefix + "mm2",
	}
	tool, mm2 := prefix+"tool", prefix+"mm2"
	principals := []string{tool, mm2}
	if listener == "kerberos" {
		principals = []string{tool, mm2 + "-source", mm2 + "-target"}
	}
	for _, b := range []*sandbox.Broker{sb.Source(), sb.Target()} {
		for _, p := range principals {
			if err := b.AllowPrefixed(ctx, "User:"+p, prefix); err != nil {
				return nil, err
			}
		}
	}
	ca := sb.CAFile()
	mm2Props, toolProps := "", ""
	mm2TargetProps := ""
	switch listener {
	case "mtls":
		if sc.toolCert, err = sb.ClientCertificate(tool); err != nil {
			return nil, err
		}
		mm2Cert, err := sb.ClientCertificate(mm2)
		if err != nil {
			return nil, err
		}
		mm2Props = "security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=" + ca +
			"\nssl.keystore.type=PEM\nssl.keystore.location=" + mm2Cert.PEMFile + "\n"
		toolProps = "security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=" + ca +
			"\nssl.keystore.type=PKCS12\nssl.keystore.location=" + sc.toolCert.PKCS12File + "\nssl.keystore.password=" + sc.toolCert.Password + "\n"
	case "oauth":
		if sc.oauth, err = sb.OAuthClient(tool); err != nil {
			return nil, err
		}
		mm2Props = "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n" +
			"sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"" + mm2 + "\";\n" +
			"ssl.truststore.type=PEM\nssl.truststore.location=" + ca + "\n"
		toolProps = "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n" +
			"sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler\n" +
			"sasl.oauthbearer.token.endpoint.url=" + sc.oauth.TokenURL + "\n" +
			"sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required \\\n    clientId=\"" + sc.oauth.ID + "\" clientSecret=\"" + sc.oauth.Secret + "\";\n" +
			"ssl.truststore.type=PEM\nssl.truststore.location=" + ca + "\n"
	case "kerberos":
		for _, p := range principals {
			kt, err := sb.KerberosKeytab(ctx, p)
			if err != nil {
				return nil, err
			}
			sc.keytabs = append(sc.keytabs, kt)
		}
		// The tool's file is what Kafka's tools take; MM2's come from the
		// connect package's builder.
		toolProps = "security.protocol=SASL_SSL\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=" + sandbox.KerberosServiceName + "\n" +
			"sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required \\\n    useKeyTab=true storeKey=true keyTab=\"" +
			sc.keytabs[0].KeytabFile + "\" principal=\"" + sc.keytabs[0].Principal + "\";\n" +
			"ssl.truststore.type=PEM\nssl.truststore.location=" + ca + "\n"
		for i, out := range []*string{&mm2Props, &mm2TargetProps} {
			settings, err := connect.GSSAPIClient("SASL_SSL", sandbox.KerberosServiceName, sc.keytabs[1+i].Principal, sc.keytabs[1+i].KeytabFile)
			if err != nil {
				return nil, err
			}
			settings["ssl.truststore.type"], settings["ssl.truststore.location"] = "PEM", ca
			*out = propertiesText(settings)
		}
		// The tool's Kerberos client reads the realm's krb5.conf from
		// KRB5_CONFIG, as MIT's tools do; MM2's clients, in the workers'
		// JVMs, from -Djava.security.krb5.conf.
		setenv("KRB5_CONFIG", sb.Krb5Conf())
	default:
		return nil, fmt.Errorf("listener %q: want mtls, oauth or kerberos", listener)
	}
	if mm2TargetProps == "" {
		mm2TargetProps = mm2Props
	}
	files := map[string]string{
		"mm2-source.properties": mm2Props, "mm2-target.properties": mm2TargetProps,
		"source.properties":    "# the source cluster, as kafka-consumer-groups --command-config takes it\nbootstrap.servers=" + strings.Join(sc.addrs(sb.Source()), ",") + "\n" + toolProps,
		"target.properties":    "bootstrap.servers=" + strings.Join(sc.addrs(sb.Target()), ",") + "\n" + toolProps,
		"connect.properties":   "ssl.truststore.type=PEM\nssl.truststore.location=" + ca + "\n",
		"connector.properties": "replication.factor=1\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			return nil, err
		}
	}
	return sc, sc.waitForACLs(ctx)
}

// addrs returns b's addresses on the scenario's listener.
func (sc *secureScenario) addrs(b *sandbox.Broker) []string {
	switch sc.listener {
	case "mtls":
		return b.MTLSAddrs()
	case "oauth":
		return b.OAuthAddrs()
	case "kerberos":
		return b.KerberosAddrs()
	}
	return b.Addrs()
}

// propertiesText writes settings as the lines of a Java properties file,
// keys sorted. The values it is given hold no backslash or line end.
func propertiesText(settings map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		fmt.Fprintf(&b, "%s=%s\n", k, settings[k])
	}
	return b.String()
}

// waitForACLs waits until both clusters let the tool's principal, through
// its client properties, read the scenario's group: ACLs reach every
// broker through the metadata log.
func (sc *secureScenario) waitForACLs(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for _, side := range []string{"source", "target"} {
		props, err := clientconf.ReadProperties(filepath.Join(sc.dir, side+".properties"))
		if err != nil {
			return err
		}
		cfg, _, err := kafkaadmin.ConfigFromProperties(props)
		if err != nil {
			return err
		}
		c, err := kafkaadmin.NewClient(cfg)
		if err != nil {
			return err
		}
		for {
			a, err := c.Access(ctx, sc.topicNames(), []string{sc.group})
			if err == nil && a.Groups[sc.group].Allows(kafkaadmin.OpRead) && a.Topics[sc.topicNames()[0]].Allows(kafkaadmin.OpRead) {
				break
			}
			if serr := sleep(ctx, 200*time.Millisecond); serr != nil {
				return fmt.Errorf("the %s cluster's ACLs for the tool: %v (last: %v)", side, serr, err)
			}
		}
	}
	return nil
}

// writeFiles writes the -mm2-source-client, -mm2-target-client and
// -connector-properties files.
func (sc *secureScenario) writeFiles() error {
	for i, side := range []struct {
		file string
		b    *sandbox.Broker
		env  string // the worker's variable holding the JAAS line
	}{{"mm2-source.properties", sc.sb.Source(), "${env:MM2_SOURCE_SASL_JAAS_CONFIG}"}, {"mm2-target.properties", sc.sb.Target(), "${env:MM2_TARGET_SASL_JAAS_CONFIG}"}} {
		jaas := side.env
		var extra string
		if sc.inline {
			u := side.b.MM2()
			jaas = fmt.Sprintf(`org.apache.kafka.common.security.scram.ScramLoginModule required username=%q password=%q;`, u.Name, u.Password)
			// Password-type client settings whose names hold no "password"
			// (redact.ClientPasswordKeys); unused with SCRAM.
			extra = "sasl.oauthbearer.assertion.private.key.passphrase=" + sc.markers[2*i] + "\n" +
				"sasl.oauthbearer.client.credentials.client.secret=" + sc.markers[2*i+1] + "\n"
		}
		text := "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n" +
			"sasl.jaas.config=" + jaas + "\n" +
			"ssl.truststore.type=PEM\nssl.truststore.location=" + sc.sb.CAFile() + "\n" + extra
		if err := os.WriteFile(filepath.Join(sc.dir, side.file), []byte(text), 0o600); err != nil {
			return err
		}
	}
	props := "replication.factor=1\n" // the target has one broker
	if sc.inline {
		props += "source.consumer.sasl.oauthbearer.client.credentials.client.secret=" + sc.markers[4] + "\n"
	}
	return os.WriteFile(filepath.Join(sc.dir, "connector.properties"), []byte(props), 0o600)
}

func (sc *secureScenario) topicNames() []string {
	var names []string
	for n := range sc.topics {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// flags are the settings of every step; the passwords are in the
// environment (setPasswords).
func (sc *secureScenario) flags() []string {
	src, tgt := sc.sb.Source(), sc.sb.Target()
	workers := sc.sb.Workers()
	if sc.listener != "" {
		return []string{
			"-source-client-config", filepath.Join(sc.dir, "source.properties"),
			"-target-client-config", filepath.Join(sc.dir, "target.properties"),
			"-connect-url", workers[len(workers)-1].URL(), "-connect-user", sc.sb.ConnectUser().Name,
			"-connect-client-config", filepath.Join(sc.dir, "connect.properties"),
			"-connector", sc.connector, "-group", sc.group, "-topics", strings.Join(sc.topicNames(), ","),
			"-mm2-source-client", filepath.Join(sc.dir, "mm2-source.properties"),
			"-mm2-target-client", filepath.Join(sc.dir, "mm2-target.properties"),
			"-connector-properties", filepath.Join(sc.dir, "connector.properties"),
			"-plan", filepath.Join(sc.dir, "plan.json"),
			"-stability-window", "2s", "-readback-timeout", "2m", "-catchup-timeout", "3m",
		}
	}
	return []string{
		"-source-bootstrap", strings.Join(src.Addrs(), ","), "-source-security-protocol", "SASL_SSL",
		"-source-sasl-mechanism", "SCRAM-SHA-512", "-source-sasl-username", src.Admin().Name, "-source-tls-ca", sc.sb.CAFile(),
		"-target-bootstrap", strings.Join(tgt.Addrs(), ","), "-target-security-protocol", "SASL_SSL",
		"-target-sasl-mechanism", "SCRAM-SHA-512", "-target-sasl-username", tgt.Admin().Name, "-target-tls-ca", sc.sb.CAFile(),
		// The last worker: whichever worker leads, writes are forwarded
		// between HTTPS workers with the caller's basic auth.
		"-connect-url", workers[len(workers)-1].URL(), "-connect-user", sc.sb.ConnectUser().Name, "-connect-ca", sc.sb.CAFile(),
		"-connector", sc.connector, "-group", sc.group, "-topics", strings.Join(sc.topicNames(), ","),
		"-mm2-source-client", filepath.Join(sc.dir, "mm2-source.properties"),
		"-mm2-target-client", filepath.Join(sc.dir, "mm2-target.properties"),
		"-connector-properties", filepath.Join(sc.dir, "connector.properties"),
		"-plan", filepath.Join(sc.dir, "plan.json"),
		"-stability-window", "2s", "-readback-timeout", "2m", "-catchup-timeout", "3m",
	}
}

// passwords are the environment of the command line.
func (sc *secureScenario) passwords() map[string]string {
	if sc.listener != "" {
		return map[string]string{"MM2CUTOVER_CONNECT_PASSWORD": sc.sb.ConnectUser().Password}
	}
	return map[string]string{
		"MM2CUTOVER_SOURCE_SASL_PASSWORD": sc.sb.Source().Admin().Password,
		"MM2CUTOVER_TARGET_SASL_PASSWORD": sc.sb.Target().Admin().Password,
		"MM2CUTOVER_CONNECT_PASSWORD":     sc.sb.ConnectUser().Password,
	}
}

func (sc *secureScenario) setPasswords() {
	for k, v := range sc.passwords() {
		sc.setenv(k, v)
	}
}

// step runs the command line with args (the step and its own flags) and
// the scenario's settings, and returns an error unless it exits want.
func (sc *secureScenario) step(want int, args ...string) error {
	args = append(slices.Clone(args), sc.flags()...)
	var out, errb bytes.Buffer
	start := time.Now()
	code := run(args, &out, &errb)
	sc.steps = append(sc.steps, stepOutput{Args: args, Code: code, Stdout: out.String(), Stderr: errb.String()})
	first := sc.flags()[0]
	fmt.Fprintf(sc.stdout, "\n$ cutover %s   # exit %d after %v\n%s", strings.Join(args[:slices.Index(args, first)], " "),
		code, time.Since(start).Round(100*time.Millisecond), out.String())
	_, _ = io.WriteString(sc.stderr, errb.String())
	if code != want {
		return fmt.Errorf("cutover %s: exit %d, want %d:\n%s", args[0], code, want, errb.String())
	}
	return nil
}

// manualPartitions returns a sarama client configuration for b whose
// producer writes to the partition each message names.
func manualPartitions(b *sandbox.Broker) *sarama.Config {
	cfg := b.SaramaConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	return cfg
}

// produce writes records seq from..to-1 to every partition of the topics,
// except those in skip.
func (sc *secureScenario) produce(b *sandbox.Broker, from, to int, skip ...flinklike.Partition) error {
	p, err := sarama.NewSyncProducer(b.Addrs(), manualPartitions(b))
	if err != nil {
		return err
	}
	defer p.Close()
	var msgs []*sarama.ProducerMessage
	for _, tp := range flinklike.All(sc.topics) {
		if !slices.Contains(skip, tp) {
			for i := from; i < to; i++ {
				msgs = append(msgs, flinklike.Record(tp.Topic, tp.Partition, "secure", i))
			}
		}
	}
	return kafkaretry.SendMessages(context.Background(), p, msgs)
}

// start creates the topics on both clusters and plays the old job: it
// copied records 0..C-1 of every partition to the target, in order, and
// committed C.
func (sc *secureScenario) start(ctx context.Context) error {
	src, tgt := sc.sb.Source(), sc.sb.Target()
	for name, n := range sc.topics {
		for _, b := range []*sandbox.Broker{src, tgt} {
			if err := b.CreateTopic(ctx, name, n); err != nil {
				return err
			}
		}
	}
	empty := flinklike.Partition{Topic: sc.topicNames()[1], Partition: 2}
	if err := sc.produce(src, 0, secureRecords, empty); err != nil {
		return err
	}
	committed := map[kafkaadmin.TopicPartition]int64{}
	copier, err := sarama.NewSyncProducer(tgt.Addrs(), manualPartitions(tgt))
	if err != nil {
		return err
	}
	defer copier.Close()
	for _, tp := range flinklike.All(sc.topics) {
		c := int64(secureRecords)
		switch {
		case tp == empty:
			c = 0
		case tp.Topic == sc.topicNames()[0] && tp.Partition < 3:
			c -= secureBehind
		}
		committed[kafkaadmin.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}] = c
		if c == 0 {
			continue
		}
		recs, err := src.Consume(ctx, tp.Topic, tp.Partition, 0, int(c))
		if err != nil {
			return err
		}
		var msgs []*sarama.ProducerMessage
		for _, m := range recs {
			msgs = append(msgs, copyOf(m))
		}
		if err := kafkaretry.SendMessages(ctx, copier, msgs); err != nil {
			return err
		}
	}
	admin, err := sc.admin(src)
	if err != nil {
		return err
	}
	if err := admin.CommitOffsets(ctx, sc.group, committed); err != nil {
		return fmt.Errorf("the old job's commits: %w", err)
	}
	sc.log.Info("the old job copied and committed, then stopped", "group", sc.group, "partitions", len(committed))
	return nil
}

// copyOf is a source record as the old job writes it to the target.
func copyOf(m *sarama.ConsumerMessage) *sarama.ProducerMessage {
	var hs []sarama.RecordHeader
	for _, h := range m.Headers {
		hs = append(hs, *h)
	}
	return &sarama.ProducerMessage{Topic: m.Topic, Partition: m.Partition, Key: sarama.ByteEncoder(m.Key), Value: sarama.ByteEncoder(m.Value), Headers: hs}
}

// admin returns a client of b as its admin user, over SASL_SSL.
func (sc *secureScenario) admin(b *sandbox.Broker) (*kafkaadmin.Client, error) {
	return kafkaadmin.NewClient(kafkaadmin.Config{
		BootstrapServers: b.Addrs(), ClientID: "mm2cutover-secure-demo", SecurityProtocol: kafkaadmin.SASLSSL,
		SASLMechanism: kafkaadmin.ScramSHA512, Username: b.Admin().Name, Password: redact.Secret(b.Admin().Password),
		TLS: kafkaadmin.TLSConfig{CAFile: sc.sb.CAFile()},
	})
}

// cutover runs the steps: precheck, plan, apply, the read-back, resume
// without and with approval, new records on every partition, the
// verification after resume and the status.
func (sc *secureScenario) cutover(ctx context.Context) error {
	sc.setPasswords()
	for _, st := range []struct {
		want int
		args []string
	}{
		{app.ExitOK, []string{"precheck"}},
		{app.ExitOK, []string{"plan", "-json"}},
		{app.ExitOK, []string{"apply", "-dry-run"}},
		{app.ExitOK, []string{"apply"}},
		{app.ExitOK, []string{"verify", "-json"}},
		{app.ExitNotApproved, []string{"resume"}},
		{app.ExitOK, []string{"resume", "-yes"}},
	} {
		if err := sc.step(st.want, st.args...); err != nil {
			return err
		}
	}
	if err := sc.produce(sc.sb.Source(), secureRecords, 2*secureRecords); err != nil {
		return err
	}
	if err := sc.step(app.ExitOK, "verify"); err != nil {
		return err
	}
	return sc.step(app.ExitOK, "status", "-json")
}

// secureResult is what the target holds, in total.
type secureResult struct {
	Records, Lost, Duplicated, OutOfOrder, Foreign int
}

// check compares every partition of source and target once MM2 caught up:
// each source record on the target exactly once, in order. It waits up to
// a minute for MM2 to write the last records.
func (sc *secureScenario) check(ctx context.Context) (secureResult, error) {
	var res secureResult
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for _, tp := range flinklike.All(sc.topics) {
		src, err := sc.readAll(ctx, sc.sb.Source(), tp)
		if err != nil {
			return res, err
		}
		var dst []string
		for {
			if dst, err = sc.readAll(ctx, sc.sb.Target(), tp); err != nil {
				return res, err
			}
			if len(dst) >= len(src) || sleep(ctx, time.Second) != nil {
				break
			}
		}
		seen := make(map[string]int, len(dst))
		for _, v := range dst {
			seen[v]++
		}
		res.Records += len(src)
		foreign := len(dst)
		for _, v := range src {
			switch n := seen[v]; {
			case n == 0:
				res.Lost++
			default:
				res.Duplicated += n - 1
				foreign -= n
			}
		}
		res.Foreign += foreign
		if len(dst) == len(src) && !slices.Equal(dst, src) {
			res.OutOfOrder++
		}
	}
	if res.Lost+res.Duplicated+res.OutOfOrder+res.Foreign > 0 {
		return res, fmt.Errorf("%w: %d lost, %d duplicated of %d source records, %d foreign; %d partitions out of order",
			app.ErrCheckFailed, res.Lost, res.Duplicated, res.Records, res.Foreign, res.OutOfOrder)
	}
	return res, nil
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

// readAll returns the values of a partition's records, in order.
func (sc *secureScenario) readAll(ctx context.Context, b *sandbox.Broker, tp flinklike.Partition) ([]string, error) {
	client, err := sarama.NewClient(b.Addrs(), b.SaramaConfig())
	if err != nil {
		return nil, err
	}
	end, err := client.GetOffset(tp.Topic, tp.Partition, sarama.OffsetNewest)
	client.Close()
	if err != nil || end == 0 {
		return nil, err
	}
	recs, err := b.Consume(ctx, tp.Topic, tp.Partition, 0, int(end))
	var vs []string
	for _, m := range recs {
		vs = append(vs, string(m.Value))
	}
	return vs, err
}

// rollback rolls back after resume: the connector stops and the old job's
// group receives C' = M'+1, which, with every record copied, is the log
// end of every source partition.
func (sc *secureScenario) rollback(ctx context.Context) error {
	if err := sc.step(app.ExitOK, "rollback", "-rollback-group", sc.group, "-yes"); err != nil {
		return err
	}
	admin, err := sc.admin(sc.sb.Source())
	if err != nil {
		return err
	}
	got, err := admin.GroupOffsets(ctx, sc.group, sc.topicNames())
	if err != nil {
		return err
	}
	var tps []kafkaadmin.TopicPartition
	for _, tp := range flinklike.All(sc.topics) {
		tps = append(tps, kafkaadmin.TopicPartition{Topic: tp.Topic, Partition: tp.Partition})
	}
	bounds, err := admin.LogBounds(ctx, tps)
	if err != nil {
		return err
	}
	for _, tp := range tps {
		if c := got[tp]; c != bounds[tp].End {
			return fmt.Errorf("after the rollback %s: C' = %d, want the log end %d", tp, c, bounds[tp].End)
		}
	}
	return nil
}

// deleteConnector removes the scenario's connector and its offsets.
func (sc *secureScenario) deleteConnector(ctx context.Context, name string) error {
	c, err := connect.New(sc.sb.ConnectURL(), connect.WithCACertPEM(sc.sb.CAPEM()),
		connect.WithBasicAuth(sc.sb.ConnectUser().Name, sc.sb.ConnectUser().Password))
	if err != nil {
		return err
	}
	if err := c.Stop(ctx, name); err != nil {
		return err
	}
	if _, err := c.WaitStopped(ctx, name); err != nil {
		return err
	}
	if _, err := c.ResetOffsets(ctx, name); err != nil {
		return err
	}
	return c.Delete(ctx, name)
}

// runSecureSandbox is -sandbox -secure: start the secure sandbox, run the
// cutover through the command line, count every record on the target,
// and roll back. With kerberos (-kerberos) the sandbox runs a KDC too, and
// the tool and MM2's clients reach the brokers' Kerberos listeners, each
// as its own principal from a keytab.
func runSecureSandbox(ctx context.Context, log *slog.Logger, stdout, stderr io.Writer, kerberos bool) error {
	cfg := sandbox.ConfigFromEnv()
	cfg.Workers, cfg.SourceBrokers, cfg.Secure, cfg.Logger = 2, 3, true, log
	cfg.Kerberos, cfg.Authorizer = kerberos, kerberos
	start := time.Now()
	sb, err := sandbox.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer sb.Close()
	log.Info("secure sandbox ready", "kafka", sb.KafkaVersion(), "took", time.Since(start).Round(time.Millisecond))
	var set []string
	setenv := func(k, v string) { set = append(set, k); os.Setenv(k, v) }
	defer func() {
		for _, k := range set {
			os.Unsetenv(k)
		}
	}()
	var sc *secureScenario
	if kerberos {
		// The principals get ACLs on a prefix of the names (an empty one
		// is no ACL resource).
		sc, err = newListenerScenario(ctx, sb, "kerberos-", "kerberos", setenv, stdout, stderr, log)
	} else {
		sc, err = newSecureScenario(sb, "", false, setenv, stdout, stderr, log)
	}
	if sc != nil {
		defer os.RemoveAll(sc.dir)
	}
	if err != nil {
		return err
	}
	if err := sc.start(ctx); err != nil {
		return err
	}
	if err := sc.cutover(ctx); err != nil {
		return err
	}
	res, err := sc.check(ctx)
	fmt.Fprintf(stdout, "\n%d source records, %d lost, %d duplicated\n", res.Records, res.Lost, res.Duplicated)
	if err != nil {
		return err
	}
	if err := sc.rollback(ctx); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nthe secure cutover and its rollback took %v\n", time.Since(start).Round(time.Second))
	return nil
}
