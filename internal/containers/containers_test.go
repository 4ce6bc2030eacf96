package containers

import (
	"context"
	"errors"
	"os"
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
