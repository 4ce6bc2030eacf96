package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"
)

// ErrNoDocker means the Docker backend was asked for but no Docker daemon answers.
var ErrNoDocker = errors.New("no docker daemon")

// dockerBackend runs the sandbox's JVMs as containers of one image
// (apache/kafka by default) on the host network, with the work directory
// mounted at the same path, so that addresses, ports, file paths and the
// worker image's files are exactly those of the process backend. The
// project's CI runs it through podman's Docker API on an image built from
// the cached jars (internal/containers KafkaImage).
type dockerBackend struct {
	pool       *dockertest.Pool
	repository string
	tag        string
	workDir    string
}

// dockerKafkaHome is where the apache/kafka image keeps the distribution.
const dockerKafkaHome = "/opt/kafka"

func newDockerBackend(image, workDir string) (*dockerBackend, error) {
	repository, tag := splitImage(image)
	pool, err := dockertest.NewPool("")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoDocker, err)
	}
	if err := pool.Client.Ping(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoDocker, err)
	}
	return &dockerBackend{pool: pool, repository: repository, tag: tag, workDir: workDir}, nil
}

// splitImage splits an image reference into repository and tag ("latest"
// when it names none); a port of the registry host is not a tag.
func splitImage(image string) (repository, tag string) {
	slash := strings.LastIndex(image, "/")
	if i := strings.LastIndex(image, ":"); i > slash {
		return image[:i], image[i+1:]
	}
	return image, "latest"
}

// runner returns a container that runs argv with env and appends its
// output to logPath (in the mounted work directory), as a process of the
// process backend does: the same log files, whichever the backend.
func (d *dockerBackend) runner(name string, argv, env []string, logPath string) runner {
	wrapped := append([]string{"bash", "-c", `exec >>"$0" 2>&1; echo "=== sandbox: starting in a container at $(date -Is)"; exec "$@"`, logPath}, argv...)
	return &container{
		pool: d.pool,
		name: name,
		log:  logPath,
		opts: &dockertest.RunOptions{
			Repository: d.repository,
			Tag:        d.tag,
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

// container is a runner backed by a Docker container.
type container struct {
	pool *dockertest.Pool
	name string
	log  string // the output, as the process backend's log file
	opts *dockertest.RunOptions

	mu   sync.Mutex
	res  *dockertest.Resource
	done chan struct{}
	err  error
}

func (c *container) start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.res == nil {
		res, err := c.pool.RunWithOptions(c.opts, func(hc *dc.HostConfig) {
			hc.NetworkMode = "host"
			hc.AutoRemove = false
		})
		if err != nil {
			return fmt.Errorf("start %s container: %w", c.name, err)
		}
		c.res = res
	} else if err := c.pool.Client.StartContainer(c.res.Container.ID, nil); err != nil {
		return fmt.Errorf("start %s container: %w", c.name, err)
	}
	done := make(chan struct{})
	c.done = done
	id := c.res.Container.ID
	go func() {
		code, err := c.pool.Client.WaitContainer(id)
		if err == nil && code != 0 {
			err = fmt.Errorf("exit status %d", code)
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
	if err := c.pool.Client.StopContainer(c.res.Container.ID, uint(grace.Seconds())); err != nil {
		var notRunning *dc.ContainerNotRunning
		if !errors.As(err, &notRunning) {
			return err
		}
	}
	<-done
	switch err := exitErr(); {
	case err == nil || err.Error() == "exit status 143":
		return nil
	case err.Error() == "exit status 137":
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
	err := c.pool.Client.KillContainer(dc.KillContainerOptions{ID: c.res.Container.ID, Signal: dc.SIGKILL})
	var notRunning *dc.ContainerNotRunning
	if err != nil && !errors.As(err, &notRunning) {
		return err
	}
	<-done
	return nil
}

func (c *container) tail(n int) string { return tailFile(c.log, n) }

func (c *container) label() string   { return c.name }
func (c *container) logPath() string { return c.log }

func (c *container) remove() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.res == nil {
		return nil
	}
	err := c.pool.Purge(c.res)
	c.res = nil
	return err
}
