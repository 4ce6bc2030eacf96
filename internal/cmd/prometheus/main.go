// Command prometheus builds, once per cache, the Prometheus server and
// promtool the sandbox and the alert tests run (sandbox.PrometheusBinaries:
// Prometheus 3.16.0 from the github.com/prometheus/prometheus Go module) and
// prints the path of the server, or of promtool with -promtool:
//
//	$(go run ./internal/cmd/prometheus -promtool) check rules rules.yaml
//
// scripts/test runs it first, in the background, so that the build overlaps
// the static checks. The cache comes from MM2CUTOVER_CACHE. Progress goes to
// stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"

	"github.com/mm2cutover/mm2cutover/internal/sandbox"
)

func main() {
	promtool := flag.Bool("promtool", false, "print the path of promtool instead of the server's")
	flag.Parse()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	server, tool, err := sandbox.PrometheusBinaries(ctx, sandbox.ConfigFromEnv().CacheDir, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "prometheus:", err)
		os.Exit(1)
	}
	if *promtool {
		fmt.Println(tool)
		return
	}
	fmt.Println(server)
}
