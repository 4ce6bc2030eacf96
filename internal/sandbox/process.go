package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/jvmcds"
)

// runner is one JVM of the sandbox: a local process, or a Docker container
// when the Docker backend was asked for.
type runner interface {
	start() error
	stop(ctx context.Context) error // SIGTERM, SIGKILL when ctx ends; the exit error
	kill() error
	wait() (<-chan struct{}, func() error)
	tail(n int) string
	label() string
	logPath() string
	remove() error      // forget the runner's resources after it stopped
	setEnv(kv []string) // replace or add environment variables of the next start
}

// withEnv returns env with each "NAME=value" of kv replacing the variable
// of that name, or added.
func withEnv(env, kv []string) []string {
	out := slices.Clone(env)
	for _, v := range kv {
		name, _, _ := strings.Cut(v, "=")
		out = slices.DeleteFunc(out, func(e string) bool { return strings.HasPrefix(e, name+"=") })
		out = append(out, v)
	}
	return out
}

// process is one JVM the sandbox started: its own process group, stdout and
// stderr in one log file, and a parent-death signal so that it cannot outlive
// the test binary or example that started it.
type process struct {
	name string
	argv []string
	env  []string
	dir  string
	log  string
	// cds is the class data sharing archive of the JVM, nil for
	// none; its option goes at the end of the environment variable cdsEnv
	// when that is set (a start script's JVM options), else after argv[0].
	cds    *jvmcds.Archive
	cdsEnv string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has been waited for
	err  error         // cmd.Wait's result, valid after done
}

// start runs the process in its own process group.
func (p *process) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && !p.exited() {
		return fmt.Errorf("%s is already running", p.name)
	}
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(logf, "=== sandbox: starting %s at %s\n", p.name, time.Now().Format(time.RFC3339Nano))
	argv, env := p.argv, p.env
	opts, cdsDone := p.cds.Options()
	if len(opts) > 0 {
		argv, env = jvmcds.WithOptions(argv, env, p.cdsEnv, opts)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = p.dir
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		cdsDone(false)
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	done := make(chan struct{})
	p.cmd, p.done = cmd, done
	go func() {
		err := cmd.Wait()
		logf.Close()
		cdsDone(jvmcds.ExitedByItself(err))
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

// exited reports whether the last started process has ended. Callers hold p.mu.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait returns the channel closed when the process ends (nil if it never
// started) and a function that reports how it ended.
func (p *process) wait() (<-chan struct{}, func() error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	done := p.done
	return done, func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.err
	}
}

// signal sends sig to the process group.
func (p *process) signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.exited() {
		return nil
	}
	err := syscall.Kill(-p.cmd.Process.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// stop sends SIGTERM to the process group and waits for the process to end,
// escalating to SIGKILL when ctx ends first. It returns the process's exit
// error (a graceful JVM shutdown on SIGTERM exits with status 143).
func (p *process) stop(ctx context.Context) error {
	done, exitErr := p.wait()
	if done == nil {
		return nil
	}
	if err := p.signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-done:
		return exitErr()
	case <-ctx.Done():
		_ = p.signal(syscall.SIGKILL)
		<-done
		return fmt.Errorf("%s: %w, so it was killed: %w", p.name, ErrStopHung, ctx.Err())
	}
}

// kill sends SIGKILL to the process group and waits for the process to end.
func (p *process) kill() error {
	done, _ := p.wait()
	if done == nil {
		return nil
	}
	if err := p.signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-done
	return nil
}

func (p *process) label() string      { return p.name }
func (p *process) logPath() string    { return p.log }
func (p *process) remove() error      { return nil }
func (p *process) setEnv(kv []string) { p.env = withEnv(p.env, kv) }

// tail returns the last n lines of the process's log.
func (p *process) tail(n int) string { return tailFile(p.log, n) }

// tailFile returns the last n lines of a log file, after the first ERROR
// and FATAL lines above them (at most 10): a JVM that exits at start logs
// its cause long before the hundreds of lines of its shutdown.
func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	start := max(len(lines)-n, 0)
	var out [][]byte
	for _, l := range lines[:start] {
		if len(out) < 10 && (bytes.Contains(l, []byte(" ERROR ")) || bytes.Contains(l, []byte(" FATAL "))) {
			out = append(out, l)
		}
	}
	if len(out) > 0 {
		out = append([][]byte{[]byte("(first errors of the log)")}, out...)
		out = append(out, []byte("(last lines of the log)"))
	}
	return string(bytes.Join(append(out, lines[start:]...), []byte("\n")))
}
