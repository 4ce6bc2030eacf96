package kube

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mm2cutover/mm2cutover/internal/containers"
)

// ensurePause returns the OCI archive of the pause image in cacheDir,
// making it when missing: pause.c of k8s.io/kubernetes (from the module
// cache) compiled static with gcc, alone on an empty image run as nobody,
// as registry.k8s.io/pause is. Callers hold the kube lock.
func ensurePause(ctx context.Context, cacheDir string, log *slog.Logger) (string, error) {
	dir, err := ModuleDir(ctx, "k8s.io/kubernetes@"+KubernetesVersion)
	if err != nil {
		return "", err
	}
	csrc := filepath.Join(dir, "build", "pause", "linux", "pause.c")
	src, err := os.ReadFile(csrc)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(src)
	bin := filepath.Join(cacheDir, fmt.Sprintf("kube-pause-%s", hex.EncodeToString(h[:])[:12]))
	if _, err := os.Stat(bin); err != nil {
		gcc, err := exec.LookPath("gcc")
		if err != nil {
			return "", fmt.Errorf("kube: the pause image needs gcc: %w", err)
		}
		cmd := exec.CommandContext(ctx, gcc, "-Os", "-Wall", "-Werror", "-static", "-DVERSION=v3.10-mm2kube", "-o", bin+".tmp", csrc)
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("kube: gcc pause.c: %w\n%s", err, out)
		}
		if err := os.Rename(bin+".tmp", bin); err != nil {
			return "", err
		}
	}
	return scratchImage(ctx, cacheDir, bin, "/pause", "65535:65535", PauseImageRef, log)
}

// scratchImage returns the OCI archive, in cacheDir, of an image holding
// only the static binary bin at path, run as user: podman builds it and
// `podman save --format oci-archive` writes it. The archive's name has a
// digest of the binary: a new binary makes a new archive.
func scratchImage(ctx context.Context, cacheDir, bin, path, user, ref string, log *slog.Logger) (string, error) {
	b, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	containerfile := fmt.Sprintf("FROM scratch\nCOPY bin %s\nUSER %s\nENTRYPOINT [%q]\n", path, user, path)
	h := sha256.Sum256(append(b, containerfile...))
	archive := filepath.Join(cacheDir, fmt.Sprintf("kube-%s-%s.oci.tar", sanitize(filepath.Base(path)), hex.EncodeToString(h[:])[:12]))
	if _, err := os.Stat(archive); err == nil {
		return archive, nil
	}
	work, err := os.MkdirTemp(cacheDir, ".build-image-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	if err := os.WriteFile(filepath.Join(work, "bin"), b, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(work, "Containerfile"), []byte(containerfile), 0o644); err != nil {
		return "", err
	}
	p, err := containers.New(filepath.Join(cacheDir, "containers"))
	if err != nil {
		return "", err
	}
	if err := p.Build(ctx, containers.BuildOptions{ContextDir: work, Dockerfile: filepath.Join(work, "Containerfile"), Tag: ref}); err != nil {
		return "", err
	}
	defer p.RemoveImage(context.WithoutCancel(ctx), ref)
	tmp := archive + ".tmp"
	if err := SaveImage(ctx, p, ref, tmp); err != nil {
		return "", err
	}
	log.Info("kube: image built", "ref", ref, "archive", archive)
	return archive, os.Rename(tmp, archive)
}

// SaveImage writes the podman image ref as an OCI archive at path, for
// ImportImage.
func SaveImage(ctx context.Context, p *containers.Podman, ref, path string) error {
	os.Remove(path)
	_, err := p.Run(ctx, "save", "--format", "oci-archive", "-o", path, ref)
	return err
}

// ImportImage imports an OCI archive (podman save --format oci-archive)
// into the cluster's containerd under the name ref, so that Pods run it
// with imagePullPolicy Never or IfNotPresent: nothing is ever pulled. The
// image is pinned, so the kubelet's image garbage collection keeps it.
func (c *Cluster) ImportImage(ctx context.Context, archive, ref string) error {
	// ctr names an OCI archive's image after its index's
	// org.opencontainers.image.ref.name (podman writes the full name there);
	// it is then tagged ref.
	name, err := archiveRefName(archive)
	if err != nil {
		return fmt.Errorf("kube: import %s: %w", archive, err)
	}
	if _, err := c.ctr(ctx, "images", "import", archive); err != nil {
		return fmt.Errorf("kube: import %s: %w", ref, err)
	}
	if name != ref {
		if _, err := c.ctr(ctx, "images", "tag", "--force", name, ref); err != nil {
			return fmt.Errorf("kube: tag %s as %s: %w", name, ref, err)
		}
	}
	if _, err := c.ctr(ctx, "images", "label", ref, "io.cri-containerd.pinned=pinned"); err != nil {
		return fmt.Errorf("kube: pin %s: %w", ref, err)
	}
	c.log.Debug("kube: imported", "ref", ref, "archive", archive)
	return nil
}

// archiveRefName returns the image name an OCI archive's index.json gives
// its one manifest.
func archiveRefName(archive string) (string, error) {
	f, err := os.Open(archive)
	if err != nil {
		return "", err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err != nil {
			return "", fmt.Errorf("no index.json: %w", err)
		}
		if h.Name != "index.json" && h.Name != "./index.json" {
			continue
		}
		var idx struct {
			Manifests []struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"manifests"`
		}
		if err := json.NewDecoder(tr).Decode(&idx); err != nil {
			return "", err
		}
		if len(idx.Manifests) != 1 || idx.Manifests[0].Annotations["org.opencontainers.image.ref.name"] == "" {
			return "", fmt.Errorf("index.json: want one named manifest, got %+v", idx.Manifests)
		}
		return idx.Manifests[0].Annotations["org.opencontainers.image.ref.name"], nil
	}
}

// LoadPodmanImage imports the podman image ref into the cluster under the
// name as (the name a manifest gives, such as a registry's that the
// cluster will never reach): podman save, then ImportImage.
func (c *Cluster) LoadPodmanImage(ctx context.Context, p *containers.Podman, ref, as string) error {
	path := filepath.Join(c.dir, "image-"+sanitize(ref)+".oci.tar")
	defer os.Remove(path)
	if err := SaveImage(ctx, p, ref, path); err != nil {
		return err
	}
	return c.ImportImage(ctx, path, as)
}

// ctr runs containerd's ctr against the cluster's containerd, in the
// k8s.io namespace the kubelet uses.
func (c *Cluster) ctr(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "ctr", append([]string{"--address", c.containerdSock, "--namespace", "k8s.io"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ctr %s: %w\n%s", strings.Join(args, " "), err, lastLines(string(out), 20))
	}
	return string(out), nil
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, s)
}
