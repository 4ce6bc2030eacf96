package containers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// GoToolchain is an image with this machine's Go toolchain, standing in for
// the registry's golang image in a Dockerfile's build stage: the directory
// GOROOT copied to /usr/local/go of Base (an image with a shell, such as
// JRE17's), with /usr/local/go/bin first on PATH and GOTOOLCHAIN=local, as
// the golang image has them. Its modules come from wherever the build's
// GOPROXY points.
type GoToolchain struct {
	Name      string // image name, e.g. "mm2cutover-go"
	Base      string // base image reference, already in podman's storage
	GOROOT    string // e.g. the output of `go env GOROOT`
	GOVERSION string // e.g. "go1.26.8", the output of `go env GOVERSION`
}

// goVersion is what `go env GOVERSION` prints for a release (a development
// build prints more, and a tag cannot hold all of it).
var goVersion = regexp.MustCompile(`^go[0-9]+(\.[0-9]+)*([a-z]+[0-9]+)?$`)

// Ref is the local image reference: the Go version and a digest of the base
// and the GOROOT path.
func (g GoToolchain) Ref() string {
	h := sha256.Sum256([]byte(g.Base + "\x00" + g.GOROOT))
	return "localhost/" + g.Name + ":" + g.GOVERSION + "-" + hex.EncodeToString(h[:])[:12]
}

// Ensure makes sure podman's storage holds g.Ref() and returns it, building
// it when missing (a copy of GOROOT, about 270 MB for Go 1.26: tens of
// seconds). Concurrent callers share the build under a file lock in cacheDir.
func (g GoToolchain) Ensure(ctx context.Context, p *Podman, cacheDir string, log *slog.Logger) (string, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if !goVersion.MatchString(g.GOVERSION) {
		return "", fmt.Errorf("go toolchain image: version %q is not a release version such as go1.26.8", g.GOVERSION)
	}
	if _, err := os.Stat(filepath.Join(g.GOROOT, "bin", "go")); err != nil {
		return "", fmt.Errorf("go toolchain image: GOROOT %s has no bin/go: %w", g.GOROOT, err)
	}
	return p.ensureImage(ctx, g.Ref(), cacheDir, func(ref string) error { return g.make(ctx, p, ref, cacheDir, log) })
}

// make builds the image ref from GOROOT.
func (g GoToolchain) make(ctx context.Context, p *Podman, ref, cacheDir string, log *slog.Logger) error {
	// The Containerfile lives outside the context, which is GOROOT itself.
	dir, err := os.MkdirTemp(cacheDir, "goimage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	containerfile := filepath.Join(dir, "Containerfile")
	text := "FROM " + g.Base + "\n" +
		"COPY . /usr/local/go\n" +
		"ENV PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin GOTOOLCHAIN=local\n"
	if err := os.WriteFile(containerfile, []byte(text), 0o644); err != nil {
		return err
	}
	start := time.Now()
	log.Info("building a Go toolchain image", "goroot", g.GOROOT, "version", g.GOVERSION, "base", g.Base, "ref", ref)
	if err := p.Build(ctx, BuildOptions{ContextDir: g.GOROOT, Dockerfile: containerfile, Tag: ref}); err != nil {
		return err
	}
	log.Info("Go toolchain image built", "ref", ref, "took", time.Since(start).Round(time.Second))
	return nil
}
