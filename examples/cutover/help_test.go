package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
)

// helpOf runs help for a step and returns what it printed.
func helpOf(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(args, &out, &errb); code != app.ExitOK {
		t.Fatalf("%q: exit %d\n%s", args, code, errb.String())
	}
	return out.String()
}

// helpSections splits a step's help at its headings ("Examples:",
// "Required:", ...): the lines under each, in order.
func helpSections(help string) (titles []string, body map[string][]string) {
	body = map[string][]string{}
	title := ""
	sc := bufio.NewScanner(strings.NewReader(help))
	for sc.Scan() {
		l := sc.Text()
		if l != "" && !strings.HasPrefix(l, " ") && strings.HasSuffix(l, ":") {
			title = strings.TrimSuffix(l, ":")
			titles = append(titles, title)
			continue
		}
		if title != "" && l != "" {
			body[title] = append(body[title], l)
		}
	}
	return titles, body
}

var cutoverWord = regexp.MustCompile(`(^|[\s(])cutover `)

var flagLine = regexp.MustCompile(`^  -([a-z][a-z0-9-]*)(?:, -([a-z][a-z0-9-]*))?`)

// exampleArgs are the arguments an example's command line gives the
// command line: the words after "cutover", up to a shell's ), >, |.
func exampleArgs(t *testing.T, command string) []string {
	t.Helper()
	loc := cutoverWord.FindStringIndex(command)
	if loc == nil {
		t.Fatalf("example %q runs no cutover command", command)
	}
	rest := command[loc[1]:]
	if i := strings.IndexAny(rest, ")>|"); i >= 0 {
		rest = rest[:i]
	}
	words, err := shellWords(rest)
	if err != nil {
		t.Fatalf("example %q: %v", command, err)
	}
	return words
}

// TestStepHelp: the help of every step and command the top help lists is
// kubectl's: examples first, real command lines each (they parse, with the
// step's own flags); then the required settings, for a step that reaches
// the clusters, then the step's flags under headings; every flag the step
// takes shown once, with its description or, for the flags every step that
// reaches the clusters shares, by name (cutover options describes them);
// no flag the step does not take; lines of at most 100 columns but for the
// examples. help <step> and <step> -h print the same.
func TestStepHelp(t *testing.T) {
	top := helpOf(t, "help")
	_, sections := helpSections(top)
	var listed []string
	for _, l := range append(sections["Steps"], sections["Other commands"]...) {
		if name, _, ok := strings.Cut(strings.TrimSpace(l), " "); ok && strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "   ") {
			listed = append(listed, name)
		}
	}
	if want := stepNames(); !slices.Equal(listed, want) {
		t.Fatalf("the top help lists %q, want every step and command: %q", listed, want)
	}
	for _, name := range listed {
		t.Run(name, func(t *testing.T) {
			st, _ := findStep(name)
			help := helpOf(t, "help", name)
			if dashH := helpOf(t, name, "-h"); dashH != help {
				t.Errorf("%s -h differs from help %s:\n%s", name, name, dashH)
			}
			titles, body := helpSections(help)
			if len(titles) == 0 || titles[0] != "Examples" || len(body["Examples"]) < 2 {
				t.Fatalf("the help does not begin with examples (headings %q):\n%s", titles, help)
			}
			if !strings.HasPrefix(help, sentence(st.summary[:20])) {
				t.Errorf("the help does not begin with the step's summary:\n%s", help)
			}
			var commands int
			for _, l := range body["Examples"] {
				l = strings.TrimSpace(l)
				if strings.HasPrefix(l, "#") {
					continue
				}
				commands++
				args := exampleArgs(t, l)
				if len(args) == 0 || args[0] != name && name != "help" {
					t.Errorf("example %q is not a command of %s", l, name)
					continue
				}
				if err := checkCommand(args); err != nil && name != "help" && name != "completion" {
					t.Errorf("example %q: %v", l, err)
				}
			}
			if commands < 1 || commands > 4 {
				t.Errorf("%d example commands, want 1 to 4", commands)
			}
			for _, l := range strings.Split(help, "\n") {
				if len(l) > helpWidth && !slices.Contains(body["Examples"], l) {
					t.Errorf("a line of %d columns: %q", len(l), l)
				}
			}
			// The flags the help shows, and how often.
			shown := map[string]int{}
			required := map[string]bool{}
			for _, title := range titles[1:] {
				for _, l := range body[title] {
					if strings.HasPrefix(title, "Also") {
						for _, w := range strings.Fields(l) {
							shown[strings.TrimPrefix(w, "-")]++
						}
						continue
					}
					if m := flagLine.FindStringSubmatch(l); m != nil {
						n := m[1]
						if m[2] != "" {
							n = m[2] // -o, -output
						}
						shown[n]++
						if title == "Required" || strings.Contains(l, "(required)") {
							required[n] = true
						}
					}
				}
			}
			want := st.flagNames()
			for _, f := range want {
				if shown[f] != 1 {
					t.Errorf("-%s is shown %d times, want once", f, shown[f])
				}
			}
			for f := range shown {
				if !slices.Contains(want, f) {
					t.Errorf("the help shows -%s, which %s does not take", f, name)
				}
			}
			var wantRequired []string
			if st.cluster || name == "options" {
				wantRequired = settings.RequiredFlags()
			}
			for f := range required {
				if !slices.Contains(wantRequired, f) {
					t.Errorf("-%s is marked required", f)
				}
			}
			for _, f := range wantRequired {
				if !required[f] {
					t.Errorf("-%s is not marked required", f)
				}
			}
		})
	}
}

// TestApplyHelpSaysWhyNoApproval: apply writes without -yes; its help
// says why, and that -dry-run is the preview.
func TestApplyHelpSaysWhyNoApproval(t *testing.T) {
	help := helpOf(t, "help", "apply")
	for _, want := range []string{"Apply writes without -yes", "STOPPED", "rollback -yes", "Preview with -dry-run", "cutover apply -config cutover.env -dry-run"} {
		if !strings.Contains(strings.Join(strings.Fields(help), " "), want) {
			t.Errorf("apply's help does not say %q:\n%s", want, help)
		}
	}
	for _, step := range []string{"resume", "rollback", "run"} {
		if help := helpOf(t, "help", step); !strings.Contains(help, "Without -yes") {
			t.Errorf("%s's help does not say what it does without -yes:\n%s", step, help)
		}
	}
}

// TestEveryFlagHasAHome: every flag of the command line is a step's (or
// the command line's alone: the sandbox, -version) and sits under one
// heading; the tables of the help and the completion name no flag that
// does not exist.
func TestEveryFlagHasAHome(t *testing.T) {
	fs := commandFlags()
	taken, grouped := map[string]bool{}, map[string]int{}
	for _, st := range steps {
		for _, f := range st.flagNames() {
			taken[f] = true
		}
	}
	for _, g := range flagGroups {
		for _, f := range g.flags {
			grouped[f]++
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		switch {
		case flagAliases[f.Name] != "":
		case slices.Contains(topLevelFlags, f.Name):
			if taken[f.Name] {
				t.Errorf("-%s is the command line's alone and a step's", f.Name)
			}
		case !taken[f.Name]:
			t.Errorf("-%s is no step's: no help shows it", f.Name)
		case grouped[f.Name] != 1:
			t.Errorf("-%s is under %d headings, want 1", f.Name, grouped[f.Name])
		}
	})
	var named []string
	for _, l := range [][]string{fileFlags, dirFlags, topLevelFlags, connection, connectorFlags, mm2Input, planInput, files, output} {
		named = append(named, l...)
	}
	for k := range flagArgs {
		named = append(named, k)
	}
	for k, v := range flagAliases {
		named = append(named, k, v)
	}
	for k := range flagValues {
		named = append(named, k)
	}
	for f := range grouped {
		named = append(named, f)
	}
	for _, f := range named {
		if fs.Lookup(f) == nil {
			t.Errorf("the help's tables name -%s, which does not exist", f)
		}
	}
}

// TestDidYouMean: a mistyped step, flag, shell or output format is refused
// (exit 2) with what it may have meant; a word close to nothing is refused
// without a guess.
func TestDidYouMean(t *testing.T) {
	requiredEnv(t, "http://127.0.0.1:1")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"aply"}, `unknown step "aply"; did you mean apply?`},
		{[]string{"-config", "x.env", "verfiy"}, `unknown step "verfiy"; did you mean verify?`},
		{[]string{"launch"}, `unknown step "launch"; run 'cutover help' for the steps`},
		{[]string{"help", "rollbak"}, `unknown step "rollbak"; did you mean rollback?`},
		{[]string{"plan", "-stabilty-window", "1m"}, "unknown flag -stabilty-window; did you mean -stability-window?"},
		{[]string{"-offsets-form", "csv:x", "plan"}, "unknown flag -offsets-form; did you mean -offsets-from?"},
		{[]string{"resume", "-ye"}, "unknown flag -ye; did you mean -yes?"},
		{[]string{"apply", "-dryrun"}, "unknown flag -dryrun; did you mean -dry-run?"},
		{[]string{"apply", "-nope"}, "unknown flag -nope\n"},
		{[]string{"completion", "bsh"}, `completion "bsh": want bash or zsh; did you mean bash or zsh?`},
		{[]string{"status", "-o", "jsn"}, `-o "jsn": want text or json; did you mean json?`},
		{[]string{"status", "-o", "yaml"}, `-o "yaml": want text or json`},
	} {
		var out, errb bytes.Buffer
		if code := run(tc.args, &out, &errb); code != app.ExitUsage || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%q: exit %d, want %d saying %q; stderr:\n%s", tc.args, code, app.ExitUsage, tc.want, errb.String())
		}
	}
}

// TestOutputFlag: -o json is -json, wherever it is given (the command
// line, MM2CUTOVER_OUTPUT, where the version step's document still holds
// the Connect worker's version); -o text is the tables; -o text beside
// -json is refused; a failure of a -o json run is a JSON document too.
func TestOutputFlag(t *testing.T) {
	// A worker that answers GET / at once, for the version step.
	worker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"version":"4.1.0","commit":"abc","kafka_cluster_id":"k1"}`)
	}))
	defer worker.Close()
	requiredEnv(t, worker.URL)
	isJSON := func(b []byte) bool { return json.Valid(b) && bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) }
	for _, tc := range []struct {
		args   []string
		env    string
		code   int
		asJSON bool
	}{
		{[]string{"version", "-o", "json"}, "", 0, true},
		{[]string{"-o=json", "version"}, "", 0, true},
		{[]string{"--output", "json", "version"}, "", 0, true},
		{[]string{"version"}, "json", 0, true},
		{[]string{"version", "-o", "text"}, "", 0, false},
		{[]string{"version", "-json"}, "", 0, true},
		{[]string{"-o", "json", "precheck", "-tasks-max", "-1"}, "", app.ExitUsage, true},
		{[]string{"-o", "json", "precheck", "-offsets-from", "nowhere"}, "", app.ExitUsage, true},
		{[]string{"precheck", "-tasks-max", "-1"}, "json", app.ExitUsage, true},
		{[]string{"precheck", "-o", "text", "-json"}, "", app.ExitUsage, true},
		{[]string{"precheck"}, "yaml", app.ExitUsage, false},
	} {
		t.Run(strings.Join(tc.args, " ")+" "+tc.env, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("MM2CUTOVER_OUTPUT", tc.env)
			}
			var out, errb bytes.Buffer
			code := run(tc.args, &out, &errb)
			if tc.args[0] == "version" && tc.asJSON && !strings.Contains(out.String(), `"connect": {`) {
				t.Errorf("%q: the version document has no Connect part (MM2CUTOVER_CONNECT_URL is set):\n%s", tc.args, out.String())
			}
			if code != tc.code || isJSON(out.Bytes()) != tc.asJSON {
				t.Errorf("%q (MM2CUTOVER_OUTPUT=%s): exit %d, JSON %v; want exit %d, JSON %v\nstdout:\n%s\nstderr:\n%s",
					tc.args, tc.env, code, isJSON(out.Bytes()), tc.code, tc.asJSON, out.String(), errb.String())
			}
		})
	}
}
