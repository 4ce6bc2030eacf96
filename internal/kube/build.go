package kube

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/filelock"
)

// The versions the harness builds. Each comes from the Go module proxy
// through a wrapper module in recipe/ (go.mod and go.sum, stored under other
// names so that they stay build recipes, not modules of this repository).
const (
	// KubernetesVersion is the release of k8s.io/kubernetes built: the
	// control plane, kubelet, kube-proxy and kubectl.
	KubernetesVersion = "v1.34.2"
	// EtcdVersion is the release of go.etcd.io/etcd/server/v3 built. 3.6 is
	// what Kubernetes 1.34 is tested with; Debian's 3.4 makes the
	// controller-manager log watch-list errors.
	EtcdVersion = "v3.6.4"
	// CoreDNSVersion is the release of github.com/coredns/coredns built,
	// with only the plugins cluster DNS needs (recipe/coredns.main.go.txt).
	CoreDNSVersion = "v1.15.0"
)

//go:embed recipe
var recipe embed.FS

// Binaries are the paths of the programs a cluster runs, all built by
// Build.
type Binaries struct {
	APIServer, ControllerManager, Scheduler, Kubelet, Proxy, Kubectl string
	Etcd, CoreDNS                                                    string
	// PauseImage is an OCI archive of the Pod sandbox image (pause.c of
	// k8s.io/kubernetes, compiled static), named PauseImageRef.
	PauseImage string
	// ProbeImage is an OCI archive of ProbeImageRef, a static Go program
	// that serves or fetches HTTP from a Pod (recipe/probe.main.go.txt),
	// for CheckNetwork.
	ProbeImage string
}

// ProbeImageRef is the name of the probe image inside the cluster.
const ProbeImageRef = "localhost/mm2kube/probe:1"

// PauseImageRef is the name of the pause image inside the cluster's
// containerd.
const PauseImageRef = "localhost/mm2kube/pause:3.10"

// recipeBuild is one wrapper module and the packages built from it.
type recipeBuild struct {
	name     string // recipe/<name>.mod, .sum, and the cache folder's prefix
	version  string
	packages []string
	main     string // a main package of the wrapper itself (recipe/<main>), or ""
	ldflags  string
	rename   map[string]string // binaries go build names otherwise: from -> to
}

func kubernetesRecipe() recipeBuild {
	v := "k8s.io/component-base/version"
	minor := strings.Split(KubernetesVersion, ".")[1]
	return recipeBuild{
		name: "kubernetes", version: KubernetesVersion,
		packages: []string{
			"k8s.io/kubernetes/cmd/kube-apiserver", "k8s.io/kubernetes/cmd/kube-controller-manager",
			"k8s.io/kubernetes/cmd/kube-scheduler", "k8s.io/kubernetes/cmd/kubelet",
			"k8s.io/kubernetes/cmd/kube-proxy", "k8s.io/kubernetes/cmd/kubectl",
		},
		ldflags: fmt.Sprintf("-s -w -X %[1]s.gitVersion=%[2]s -X %[1]s.gitMajor=1 -X %[1]s.gitMinor=%[3]s -X %[1]s.gitTreeState=clean",
			v, KubernetesVersion, minor),
	}
}

func etcdRecipe() recipeBuild {
	// go build names the binary of .../server/v3 "server".
	return recipeBuild{name: "etcd", version: EtcdVersion, packages: []string{"go.etcd.io/etcd/server/v3"}, ldflags: "-s -w",
		rename: map[string]string{"server": "etcd"}}
}

func probeRecipe() recipeBuild {
	return recipeBuild{name: "probe", version: "1", main: "probe.main.go.txt", ldflags: "-s -w",
		rename: map[string]string{"kubeprobe": "probe"}}
}

func corednsRecipe() recipeBuild {
	return recipeBuild{name: "coredns", version: CoreDNSVersion, main: "coredns.main.go.txt", ldflags: "-s -w",
		rename: map[string]string{"corednsbuild": "coredns"}}
}

// key names the cache folder: the version and a digest of the recipe's
// files, so that a changed recipe builds into a new folder.
func (r recipeBuild) key() (string, error) {
	h := sha256.New()
	for _, f := range []string{r.name + ".mod", r.name + ".sum", r.main} {
		if f == "" {
			continue
		}
		b, err := recipe.ReadFile("recipe/" + f)
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	fmt.Fprintln(h, r.packages, r.ldflags)
	return fmt.Sprintf("%s-%s-%s", r.name, r.version, hex.EncodeToString(h.Sum(nil))[:12]), nil
}

// Build returns the cluster's binaries from cacheDir, building those
// missing with the go command (CGO_ENABLED=0, -trimpath) from the Go module
// proxy: the first build takes about 7 minutes and 2 GB of memory on 2
// cores (kube-apiserver alone about 400 s), later calls return at once.
// Concurrent callers, in this process or others, build once: the builds
// hold a file lock in cacheDir. The pause image needs gcc and podman.
func Build(ctx context.Context, cacheDir string, log *slog.Logger) (Binaries, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return Binaries{}, err
	}
	unlock, err := filelock.Lock(ctx, filepath.Join(cacheDir, ".lock-kube"))
	if err != nil {
		return Binaries{}, err
	}
	defer unlock()
	var b Binaries
	dirs := map[string]string{}
	for _, r := range []recipeBuild{kubernetesRecipe(), etcdRecipe(), corednsRecipe(), probeRecipe()} {
		dir, err := r.ensure(ctx, cacheDir, log)
		if err != nil {
			return Binaries{}, err
		}
		dirs[r.name] = dir
	}
	k := dirs["kubernetes"]
	b.APIServer, b.ControllerManager, b.Scheduler = filepath.Join(k, "kube-apiserver"), filepath.Join(k, "kube-controller-manager"), filepath.Join(k, "kube-scheduler")
	b.Kubelet, b.Proxy, b.Kubectl = filepath.Join(k, "kubelet"), filepath.Join(k, "kube-proxy"), filepath.Join(k, "kubectl")
	b.Etcd, b.CoreDNS = filepath.Join(dirs["etcd"], "etcd"), filepath.Join(dirs["coredns"], "coredns")
	if b.PauseImage, err = ensurePause(ctx, cacheDir, log); err != nil {
		return Binaries{}, err
	}
	if b.ProbeImage, err = scratchImage(ctx, cacheDir, filepath.Join(dirs["probe"], "probe"), "/probe", "65534:65534", ProbeImageRef, log); err != nil {
		return Binaries{}, err
	}
	return b, nil
}

// ensure builds r into cacheDir/<key> unless it is there, and returns that
// folder. The build goes to a temporary folder renamed into place, so a
// half-built folder is never used.
func (r recipeBuild) ensure(ctx context.Context, cacheDir string, log *slog.Logger) (string, error) {
	key, err := r.key()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cacheDir, key)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir, nil
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("kube: building %s needs the go command: %w", r.name, err)
	}
	src, err := os.MkdirTemp(cacheDir, ".build-"+r.name+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(src)
	files := map[string]string{r.name + ".mod": "go.mod", r.name + ".sum": "go.sum"}
	if r.main != "" {
		files[r.main] = "main.go"
	}
	for from, to := range files {
		b, err := recipe.ReadFile("recipe/" + from)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(src, to), b, 0o644); err != nil {
			return "", err
		}
	}
	out := filepath.Join(src, "bin")
	if err := os.Mkdir(out, 0o755); err != nil {
		return "", err
	}
	pkgs := r.packages
	if r.main != "" {
		pkgs = []string{"."}
	}
	start := time.Now()
	log.Info("kube: building from the Go module proxy (once per version; minutes)", "recipe", r.name, "version", r.version, "into", dir)
	args := append([]string{"build", "-trimpath", "-buildvcs=false", "-mod=readonly", "-ldflags", r.ldflags, "-o", out + "/"}, pkgs...)
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("kube: go build of %s %s: %w\n%s", r.name, r.version, err, lastLines(string(b), 30))
	}
	for from, to := range r.rename {
		if err := os.Rename(filepath.Join(out, from), filepath.Join(out, to)); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(filepath.Join(out, ".complete"), []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		return "", err
	}
	os.RemoveAll(dir) // a folder without .complete: a build that was interrupted
	if err := os.Rename(out, dir); err != nil {
		return "", err
	}
	log.Info("kube: built", "recipe", r.name, "seconds", time.Since(start).Round(time.Second).Seconds())
	return dir, nil
}

// ModuleDir returns the folder of module@version (such as
// "github.com/prometheus-operator/prometheus-operator@v0.85.0", whose
// example/prometheus-operator-crd holds CRDs) in the Go module cache,
// downloading it from the Go module proxy when needed.
func ModuleDir(ctx context.Context, mod string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", mod)
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	cmd.Dir = os.TempDir()
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s", err, ee.Stderr)
		}
		return "", fmt.Errorf("go mod download %s: %w", mod, err)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil {
		return "", err
	}
	if m.Error != "" || m.Dir == "" {
		return "", fmt.Errorf("go mod download %s: %s", mod, m.Error)
	}
	return m.Dir, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
