// Package jvmcds gives the JVMs of the sandbox and the Flink job a class
// data sharing archive of the classes they load, kept in the cache beside
// the jars.
//
// A CI run starts about 180 JVMs (brokers, storage formats, workers, Flink
// jobs), and on two cores their class loading is a large share of the run:
// a Kafka 4.3.1 broker spends 3.5-3.9 CPU seconds starting on JDK 17,
// 2.2-2.3 with the classes it loads mapped from an archive (measured with
// -XX:ArchiveClassesAtExit, then -XX:SharedArchiveFile). The first JVM of
// each kind that finds no archive writes one when it exits; the later ones
// map it. The JVM checks that an archive matches its own build and class
// path and ignores one that does not (-Xshare:auto, the default), so a
// stale archive costs time, never a failure.
package jvmcds

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// staleLock is how old the lock of an archive being written may grow
// before another JVM takes over the writing: the JVM that held it was
// killed, or still runs in a long test.
const staleLock = 20 * time.Minute

// Archive is the class data sharing archive of one kind of JVM: one
// Java installation, one Kafka distribution, one role.
type Archive struct {
	path string
}

// New returns the archive of the role's JVMs started with java on the class
// path classpath, kept in cacheDir. It returns nil, which starts JVMs
// without one, when cacheDir is empty or the Java installation cannot be
// told apart from another (its binary does not resolve).
func New(cacheDir, java, classpath, role string) *Archive {
	if cacheDir == "" || java == "" {
		return nil
	}
	real, err := filepath.EvalSymlinks(java)
	if err != nil {
		return nil
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil
	}
	// The modules file changes with every update of the JDK.
	modules, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(real)), "lib", "modules"))
	if err != nil {
		modules = fi
	}
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%s\x00%s", real, modules.ModTime().UnixNano(), classpath, role))
	return &Archive{path: filepath.Join(cacheDir, "cds", role+"-"+hex.EncodeToString(h[:8])+".jsa")}
}

// Quiet keeps the JVM's class data sharing warnings (one line per class
// it cannot archive, hundreds when it writes one) out of its output.
const Quiet = "-Xlog:cds=off,cds+dynamic=off"

// Options returns the JVM options of the next start, and the function to call
// with whether the JVM ended by itself or on SIGTERM (a JVM that exits
// writes its archive first; one that was killed may have left half of it).
// The options map the archive when there is one. Otherwise one JVM at a
// time, the one that takes the lock, writes it at exit to a file of its
// own that done renames into place; the others start without.
func (a *Archive) Options() (opts []string, done func(exited bool)) {
	noop := func(bool) {}
	if a == nil {
		return nil, noop
	}
	if _, err := os.Stat(a.path); err == nil {
		return []string{Quiet, "-XX:SharedArchiveFile=" + a.path}, noop
	}
	if err := os.MkdirAll(filepath.Dir(a.path), 0o755); err != nil {
		return nil, noop
	}
	lock := a.path + ".lock"
	f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if errors.Is(err, fs.ErrExist) {
		if fi, serr := os.Stat(lock); serr == nil && time.Since(fi.ModTime()) > staleLock {
			os.Remove(lock)
			f, err = os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		}
	}
	if err != nil {
		return nil, noop
	}
	f.Close()
	tmp := fmt.Sprintf("%s.%d.tmp", a.path, os.Getpid())
	return []string{Quiet, "-XX:ArchiveClassesAtExit=" + tmp}, func(exited bool) {
		if fi, err := os.Stat(tmp); exited && err == nil && fi.Size() > 0 {
			os.Rename(tmp, a.path)
		}
		os.Remove(tmp)
		os.Remove(lock)
	}
}

// ExitedByItself reports whether a JVM that ended with err exited, on
// SIGTERM too (status 143), rather than being killed by a signal, and so
// wrote its class archive whole.
func ExitedByItself(err error) bool {
	if err == nil {
		return true
	}
	var ee interface{ ExitCode() int }
	return errors.As(err, &ee) && ee.ExitCode() >= 0
}

// WithOptions returns copies of argv and env with the JVM options opts:
// at the end of the variable envVar when that is set (kept in env, or
// added), else right after the java binary argv[0].
func WithOptions(argv, env []string, envVar string, opts []string) ([]string, []string) {
	if envVar == "" {
		return append(append([]string{argv[0]}, opts...), argv[1:]...), env
	}
	opt := strings.Join(opts, " ")
	out := append([]string{}, env...)
	for i := len(out) - 1; i >= 0; i-- { // the last of a variable counts
		if v, ok := strings.CutPrefix(out[i], envVar+"="); ok {
			out[i] = envVar + "=" + strings.TrimSpace(v+" "+opt)
			return argv, out
		}
	}
	return argv, append(out, envVar+"="+opt)
}
