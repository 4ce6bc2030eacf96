package mm2cutover_test

import (
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

// versionRE is the form of the repository's VERSION: semantic versioning
// without the leading v (a git tag has it).
var versionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)

// versionPlaces are the files that name the version of the source tree, and
// how each names it: every one must name the repository's VERSION.
var versionPlaces = []struct {
	file string
	re   *regexp.Regexp // its first group is the version
}{
	{"CHANGELOG.md", regexp.MustCompile(`(?m)^## (?:Unreleased \()?([0-9][^ )]*)`)},
	{"examples/cutover/main.go", regexp.MustCompile(`const defaultVersion = "([^"]*)"`)},
	{"examples/job/main.go", regexp.MustCompile(`var version = "([^"]*)"`)},
	{"examples/job/Dockerfile", regexp.MustCompile(`(?m)^ARG VERSION=(\S*)`)},
	{"docker/mm2/Dockerfile", regexp.MustCompile(`(?m)^ARG VERSION=(\S*)`)},
	{"examples/kubernetes/connect/kustomization.yaml", regexp.MustCompile(`newTag: (\S*)`)},
	{"examples/kubernetes/cutover/kustomization.yaml", regexp.MustCompile(`newTag: (\S*)`)},
	{"examples/kubernetes/cutover/resume/kustomization.yaml", regexp.MustCompile(`newTag: (\S*)`)},
	{"examples/kubernetes/connect/deployment.yaml", regexp.MustCompile(`image: mm2-connect:(\S*)`)},
	{"examples/kubernetes/cutover/job.yaml", regexp.MustCompile(`image: mm2cutover-job:(\S*)`)},
	{"examples/kubernetes/cutover/resume/job.yaml", regexp.MustCompile(`image: mm2cutover-job:(\S*)`)},
	{"docs/runbook.md", regexp.MustCompile(`(?m)^cutover ([0-9]\S*) \(commit`)},
}

// versionProblems lists the places of fsys (the repository) that name
// another version than VERSION, or none.
func versionProblems(fsys fs.FS) []string {
	b, err := fs.ReadFile(fsys, "VERSION")
	if err != nil {
		return []string{err.Error()}
	}
	version := strings.TrimSpace(string(b))
	var p []string
	if !versionRE.MatchString(version) {
		p = append(p, fmt.Sprintf("VERSION %q is not MAJOR.MINOR.PATCH", version))
	}
	for _, vp := range versionPlaces {
		b, err := fs.ReadFile(fsys, vp.file)
		if err != nil {
			p = append(p, err.Error())
			continue
		}
		ms := vp.re.FindAllStringSubmatch(string(b), -1)
		if len(ms) == 0 {
			p = append(p, fmt.Sprintf("%s names no version (%s)", vp.file, vp.re))
		}
		if vp.file == "CHANGELOG.md" && len(ms) > 0 {
			ms = ms[:1] // the newest entry
		}
		for _, m := range ms {
			if m[1] != version {
				p = append(p, fmt.Sprintf("%s names %s, VERSION is %s", vp.file, m[1], version))
			}
		}
	}
	return p
}

// TestOneVersion: the version of the source tree is the one of VERSION in
// every place that names it: the binaries' defaults, the images' labels,
// the manifests' image tags, the newest CHANGELOG entry, the runbook.
// The check finds a place left behind.
func TestOneVersion(t *testing.T) {
	root := os.DirFS(".")
	if p := versionProblems(root); len(p) > 0 {
		t.Errorf("the version is not the same everywhere:\n%s", strings.Join(p, "\n"))
	}
	m := fstest.MapFS{}
	if _, err := fs.Stat(root, "VERSION"); err != nil {
		t.Fatal(err)
	}
	m["VERSION"] = &fstest.MapFile{Data: []byte("0.2.0\n")}
	for _, vp := range versionPlaces {
		b, err := fs.ReadFile(root, vp.file)
		if err != nil {
			t.Fatal(err)
		}
		m[vp.file] = &fstest.MapFile{Data: b}
	}
	v, _ := fs.ReadFile(root, "VERSION")
	old := strings.TrimSpace(string(v))
	m["VERSION"] = &fstest.MapFile{Data: v}
	m["examples/kubernetes/cutover/job.yaml"] = &fstest.MapFile{Data: []byte(strings.Replace(string(m["examples/kubernetes/cutover/job.yaml"].Data), "mm2cutover-job:"+old, "mm2cutover-job:0.1.0", 1))}
	m["CHANGELOG.md"] = &fstest.MapFile{Data: []byte("# Changelog\n\n## Unreleased (9.9.9-dev)\n\n## " + old + " (2026-12-05)\n")}
	p := versionProblems(m)
	if want := 2; len(p) != want || !strings.Contains(strings.Join(p, "\n"), "job.yaml names 0.1.0") || !strings.Contains(strings.Join(p, "\n"), "CHANGELOG.md names 9.9.9-dev") {
		t.Errorf("a Job tag and a CHANGELOG entry left behind: got %q, want both named", p)
	}
}
