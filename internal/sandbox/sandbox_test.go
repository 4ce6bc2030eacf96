package sandbox_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
)

func TestMain(m *testing.M) { sandboxtest.Main(m) }

func TestSmoke(t *testing.T) {
	sb := sandboxtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := sandbox.Smoke(ctx, sb, 50)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kafka %s: %d records replicated byte for byte in %v", rep.KafkaVersion, rep.Records, rep.Replicated)
}

func TestClustersAreIndependent(t *testing.T) {
	sb := sandboxtest.Shared(t)
	if sb.Source().ClusterID() == sb.Target().ClusterID() || sb.Source().Bootstrap() == sb.Target().Bootstrap() {
		t.Fatalf("source and target share an identity: %s/%s and %s/%s",
			sb.Source().ClusterID(), sb.Source().Bootstrap(), sb.Target().ClusterID(), sb.Target().Bootstrap())
	}
	if got, want := len(sb.Workers()), sandboxtest.SharedWorkers; got != want {
		t.Fatalf("got %d workers, want %d", got, want)
	}
	if sb.Workers()[0].URL() == sb.Workers()[1].URL() {
		t.Fatalf("workers share the URL %s", sb.Workers()[0].URL())
	}
}

// TestFaultHandles stops and restarts a broker, and stops, kills and restarts
// a worker, on a sandbox of its own.
func TestFaultHandles(t *testing.T) {
	sb := sandboxtest.Dedicated(t, sandbox.Config{Workers: 1})
	// Four JVM starts (a broker, a worker three times) each wait for
	// readiness themselves; on a saturated 2-core machine one took minutes,
	// so the whole test's bound only catches a hang.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	src := sb.Source()
	if err := sandbox.CreateTopic(ctx, src.Bootstrap(), "restart", 1); err != nil {
		t.Fatal(err)
	}
	if err := src.Stop(ctx); err != nil {
		t.Fatalf("stop broker: %v", err)
	}
	if err := sandbox.CreateTopic(ctx, src.Bootstrap(), "while-down", 1); err == nil {
		t.Fatal("created a topic on a stopped broker")
	}
	if err := src.Start(ctx); err != nil {
		t.Fatalf("restart broker: %v", err)
	}
	if err := sandbox.CreateTopic(ctx, src.Bootstrap(), "restart", 1); err == nil {
		t.Fatal("topic created before the restart is gone: data directory not kept")
	}

	w := sb.Workers()[0]
	if err := w.Stop(ctx); errors.Is(err, sandbox.ErrStopHung) {
		t.Logf("Kafka Connect hung on SIGTERM and was killed (a known Connect/Jetty shutdown race): %v", err)
	} else if err != nil {
		t.Fatalf("stop worker: %v", err)
	}
	if _, err := http.Get(w.URL() + "/"); err == nil {
		t.Fatal("stopped worker still answers")
	}
	if err := w.Start(ctx); err != nil {
		t.Fatalf("restart worker: %v", err)
	}
	// A thread dump lands in the log, and the worker goes on answering.
	err := w.DumpThreads()
	if err != nil && !errors.Is(err, errors.ErrUnsupported) { // the Docker backend's
		t.Fatalf("thread dump: %v", err)
	}
	for i := 0; err == nil; i++ {
		b, err := os.ReadFile(w.Log())
		if err == nil && strings.Contains(string(b), "Full thread dump") && strings.Contains(string(b), `"DistributedHerder-`) {
			break
		}
		if i == 40 {
			t.Fatalf("no thread dump with the herder's thread in %s (%v)", w.Log(), err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if resp, err := http.Get(w.URL() + "/"); err != nil {
		t.Fatalf("the worker does not answer after its thread dump: %v", err)
	} else {
		resp.Body.Close()
	}
	if err := w.Kill(); err != nil {
		t.Fatalf("kill worker: %v", err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatalf("start killed worker: %v", err)
	}
}

func TestAttach(t *testing.T) {
	sb := sandboxtest.Shared(t)
	path := t.TempDir() + "/state.json"
	if err := sb.WriteState(path); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	at, err := sandbox.Attach(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if at.Source().Bootstrap() != sb.Source().Bootstrap() || at.ConnectURL() != sb.ConnectURL() || at.KafkaVersion() != sb.KafkaVersion() {
		t.Fatalf("attached sandbox differs: %+v", at)
	}
	if err := at.Workers()[0].Kill(); !errors.Is(err, sandbox.ErrNotOwner) {
		t.Fatalf("Kill on an attached sandbox: got %v, want ErrNotOwner", err)
	}
	if err := at.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(sb.ConnectURL() + "/"); err != nil {
		t.Fatalf("closing an attached sandbox stopped the real one: %v", err)
	}
}

// TestSecureSmoke runs the smoke test on the secure sandbox: SASL_SSL
// brokers, three of them on the source, Connect over HTTPS with basic
// auth, MirrorSourceConnector's clients on SASL_SSL with SCRAM-SHA-512.
func TestSecureSmoke(t *testing.T) {
	sb := sandboxtest.SharedSecure(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := sandbox.Smoke(ctx, sb, 50)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kafka %s, secure: %d records replicated byte for byte in %v", rep.KafkaVersion, rep.Records, rep.Replicated)
	// The connector ran with its clients' JAAS lines resolved from the
	// workers' environment: no log, configuration or data file shows them.
	noPasswordOnDisk(t, sb)
}

// passwords returns every password of a secure sandbox.
func passwords(t *testing.T, sb *sandbox.Sandbox) []string {
	t.Helper()
	ps := []string{sb.ConnectUser().Password}
	for _, w := range sb.Workers() {
		ps = append(ps, w.LocalUser().Password)
	}
	for _, b := range []*sandbox.Broker{sb.Source(), sb.Target()} {
		ps = append(ps, b.Admin().Password, b.MM2().Password)
	}
	for _, p := range ps {
		if len(p) < 20 {
			t.Fatalf("password %q is too short to be a random secret", p)
		}
	}
	return ps
}

// noPasswordOnDisk fails t for every file under the sandbox's work
// directory (configurations, data, logs) that holds a password.
func noPasswordOnDisk(t *testing.T, sb *sandbox.Sandbox) {
	t.Helper()
	ps := passwords(t, sb)
	err := filepath.WalkDir(sb.WorkDir(), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, p := range ps {
			if bytes.Contains(b, []byte(p)) {
				t.Errorf("%s holds a password", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSecureCredentialsStayInTheSecretsDir starts a secure sandbox of its
// own, checks that no file outside the secrets directory (configurations,
// data, logs) holds a password, that a worker refuses a request without
// credentials, and that Close removes the secrets directory.
func TestSecureCredentialsStayInTheSecretsDir(t *testing.T) {
	sb := sandboxtest.Dedicated(t, sandbox.Config{Secure: true, Workers: 1})
	secrets := filepath.Dir(sb.CAFile())
	noPasswordOnDisk(t, sb)

	resp, err := sb.HTTPClient().Get(sb.ConnectURL() + "/connectors")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /connectors without credentials: %s, want 401", resp.Status)
	}
	if _, err := http.Get(sb.ConnectURL() + "/"); err == nil {
		t.Error("the worker's certificate was trusted without the sandbox CA")
	}

	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(secrets); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("secrets directory %s still there after Close: %v", secrets, err)
	}
}

// TestKerberosSmoke: the shared secure sandbox's KDC issues a keytab, and
// a Go client (sarama's Kerberos client) logs in with it through every
// source broker's Kerberos listener and reads metadata; the workers' own
// clients log in through the target's (TestSecureSmoke replicates records
// through them). No keytab is under the work directory.
func TestKerberosSmoke(t *testing.T) {
	sb := sandboxtest.SharedKerberos(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	c, err := sb.KerberosKeytab(ctx, "smoke")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("principal %s with a keytab in %v; KDC %s", c.Principal, time.Since(start).Round(time.Millisecond), sb.KDCAddr())
	cfg := sarama.NewConfig()
	cfg.Net.TLS.Enable = true
	cfg.Net.TLS.Config = &tls.Config{RootCAs: x509.NewCertPool(), MinVersion: tls.VersionTLS12}
	cfg.Net.TLS.Config.RootCAs.AppendCertsFromPEM(sb.CAPEM())
	cfg.Net.SASL.Enable, cfg.Net.SASL.Mechanism = true, sarama.SASLTypeGSSAPI
	name, realm, _ := strings.Cut(c.Principal, "@")
	cfg.Net.SASL.GSSAPI = sarama.GSSAPIConfig{AuthType: sarama.KRB5_KEYTAB_AUTH, KeyTabPath: c.KeytabFile, KerberosConfigPath: sb.Krb5Conf(),
		ServiceName: sandbox.KerberosServiceName, Username: name, Realm: realm}
	addrs := sb.Source().KerberosAddrs()
	if len(addrs) != len(sb.Source().Nodes()) {
		t.Fatalf("Kerberos listeners %v, want one per node", addrs)
	}
	for _, addr := range addrs {
		b := sarama.NewBroker(addr)
		if err := b.Open(cfg); err != nil {
			t.Fatal(err)
		}
		md, err := b.GetMetadata(&sarama.MetadataRequest{Version: 4})
		b.Close()
		if err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		if len(md.Brokers) != len(addrs) || !strings.HasPrefix(md.Brokers[0].Addr(), "localhost:") {
			t.Errorf("%s advertises %d brokers (first %s), want %d on localhost", addr, len(md.Brokers), md.Brokers[0].Addr(), len(addrs))
		}
	}
	kt, err := os.ReadFile(c.KeytabFile)
	if err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(sb.WorkDir(), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, kt[len(kt)-32:]) {
				t.Errorf("%s holds the keytab's last key", path)
			}
		}
		return nil
	})
}
