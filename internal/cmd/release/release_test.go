package main

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/containers"
)

// TestSnapshotRelease builds a snapshot release as CI does, into dist/,
// and checks it as a user would: every archive for linux and darwin on
// amd64 and arm64, of the CLI and the Job, named with the version;
// checksums.txt matches every file; each SBOM is CycloneDX and lists the
// binary's modules; the CLI of this machine's archive reports the version
// and the commit; each image archive loads with podman as
// localhost/<name>:<version> labelled with the version, and the Job image's
// binaries report the version too.
func TestSnapshotRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a release: GoReleaser, 8 binaries, 2 images")
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	images := true
	if _, err := containers.New(t.TempDir()); errors.Is(err, containers.ErrUnavailable) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI builds the images: %v", err)
		}
		t.Logf("no images: %v", err)
		images = false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	start := time.Now()
	r, err := release(ctx, options{root: root, snapshot: true, images: images, log: slog.New(slog.NewTextHandler(testWriter{t}, nil)), out: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("snapshot %s built in %v: %d files", r.version, time.Since(start).Round(time.Second), len(r.files))
	version, _ := readVersion(root)
	head, err := git(ctx, root, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if want := version + "-SNAPSHOT-" + head[:7]; r.version != want || r.commit != head {
		t.Errorf("snapshot %q of commit %q, want %s of %s", r.version, r.commit, want, head)
	}

	// The archives and the SBOMs, by name.
	have := map[string]bool{}
	for _, f := range r.files {
		have[f] = true
	}
	for _, bin := range []string{"cutover", "mm2cutover-job"} {
		for _, goos := range []string{"linux", "darwin"} {
			for _, goarch := range []string{"amd64", "arm64"} {
				for _, name := range []string{
					fmt.Sprintf("%s_%s_%s_%s.tar.gz", bin, r.version, goos, goarch),
					fmt.Sprintf("%s_%s_%s_%s.cdx.json", bin, r.version, goos, goarch),
				} {
					if !have[name] {
						t.Errorf("no %s in %v", name, r.files)
					}
				}
				checkSBOM(t, filepath.Join(r.dist, fmt.Sprintf("%s_%s_%s_%s.cdx.json", bin, r.version, goos, goarch)))
			}
		}
	}
	checkChecksums(t, r)

	// The CLI of this machine's archive, as a user runs it after tar xzf.
	if runtime.GOOS == "linux" || runtime.GOOS == "darwin" {
		dir := t.TempDir()
		extract(t, filepath.Join(r.dist, fmt.Sprintf("cutover_%s_%s_%s.tar.gz", r.version, runtime.GOOS, runtime.GOARCH)), dir)
		out, err := exec.Command(filepath.Join(dir, "cutover"), "version").CombinedOutput()
		if want := "cutover " + r.version + " (commit " + r.commit; err != nil || !strings.HasPrefix(string(out), want) {
			t.Errorf("cutover version from the archive: %v\n%s\nwant it to start with %q", err, out, want)
		}
		for _, f := range []string{"LICENSE", "README.md", "CHANGELOG.md", "docs/runbook.md"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("the archive has no %s", f)
			}
		}
		extract(t, filepath.Join(r.dist, fmt.Sprintf("mm2cutover-job_%s_%s_%s.tar.gz", r.version, runtime.GOOS, runtime.GOARCH)), dir)
		jctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		out, _ = exec.CommandContext(jctx, filepath.Join(dir, "mm2cutover-job"), jobProbe...).CombinedOutput()
		cancel()
		if want := `"tool_version":"mm2cutover-job/` + r.version + `"`; !strings.Contains(string(out), want) {
			t.Errorf("the Job from the archive:\n%s\nwant %s", out, want)
		}
	}
	if images {
		checkImages(ctx, t, r)
	}
}

// jobProbe are settings the Job accepts, of systems that do not answer:
// it logs its tool version, then fails within seconds.
var jobProbe = []string{"-source-bootstrap", "127.0.0.1:1", "-target-bootstrap", "127.0.0.1:1", "-connect-url", "http://127.0.0.1:1",
	"-connector", "c", "-group", "g", "-topics", "t", "-retry-timeout", "1s", "-request-timeout", "1s"}

// testWriter sends output to the test's log, line by line.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		w.t.Log(l)
	}
	return len(p), nil
}

// checkSBOM: a CycloneDX document that lists the modules the binary links.
func checkSBOM(t *testing.T, path string) {
	t.Helper()
	var doc struct {
		BOMFormat  string `json:"bomFormat"`
		Components []struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"components"`
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Error(err)
		return
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.BOMFormat != "CycloneDX" {
		t.Errorf("%s: not CycloneDX JSON: %v", filepath.Base(path), err)
		return
	}
	for _, c := range doc.Components {
		if c.Name == "github.com/IBM/sarama" && c.Version != "" {
			return
		}
	}
	t.Errorf("%s: no component github.com/IBM/sarama among %d", filepath.Base(path), len(doc.Components))
}

// checkChecksums: checksums.txt names every other file of the release, with
// its SHA-256, as sha256sum -c reads it.
func checkChecksums(t *testing.T, r *result) {
	t.Helper()
	f, err := os.Open(filepath.Join(r.dist, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Errorf("checksums.txt: %q", sc.Text())
		}
		sums[name] = sum
	}
	for _, name := range r.files {
		if name == "checksums.txt" {
			continue
		}
		want, ok := sums[name]
		if !ok {
			t.Errorf("checksums.txt does not name %s", name)
			continue
		}
		f, err := os.Open(filepath.Join(r.dist, name))
		if err != nil {
			t.Error(err)
			continue
		}
		h := sha256.New()
		io.Copy(h, f)
		f.Close()
		if got := hex.EncodeToString(h.Sum(nil)); got != want {
			t.Errorf("%s: sha256 %s, checksums.txt says %s", name, got, want)
		}
	}
}

// extract unpacks a .tar.gz into dir.
func extract(t *testing.T, archive, dir string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg || strings.Contains(h.Name, "..") {
			continue
		}
		path := filepath.Join(dir, h.Name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, os.FileMode(h.Mode)&0o777); err != nil {
			t.Fatal(err)
		}
	}
}

// checkImages loads each image archive as a user does, and reads the
// version back from its label and, for the Job's image, from its binaries.
func checkImages(ctx context.Context, t *testing.T, r *result) {
	t.Helper()
	p, err := containers.New(filepath.Join(t.TempDir(), "podman"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.images) != 2 {
		t.Fatalf("images %v, want the worker's and the Job's", r.images)
	}
	for _, img := range r.images {
		out, err := p.Run(ctx, "load", "-i", filepath.Join(r.dist, img.archive))
		if err != nil {
			t.Errorf("podman load -i %s: %v", img.archive, err)
			continue
		}
		t.Cleanup(func() { p.RemoveImage(context.Background(), img.ref) })
		if !strings.Contains(out, img.ref) {
			t.Errorf("podman load -i %s: %q, want %s", img.archive, out, img.ref)
		}
		label, err := p.Run(ctx, "image", "inspect", "--format", `{{index .Labels "org.opencontainers.image.version"}}`, img.ref)
		if err != nil || strings.TrimSpace(label) != r.version {
			t.Errorf("%s: version label %q (%v), want %s", img.ref, strings.TrimSpace(label), err, r.version)
		}
	}
	job := "localhost/" + jobImage + ":" + r.version
	out, err := p.Run(ctx, "run", "--rm", "--network", "none", "--entrypoint", "/cutover", job, "version")
	if want := "cutover " + r.version + " (commit " + r.commit; err != nil || !strings.HasPrefix(out, want) {
		t.Errorf("/cutover version in %s: %v\n%s\nwant it to start with %q", job, err, out, want)
	}
	cmd := p.Command(ctx, append([]string{"run", "--rm", "--network", "none", job}, jobProbe...)...)
	all, _ := cmd.CombinedOutput()
	if want := `"tool_version":"mm2cutover-job/` + r.version + `"`; !strings.Contains(string(all), want) {
		t.Errorf("the Job in %s:\n%s\nwant %s", job, all, want)
	}
}
