package mm2cutover_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// containerModule matches the modules of a container engine's client and
// runtime: what the sandbox's Docker backend needs (dockertest, the Docker
// client, runc, logrus and their kin) and what no consumer of the library
// should find in its go.sum.
var containerModule = regexp.MustCompile(`docker|runc|logrus|moby|containerd|opencontainers`)

// libraryPackages lists, with go list run in dir (a checkout), the import
// paths of the main module's packages another module can import: neither
// internal (a path segment "internal") nor under examples/, nor a command.
func libraryPackages(t *testing.T, dir string) (module string, pkgs []string) {
	t.Helper()
	module = strings.TrimSpace(goCmd(t, dir, false, "list", "-m"))
	for line := range strings.Lines(goCmd(t, dir, false, "list", "-f", "{{.ImportPath}} {{.Name}}", "./...")) {
		path, name, _ := strings.Cut(strings.TrimSpace(line), " ")
		rel := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
		segs := strings.Split(rel, "/")
		if name == "main" || segs[0] == "examples" || slices.Contains(segs, "internal") {
			continue
		}
		pkgs = append(pkgs, path)
	}
	return module, pkgs
}

// TestConsumerInheritsNoContainerModules writes a module of another team
// that imports every library package of this checkout (a replace directive
// points at it) and runs go mod tidy, which follows the tests of the
// imported packages whatever their build tags: its go.sum must hold no line
// of a container engine's modules (docker, runc, dockertest, logrus...),
// which scanners flag and which an offline tidy cannot fetch. The sandbox's
// Docker backend keeps them in a module of its own (internal/dockerbackend).
// On failure it says, with go mod why -m, which import brought each one.
func TestConsumerInheritsNoContainerModules(t *testing.T) {
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	module, pkgs := libraryPackages(t, root)
	for _, want := range []string{"connect", "kafkaadmin", "plan", "verify"} {
		if !slices.Contains(pkgs, module+"/"+want) {
			t.Fatalf("go list found no package %s among the library's: %q", want, pkgs)
		}
	}
	goVersion := strings.TrimSpace(goCmd(t, root, false, "list", "-m", "-f", "{{.GoVersion}}"))

	dir := t.TempDir()
	gomod := fmt.Sprintf("module example.com/consumer\n\ngo %s\n\nrequire %s v0.0.0\n\nreplace %s => %s\n", goVersion, module, module, root)
	var src strings.Builder
	src.WriteString("// Package consumer imports every library package of mm2cutover.\npackage consumer\n\nimport (\n")
	for _, p := range pkgs {
		fmt.Fprintf(&src, "\t_ %q\n", p)
	}
	src.WriteString(")\n")
	for name, content := range map[string]string{"go.mod": gomod, "consumer.go": src.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goCmd(t, dir, true, "mod", "tidy")
	sum, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	var bad, mods []string
	lines := 0
	for line := range strings.Lines(string(sum)) {
		lines++
		mod, _, _ := strings.Cut(line, " ")
		if containerModule.MatchString(mod) {
			bad = append(bad, strings.TrimSpace(line))
			if !slices.Contains(mods, mod) {
				mods = append(mods, mod)
			}
		}
	}
	t.Logf("a consumer of %d library packages: %d go.sum lines", len(pkgs), lines)
	if len(bad) == 0 {
		return
	}
	why := goCmd(t, dir, true, append([]string{"mod", "why", "-m"}, mods...)...)
	t.Errorf("go mod tidy in a module importing %s gave %d go.sum lines of container modules (of %d):\n%s\n\ngo mod why -m:\n%s",
		strings.Join(pkgs, ", "), len(bad), lines, strings.Join(bad, "\n"), why)
}

// goCmd runs the go command in dir and returns its standard output; a
// failure ends the test. With mod (the consumer module) it adds -mod=mod to
// GOFLAGS: tidy and why may add requirements, from the module cache or
// GOPROXY as the environment has it. The checkout is only read.
func goCmd(t *testing.T, dir string, mod bool, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if mod {
		cmd.Env = append(cmd.Env, "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"))
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, stderr.Bytes())
	}
	return string(out)
}
