// Command kube runs the single-node Kubernetes of internal/kube on this
// machine, as the tests do: it builds the programs into the cache on first
// use (about 7 minutes on 2 cores), starts the cluster, checks it (a Pod
// resolves a Service's name through cluster DNS and reaches it through its
// ClusterIP), and, with -hold, keeps it running until interrupted, printing
// the kubeconfig to use:
//
//	sudo go run ./internal/cmd/kube -hold
//	kubectl --kubeconfig <printed path> get nodes   # or the built kubectl it prints
//
// -build only builds the programs. Everything the cluster made is removed
// when the command ends. Progress goes to stderr, the result to stdout.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/kube"
)

func main() {
	build := flag.Bool("build", false, "only build the programs into the cache")
	hold := flag.Bool("hold", false, "keep the cluster running until interrupted")
	check := flag.Bool("check", true, "run the DNS and Service check once the cluster is ready")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, log, *build, *hold, *check); err != nil {
		fmt.Fprintln(os.Stderr, "kube:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, log *slog.Logger, build, hold, check bool) error {
	start := time.Now()
	if build {
		b, err := kube.Build(ctx, kube.DefaultCacheDir(), log)
		if err != nil {
			return err
		}
		fmt.Printf("built in %s: %s (and the other programs beside it)\n", time.Since(start).Round(time.Second), b.APIServer)
		return nil
	}
	c, err := kube.Start(ctx, kube.Config{Logger: log})
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Printf("cluster ready in %s\n", time.Since(start).Round(100*time.Millisecond))
	if check {
		t := time.Now()
		if err := kube.CheckNetwork(ctx, c); err != nil {
			return err
		}
		fmt.Printf("network check passed in %s: a Pod resolved a Service name through cluster DNS and reached it at its ClusterIP\n", time.Since(t).Round(100*time.Millisecond))
	}
	if !hold {
		return nil
	}
	fmt.Printf("kubeconfig: %s\nkubectl:    %s\nnode:       %s (%s); Pods reach this machine at %s\nheld until interrupted (Ctrl-C)\n",
		c.Kubeconfig(), c.KubectlPath(), c.NodeName(), c.NodeIP(), c.HostIP())
	<-ctx.Done()
	return nil
}
