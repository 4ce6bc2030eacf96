// Command dockerbackend runs the containers of the sandbox's Docker backend
// (internal/sandbox, MM2CUTOVER_SANDBOX_BACKEND=docker) through
// github.com/ory/dockertest/v3, on the engine at DOCKER_HOST (or the
// default socket). It is a module of its own so that the main module's
// go.mod needs neither dockertest nor the Docker client, runc and logrus it
// brings: a consumer's go mod tidy follows the library's tests into
// internal/sandbox, and would otherwise write them all into its go.sum.
// The sandbox builds it into its cache and runs one command per operation:
//
//	dockerbackend ping          exit status 3 when no engine answers
//	dockerbackend run           create and start a container of the JSON
//	                            spec on stdin; print its ID
//	dockerbackend start ID      start a stopped container again
//	dockerbackend wait ID       wait until it exits; print its exit status
//	dockerbackend stop ID SECS  SIGTERM (the engine's stop), SIGKILL after SECS
//	dockerbackend kill ID       SIGKILL
//	dockerbackend rm ID         remove it and its volumes, stopped or not
//	dockerbackend inspect ID    print its state; exit status 4 when there is none
//
// A container runs on the host network with AutoRemove off, so that the
// sandbox can stop it and start it again on the same files. stop and kill
// of a container that is not running succeed. Errors go to stderr, with
// exit status 1 (2 for a usage error).
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"
)

// Exit statuses besides 0 and 1.
const (
	exitUsage       = 2
	exitNoEngine    = 3
	exitNoContainer = 4
)

// spec is what run reads on stdin: the container's image (never pulled
// when the engine has it), entrypoint, environment, bind mounts
// ("host:container") and user ("uid:gid").
type spec struct {
	Image      string   `json:"image"`
	Entrypoint []string `json:"entrypoint"`
	Env        []string `json:"env"`
	Mounts     []string `json:"mounts"`
	User       string   `json:"user"`
}

func main() {
	code, err := run(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "dockerbackend:", err)
	}
	os.Exit(code)
}

// run carries out one command and returns its exit status.
func run(args []string) (int, error) {
	if len(args) == 0 {
		return exitUsage, errors.New("no command (ping, run, start, wait, stop, kill, rm, inspect)")
	}
	cmd, args := args[0], args[1:]
	want := map[string]int{"ping": 0, "run": 0, "start": 1, "wait": 1, "stop": 2, "kill": 1, "rm": 1, "inspect": 1}
	n, ok := want[cmd]
	if !ok {
		return exitUsage, fmt.Errorf("unknown command %q", cmd)
	}
	if len(args) != n {
		return exitUsage, fmt.Errorf("%s takes %d arguments, got %d", cmd, n, len(args))
	}
	pool, err := dockertest.NewPool("")
	if err != nil {
		return exitNoEngine, err
	}
	if err := pool.Client.Ping(); err != nil {
		return exitNoEngine, err
	}
	if cmd == "ping" {
		return 0, nil
	}
	c := pool.Client
	switch cmd {
	case "run":
		var s spec
		dec := json.NewDecoder(os.Stdin)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			return exitUsage, fmt.Errorf("run: the spec on stdin: %w", err)
		}
		repository, tag := splitImage(s.Image)
		res, err := pool.RunWithOptions(&dockertest.RunOptions{
			Repository: repository,
			Tag:        tag,
			Entrypoint: s.Entrypoint,
			Env:        s.Env,
			Mounts:     s.Mounts,
			User:       s.User,
		}, func(hc *dc.HostConfig) {
			hc.NetworkMode = "host"
			hc.AutoRemove = false
		})
		if err != nil {
			return 1, err
		}
		fmt.Println(res.Container.ID)
	case "start":
		err = c.StartContainer(args[0], nil)
	case "wait":
		var status int
		if status, err = c.WaitContainer(args[0]); err == nil {
			fmt.Println(status)
		}
	case "stop":
		secs, perr := strconv.ParseUint(args[1], 10, 32)
		if perr != nil {
			return exitUsage, fmt.Errorf("stop: seconds %q: %w", args[1], perr)
		}
		err = notRunningIsDone(c.StopContainer(args[0], uint(secs)))
	case "kill":
		err = notRunningIsDone(c.KillContainer(dc.KillContainerOptions{ID: args[0], Signal: dc.SIGKILL}))
	case "rm":
		err = c.RemoveContainer(dc.RemoveContainerOptions{ID: args[0], Force: true, RemoveVolumes: true})
	case "inspect":
		var ctr *dc.Container
		ctr, err = c.InspectContainer(args[0])
		var none *dc.NoSuchContainer
		if errors.As(err, &none) {
			return exitNoContainer, err
		}
		if err == nil {
			fmt.Println(ctr.State.StateString())
		}
	}
	if err != nil {
		return 1, err
	}
	return 0, nil
}

// notRunningIsDone treats the engine's "container not running" as success:
// a container that already exited is stopped, and killed.
func notRunningIsDone(err error) error {
	var notRunning *dc.ContainerNotRunning
	if errors.As(err, &notRunning) {
		return nil
	}
	return err
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
