package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
)

// readmePath is the repository's README, from this package's directory.
const readmePath = "../../README.md"

// fence is one fenced block of a Markdown document: its language, its
// lines and the line of the document each starts on.
type fence struct {
	lang  string
	lines []string
	at    []int
}

// fences returns the fenced blocks of a Markdown document, in order.
func fences(doc string) []fence {
	var out []fence
	var cur *fence
	sc := bufio.NewScanner(strings.NewReader(doc))
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "```") && cur == nil:
			cur = &fence{lang: strings.TrimPrefix(l, "```")}
		case strings.HasPrefix(l, "```"):
			out, cur = append(out, *cur), nil
		case cur != nil:
			cur.lines, cur.at = append(cur.lines, l), append(cur.at, n)
		}
	}
	return out
}

// shellCommand is one command of a sh block, continuation lines joined,
// and the body of its here-document, if it has one.
type shellCommand struct {
	words   []string
	line    int
	heredoc string
}

// shellCommands splits the sh blocks of a Markdown document into commands.
func shellCommands(doc string) ([]shellCommand, error) {
	var out []shellCommand
	for _, f := range fences(doc) {
		if f.lang != "sh" {
			continue
		}
		var joined strings.Builder
		start := 0
		for i := 0; i < len(f.lines); i++ {
			l := f.lines[i]
			if joined.Len() == 0 {
				start = f.at[i]
			}
			if strings.HasSuffix(l, `\`) {
				joined.WriteString(strings.TrimSuffix(l, `\`) + " ")
				continue
			}
			joined.WriteString(l)
			words, err := shellWords(joined.String())
			joined.Reset()
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", start, err)
			}
			if len(words) == 0 {
				continue
			}
			c := shellCommand{words: words, line: start}
			if k := slices.IndexFunc(words, func(w string) bool { return strings.HasPrefix(w, "<<") }); k >= 0 {
				end := strings.Trim(strings.TrimPrefix(words[k], "<<"), `'"`)
				if end == "" && k+1 < len(words) {
					end = words[k+1]
				}
				var body strings.Builder
				for i++; i < len(f.lines) && f.lines[i] != end; i++ {
					body.WriteString(f.lines[i] + "\n")
				}
				if i == len(f.lines) {
					return nil, fmt.Errorf("line %d: here-document without its %s line", start, end)
				}
				c.heredoc = body.String()
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// cliArgs returns the arguments a README command gives the cutover CLI:
// after "./cutover" or "cutover", or after the package of "go run" or "go
// build" of ./examples/cutover (nil for a go build).
func cliArgs(words []string) (args []string, ok bool) {
	switch {
	case len(words) > 0 && (words[0] == "cutover" || words[0] == "./cutover"):
		return words[1:], true
	case len(words) > 2 && words[0] == "go" && (words[1] == "run" || words[1] == "build"):
		for i, w := range words[2:] {
			if w == "./examples/cutover" {
				if words[1] == "build" {
					return nil, true
				}
				return words[2+i+1:], true
			}
		}
	}
	return nil, false
}

// repoPathProblem says why a word that names a path of the repository
// (its first element is a top-level entry: examples/..., ./scripts/test,
// docs/...) names none; "" when it exists or is no such path.
func repoPathProblem(root string, top map[string]bool, word string) string {
	p := strings.TrimPrefix(word, "./")
	first, _, _ := strings.Cut(p, "/")
	if !top[first] {
		return ""
	}
	if _, err := os.Stat(filepath.Join(root, p)); err != nil {
		return fmt.Sprintf("%s: not in the repository", word)
	}
	return ""
}

// TestReadmeCommands checks every command the README shows as a new user
// would run it: each cutover command names a step and flags the command
// line has, and parses; a settings file it writes is one the tool reads,
// with the settings it means; each path of the repository it names exists;
// and the cheap ones run: the binary is built as the README builds it, and
// its version command answers.
func TestReadmeCommands(t *testing.T) {
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := shellCommands(string(b))
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs("../..")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	top := map[string]bool{}
	for _, e := range entries {
		top[e.Name()] = true
	}
	var cli, settingsFiles int
	var built bool
	for _, c := range cmds {
		where := fmt.Sprintf("README.md:%d: %s", c.line, strings.Join(c.words, " "))
		for _, w := range c.words {
			if p := repoPathProblem(root, top, w); p != "" {
				t.Errorf("%s: %s", where, p)
			}
		}
		if c.heredoc != "" && slices.ContainsFunc(c.words, func(w string) bool { return strings.HasSuffix(w, ".env") }) {
			settingsFiles++
			checkReadmeSettings(t, where, c.heredoc)
		}
		args, ok := cliArgs(c.words)
		if !ok {
			continue
		}
		cli++
		switch {
		case args == nil:
			built = true
		case len(args) > 0 && strings.HasPrefix(args[0], "-"):
			// Flags without a step (-sandbox): the command line must take them.
			var out, errb bytes.Buffer
			if code := run(append(slices.Clone(args), "-h"), &out, &errb); code != 0 {
				t.Errorf("%s: exit %d: %s", where, code, strings.TrimSpace(errb.String()))
			}
		default:
			if err := checkCommand(args); err != nil {
				t.Errorf("%s: %v", where, err)
			}
		}
	}
	if cli < 6 || settingsFiles != 1 || !built {
		t.Fatalf("found %d cutover commands, %d settings files, built: %v; want the demo, the five steps, one settings file and the build", cli, settingsFiles, built)
	}
	if fi, err := os.Stat(filepath.Join(root, "scripts/test")); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("scripts/test is not an executable file: %v", err)
	}
	if testing.Short() {
		return
	}
	// The build and the version, as the README runs them.
	bin := filepath.Join(t.TempDir(), "cutover")
	build := exec.Command("go", "build", "-o", bin, "./examples/cutover")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "cutover ") || !strings.Contains(string(out), runtime.Version()) {
		t.Errorf("cutover version: %v\n%s", err, out)
	}
}

// checkReadmeSettings reads a settings file the README writes as the
// command line does (-config), and checks it means what it says: every
// MM2CUTOVER_ line sets that setting to the value shown.
func checkReadmeSettings(t *testing.T, where, text string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cutover.env")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("cutover", flag.ContinueOnError)
	flags := settings.BindFlags(fs)
	if err := fs.Parse([]string{"-config", path}); err != nil {
		t.Fatal(err)
	}
	s, err := flags.Settings()
	if err != nil {
		t.Errorf("%s: the settings file: %v", where, err)
		return
	}
	got := map[string]string{
		"MM2CUTOVER_SOURCE_BOOTSTRAP": strings.Join(s.Source.BootstrapServers, ","),
		"MM2CUTOVER_TARGET_BOOTSTRAP": strings.Join(s.Target.BootstrapServers, ","),
		"MM2CUTOVER_CONNECT_URL":      s.ConnectURL,
		"MM2CUTOVER_CONNECTOR":        s.Connector,
		"MM2CUTOVER_GROUP":            s.Group,
		"MM2CUTOVER_TOPICS":           strings.Join(s.Topics, ","),
	}
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		key, value, _ := strings.Cut(l, "=")
		value, _, _ = strings.Cut(value, " #")
		if g, ok := got[key]; !ok {
			t.Errorf("%s: %s: the test does not know this setting", where, key)
		} else if g != strings.TrimSpace(value) {
			t.Errorf("%s: %s: the tool reads %q, the README means %q", where, key, g, strings.TrimSpace(value))
		}
	}
}

// TestReadmeGoSnippet builds the README's Go program as a user's module
// that requires this one would, runs it, and compares what it prints with
// the output the README shows after it.
func TestReadmeGoSnippet(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	fs := fences(string(b))
	i := slices.IndexFunc(fs, func(f fence) bool {
		return f.lang == "go" && strings.HasPrefix(strings.Join(f.lines, "\n"), "package main")
	})
	if i < 0 || i+1 == len(fs) || fs[i+1].lang != "" {
		t.Fatal("the README has no go block followed by its output")
	}
	root, _ := filepath.Abs("../..")
	dir := t.TempDir()
	goMod := "module example.com/readme\n\ngo 1.26\n\nrequire github.com/mm2cutover/mm2cutover v0.0.0\n\nreplace github.com/mm2cutover/mm2cutover => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"go.mod": []byte(goMod), "go.sum": sum, "main.go": []byte(strings.Join(fs[i].lines, "\n") + "\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "run", "-mod=mod", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run of the README's program: %v\n%s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), strings.Join(fs[i+1].lines, "\n"); got != want {
		t.Errorf("the README's program prints:\n%s\nthe README says:\n%s", got, want)
	}
}

// TestReadmeLibraryIsTheConsumer: the README's fragment of a tool on the
// library is, line for line, examples/consumer's code, which builds and is
// tested in a module of its own.
func TestReadmeLibraryIsTheConsumer(t *testing.T) {
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../consumer/migrate.go")
	if err != nil {
		t.Fatal(err)
	}
	fs := fences(string(b))
	i := slices.IndexFunc(fs, func(f fence) bool {
		return f.lang == "go" && strings.Contains(strings.Join(f.lines, "\n"), "cutover.Open")
	})
	if i < 0 {
		t.Fatal("the README shows no use of cutover.Open")
	}
	if fragment := strings.Join(fs[i].lines, "\n"); !strings.Contains(string(src), fragment) {
		t.Errorf("the README's library fragment is not examples/consumer/migrate.go's code:\n%s", fragment)
	}
}
