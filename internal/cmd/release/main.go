// Command release builds a release of mm2cutover into dist/ of the
// repository, with one version everywhere:
//
//   - GoReleaser (.goreleaser.yaml, the version pinned below, run from the Go
//     module proxy) builds the cutover CLI and the Kubernetes Job for linux
//     and darwin on amd64 and arm64, stamped with the version (main.version)
//     and the commit, as versioned archives, with one CycloneDX SBOM per
//     binary and checksums.txt;
//   - then podman builds the Connect worker image (docker/mm2, on the Debian
//     Java 17 base of internal/containers, with the Kafka jars of the
//     sandbox's cache) and the Job image (examples/job/Dockerfile, target
//     prebuilt, from the linux/amd64 binaries of the archives), both labelled
//     org.opencontainers.image.version and tagged with the version, and saves
//     each as an OCI archive beside the others (linux/amd64 only: the Java
//     base is made from Debian's amd64 packages, and nothing here emulates
//     another architecture); their checksums join checksums.txt.
//
// A user loads an image archive (podman load -i, or skopeo copy
// oci-archive:...) and pushes it to their own registry; no registry is
// reachable from here, and nothing is published.
//
//	go run ./internal/cmd/release             # the release of VERSION: HEAD must be tagged v<VERSION>, the tree clean
//	go run ./internal/cmd/release -snapshot   # a snapshot of the work tree: VERSION-SNAPSHOT-<commit> (what CI builds)
//
// The images need root, podman, runc and debootstrap (as the image tests);
// -images=false leaves them out. Progress goes to stderr; the files of the
// release, one a line, to stdout.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/containers"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
)

// goreleaser is GoReleaser, pinned: the release tool of the Go ecosystem, run
// from the Go module proxy (go run caches the built binary).
const goreleaser = "github.com/goreleaser/goreleaser/v2@v2.17.0"

// The images of a release: their names in the OCI archives and in podman's
// storage once loaded (localhost/<name>:<version>), and the names the
// Kubernetes manifests give them (examples/kubernetes).
const (
	workerImage = "mm2cutover/mm2-connect"
	jobImage    = "mm2cutover/mm2cutover-job"
)

// versionRE is the form of the repository's VERSION: semantic versioning
// without the leading v (the git tag has it).
var versionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)

func main() {
	snapshot := flag.Bool("snapshot", false, "a snapshot of the work tree (VERSION-SNAPSHOT-<commit>) rather than the release of the tagged commit")
	images := flag.Bool("images", true, "also build the worker and Job images as OCI archives (root, podman)")
	flag.Parse()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	root, err := repoRoot()
	if err == nil {
		var r *result
		r, err = release(ctx, options{root: root, snapshot: *snapshot, images: *images, log: slog.New(slog.NewTextHandler(os.Stderr, nil)), out: os.Stderr})
		if err == nil {
			for _, f := range r.files {
				fmt.Println(filepath.Join(r.dist, f))
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

// repoRoot is the repository's top directory, where go.mod is.
func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the mm2cutover module")
	}
	return filepath.Dir(mod), nil
}

// options say what release builds.
type options struct {
	root     string // the repository
	snapshot bool
	images   bool
	log      *slog.Logger
	out      io.Writer // GoReleaser's and podman's output
}

// result is what a release built.
type result struct {
	version string   // the release's version: VERSION, or VERSION-SNAPSHOT-<commit>
	commit  string   // the commit it was built from
	dist    string   // the directory of the files
	files   []string // the files of the release in dist, checksums.txt last
	images  []image  // the images, saved in files
}

// image is one image of a release.
type image struct {
	ref     string // its name in the archive: localhost/<name>:<version>
	archive string // the OCI archive in dist
}

// artifact is an entry of GoReleaser's dist/artifacts.json.
type artifact struct {
	Name   string         `json:"name"`
	Path   string         `json:"path"`
	Goos   string         `json:"goos"`
	Goarch string         `json:"goarch"`
	Type   string         `json:"type"`
	Extra  map[string]any `json:"extra"`
}

// readVersion reads the repository's VERSION.
func readVersion(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		return "", err
	}
	v := strings.TrimSpace(string(b))
	if !versionRE.MatchString(v) {
		return "", fmt.Errorf("VERSION %q: want MAJOR.MINOR.PATCH, as in 0.2.0", v)
	}
	return v, nil
}

// release builds the release (see the package documentation).
func release(ctx context.Context, o options) (*result, error) {
	version, err := readVersion(o.root)
	if err != nil {
		return nil, err
	}
	args := []string{"run", goreleaser, "release", "--clean"}
	if o.snapshot {
		args = append(args, "--snapshot")
	} else {
		tag, err := git(ctx, o.root, "describe", "--exact-match", "--tags", "HEAD")
		if err != nil || tag != "v"+version {
			return nil, fmt.Errorf("a release is built from the commit tagged v%s (VERSION); HEAD is tagged %q (%v): tag it, or build a -snapshot", version, tag, err)
		}
		args = append(args, "--skip=publish,announce")
	}
	env := append(os.Environ(), "MM2CUTOVER_VERSION="+version)
	if remotes, err := git(ctx, o.root, "remote"); err == nil && remotes == "" {
		// GoReleaser reads the commit only where git names a remote URL (git
		// ls-remote --get-url); without one a snapshot's commit is "none". A
		// clone has one; a work tree without (git init, a worktree of a local
		// repository) gets the module's, for GoReleaser's git commands only,
		// from the environment: no configuration file changes.
		env = append(env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=remote.origin.url", "GIT_CONFIG_VALUE_0=https://github.com/mm2cutover/mm2cutover")
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = o.root
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = o.out, o.out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("goreleaser: %w", err)
	}
	o.log.Info("release: goreleaser done", "seconds", time.Since(start).Round(time.Second).Seconds())

	r := &result{dist: filepath.Join(o.root, "dist")}
	var meta struct {
		Version string `json:"version"`
		Commit  string `json:"commit"`
	}
	if err := readJSON(filepath.Join(r.dist, "metadata.json"), &meta); err != nil {
		return nil, err
	}
	r.version, r.commit = meta.Version, meta.Commit
	if r.version != version && !strings.HasPrefix(r.version, version+"-SNAPSHOT-") {
		return nil, fmt.Errorf("goreleaser built version %q, VERSION is %q", r.version, version)
	}
	var arts []artifact
	if err := readJSON(filepath.Join(r.dist, "artifacts.json"), &arts); err != nil {
		return nil, err
	}
	for _, a := range arts {
		switch a.Type {
		case "Archive", "SBOM", "Checksum":
			rel, err := filepath.Rel(r.dist, filepath.Join(o.root, a.Path))
			if err != nil {
				return nil, err
			}
			r.files = append(r.files, rel)
		}
	}
	if o.images {
		if err := buildImages(ctx, o, r, arts); err != nil {
			return nil, err
		}
	}
	// checksums.txt last, the way a reader verifies the others.
	slices.SortFunc(r.files, func(a, b string) int {
		if (a == "checksums.txt") != (b == "checksums.txt") {
			if a == "checksums.txt" {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	})
	return r, nil
}

// buildImages builds the worker and Job images of the release with podman,
// saves them as OCI archives in dist and adds their checksums.
func buildImages(ctx context.Context, o options, r *result, arts []artifact) error {
	cfg := sandbox.ConfigFromEnv()
	cfg.Logger = o.log
	cache := cfg.CacheDir
	if cache == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return err
		}
		cache = filepath.Join(d, "mm2cutover")
	}
	p, err := containers.New(filepath.Join(cache, "containers"))
	if err != nil {
		return err
	}
	base, err := containers.JRE17.Ensure(ctx, p, filepath.Join(cache, "containers"), o.log)
	if err != nil {
		return err
	}

	// The Job's image, from the release's own linux/amd64 binaries.
	ctxDir, err := os.MkdirTemp("", "mm2cutover-release-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ctxDir)
	for id, name := range map[string]string{"cutover": "cutover", "job": "mm2cutover-job"} {
		i := slices.IndexFunc(arts, func(a artifact) bool {
			return a.Type == "Binary" && a.Goos == "linux" && a.Goarch == "amd64" && a.Extra["ID"] == id
		})
		if i < 0 {
			return fmt.Errorf("dist/artifacts.json: no linux/amd64 binary of build %s", id)
		}
		if err := copyFile(filepath.Join(o.root, arts[i].Path), filepath.Join(ctxDir, name)); err != nil {
			return err
		}
	}
	job := "localhost/" + jobImage + ":" + r.version
	start := time.Now()
	if err := p.Build(ctx, containers.BuildOptions{ContextDir: ctxDir, Dockerfile: filepath.Join(o.root, "examples/job/Dockerfile"),
		Tag: job, Target: "prebuilt", BuildArgs: map[string]string{"CERTS_IMAGE": base, "VERSION": r.version}, Log: o.out}); err != nil {
		return err
	}
	o.log.Info("release: Job image built", "ref", job, "seconds", time.Since(start).Round(time.Second).Seconds())

	// The worker's image, with the Kafka jars of the sandbox's cache.
	dist, kafkaVersion, err := sandbox.KafkaDistribution(ctx, cfg)
	if err != nil {
		return err
	}
	agent, err := sandbox.JMXExporterAgent(ctx, cfg.CacheDir, o.log)
	if err != nil {
		return err
	}
	built, err := containers.WorkerImage{ContextDir: filepath.Join(o.root, "docker/mm2"), KafkaLibs: filepath.Join(dist, "libs"),
		KafkaVersion: kafkaVersion, JMXAgent: agent, Name: "localhost/mm2cutover-release/mm2-connect", Version: r.version}.Ensure(ctx, p, filepath.Join(cache, "containers"), o.log)
	if err != nil {
		return err
	}
	worker := "localhost/" + workerImage + ":" + r.version
	if _, err := p.Run(ctx, "tag", built, worker); err != nil {
		return err
	}

	for _, img := range []struct{ ref, name string }{{worker, "mm2-connect"}, {job, "mm2cutover-job"}} {
		name := img.name + "_" + r.version + "_linux_amd64.oci.tar"
		path := filepath.Join(r.dist, name)
		start := time.Now()
		if _, err := p.Run(ctx, "save", "--format", "oci-archive", "-o", path, img.ref); err != nil {
			return err
		}
		o.log.Info("release: image saved", "ref", img.ref, "archive", name, "seconds", time.Since(start).Round(time.Second).Seconds())
		if err := addChecksum(filepath.Join(r.dist, "checksums.txt"), path); err != nil {
			return err
		}
		r.files = append(r.files, name)
		r.images = append(r.images, image{ref: img.ref, archive: name})
	}
	// The archives are the release; the images leave podman's storage (each
	// snapshot has a version of its own, and would pile up there).
	for _, ref := range []string{worker, job, built} {
		if err := p.RemoveImage(ctx, ref); err != nil {
			o.log.Warn("release: image not removed", "ref", ref, "err", err)
		}
	}
	return nil
}

// addChecksum appends the SHA-256 line of path to a checksums file, in
// sha256sum's format (GoReleaser's).
func addChecksum(sums, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	out, err := os.OpenFile(sums, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), filepath.Base(path))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// git runs git in dir and returns its standard output, trimmed.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
