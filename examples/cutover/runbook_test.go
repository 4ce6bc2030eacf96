package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// runbookCommands returns every cutover command in the shell blocks of a
// Markdown document, continuation lines joined, as argument lists (without
// the leading "cutover"), with the line each starts on.
func runbookCommands(doc string) (cmds [][]string, lines []int, err error) {
	sc := bufio.NewScanner(strings.NewReader(doc))
	inShell, n := false, 0
	var cur strings.Builder
	start := 0
	for sc.Scan() {
		n++
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "```"):
			inShell = !inShell && strings.TrimPrefix(l, "```") == "sh"
			continue
		case !inShell:
			continue
		}
		if cur.Len() == 0 {
			if !strings.HasPrefix(l, "cutover ") {
				continue
			}
			start = n
		}
		cont := strings.HasSuffix(l, `\`)
		cur.WriteString(strings.TrimSuffix(l, `\`) + " ")
		if cont {
			continue
		}
		args, err := shellWords(cur.String())
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %v", start, err)
		}
		cmds, lines = append(cmds, args[1:]), append(lines, start)
		cur.Reset()
	}
	return cmds, lines, sc.Err()
}

// shellWords splits a command line as a shell does for the runbook's
// commands: blanks separate words, single and double quotes group, and a
// word starting with # begins a comment.
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			w.WriteByte(c)
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
		case c == '#' && !inWord:
			return words, nil
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// checkCommand reports why args are not a command the CLI takes: the step
// must exist, every flag must be one of that step's (its help shows it),
// and the command line must parse (run with -h after it exits 0).
func checkCommand(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("no step")
	}
	name := args[0]
	st, known := findStep(name)
	if !known {
		return fmt.Errorf("unknown step %q", name)
	}
	allowed := st.flagNames()
	for _, a := range args[1:] {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		flagName, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !slices.Contains(allowed, withoutAlias(flagName)) {
			return fmt.Errorf("-%s is not a flag of %s", flagName, name)
		}
	}
	var out, errb bytes.Buffer
	if code := run(append(slices.Clone(args), "-h"), &out, &errb); code != 0 {
		return fmt.Errorf("exit %d: %s", code, strings.TrimSpace(errb.String()))
	}
	return nil
}

// TestRunbookCommands parses every cutover command docs/runbook.md shows
// with the current command line: each step exists, each flag is the step's,
// each line parses. The checker itself refuses a step, a flag and a value
// that do not exist.
func TestRunbookCommands(t *testing.T) {
	b, err := os.ReadFile("../../docs/runbook.md")
	if err != nil {
		t.Fatal(err)
	}
	cmds, lines, err := runbookCommands(string(b))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d cutover commands in the runbook", len(cmds))
	if len(cmds) < 15 {
		t.Fatalf("only %d cutover commands found in the runbook", len(cmds))
	}
	steps := map[string]bool{}
	for i, args := range cmds {
		if err := checkCommand(args); err != nil {
			t.Errorf("docs/runbook.md:%d: cutover %s: %v", lines[i], strings.Join(args, " "), err)
		}
		steps[args[0]] = true
	}
	for _, want := range []string{"version", "precheck", "plan", "apply", "verify", "resume", "status", "rollback", "strimzi", "report"} {
		if !steps[want] {
			t.Errorf("the runbook shows no cutover %s", want)
		}
	}
	for _, bad := range [][]string{
		{"prechek", "-config", "cutover.env"},
		{"apply", "-config", "cutover.env", "-yes"}, // a flag of resume and rollback, not of apply
		{"plan", "-offsets-form", "csv:x"},
		{"precheck", "-stability-window", "30"},
	} {
		if err := checkCommand(bad); err == nil {
			t.Errorf("cutover %s: accepted", strings.Join(bad, " "))
		}
	}
}
