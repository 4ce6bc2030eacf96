//go:build !sandbox

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
)

// The operator's binary is built without the sandbox demo, so that it links
// none of the demo's test machinery (internal/sandbox and internal/flinkjob:
// Kafka, Connect and Flink processes, generated certificates and passwords,
// the Docker backend's command): `go build -tags sandbox` (or `go run -tags
// sandbox ./examples/cutover -sandbox`) builds the one with sandbox.go,
// flinkdemo.go and secure.go.

// errNoSandbox says how to get the demo.
var errNoSandbox = fmt.Errorf("%w: this cutover binary is built without the sandbox demo; run it from the repository with: go run -tags sandbox ./examples/cutover -sandbox", settings.ErrSettings)

func runSandbox(context.Context, *slog.Logger, io.Writer, bool, bool, bool, bool) error {
	return errNoSandbox
}

func runSecureSandbox(context.Context, *slog.Logger, io.Writer, io.Writer, bool) error {
	return errNoSandbox
}
