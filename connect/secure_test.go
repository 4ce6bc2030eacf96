package connect_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/redact"
)

// secureClient returns a client for a secure sandbox worker: HTTPS
// trusting the sandbox CA, basic auth as user.
func secureClient(t *testing.T, sb *sandbox.Sandbox, url string, user sandbox.User, opts ...connect.Option) *connect.Client {
	t.Helper()
	opts = append([]connect.Option{
		connect.WithCACertPEM(sb.CAPEM()),
		connect.WithBasicAuth(user.Name, user.Password),
		connect.WithPollInterval(500 * time.Millisecond),
		connect.WithRetry(connect.Retry{Elapsed: time.Minute}),
	}, opts...)
	c, err := connect.New(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// secureConfig is a MirrorSourceConnector config for topic whose clients
// reach both secure clusters (SASL_SSL, SCRAM-SHA-512; the JAAS lines are
// ${env:...} references the workers resolve).
func secureConfig(t *testing.T, sb *sandbox.Sandbox, name, topic string) map[string]string {
	t.Helper()
	client := map[string]map[string]string{"source": {}, "target": {}}
	for k, v := range sb.MirrorClientConfig() {
		side, key, _ := strings.Cut(k, ".cluster.")
		client[side][key] = v
	}
	cfg, err := connect.MirrorSource{
		Name:            name,
		SourceBootstrap: strings.Join(sb.Source().Addrs(), ","),
		TargetBootstrap: sb.Target().Bootstrap(),
		Topics:          []string{topic},
		TasksMax:        1,
		SourceClient:    client["source"],
		TargetClient:    client["target"],
		Extra:           map[string]string{"replication.factor": "1"},
	}.Config()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func uniqueName(t *testing.T) string {
	base := strings.Trim(unsafeChars.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	return fmt.Sprintf("%s-%d", base, time.Now().UnixNano()%1e9)
}

// TestSecureAuthAndTLS: the client reaches HTTPS workers with the sandbox
// CA and basic auth; a wrong password is a 401 (ErrUnauthorized) whose
// error does not show the password; without the CA the TLS handshake fails.
func TestSecureAuthAndTLS(t *testing.T) {
	sb := sandboxtest.SharedSecure(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, w := range sb.Workers() {
		info, err := secureClient(t, sb, w.URL(), sb.ConnectUser()).ServerInfo(ctx)
		if err != nil || info.Version != sb.KafkaVersion() {
			t.Fatalf("GET / on %s: %+v, %v", w.URL(), info, err)
		}
	}
	wrong := sandbox.User{Name: sb.ConnectUser().Name, Password: "wrong-password-marker"}
	_, err := secureClient(t, sb, sb.ConnectURL(), wrong).Connectors(ctx)
	if !errors.Is(err, connect.ErrUnauthorized) {
		t.Errorf("wrong password: %v, want ErrUnauthorized", err)
	}
	if err != nil && strings.Contains(err.Error(), "wrong-password-marker") {
		t.Errorf("error shows the password: %v", err)
	}
	t.Logf("wrong password: %v", err)

	c, err := connect.New(sb.ConnectURL(), connect.WithBasicAuth(sb.ConnectUser().Name, sb.ConnectUser().Password),
		connect.WithRetry(connect.Retry{Attempts: 1}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ServerInfo(ctx)
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the sandbox CA: %v, want a certificate error", err)
	}
	t.Logf("without the CA: %v", err)
}

// TestSecureForwardedWrites runs the cutover's writes through each worker
// over HTTPS with basic auth: whichever worker is not the leader forwards
// them, with the caller's Authorization header, to the leader.
func TestSecureForwardedWrites(t *testing.T) {
	sb := sandboxtest.SharedSecure(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	name := uniqueName(t)
	topic := name + "-t"
	for _, b := range []*sandbox.Broker{sb.Source(), sb.Target()} {
		if err := b.CreateTopic(ctx, topic, 2); err != nil {
			t.Fatal(err)
		}
	}
	workers := sb.Workers()
	for i, wk := range workers {
		c := secureClient(t, sb, wk.URL(), sb.ConnectUser())
		n := fmt.Sprintf("%s-w%d", name, i)
		if _, err := c.Create(ctx, n, secureConfig(t, sb, n, topic), connect.InitialStopped); err != nil {
			t.Fatalf("create via worker %d: %v", i, err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), n) })
		if _, err := c.WaitStopped(ctx, n); err != nil {
			t.Fatal(err)
		}
		plan := []connect.Offset{mirrorOffset("source", topic, 0, int64(10+i))}
		if _, err := c.AlterOffsets(ctx, n, plan); err != nil {
			t.Fatalf("alter offsets via worker %d: %v", i, err)
		}
		other := secureClient(t, sb, workers[1-i].URL(), sb.ConnectUser())
		if _, err := other.WaitMirrorOffsets(ctx, n, expected(t, plan)); err != nil {
			t.Errorf("offsets written via worker %d, read via the other: %v", i, err)
		}
		if err := c.Delete(ctx, n); err != nil {
			t.Errorf("delete via worker %d: %v", i, err)
		}
	}
}

// TestSecureForwardedRequestKeepsTheCallersAuthorization pins what Kafka
// Connect does with the Authorization header of a request it forwards to
// the leader (RestClient copies it): each worker accepts, besides the
// shared user, a user of its own. A write sent to each worker with that
// worker's own user succeeds only at the leader; the worker that is not
// the leader authenticates the caller, forwards the request with the same
// header, and the leader, which does not know that user, refuses it.
func TestSecureForwardedRequestKeepsTheCallersAuthorization(t *testing.T) {
	sb := sandboxtest.SharedSecure(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := uniqueName(t)
	topic := name + "-t"
	for _, b := range []*sandbox.Broker{sb.Source(), sb.Target()} {
		if err := b.CreateTopic(ctx, topic, 1); err != nil {
			t.Fatal(err)
		}
	}
	var ok, refused int
	for i, wk := range sb.Workers() {
		// One attempt: a forwarded refusal is not a rebalance to wait out.
		c := secureClient(t, sb, wk.URL(), wk.LocalUser(), connect.WithRetry(connect.Retry{Initial: time.Second, Max: time.Second, Attempts: 21}))
		// Reads are answered by the worker itself: its own user is enough.
		if _, err := c.Connectors(ctx); err != nil {
			t.Fatalf("GET /connectors on worker %d with its own user: %v", i, err)
		}
		n := fmt.Sprintf("%s-w%d", name, i)
		_, err := c.Create(ctx, n, secureConfig(t, sb, n, topic), connect.InitialStopped)
		if err == nil {
			ok++
			t.Logf("worker %d is the leader: its own user created %s", i, n)
			admin := secureClient(t, sb, wk.URL(), sb.ConnectUser())
			t.Cleanup(func() { _ = admin.Delete(context.Background(), n) })
			continue
		}
		refused++
		t.Logf("worker %d forwarded the create with its caller's header; the leader refused: %v", i, err)
		if !errors.Is(err, connect.ErrUnauthorized) || !errors.Is(err, connect.ErrForwarding) {
			t.Errorf("forwarded refusal: %v, want ErrUnauthorized and ErrForwarding", err)
		}
		if !strings.Contains(err.Error(), "every worker must accept the same REST users") {
			t.Errorf("forwarded refusal does not say what to fix: %v", err)
		}
		if strings.Contains(err.Error(), wk.LocalUser().Password) {
			t.Errorf("error shows the password: %v", err)
		}
	}
	if ok != 1 || refused != len(sb.Workers())-1 {
		t.Errorf("%d workers accepted their own user's write, %d refused; want exactly one (the leader)", ok, refused)
	}
}

// TestRealValidatePasswordKeys: which keys MirrorSourceConnector's
// validate answer defines as PASSWORD, for a config with client secrets
// under the source.cluster., target.cluster. and source.consumer. prefixes.
func TestRealValidatePasswordKeys(t *testing.T) {
	w := newRealWorker(t)
	cfg := w.config(t)
	cfg["source.cluster.ssl.key.password"] = "secret-1"
	cfg["target.cluster.sasl.jaas.config"] = "secret-2"
	cfg["source.consumer.sasl.oauthbearer.assertion.private.key.passphrase"] = "secret-3"
	infos, err := w.c.Validate(w.ctx, connect.MirrorSourceConnectorClass, cfg)
	if err != nil {
		t.Fatal(err)
	}
	keys := infos.PasswordKeys()
	t.Logf("PASSWORD keys of MirrorSourceConnector (%s): %v", w.sb.KafkaVersion(), keys)
	if len(keys) == 0 {
		t.Errorf("no PASSWORD key in the validate answer")
	}
	for _, k := range keys {
		if !redact.IsSecretKey(k) || !redact.IsSecretKey("source.cluster."+k) {
			t.Errorf("%s is PASSWORD for MirrorSourceConnector but not a secret for redact.IsSecretKey", k)
		}
	}
	redacted := redact.ConfigWith(cfg, keys)
	for k, v := range cfg {
		if strings.HasPrefix(v, "secret-") && redacted[k] != redact.Redacted {
			t.Errorf("%s not redacted: %q", k, redacted[k])
		}
	}
	for _, ci := range infos.Configs {
		if ci.Definition.Type == connect.TypePassword && ci.Value.Value != nil && strings.HasPrefix(*ci.Value.Value, "secret-") {
			t.Errorf("validate shows the value of %s", ci.Definition.Name)
		}
	}
}
