package mm2cutover_test

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// markdownFiles returns every Markdown file of the repository but those
// under testdata and hidden directories, as slash paths from the root.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			out = append(out, filepath.ToSlash(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// markdownLink is a link of a Markdown document outside its code blocks.
type markdownLink struct {
	target string
	line   int
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// readMarkdown returns the links of a document and the anchors of its
// headings, as GitHub makes them.
func readMarkdown(t *testing.T, path string) (links []markdownLink, anchors map[string]bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	anchors = map[string]bool{}
	inCode := false
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inCode = !inCode
			continue
		}
		if inCode {
			continue
		}
		if strings.HasPrefix(l, "#") {
			anchors[anchor(strings.TrimLeft(l, "# "))] = true
		}
		for _, m := range linkRE.FindAllStringSubmatch(l, -1) {
			links = append(links, markdownLink{m[1], n})
		}
	}
	return links, anchors
}

// anchor is GitHub's anchor of a heading: lower case, letters, digits,
// blanks as hyphens, hyphens and underscores kept, the rest dropped.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestMarkdownLinks: every relative link of every Markdown document of the
// repository leads to a file that exists and, with a #fragment, to one of
// its headings; so moving a section breaks no link silently.
func TestMarkdownLinks(t *testing.T) {
	files := markdownFiles(t)
	if len(files) < 10 {
		t.Fatalf("only %d Markdown files found", len(files))
	}
	anchorsOf := map[string]map[string]bool{}
	linksOf := map[string][]markdownLink{}
	for _, f := range files {
		linksOf[f], anchorsOf[f] = readMarkdown(t, f)
	}
	checked := 0
	for _, f := range files {
		for _, l := range linksOf[f] {
			if strings.Contains(l.target, "://") || strings.HasPrefix(l.target, "mailto:") {
				continue
			}
			checked++
			file, frag, _ := strings.Cut(l.target, "#")
			target := f
			if file != "" {
				target = filepath.ToSlash(filepath.Join(filepath.Dir(f), file))
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s:%d: %s: no such file", f, l.line, l.target)
					continue
				}
			}
			if frag == "" {
				continue
			}
			anchors, ok := anchorsOf[target]
			if !ok {
				t.Errorf("%s:%d: %s: a fragment of a file that is not Markdown", f, l.line, l.target)
			} else if !anchors[frag] {
				t.Errorf("%s:%d: %s: %s has no heading #%s", f, l.line, l.target, target, frag)
			}
		}
	}
	t.Logf("%d links checked in %d files", checked, len(files))
}

// TestDocsNameNoIssues: the documents a user reads name no issue of the
// project's tracker: they say what is true of the code, and the commit
// history keeps how it came to be.
func TestDocsNameNoIssues(t *testing.T) {
	re := regexp.MustCompile(`(?i)\bissues? #?\d+|(^|\s)#\d+\b`)
	for _, f := range markdownFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			if m := re.FindString(l); m != "" {
				t.Errorf("%s:%d: %q", f, i+1, m)
			}
		}
	}
}

func TestAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"9. Rollback":                           "9-rollback",
		"The Job's image":                       "the-jobs-image",
		"1,000 to 50,000 partitions in one run": "1000-to-50000-partitions-in-one-run",
		"`cutover` and `-config`":               "cutover-and--config",
		"What to change per site":               "what-to-change-per-site",
	} {
		if got := anchor(heading); got != want {
			t.Errorf("anchor(%q) = %q, want %q", heading, got, want)
		}
	}
}
