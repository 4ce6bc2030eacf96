package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrNoDocker means the Docker backend was asked for but no Docker daemon answers.
var ErrNoDocker = errors.New("no docker daemon")

// dockerBackend runs the sandbox's JVMs as containers of one image
// (apache/kafka by default) on the host network, with the work directory
// mounted at the same path, so that addresses, ports, file paths and the
// worker image's files are exactly those of the process backend. The
// project's CI runs it through podman's Docker API on an image built from
// the cached jars (internal/containers KafkaImage).
//
// The containers are run by the dockerbackend command (internal/dockerbackend,
// a module of its own that holds github.com/ory/dockertest/v3 and the Docker
// client), one command per operation: the main module's go.mod needs none of
// their modules, so the go.sum of a module that imports the library and
// runs go mod tidy, which follows the library's tests here, holds none
// either. The sandbox builds the command from this checkout's source.
type dockerBackend struct {
	bin     string // the dockerbackend command
	image   string
	workDir string
}

// dockerKafkaHome is where the apache/kafka image keeps the distribution.
const dockerKafkaHome = "/opt/kafka"

// dockerbackend's exit statuses (internal/dockerbackend).
const (
	exitNoEngine    = 3
	exitNoContainer = 4
)

// newDockerBackend builds the dockerbackend command into workDir and checks
// that an engine answers at DOCKER_HOST (or the default socket); it returns
// an error matching ErrNoDocker when none does.
func newDockerBackend(ctx context.Context, image, workDir string) (*dockerBackend, error) {
	bin, err := buildDockerBackend(ctx, workDir)
	if err != nil {
		return nil, err
	}
	d := &dockerBackend{bin: bin, image: image, workDir: workDir}
	if _, err := d.run(ctx, nil, "ping"); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == exitNoEngine {
			return nil, fmt.Errorf("%w: %v", ErrNoDocker, err)
		}
		return nil, err
	}
	return d, nil
}

// buildDockerBackend builds the dockerbackend command from the module of
// internal/dockerbackend beside this package's source into dir, and returns
// its path. go build relinks it each time (a second or two): the sandbox
// runs from a checkout, whose source may have changed since the last build.
func buildDockerBackend(ctx context.Context, dir string) (string, error) {
	_, file, _, ok := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "dockerbackend")
	if _, err := os.Stat(filepath.Join(src, "go.mod")); !ok || err != nil {
		return "", fmt.Errorf("sandbox: the Docker backend runs a command built from internal/dockerbackend of the repository; no module at %s", src)
	}
	bin := filepath.Join(dir, "dockerbackend")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("sandbox: build internal/dockerbackend: %w\n%s", err, out)
	}
	return bin, nil
}

// run runs the dockerbackend command with args and stdin (nil for none)
// and returns its standard output. Its error, an *exec.ExitError when the
// command failed, carries the command's message.
func (d *dockerBackend) run(ctx context.Context, stdin []byte, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, d.bin, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("dockerbackend %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// containerSpec is what dockerbackend run reads on stdin.
type containerSpec struct {
	Image      string   `json:"image"`
	Entrypoint []string `json:"entrypoint"`
	Env        []string `json:"env"`
	Mounts     []string `json:"mounts"`
	User       string   `json:"user"`
}

// runner returns a container that runs argv with env and appends its
// output to logPath (in the mounted work directory), as a process of the
// process backend does: the same log files, whichever the backend.
func (d *dockerBackend) runner(name string, argv, env []string, logPath string) runner {
	wrapped := append([]string{"bash", "-c", `exec >>"$0" 2>&1; echo "=== sandbox: starting in a container at $(date -Is)"; exec "$@"`, logPath}, argv...)
	return &container{
		d:    d,
		name: name,
		log:  logPath,
		spec: containerSpec{
			Image:      d.image,
			Entrypoint: wrapped,
			Env:        env,
			Mounts:     []string{d.workDir + ":" + d.workDir},
			User:       fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()),
		},
	}
}

// brokerArgv formats the cluster's storage unless it already is (restarts),
// then execs the broker.
func brokerArgv(format, broker []string) []string {
	return []string{"bash", "-c", shellJoin(append(format, "--ignore-formatted")) + " && exec " + shellJoin(broker)}
}

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// exitStatus is the exit status of a container's main process.
type exitStatus int

func (e exitStatus) Error() string { return "exit status " + strconv.Itoa(int(e)) }

// container is a runner backed by a Docker container.
type container struct {
	d    *dockerBackend
	name string
	log  string // the output, as the process backend's log file
	spec containerSpec

	mu   sync.Mutex
	id   string // "" until the first start
	done chan struct{}
	err  error
}

// start creates and starts the container the first time, and starts it
// again afterwards; a dockerbackend wait, a child of this process, reports
// its end.
func (c *container) start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx := context.Background()
	if c.id == "" {
		spec, err := json.Marshal(c.spec)
		if err != nil {
			return err
		}
		out, err := c.d.run(ctx, spec, "run")
		if err != nil {
			return fmt.Errorf("start %s container: %w", c.name, err)
		}
		c.id = strings.TrimSpace(out)
	} else if _, err := c.d.run(ctx, nil, "start", c.id); err != nil {
		return fmt.Errorf("start %s container: %w", c.name, err)
	}
	wait := exec.Command(c.d.bin, "wait", c.id)
	var stdout, stderr bytes.Buffer
	wait.Stdout, wait.Stderr = &stdout, &stderr
	wait.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := wait.Start(); err != nil {
		return fmt.Errorf("wait for %s container: %w", c.name, err)
	}
	done := make(chan struct{})
	c.done = done
	go func() {
		err := wait.Wait()
		if err != nil {
			err = fmt.Errorf("wait for %s container: %w: %s", c.name, err, strings.TrimSpace(stderr.String()))
		} else if code, perr := strconv.Atoi(strings.TrimSpace(stdout.String())); perr != nil {
			err = fmt.Errorf("wait for %s container: exit status %q: %w", c.name, stdout.String(), perr)
		} else if code != 0 {
			err = exitStatus(code)
		}
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		close(done)
	}()
	return nil
}

func (c *container) wait() (<-chan struct{}, func() error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done, func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.err
	}
}

// stop asks the engine to stop the container: SIGTERM, then SIGKILL when
// ctx's deadline (or stopTimeout) has passed, as the process backend does.
// A container that had to be killed returns an error matching ErrStopHung.
func (c *container) stop(ctx context.Context) error {
	done, exitErr := c.wait()
	if done == nil {
		return nil
	}
	grace := stopTimeout
	if dl, ok := ctx.Deadline(); ok {
		grace = max(time.Until(dl)-time.Second, time.Second)
	}
	if _, err := c.d.run(context.Background(), nil, "stop", c.id, strconv.Itoa(int(grace.Seconds()))); err != nil {
		return err
	}
	<-done
	switch err := exitErr(); {
	case err == nil || errors.Is(err, exitStatus(143)):
		return nil
	case errors.Is(err, exitStatus(137)):
		return fmt.Errorf("%s: %w, so it was killed after %v", c.name, ErrStopHung, grace.Round(time.Second))
	default:
		return err
	}
}

func (c *container) kill() error {
	done, _ := c.wait()
	if done == nil {
		return nil
	}
	if _, err := c.d.run(context.Background(), nil, "kill", c.id); err != nil {
		return err
	}
	<-done
	return nil
}

func (c *container) tail(n int) string { return tailFile(c.log, n) }

func (c *container) label() string   { return c.name }
func (c *container) logPath() string { return c.log }

func (c *container) setEnv(kv []string) { c.spec.Env = withEnv(c.spec.Env, kv) }

func (c *container) remove() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.id == "" {
		return nil
	}
	_, err := c.d.run(context.Background(), nil, "rm", c.id)
	c.id = ""
	return err
}
