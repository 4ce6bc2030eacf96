// Command testsummary reads `go test -json` on stdin, prints each package's
// result line as it arrives and the full output of every failed or skipped
// test, and ends with "N passed, N failed, N skipped". It exits non-zero when
// a test failed, when no test ran, or — with -no-skip — when any test was
// skipped: in CI the sandbox-backed integration tests must run.
//
// Arguments NAME=FILE add the `go test -json` output of other runs (another
// module, another sandbox backend), read after stdin, their packages named
// "PACKAGE (NAME)" so that the same test run twice is told apart. Before the
// counts it lists the slowest top-level tests, where a run's time goes, and
// again the lines each failed test's t.Error and t.Fatal wrote, which a long
// test's logs would otherwise bury far above the end:
//
//	testsummary -no-skip "docker backend=docker.json" <main.json
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// slowest is how many of the slowest top-level tests the summary lists.
const slowest = 12

func main() {
	noSkip := flag.Bool("no-skip", false, "fail when any test was skipped")
	flag.Parse()
	type input struct {
		name string
		r    io.Reader
	}
	inputs := []input{{"", os.Stdin}}
	for _, arg := range flag.Args() {
		name, path, ok := strings.Cut(arg, "=")
		if !ok || name == "" {
			fmt.Fprintf(os.Stderr, "testsummary: argument %q: want NAME=FILE\n", arg)
			os.Exit(2)
		}
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			os.Exit(2)
		}
		defer f.Close()
		inputs = append(inputs, input{name, f})
	}
	outputs := map[string][]string{} // package/test -> output lines
	var passed, failed, skipped []string
	type timing struct {
		key     string
		elapsed float64
	}
	var timings []timing
	badPkgs := 0
	var failures []string // "key" and its failure lines, indented
	for _, in := range inputs {
		sc := bufio.NewScanner(in.r)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for sc.Scan() {
			var e event
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				fmt.Println(sc.Text()) // build errors and other plain lines
				continue
			}
			if in.name != "" {
				e.Package += " (" + in.name + ")"
				if e.Test == "" && (strings.HasPrefix(e.Output, "ok ") || strings.HasPrefix(e.Output, "FAIL")) {
					e.Output = strings.TrimRight(e.Output, "\n") + " (" + in.name + ")\n"
				}
			}
			key := e.Package + " " + e.Test
			switch e.Action {
			case "output":
				if e.Test == "" {
					if strings.HasPrefix(e.Output, "ok ") || strings.HasPrefix(e.Output, "FAIL") || strings.HasPrefix(e.Output, "?") || strings.HasPrefix(e.Output, "---") || strings.Contains(e.Output, "[build failed]") {
						fmt.Print(e.Output)
					}
					outputs[key] = append(outputs[key], e.Output)
					continue
				}
				outputs[key] = append(outputs[key], e.Output)
			case "pass":
				if e.Test != "" && !strings.Contains(e.Test, "/") {
					timings = append(timings, timing{key, e.Elapsed})
				}
				if e.Test != "" {
					passed = append(passed, key)
				}
				delete(outputs, key)
			case "fail":
				if e.Test != "" {
					failed = append(failed, key)
					fmt.Printf("=== FAILED %s\n%s", key, strings.Join(outputs[key], ""))
					if lines := failureLines(outputs[key], 10, 6); len(lines) > 0 {
						failures = append(failures, key)
						for _, l := range lines {
							failures = append(failures, "    "+l)
						}
					}
				} else {
					badPkgs++
					fmt.Print(strings.Join(outputs[key], ""))
				}
				delete(outputs, key)
			case "skip":
				if e.Test != "" {
					skipped = append(skipped, key)
					fmt.Printf("=== SKIPPED %s\n%s", key, strings.Join(outputs[key], ""))
				}
				delete(outputs, key)
			}
		}
	}
	slices.SortFunc(timings, func(a, b timing) int { return int(b.elapsed*1000) - int(a.elapsed*1000) })
	if len(timings) > 0 {
		fmt.Println("slowest tests:")
		for _, t := range timings[:min(slowest, len(timings))] {
			fmt.Printf("  %7.1f s  %s\n", t.elapsed, t.key)
		}
	}
	if len(failures) > 0 {
		fmt.Println("where the failed tests failed:")
		for _, l := range failures {
			fmt.Println("  " + l)
		}
	}
	fmt.Printf("%d passed, %d failed, %d skipped\n", len(passed), len(failed), len(skipped))
	switch {
	case len(failed) > 0 || badPkgs > 0:
		os.Exit(1)
	case len(passed) == 0:
		fmt.Println("testsummary: no test ran")
		os.Exit(1)
	case *noSkip && len(skipped) > 0:
		fmt.Println("testsummary: tests were skipped; in CI every integration test must run")
		os.Exit(1)
	}
}

// located is a line of go test's output that t.Log, t.Error or t.Fatal
// wrote: it starts with the source location of the call.
var located = regexp.MustCompile(`^\s*([\w.-]+\.go:\d+): `)

// dump is the message of a located line that heads the logs a helper
// writes when a test failed ("sandbox logs:", "flink job log (path):"):
// what the processes were doing, not where the test failed.
var dump = regexp.MustCompile(`\blogs?( \([^)]*\))?:$`)

// failureLines returns the last n lines of a failed test's output that
// t.Error or t.Fatal probably wrote: lines starting with a source location
// that occurs at most twice in the output. A logger that sends its lines
// to t.Log writes them all from one location, thousands of times; a
// failure is reported from its own. A panic's first line (a test binary's
// timeout is one) counts too. A located line keeps the last cont lines of
// its message (go test indents them deeper): a command's stderr logged
// under "exit 1" ends with its error. A helper's dump of process logs
// ("sandbox logs:" and its lines) is left out: at the end of a failed
// test's output, it would fill the lines meant for the failure. Each line
// is cut to 500 bytes.
func failureLines(output []string, n, cont int) []string {
	count := map[string]int{}
	for _, o := range output {
		if m := located.FindStringSubmatch(o); m != nil {
			count[m[1]]++
		}
	}
	cut := func(l string) string {
		if len(l) > 500 {
			return l[:500] + " ..."
		}
		return l
	}
	var groups [][]string
	indent := -1 // of the last kept located line; -1 after any other line
	var tail []string
	flush := func() {
		if len(groups) > 0 && len(tail) > 0 {
			g := &groups[len(groups)-1]
			for _, l := range tail[max(0, len(tail)-cont):] {
				*g = append(*g, "  "+cut(l))
			}
		}
		tail = nil
	}
	for _, o := range output {
		l := strings.TrimSpace(o)
		m := located.FindStringSubmatch(o)
		switch {
		case m != nil && dump.MatchString(l):
			flush()
			indent = -1 // its lines are left out too
		case m != nil && count[m[1]] <= 2 || strings.HasPrefix(l, "panic: "):
			flush()
			groups = append(groups, []string{cut(l)})
			indent = len(o) - len(strings.TrimLeft(o, " \t"))
			if strings.HasPrefix(l, "panic: ") {
				indent = -1
			}
		case m == nil && indent >= 0 && len(o)-len(strings.TrimLeft(o, " \t")) > indent:
			if l != "" {
				tail = append(tail, l)
			}
		default:
			flush()
			indent = -1
		}
	}
	flush()
	return slices.Concat(groups[max(0, len(groups)-n):]...)
}
