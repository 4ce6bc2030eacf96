package containers

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/filelock"
)

// DebianRootfs is a base image made from Debian packages: a debootstrap
// root file system (variant minbase) of Suite with Include installed,
// imported into podman's storage as Ref().
type DebianRootfs struct {
	Name    string   // image name, e.g. "mm2cutover-base-jre17"
	Suite   string   // Debian release, e.g. "bookworm"
	Include []string // packages installed on top of minbase
}

// JRE17 is the base image the worker image's test builds on, standing in
// for eclipse-temurin:17-jre: Java 17 from Debian, plus curl and CA
// certificates, which the Dockerfile's fetch stage uses (as eclipse-temurin
// ships them).
var JRE17 = DebianRootfs{
	Name:    "mm2cutover-base-jre17",
	Suite:   "bookworm",
	Include: []string{"openjdk-17-jre-headless", "curl", "ca-certificates"},
}

// key names one exact content: the suite and the package list.
func (d DebianRootfs) key() string {
	h := sha256.Sum256([]byte(d.Suite + "\x00" + strings.Join(d.Include, ",")))
	return d.Suite + "-" + hex.EncodeToString(h[:])[:12]
}

// Ref is the local image reference of the imported root file system.
func (d DebianRootfs) Ref() string { return "localhost/" + d.Name + ":" + d.key() }

// Ensure makes sure podman's storage holds d.Ref() and returns it. In order
// it uses: the image already imported; the root file system's tar in
// cacheDir (import, seconds); debootstrap from the Debian mirror apt uses
// (MM2CUTOVER_DEBIAN_MIRROR overrides it), whose tar it keeps in cacheDir
// (about half a minute to two minutes and 480 MB for JRE17). Concurrent
// callers share the work under a file lock in cacheDir. Errors wrap
// ErrUnavailable when debootstrap is missing.
func (d DebianRootfs) Ensure(ctx context.Context, p *Podman, cacheDir string, log *slog.Logger) (string, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return p.ensureImage(ctx, d.Ref(), cacheDir, func(ref string) error { return d.make(ctx, p, ref, cacheDir, log) })
}

// make builds the image ref: the root file system's tar (cached), imported.
func (d DebianRootfs) make(ctx context.Context, p *Podman, ref, cacheDir string, log *slog.Logger) error {
	tarPath := filepath.Join(cacheDir, d.Name+"-"+d.key()+".tar")
	if _, err := os.Stat(tarPath); err != nil {
		start := time.Now()
		log.Info("building a base image root file system with debootstrap", "suite", d.Suite, "packages", d.Include, "cache", tarPath)
		if err := d.debootstrap(ctx, cacheDir, tarPath); err != nil {
			return err
		}
		log.Info("root file system cached", "path", tarPath, "took", time.Since(start).Round(time.Second))
	}
	// No registry config: give the image the PATH and locale a Debian image has.
	if _, err := p.Run(ctx, "import",
		"--change", "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"--change", "ENV LANG=C.UTF-8",
		tarPath, ref); err != nil {
		return fmt.Errorf("import %s: %w", tarPath, err)
	}
	return nil
}

// ensureImage returns ref once the image exists, calling build to make it
// when it does not. The builders share a file lock in cacheDir, and the
// check is repeated under it, so concurrent callers build the image once.
func (p *Podman) ensureImage(ctx context.Context, ref, cacheDir string, build func(ref string) error) (string, error) {
	if ok, err := p.ImageExists(ctx, ref); err != nil || ok {
		return ref, err
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", err
	}
	unlock, err := filelock.Lock(ctx, filepath.Join(cacheDir, ".containers.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if ok, err := p.ImageExists(ctx, ref); err != nil || ok {
		return ref, err
	}
	if err := build(ref); err != nil {
		return "", err
	}
	return ref, nil
}

// debootstrap builds the root file system in a temporary directory under
// cacheDir and writes it as a tar to tarPath (renamed into place, so a
// half-written tar is never used).
func (d DebianRootfs) debootstrap(ctx context.Context, cacheDir, tarPath string) error {
	bin, err := exec.LookPath("debootstrap")
	if err != nil {
		return fmt.Errorf("%w: debootstrap is not installed (apt-get install debootstrap)", ErrUnavailable)
	}
	tmp, err := os.MkdirTemp(cacheDir, "rootfs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	rootfs := filepath.Join(tmp, "rootfs")
	mirror := os.Getenv("MM2CUTOVER_DEBIAN_MIRROR")
	if mirror == "" {
		mirror = aptMirror()
	}
	cmd := exec.CommandContext(ctx, bin, "--variant=minbase", "--include="+strings.Join(d.Include, ","), d.Suite, rootfs, mirror)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("debootstrap %s from %s: %w\n%s", d.Suite, mirror, err, lastLines(string(out), 20))
	}
	// apt's package cache and lists are not part of an image.
	for _, dir := range []string{"var/cache/apt/archives", "var/lib/apt/lists"} {
		entries, _ := filepath.Glob(filepath.Join(rootfs, dir, "*"))
		for _, e := range entries {
			if filepath.Base(e) != "partial" && filepath.Base(e) != "lock" {
				os.RemoveAll(e)
			}
		}
	}
	partial := filepath.Join(tmp, "rootfs.tar")
	if out, err := exec.CommandContext(ctx, "tar", "--numeric-owner", "-C", rootfs, "-cf", partial, ".").CombinedOutput(); err != nil {
		return fmt.Errorf("tar the root file system: %w\n%s", err, lastLines(string(out), 20))
	}
	return os.Rename(partial, tarPath)
}

// aptMirror returns the Debian archive apt uses on this machine (the first
// http(s) URI ending in /debian in /etc/apt/sources.list or sources.list.d),
// or deb.debian.org.
func aptMirror() string {
	files := []string{"/etc/apt/sources.list"}
	more, _ := filepath.Glob("/etc/apt/sources.list.d/*")
	files = append(files, more...)
	for _, f := range files {
		if u := mirrorIn(f); u != "" {
			return u
		}
	}
	return "http://deb.debian.org/debian"
}

// mirrorIn finds a Debian archive URI in one apt sources file, in either
// the one-line ("deb URI suite ...") or the deb822 ("URIs: URI") format.
func mirrorIn(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		var uris []string
		switch {
		case strings.HasPrefix(line, "deb "):
			for _, field := range strings.Fields(line)[1:] {
				if !strings.HasPrefix(field, "[") && !strings.HasSuffix(field, "]") {
					uris = append(uris, field)
					break
				}
			}
		case strings.HasPrefix(line, "URIs:"):
			uris = strings.Fields(strings.TrimPrefix(line, "URIs:"))
		}
		for _, u := range uris {
			if (strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")) && strings.HasSuffix(strings.TrimRight(u, "/"), "/debian") {
				return strings.TrimRight(u, "/")
			}
		}
	}
	return ""
}
