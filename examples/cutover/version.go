package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
)

// commit is the source commit of a build made without the Go toolchain's
// version control stamp (a release pipeline, a Dockerfile without .git):
// -ldflags "-X main.version=v0.3.0 -X main.commit=$(git rev-parse HEAD)".
var commit string

// buildInfo is what the binary says about itself: the version (set with
// -ldflags, else the module version `go install ...@v0.3.0` records, else
// the pseudo-version `go build` stamps from the checkout, else the default
// of main.version), the commit and its time, whether the work tree had
// changes, and the Go toolchain and platform.
type buildInfo struct {
	Version    string `json:"version"`
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
	Go         string `json:"go"`
	Platform   string `json:"platform"`
}

// readBuildInfo reads the build's stamps (runtime/debug.ReadBuildInfo).
func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Commit: commit, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if version == defaultVersion && info.Main.Version != "" && info.Main.Version != "(devel)" {
		b.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			if b.Commit == "" {
				b.Commit = s.Value
			}
		case "vcs.time":
			b.CommitTime = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// connectInfo is the Connect worker's answer to GET / in the version
// document, or why there is none.
type connectInfo struct {
	URL            string `json:"url"`
	Version        string `json:"version,omitempty"`
	Commit         string `json:"commit,omitempty"`
	KafkaClusterID string `json:"kafka_cluster_id,omitempty"`
	Error          string `json:"error,omitempty"`
}

// versionProbe bounds the question to a worker in the version step: a
// version that waits two minutes for an unreachable worker is no help.
const versionProbe = 10 * time.Second

// printVersion is the version step: the tool's build, and the Connect
// worker's version when settings name one (-connect-url, or its variable
// or -config line) and it answers within versionProbe. It always exits 0
// on a usable command line: an unreachable worker is reported, not failed.
func printVersion(ctx context.Context, out io.Writer, flags *settings.Flags, asJSON bool) int {
	doc := struct {
		Schema string `json:"schema"`
		buildInfo
		Connect *connectInfo `json:"connect,omitempty"`
	}{Schema: "mm2cutover/version/v1", buildInfo: readBuildInfo()}
	// Settings also refuses the missing settings of a step (group,
	// topics, ...), which the version step does not need: the Connect
	// part it returns is used when there is one.
	if s, _ := flags.Settings(); s.ConnectURL != "" {
		shown := s.ConnectURL
		if u, err := url.Parse(shown); err == nil {
			shown = u.Redacted()
		}
		ci := &connectInfo{URL: shown}
		doc.Connect = ci
		s.Logger = slog.New(slog.DiscardHandler)
		if c, err := app.OpenConnect(s); err != nil {
			ci.Error = err.Error()
		} else {
			pctx, cancel := context.WithTimeout(ctx, versionProbe)
			info, err := c.ServerInfo(pctx)
			cancel()
			if err != nil {
				ci.Error = err.Error()
			} else {
				ci.Version, ci.Commit, ci.KafkaClusterID = info.Version, info.Commit, info.KafkaClusterID
			}
		}
	}
	if asJSON {
		b, _ := json.MarshalIndent(doc, "", "  ")
		_, _ = out.Write(append(b, '\n'))
		return app.ExitOK
	}
	b := doc.buildInfo
	fmt.Fprintf(out, "cutover %s", b.Version)
	if b.Commit != "" {
		fmt.Fprintf(out, " (commit %s", b.Commit)
		if b.CommitTime != "" {
			fmt.Fprintf(out, ", %s", b.CommitTime)
		}
		if b.Modified {
			fmt.Fprint(out, ", modified")
		}
		fmt.Fprint(out, ")")
	}
	fmt.Fprintf(out, " %s %s\n", b.Go, b.Platform)
	if ci := doc.Connect; ci != nil {
		if ci.Error != "" {
			fmt.Fprintf(out, "connect %s: no answer: %s\n", ci.URL, ci.Error)
		} else {
			fmt.Fprintf(out, "connect %s: Kafka Connect %s (commit %s), workers' Kafka cluster %s\n", ci.URL, ci.Version, ci.Commit, ci.KafkaClusterID)
		}
	}
	return app.ExitOK
}
