package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/examples/internal/didyoumean"
)

// completionData is what a completion script completes, from the flag set
// and the steps.
type completionData struct {
	steps     []string            // step names, the other commands last
	stepFlags map[string][]string // each step's flags (flagNames), with their aliases, sorted
	all       []string            // every flag of the flag set
	usage     map[string]string   // each flag's usage, for zsh's descriptions
	values    [][2]string         // "-a|-b" and the values it completes, in flagValues' order
	valued    []string            // the other flags that take a value (nothing to offer)
}

func newCompletionData(fs *flag.FlagSet) completionData {
	d := completionData{steps: stepNames(), stepFlags: map[string][]string{}, usage: map[string]string{}}
	fs.VisitAll(func(f *flag.Flag) {
		d.all = append(d.all, f.Name)
		d.usage[f.Name] = f.Usage
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			return
		}
		if !slices.Contains(fileFlags, f.Name) && !slices.Contains(dirFlags, f.Name) && flagValues[withoutAlias(f.Name)] == nil {
			d.valued = append(d.valued, f.Name)
		}
	})
	for _, st := range steps {
		fl := st.flagNames()
		for a, of := range flagAliases {
			if slices.Contains(fl, of) {
				fl = append(fl, a)
			}
		}
		slices.Sort(fl)
		d.stepFlags[st.name] = fl
	}
	for _, n := range slices.Sorted(func(yield func(string) bool) {
		for n := range flagValues {
			if !yield(n) {
				return
			}
		}
	}) {
		names := []string{n}
		for a, of := range flagAliases {
			if of == n {
				names = append(names, a)
			}
		}
		d.values = append(d.values, [2]string{strings.Join(dashed(names), "|"), strings.Join(flagValues[n], " ")})
	}
	return d
}

// completion writes the completion script for shell (bash or zsh), made
// from the flag set and the steps: the steps; after help, the steps; after
// completion, the shells; each step's own flags (the ones its help shows);
// the values of the flags that have a fixed set (flagValues); files after
// the path flags, directories after -savepoint; nothing to offer after
// another flag that takes a value.
func completion(stdout, stderr io.Writer, fs *flag.FlagSet, shell string) int {
	d := newCompletionData(fs)
	switch shell {
	case "bash":
		d.bash(stdout)
	case "zsh":
		d.zsh(stdout)
	default:
		fmt.Fprintf(stderr, "cutover: completion %q: want bash or zsh%s\n", shell, didyoumean.Hint(shell, []string{"bash", "zsh"}, ""))
		return app.ExitUsage
	}
	return app.ExitOK
}

func (d completionData) bash(w io.Writer) {
	fmt.Fprintf(w, `# bash completion for cutover: source <(cutover completion bash)
_cutover() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} step= w
  for w in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
    case $w in %s) step=$w; break ;; esac
  done
  case $prev in
    %s) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    %s) COMPREPLY=($(compgen -d -- "$cur")); return ;;
`, strings.Join(d.steps, "|"), strings.Join(dashed(fileFlags), "|"), strings.Join(dashed(dirFlags), "|"))
	for _, v := range d.values {
		if !strings.Contains(v[1], ": ") && !strings.HasSuffix(v[1], ":") {
			fmt.Fprintf(w, "    %s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", v[0], v[1])
			continue
		}
		// A prefix (csv:) is completed with no blank after it.
		fmt.Fprintf(w, "    %s) COMPREPLY=($(compgen -W %q -- \"$cur\"))\n      [[ ${COMPREPLY[0]} == *: ]] && compopt -o nospace 2>/dev/null; return ;;\n", v[0], v[1])
	}
	fmt.Fprintf(w, "    %s) COMPREPLY=(); return ;;\n  esac\n", strings.Join(dashed(d.valued), "|"))
	fmt.Fprintf(w, `  if [[ $prev == help && $step == help ]]; then
    COMPREPLY=($(compgen -W %q -- "$cur")); return
  fi
  if [[ $prev == completion && $step == completion ]]; then
    COMPREPLY=($(compgen -W "bash zsh" -- "$cur")); return
  fi
  local flags
  case $step in
`, strings.Join(d.steps, " "))
	for _, n := range d.steps {
		fmt.Fprintf(w, "    %s) flags=%q ;;\n", n, strings.Join(dashed(d.stepFlags[n]), " "))
	}
	fmt.Fprintf(w, `    *) flags=%q ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  elif [[ -z $step ]]; then
    COMPREPLY=($(compgen -W %q -- "$cur"))
  fi
}
complete -F _cutover cutover
`, strings.Join(dashed(d.all), " "), strings.Join(d.steps, " "))
}

func (d completionData) zsh(w io.Writer) {
	fmt.Fprintln(w, "#compdef cutover\n# zsh completion for cutover: cutover completion zsh > \"${fpath[1]}/_cutover\", or source <(cutover completion zsh)")
	fmt.Fprintln(w, "_cutover() {\n  local -a steps flags\n  local step w")
	fmt.Fprint(w, "  steps=(")
	for _, st := range steps {
		fmt.Fprintf(w, " %s", zshQuote(st.name+":"+st.summary))
	}
	fmt.Fprintln(w, " )")
	fmt.Fprintf(w, "  for w in ${words[2,CURRENT-1]}; do\n    case $w in (%s) step=$w; break ;; esac\n  done\n", strings.Join(d.steps, "|"))
	fmt.Fprintf(w, "  case ${words[CURRENT-1]} in\n    (%s) _files; return ;;\n    (%s) _files -/; return ;;\n",
		strings.Join(dashed(fileFlags), "|"), strings.Join(dashed(dirFlags), "|"))
	for _, v := range d.values {
		words, prefixes := zshValues(v[1])
		fmt.Fprintf(w, "    (%s) compadd -- %s; compadd -S '' -- %s; return ;;\n", v[0], words, prefixes)
	}
	fmt.Fprintf(w, "    (%s) return ;;\n", strings.Join(dashed(d.valued), "|"))
	fmt.Fprintln(w, "    (help) [[ $step == help ]] && { _describe -t steps step steps; return } ;;")
	fmt.Fprintln(w, "    (completion) [[ $step == completion ]] && { compadd bash zsh; return } ;;")
	fmt.Fprintln(w, "  esac\n  case $step in")
	zshFlags := func(ns []string) string {
		var b strings.Builder
		for _, n := range ns {
			u, _, _ := strings.Cut(d.usage[n], "\n")
			if len(u) > 70 {
				u = u[:70] + "..."
			}
			fmt.Fprintf(&b, " %s", zshQuote("-"+n+":"+u))
		}
		return b.String()
	}
	for _, n := range d.steps {
		fmt.Fprintf(w, "    (%s) flags=(%s) ;;\n", n, zshFlags(d.stepFlags[n]))
	}
	fmt.Fprintf(w, "    (*) flags=(%s) ;;\n  esac\n", zshFlags(d.all))
	fmt.Fprintln(w, "  if [[ ${words[CURRENT]} == -* ]]; then\n    _describe -t flags flag flags\n  elif [[ -z $step ]]; then\n    _describe -t steps step steps\n  fi\n}")
	fmt.Fprintln(w, "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then _cutover \"$@\"; else compdef _cutover cutover; fi")
}

// zshValues are the words of values, each quoted: the whole values, and
// the prefixes (a value that ends in ":", of -offsets-from), which leave
// the rest to be typed, with no blank after them.
func zshValues(values string) (words, prefixes string) {
	var w, p []string
	for _, v := range strings.Fields(values) {
		if strings.HasSuffix(v, ":") {
			p = append(p, zshQuote(v))
		} else {
			w = append(w, zshQuote(v))
		}
	}
	return strings.Join(w, " "), strings.Join(p, " ")
}

// zshQuote quotes s for zsh in single quotes; a colon in the name part
// would split it, so flag names hold none.
func zshQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
