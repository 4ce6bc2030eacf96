// Package sandboxtest gives tests a real Kafka + Kafka Connect sandbox: one
// shared by the tests of a test binary (or by several binaries, through the
// MM2CUTOVER_SANDBOX state file), or a dedicated one for fault tests.
//
// The sandbox-backed tests are the point of this project: under `go test
// -short`, or when no Java or Kafka jars can be had, they skip — except with
// CI=true, where they fail instead.
package sandboxtest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"

	"github.com/mm2cutover/mm2cutover/internal/sandbox"
)

// SharedWorkers is the number of Connect workers of a shared sandbox: two,
// so that requests are forwarded between workers.
const SharedWorkers = 2

// SecureSourceBrokers is the number of source brokers of the shared secure
// sandbox: three, so that partition leaders are spread and can move.
const SecureSourceBrokers = 3

type once struct {
	once sync.Once
	sb   *sandbox.Sandbox
	err  error
}

// shared, sharedSecure and sharedSecureKafka are the sandboxes of this
// test binary; Main closes them.
var shared, sharedSecure, sharedSecureKafka once

// Main runs the tests and then closes the shared sandboxes that were
// started. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	Close()
	os.Exit(code)
}

// Close closes the shared sandboxes that were started, for a TestMain that
// has more to close than Main does.
func Close() {
	for _, o := range []*once{&shared, &sharedSecure, &sharedSecureKafka} {
		if o.sb != nil {
			if err := o.sb.Close(); err != nil {
				fmt.Fprintln(os.Stderr, "sandboxtest: close:", err)
			}
		}
	}
}

// SharedSecure returns the secure sandbox shared by the tests of this
// binary (sandbox.Config.Secure), starting it on first use with
// SecureSourceBrokers source brokers, two Connect workers and
// sandbox.Config.Authorizer: the admin and mm2 users are super users, a
// principal of the mTLS, OAUTHBEARER or Kerberos listeners gets its ACLs
// from the test (Broker.AllowPrefixed). It runs a KDC and Kerberos
// listeners (sandbox.Config.Kerberos) where MIT Kerberos is installed, and
// always with CI=true. It is never
// attached from MM2CUTOVER_SANDBOX: a secure sandbox writes no state file.
// Tests that use it never stop or kill its processes.
func SharedSecure(t testing.TB) *sandbox.Sandbox {
	t.Helper()
	return startSecure(t, &sharedSecure, SharedWorkers)
}

// SharedSecureKafka is SharedSecure without Connect workers (with a KDC
// and Kerberos listeners where SharedSecure has them), for the tests of
// Kafka clients.
func SharedSecureKafka(t testing.TB) *sandbox.Sandbox {
	t.Helper()
	return startSecure(t, &sharedSecureKafka, 0)
}

// SharedKerberos is SharedSecure for tests of its Kerberos listeners: it
// skips the test where MIT Kerberos is not installed, and fails it with
// CI=true.
func SharedKerberos(t testing.TB) *sandbox.Sandbox {
	t.Helper()
	return requireKerberos(t, startSecure(t, &sharedSecure, SharedWorkers))
}

// SharedKerberosKafka is SharedSecureKafka for tests of Kafka clients on
// its Kerberos listeners, which it requires as SharedKerberos does.
func SharedKerberosKafka(t testing.TB) *sandbox.Sandbox {
	t.Helper()
	return requireKerberos(t, startSecure(t, &sharedSecureKafka, 0))
}

func requireKerberos(t testing.TB, sb *sandbox.Sandbox) *sandbox.Sandbox {
	t.Helper()
	if !sb.Kerberos() {
		if inCI() {
			t.Fatalf("the shared secure sandbox runs no KDC: %v", sandbox.ErrNoKerberos)
		}
		t.Skipf("no Kerberos here: %v", sandbox.ErrNoKerberos)
	}
	return sb
}

func startSecure(t testing.TB, o *once, workers int) *sandbox.Sandbox {
	t.Helper()
	requireIntegration(t)
	o.once.Do(func() {
		cfg := sandbox.ConfigFromEnv()
		cfg.Workers = workers
		cfg.SourceBrokers = SecureSourceBrokers
		cfg.Secure = true
		cfg.Authorizer = workers > 0
		cfg.Kerberos = sandbox.KerberosAvailable() || inCI()
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
		o.sb, o.err = sandbox.Start(context.Background(), cfg)
	})
	if o.err != nil {
		unavailable(t, o.err)
	}
	sb := o.sb
	t.Cleanup(func() {
		if t.Failed() {
			t.Log("secure sandbox logs:\n" + sb.LogTails(40))
		}
	})
	return sb
}

// Shared returns the sandbox shared by the tests of this binary, starting it
// on first use with two Connect workers, or attaching to the running one that
// MM2CUTOVER_SANDBOX names. Tests that use it choose unique topic, group and
// connector names and never stop or kill its processes.
func Shared(t testing.TB) *sandbox.Sandbox {
	t.Helper()
	requireIntegration(t)
	shared.once.Do(func() {
		ctx := context.Background()
		if path := os.Getenv(sandbox.StateEnv); path != "" {
			shared.sb, shared.err = sandbox.Attach(ctx, path)
			return
		}
		cfg := sandbox.ConfigFromEnv()
		cfg.Workers = SharedWorkers
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
		shared.sb, shared.err = sandbox.Start(ctx, cfg)
	})
	if shared.err != nil {
		unavailable(t, shared.err)
	}
	sb := shared.sb
	t.Cleanup(func() {
		if t.Failed() {
			t.Log("sandbox logs:\n" + sb.LogTails(40))
		}
	})
	return sb
}

// Dedicated starts a sandbox of its own for t, closed when t ends; use it
// for tests that stop, start or kill brokers and workers. The environment
// (sandbox.ConfigFromEnv) fills the Kafka version, distribution and cache
// cfg leaves empty, and picks the Docker backend unless cfg is Secure.
func Dedicated(t testing.TB, cfg sandbox.Config) *sandbox.Sandbox {
	t.Helper()
	requireIntegration(t)
	env := sandbox.ConfigFromEnv()
	if cfg.KafkaVersion == "" {
		cfg.KafkaVersion = env.KafkaVersion
	}
	if cfg.KafkaHome == "" {
		cfg.KafkaHome = env.KafkaHome
	}
	if cfg.CacheDir == "" {
		cfg.CacheDir = env.CacheDir
	}
	if !cfg.Secure && env.Docker { // the Docker backend has no secure mode
		cfg.Docker = true
		if cfg.DockerImage == "" {
			cfg.DockerImage = env.DockerImage
		}
	}
	sb, err := sandbox.Start(context.Background(), cfg)
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log("sandbox logs:\n" + sb.LogTails(40))
		}
		if err := sb.Close(); err != nil {
			t.Errorf("close sandbox: %v", err)
		}
	})
	return sb
}

// RequireIntegration skips t under -short (fails it with CI=true), as every
// sandbox helper here does, for a test that starts a sandbox itself (the
// CLI's -sandbox demo).
func RequireIntegration(t testing.TB) {
	t.Helper()
	requireIntegration(t)
}

func inCI() bool { return os.Getenv("CI") == "true" }

func requireIntegration(t testing.TB) {
	t.Helper()
	if testing.Short() {
		if inCI() {
			t.Fatal("integration test skipped by -short, which CI=true does not allow")
		}
		t.Skip("integration test: runs without -short")
	}
}

func unavailable(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, sandbox.ErrNoKafka) && !inCI() {
		t.Skipf("no Kafka sandbox here: %v", err)
	}
	t.Fatalf("start sandbox: %v", err)
}
