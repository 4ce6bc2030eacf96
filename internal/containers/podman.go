// Package containers builds and runs OCI images on machines without a Docker
// engine or a reachable image registry, as this project's are: Debian's
// podman (with buildah inside) and runc, run as root.
//
// Two settings make podman work there, and New applies both: the runc
// runtime (crun fails on setrlimit and cgroups), and a containers.conf,
// passed through CONTAINERS_CONF, whose default_ulimits list is empty (the
// default limits cannot be set either). Base images come from Debian
// packages instead of a registry: DebianRootfs builds one with debootstrap
// and imports it, keeping the root file system as a tar in a cache
// directory so that the next run only imports it (or finds it imported).
// GoToolchain stands in for the golang image: this machine's Go toolchain
// copied onto such a base.
package containers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ErrUnavailable means podman cannot be used here: it, runc or (for a base
// image) debootstrap is not installed, or the process is not root.
var ErrUnavailable = errors.New("containers: podman is not usable here")

// containersConf is the containers.conf New writes: no default ulimits.
const containersConf = "# Written by mm2cutover's internal/containers: podman's default ulimits cannot be set here.\n[containers]\ndefault_ulimits = []\n"

// Podman runs the podman command with the runc runtime and its own
// containers.conf. Its zero value is not usable; call New.
type Podman struct {
	bin  string
	conf string
}

// New returns a Podman whose containers.conf is written to dir (created if
// needed). It returns an error wrapping ErrUnavailable when podman or runc
// is not installed or the process is not root.
func New(dir string) (*Podman, error) {
	bin, err := exec.LookPath("podman")
	if err != nil {
		return nil, fmt.Errorf("%w: podman is not installed (apt-get install podman buildah runc)", ErrUnavailable)
	}
	if _, err := exec.LookPath("runc"); err != nil {
		return nil, fmt.Errorf("%w: runc is not installed (apt-get install runc)", ErrUnavailable)
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: not root (this setup runs podman as root)", ErrUnavailable)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "containers.conf")
	if b, err := os.ReadFile(conf); err != nil || string(b) != containersConf {
		if err := writeFileAtomic(conf, []byte(containersConf)); err != nil {
			return nil, err
		}
	}
	return &Podman{bin: bin, conf: conf}, nil
}

// Command returns the command `podman --runtime runc ARGS...` with
// CONTAINERS_CONF set, for callers that need its streams (e.g. an attached
// `podman run`).
func (p *Podman) Command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, p.bin, append([]string{"--runtime", "runc"}, args...)...)
	cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+p.conf)
	return cmd
}

// Run runs podman with args and returns its standard output. A failure is
// an error that carries the end of its standard error.
func (p *Podman) Run(ctx context.Context, args ...string) (string, error) {
	cmd := p.Command(ctx, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("podman %s: %w\n%s", strings.Join(args, " "), err, lastLines(stderr.String(), 20))
	}
	return stdout.String(), nil
}

// BuildOptions says what Build builds.
type BuildOptions struct {
	ContextDir string            // the build context
	Dockerfile string            // "" means ContextDir/Dockerfile
	Tag        string            // the image name to give the result
	Target     string            // the stage to build (--target); "" means the last
	BuildArgs  map[string]string // --build-arg NAME=VALUE
	// HostNetwork runs RUN steps on the host's network (--network host), so
	// that they reach servers on the loopback addresses.
	HostNetwork bool
	// Log receives the build's output (steps, RUN output); nil discards it.
	Log io.Writer
}

// Build runs `podman build` without keeping intermediate layers
// (--layers=false): a test build leaves only its tagged image behind, which
// the caller removes. A failed build returns an error that carries the end
// of the build output.
func (p *Podman) Build(ctx context.Context, o BuildOptions) error {
	args := []string{"build", "--layers=false", "--pull=never", "-t", o.Tag}
	if o.Dockerfile != "" {
		args = append(args, "-f", o.Dockerfile)
	}
	if o.Target != "" {
		args = append(args, "--target", o.Target)
	}
	if o.HostNetwork {
		args = append(args, "--network", "host")
	}
	names := make([]string, 0, len(o.BuildArgs))
	for k := range o.BuildArgs {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		args = append(args, "--build-arg", k+"="+o.BuildArgs[k])
	}
	args = append(args, o.ContextDir)
	cmd := p.Command(ctx, args...)
	var out bytes.Buffer
	w := io.Writer(&out)
	if o.Log != nil {
		w = io.MultiWriter(&out, o.Log)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("podman build -t %s: %w\n%s", o.Tag, err, lastLines(out.String(), 30))
	}
	return nil
}

// ImageExists reports whether the local storage holds the image ref.
func (p *Podman) ImageExists(ctx context.Context, ref string) (bool, error) {
	err := p.Command(ctx, "image", "exists", ref).Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		return false, nil
	}
	return false, fmt.Errorf("podman image exists %s: %w", ref, err)
}

// ImageSize returns the size in bytes podman reports for the image ref.
func (p *Podman) ImageSize(ctx context.Context, ref string) (int64, error) {
	out, err := p.Run(ctx, "image", "inspect", "--format", "{{.Size}}", ref)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(out), 10, 64)
}

// RemoveImage removes the image ref from the local storage.
func (p *Podman) RemoveImage(ctx context.Context, ref string) error {
	_, err := p.Run(ctx, "rmi", "--force", ref)
	return err
}

func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
