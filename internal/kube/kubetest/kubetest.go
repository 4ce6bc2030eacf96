// Package kubetest gives tests a real single-node Kubernetes (internal/kube):
// one cluster shared by the tests of a test binary, started on first use and
// removed by Main, so that a package's tests pay its start (about 20 s once
// the programs are built) once.
//
//	func TestMain(m *testing.M) { kubetest.Main(m) }
//
//	func TestX(t *testing.T) {
//		c := kubetest.Shared(t)
//		c.Kubectl(ctx, "apply", "--dry-run=server", "-f", "x.yaml")
//	}
//
// Tests that share the cluster use their own namespaces and never stop its
// programs. Under `go test -short`, or where the cluster cannot run (not
// root, a program missing), the tests skip — except with CI=true, where
// they fail instead.
package kubetest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"testing"

	"github.com/mm2cutover/mm2cutover/internal/kube"
)

var shared struct {
	once sync.Once
	mu   sync.Mutex // held while the cluster starts or closes
	c    *kube.Cluster
	err  error
}

// Main runs the tests, then closes the shared cluster if one was started
// and calls each of also (such as sandboxtest.Close). Call it from TestMain.
//
// An interrupted test binary (SIGINT, SIGTERM: go test's -timeout, Ctrl-C)
// closes them too before it exits, so that no Pod outlives it.
func Main(m *testing.M, also ...func()) {
	closeAll := sync.OnceFunc(func() {
		shared.mu.Lock()
		defer shared.mu.Unlock()
		if shared.c != nil {
			if err := shared.c.Close(); err != nil {
				fmt.Fprintln(os.Stderr, "kubetest: close:", err)
			}
		}
		for _, f := range also {
			f()
		}
	})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "kubetest: %v: removing the cluster\n", s)
		closeAll()
		os.Exit(1)
	}()
	code := m.Run()
	closeAll()
	os.Exit(code)
}

// Shared returns the cluster shared by the tests of this binary, starting
// it (and building its programs, the first time on a machine) on first
// use. The failing test's log gets the end of every program's log.
func Shared(t testing.TB) *kube.Cluster {
	t.Helper()
	if testing.Short() {
		if os.Getenv("CI") == "true" {
			t.Fatal("Kubernetes test skipped by -short, which CI=true does not allow")
		}
		t.Skip("Kubernetes test: runs without -short")
	}
	shared.once.Do(func() {
		shared.mu.Lock()
		defer shared.mu.Unlock()
		log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
		shared.c, shared.err = kube.Start(context.Background(), kube.Config{Logger: log})
	})
	if shared.err != nil {
		if os.Getenv("CI") != "true" && (errors.Is(shared.err, kube.ErrMissingTool) || os.Geteuid() != 0) {
			t.Skipf("no Kubernetes here: %v", shared.err)
		}
		t.Fatalf("kubernetes: %v", shared.err)
	}
	c := shared.c
	t.Cleanup(func() {
		if t.Failed() {
			t.Log("cluster logs:\n" + c.LogTails(30))
		}
	})
	return c
}
