// Package strimzi builds the Strimzi cluster operator from its source and
// runs it on the single-node Kubernetes of internal/kube, for tests that
// carry out the cutover through the real operator: Build compiles the
// operator (and Strimzi's agent jars) with Maven into the cache, once per
// version; images.go makes the operator's image and a Kafka Connect image
// laid out as Strimzi's own (its scripts, the cached Kafka jars, the
// agents) without a registry; Install puts the operator on a cluster with
// the CRDs, RBAC and settings Strimzi ships.
//
// The operator is not published as a binary anywhere this machine reaches,
// and its source is not on a package registry: Build takes it from what
// MM2CUTOVER_STRIMZI_SOURCE names, a clone of strimzi/strimzi-kafka-operator
// holding tag Version or the tar git archive makes of that tag's commit,
// keeps the tag's tree as a tar in the cache, and uses that tar from then
// on. Nothing of
// Strimzi's is kept in this repository: the changes the build needs on this
// machine are made by Build to its own copy (patch.go).
package strimzi

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/filelock"
	"github.com/mm2cutover/mm2cutover/internal/javahome"
)

// Version is the Strimzi release built: the one whose CRDs the project
// validates against (internal/strimzicrd), the first whose operator creates
// a connector asked to be stopped in that state.
const Version = "1.2.0"

// Commit is the commit tag Version points to; a source whose tag points
// elsewhere is refused.
const Commit = "6c7b43c4af0db547c10463ba09d1dfa6f5e156a0"

// KafkaVersion is the Kafka release Strimzi 1.2.0 runs by default, and the
// one the sandbox's jars are: the Connect image's.
const KafkaVersion = "4.3.1"

// ErrNoSource means Strimzi's source is neither in the cache nor named by
// MM2CUTOVER_STRIMZI_SOURCE.
var ErrNoSource = errors.New("strimzi: no source of Strimzi " + Version + ": set MM2CUTOVER_STRIMZI_SOURCE to a git clone of strimzi/strimzi-kafka-operator (bare or not) holding tag " + Version + ", or to git archive's tar of it; it is kept in the cache from then on")

// ErrNoJava21 means no Java 21 or newer was found to build Strimzi with.
var ErrNoJava21 = errors.New("strimzi: no JDK 21 or newer (Strimzi " + Version + " compiles for Java 21): set MM2CUTOVER_JAVA21_HOME")

// Artifacts are what Build leaves in the cache.
type Artifacts struct {
	// Dir is the build's folder in the cache.
	Dir string
	// Operator is the cluster operator's distribution, unzipped: bin/
	// (cluster_operator_run.sh) and lib/ (its jar and every dependency).
	Operator string
	// KafkaAgent and TracingAgent are the agent jars Strimzi's Kafka
	// images put in Kafka's libs/.
	KafkaAgent, TracingAgent string
	// Install is packaging/install/cluster-operator: the CRDs, RBAC,
	// ConfigMap and Deployment Strimzi ships.
	Install string
	// Images is docker-images: the scripts of Strimzi's images.
	Images string
	// JavaHome is the JDK 21+ the build used, whose runtime the images
	// carry.
	JavaHome string
}

// cacheName is the build's folder in the cache: the version and a digest
// of the changes made to the source, so that changed patches build anew.
func cacheName() string {
	return fmt.Sprintf("strimzi-%s-%s", Version, patchDigest())
}

// Build returns the operator built from Strimzi's source in cacheDir,
// building it when missing: `mvn -pl cluster-operator,kafka-agent,
// tracing-agent -am package -DskipTests` with a JDK 21+ on a patched copy
// of the source (patch.go). The first build downloads Strimzi's
// dependencies from Maven Central into Maven's local repository (minutes)
// and compiles; later calls return at once. Concurrent callers, in this
// process or others, build once: the build holds a file lock in cacheDir.
func Build(ctx context.Context, cacheDir string, log *slog.Logger) (Artifacts, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	java, err := FindJava21()
	if err != nil {
		return Artifacts{}, err
	}
	dir := filepath.Join(cacheDir, cacheName())
	a := artifactsIn(dir, java)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return a, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return Artifacts{}, err
	}
	unlock, err := filelock.Lock(ctx, filepath.Join(cacheDir, ".lock-strimzi"))
	if err != nil {
		return Artifacts{}, err
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return a, nil
	}
	src, err := sourceTar(ctx, cacheDir)
	if err != nil {
		return Artifacts{}, err
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return Artifacts{}, fmt.Errorf("strimzi: mvn not found: %w", err)
	}
	work, err := os.MkdirTemp(cacheDir, ".build-strimzi-")
	if err != nil {
		return Artifacts{}, err
	}
	defer os.RemoveAll(work)
	tree := filepath.Join(work, "src")
	if err := os.Mkdir(tree, 0o755); err != nil {
		return Artifacts{}, err
	}
	if out, err := exec.CommandContext(ctx, "tar", "-x", "-f", src, "-C", tree).CombinedOutput(); err != nil {
		return Artifacts{}, fmt.Errorf("strimzi: unpack %s: %w\n%s", src, err, out)
	}
	if err := applyPatches(tree); err != nil {
		return Artifacts{}, err
	}
	start := time.Now()
	log.Info("strimzi: building the cluster operator from source with Maven (once per version; minutes)", "version", Version, "into", dir)
	args := append([]string{"-B", "-q", "-pl", "cluster-operator,kafka-agent,tracing-agent", "-am", "package",
		"-DskipTests", "-Dmaven.javadoc.skip=true"}, mavenProperties()...)
	cmd := exec.CommandContext(ctx, mvn, args...)
	cmd.Dir = tree
	cmd.Env = append(os.Environ(), "JAVA_HOME="+java, "PATH="+filepath.Join(java, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return Artifacts{}, fmt.Errorf("strimzi: mvn package: %w\n%s", err, mavenErrors(out.String()))
	}
	log.Info("strimzi: built", "seconds", time.Since(start).Round(time.Second).Seconds())

	// Keep what the images and the installation need, nothing else.
	stage := filepath.Join(work, "out")
	for _, d := range []string{"operator", "agents"} {
		if err := os.MkdirAll(filepath.Join(stage, d), 0o755); err != nil {
			return Artifacts{}, err
		}
	}
	// Strimzi's assembly writes the distribution where its image build
	// takes it (the root POM's make-dist-assembly).
	if err := unzip(filepath.Join(tree, "docker-images", "artifacts", "binaries", "cluster-operator-"+Version+"-dist.zip"), filepath.Join(stage, "operator")); err != nil {
		return Artifacts{}, err
	}
	for _, agent := range []string{"kafka-agent", "tracing-agent"} {
		jar := agent + "-" + Version + ".jar"
		if err := os.Rename(filepath.Join(tree, agent, "target", jar), filepath.Join(stage, "agents", jar)); err != nil {
			return Artifacts{}, err
		}
	}
	for from, to := range map[string]string{"packaging/install/cluster-operator": "install", "docker-images": "docker-images"} {
		if err := os.Rename(filepath.Join(tree, from), filepath.Join(stage, to)); err != nil {
			return Artifacts{}, err
		}
	}
	if err := os.WriteFile(filepath.Join(stage, ".complete"), []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		return Artifacts{}, err
	}
	os.RemoveAll(dir) // a folder without .complete: an interrupted build
	if err := os.Rename(stage, dir); err != nil {
		return Artifacts{}, err
	}
	return a, nil
}

func artifactsIn(dir, java string) Artifacts {
	return Artifacts{Dir: dir, Operator: filepath.Join(dir, "operator"),
		KafkaAgent:   filepath.Join(dir, "agents", "kafka-agent-"+Version+".jar"),
		TracingAgent: filepath.Join(dir, "agents", "tracing-agent-"+Version+".jar"),
		Install:      filepath.Join(dir, "install"), Images: filepath.Join(dir, "docker-images"), JavaHome: java}
}

// sourceTar returns the tar of tag Version's tree in cacheDir, making it
// from MM2CUTOVER_STRIMZI_SOURCE when missing. Callers hold the lock.
func sourceTar(ctx context.Context, cacheDir string) (string, error) {
	tarPath := filepath.Join(cacheDir, "strimzi-src-"+Version+"-"+Commit[:12]+".tar")
	if _, err := os.Stat(tarPath); err == nil {
		return tarPath, nil
	}
	repo := os.Getenv("MM2CUTOVER_STRIMZI_SOURCE")
	if repo == "" {
		return "", ErrNoSource
	}
	if fi, err := os.Stat(repo); err == nil && fi.Mode().IsRegular() {
		return tarSource(ctx, repo, tarPath)
	}
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir", gitDir(repo)}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("strimzi: git %s in %s: %w: %s", strings.Join(args, " "), repo, err, stderr.String())
		}
		return strings.TrimSpace(string(out)), nil
	}
	got, err := git("rev-parse", Version+"^{commit}")
	if err != nil {
		return "", err
	}
	if got != Commit {
		return "", fmt.Errorf("strimzi: tag %s of %s is commit %s, want %s", Version, repo, got, Commit)
	}
	tmp := tarPath + ".tmp"
	if _, err := git("archive", "--format=tar", "-o", tmp, Commit); err != nil {
		return "", err
	}
	return tarPath, os.Rename(tmp, tarPath)
}

// tarSource copies to tarPath a tar that git archive made of commit
// Commit (git get-tar-commit-id reads the commit from its header).
func tarSource(ctx context.Context, file, tarPath string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	cmd := exec.CommandContext(ctx, "git", "get-tar-commit-id")
	cmd.Stdin = f
	out, err := cmd.Output()
	if got := strings.TrimSpace(string(out)); err != nil || got != Commit {
		return "", fmt.Errorf("strimzi: %s is not git archive's tar of commit %s (git get-tar-commit-id: %q, %v)", file, Commit, got, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(tarPath), ".strimzi-src-")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, f); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return tarPath, os.Rename(tmp.Name(), tarPath)
}

// gitDir is repo's git directory: repo itself when bare, else repo/.git.
func gitDir(repo string) string {
	if fi, err := os.Stat(filepath.Join(repo, ".git")); err == nil && fi.IsDir() {
		return filepath.Join(repo, ".git")
	}
	return repo
}

// FindJava21 returns the home of the newest JDK of version 21 or newer
// (javahome.Find, with javac and jlink).
func FindJava21() (string, error) {
	if h := javahome.Find(21, "javac", "jlink"); h != "" {
		return h, nil
	}
	return "", ErrNoJava21
}

// unzip extracts archive into dir, dropping the archive's top folder when
// every entry is under one (Strimzi's dist zips have none; this keeps both
// shapes working).
func unzip(archive, dir string) error {
	r, err := zip.OpenReader(archive)
	if err != nil {
		return fmt.Errorf("strimzi: %w", err)
	}
	defer r.Close()
	for _, f := range r.File {
		name := filepath.Clean(f.Name)
		if strings.HasPrefix(name, "..") || filepath.IsAbs(name) {
			return fmt.Errorf("strimzi: %s: entry %q leaves the folder", archive, f.Name)
		}
		path := filepath.Join(dir, name)
		if f.FileInfo().IsDir() {
			if err := os.MkdirAll(path, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		in, err := f.Open()
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if f.Mode()&0o111 != 0 || strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
		if err != nil {
			in.Close()
			return err
		}
		_, err = io.Copy(out, in)
		in.Close()
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// mavenErrors is what to show of a failed Maven run: its first [ERROR]
// lines (the cause; the last ones are advice), each cut to a readable
// length, or its last lines when it has none.
func mavenErrors(out string) string {
	var errs []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "[ERROR]") && strings.TrimSpace(l) != "[ERROR]" {
			if len(l) > 600 {
				l = l[:600] + "..."
			}
			errs = append(errs, l)
		}
	}
	if len(errs) == 0 {
		return lastLines(out, 40)
	}
	return strings.Join(errs[:min(len(errs), 15)], "\n")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
