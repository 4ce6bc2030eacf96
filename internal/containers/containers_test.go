package containers

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMirrorIn(t *testing.T) {
	for _, tc := range []struct {
		name, file, want string
	}{
		{"deb822", "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\n", "http://deb.debian.org/debian"},
		{"deb822 security first", "URIs: http://deb.debian.org/debian-security\n\nURIs: https://mirror.example/debian/\n", "https://mirror.example/debian"},
		{"one-line", "# comment\ndeb http://ftp.de.debian.org/debian bookworm main\n", "http://ftp.de.debian.org/debian"},
		{"one-line with options", "deb [arch=amd64 signed-by=/k.gpg] http://deb.debian.org/debian bookworm main\n", "http://deb.debian.org/debian"},
		{"not debian", "deb https://packages.cloud.google.com/apt cloud-sdk-bookworm main\n", ""},
		{"deb-src only", "deb-src http://deb.debian.org/debian bookworm main\n", ""},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sources")
			if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := mirrorIn(path); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRefNamesTheContent(t *testing.T) {
	a := DebianRootfs{Name: "x", Suite: "bookworm", Include: []string{"curl"}}
	b := DebianRootfs{Name: "x", Suite: "bookworm", Include: []string{"curl", "openjdk-17-jre-headless"}}
	c := DebianRootfs{Name: "x", Suite: "trixie", Include: []string{"curl"}}
	if a.Ref() == b.Ref() || a.Ref() == c.Ref() {
		t.Errorf("refs do not tell the package lists or suites apart: %s %s %s", a.Ref(), b.Ref(), c.Ref())
	}
	if a.Ref() != (DebianRootfs{Name: "x", Suite: "bookworm", Include: []string{"curl"}}).Ref() {
		t.Error("the same content gives another ref")
	}
	if !strings.HasPrefix(JRE17.Ref(), "localhost/mm2cutover-base-jre17:bookworm-") {
		t.Errorf("JRE17.Ref() = %s", JRE17.Ref())
	}
}

// TestJRE17Runs builds (or finds) the JRE17 base image in the sandbox cache
// and runs Java in it with the project's podman settings.
func TestJRE17Runs(t *testing.T) {
	p, cache := podmanForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ref, err := JRE17.Ensure(ctx, p, filepath.Join(cache, "containers"), nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Run(ctx, "run", "--rm", "--network", "host", "--user", "10001:10001", ref, "sh", "-c", "java -version 2>&1; id -u; command -v curl")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`version "17.`, "10001", "/usr/bin/curl"} {
		if !strings.Contains(out, want) {
			t.Errorf("output %q does not contain %q", out, want)
		}
	}
	if ok, err := p.ImageExists(ctx, "localhost/no-such-image:0"); ok || err != nil {
		t.Errorf("ImageExists of a missing image: %v, %v", ok, err)
	}
}

func TestGoToolchainRef(t *testing.T) {
	a := GoToolchain{Name: "go", Base: "localhost/b:1", GOROOT: "/usr/local/go", GOVERSION: "go1.26.8"}
	b, c := a, a
	b.Base, c.GOROOT = "localhost/b:2", "/opt/go"
	if a.Ref() == b.Ref() || a.Ref() == c.Ref() {
		t.Errorf("refs do not tell bases or GOROOTs apart: %s %s %s", a.Ref(), b.Ref(), c.Ref())
	}
	if !strings.HasPrefix(a.Ref(), "localhost/go:go1.26.8-") {
		t.Errorf("Ref() = %s, want the Go version in the tag", a.Ref())
	}
	for v, ok := range map[string]bool{"go1.26.8": true, "go1.27rc1": true, "go1.26": true, "devel go1.27-abc": false, "go1.26.8 X:jsonv2": false, "": false} {
		if goVersion.MatchString(v) != ok {
			t.Errorf("goVersion.MatchString(%q) = %v, want %v", v, !ok, ok)
		}
	}
}

// TestGoToolchainRuns builds (or finds) the Go toolchain image on the JRE17
// base from this machine's GOROOT and compiles a static program in it, as a
// Dockerfile's build stage would.
func TestGoToolchainRuns(t *testing.T) {
	p, cache := podmanForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	base, err := JRE17.Ensure(ctx, p, filepath.Join(cache, "containers"), nil)
	if err != nil {
		t.Fatal(err)
	}
	goenv := func(name string) string {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		return strings.TrimSpace(string(out))
	}
	g := GoToolchain{Name: "mm2cutover-go", Base: base, GOROOT: goenv("GOROOT"), GOVERSION: goenv("GOVERSION")}
	ref, err := g.Ensure(ctx, p, filepath.Join(cache, "containers"), nil)
	if err != nil {
		t.Fatal(err)
	}
	src := "package main\n\nfunc main() { println(\"hello from a static binary\") }\n"
	out, err := p.Run(ctx, "run", "--rm", "--network", "none", ref, "sh", "-c",
		"set -e; mkdir /src; cd /src; printf '%s' '"+src+"' > main.go; go mod init example.com/hello >/dev/null 2>&1; "+
			"CGO_ENABLED=0 go build -trimpath -o hello . && ./hello 2>&1 && go version")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"hello from a static binary", "go version " + g.GOVERSION + " "} {
		if !strings.Contains(out, want) {
			t.Errorf("output %q does not contain %q", out, want)
		}
	}
	if _, err := (GoToolchain{Name: "x", Base: base, GOROOT: t.TempDir(), GOVERSION: "go1.26.8"}).Ensure(ctx, p, t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "no bin/go") {
		t.Errorf("Ensure with a GOROOT without Go: got %v, want an error naming bin/go", err)
	}
}

// podmanForTest returns the project's podman setup and the sandbox cache
// directory, or skips where podman cannot run (never with CI=true).
func podmanForTest(t *testing.T) (*Podman, string) {
	t.Helper()
	if testing.Short() {
		if os.Getenv("CI") == "true" {
			t.Fatal("skipped by -short, which CI=true does not allow")
		}
		t.Skip("runs podman: without -short")
	}
	cache := os.Getenv("MM2CUTOVER_CACHE")
	if cache == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		cache = filepath.Join(d, "mm2cutover")
	}
	p, err := New(filepath.Join(cache, "containers"))
	if errors.Is(err, ErrUnavailable) && os.Getenv("CI") != "true" {
		t.Skipf("no podman here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p, cache
}
