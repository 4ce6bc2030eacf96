package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mm2cutover/mm2cutover/examples/internal/app"
)

// completion writes the completion script for shell (bash or zsh), made
// from the flag set and the steps: each step completes its own flags (the
// ones its help shows), boolean flags take no value, path flags complete
// files.
func completion(stdout, stderr io.Writer, fs *flag.FlagSet, shell string) int {
	var all []string
	bools := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) {
		all = append(all, f.Name)
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			bools[f.Name] = true
		}
	})
	stepFlags := map[string][]string{}
	var names []string
	for _, st := range steps {
		names = append(names, st.name)
		fl := st.flagNames()
		slices.Sort(fl)
		stepFlags[st.name] = slices.Compact(fl)
	}
	var valued []string
	for _, n := range all {
		if !bools[n] && !slices.Contains(fileFlags, n) {
			valued = append(valued, "-"+n)
		}
	}
	dash := func(ns []string) string {
		out := make([]string, len(ns))
		for i, n := range ns {
			out[i] = "-" + n
		}
		return strings.Join(out, " ")
	}
	switch shell {
	case "bash":
		fmt.Fprintf(stdout, `# bash completion for cutover: source <(cutover completion bash)
_cutover() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} step= w
  for w in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
    case $w in %s) step=$w; break ;; esac
  done
  case $prev in
    %s) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    %s) COMPREPLY=(); return ;;
  esac
  local flags
  case $step in
`, strings.Join(names, "|"), strings.ReplaceAll(dash(fileFlags), " ", "|"), strings.Join(valued, "|"))
		for _, n := range names {
			fmt.Fprintf(stdout, "    %s) flags=%q ;;\n", n, dash(stepFlags[n]))
		}
		fmt.Fprintf(stdout, `    *) flags=%q ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  elif [[ -z $step ]]; then
    COMPREPLY=($(compgen -W %q -- "$cur"))
  fi
}
complete -F _cutover cutover
`, dash(all), strings.Join(names, " "))
	case "zsh":
		fmt.Fprintln(stdout, "#compdef cutover\n# zsh completion for cutover: cutover completion zsh > \"${fpath[1]}/_cutover\", or source <(cutover completion zsh)")
		fmt.Fprintln(stdout, "_cutover() {\n  local -a steps flags\n  local step w")
		fmt.Fprint(stdout, "  steps=(")
		for _, st := range steps {
			fmt.Fprintf(stdout, " %s", zshQuote(st.name+":"+st.summary))
		}
		fmt.Fprintln(stdout, " )")
		fmt.Fprintf(stdout, "  for w in ${words[2,CURRENT-1]}; do\n    case $w in (%s) step=$w; break ;; esac\n  done\n", strings.Join(names, "|"))
		fmt.Fprintf(stdout, "  case ${words[CURRENT-1]} in\n    (%s) _files; return ;;\n    (%s) return ;;\n  esac\n",
			strings.ReplaceAll(dash(fileFlags), " ", "|"), strings.Join(valued, "|"))
		fmt.Fprintln(stdout, "  case $step in")
		usage := map[string]string{}
		fs.VisitAll(func(f *flag.Flag) { usage[f.Name] = f.Usage })
		zshFlags := func(ns []string) string {
			var b strings.Builder
			for _, n := range ns {
				u, _, _ := strings.Cut(usage[n], "\n")
				if len(u) > 70 {
					u = u[:70] + "..."
				}
				fmt.Fprintf(&b, " %s", zshQuote("-"+n+":"+u))
			}
			return b.String()
		}
		for _, n := range names {
			fmt.Fprintf(stdout, "    (%s) flags=(%s) ;;\n", n, zshFlags(stepFlags[n]))
		}
		fmt.Fprintf(stdout, "    (*) flags=(%s) ;;\n  esac\n", zshFlags(all))
		fmt.Fprintln(stdout, "  if [[ ${words[CURRENT]} == -* ]]; then\n    _describe -t flags flag flags\n  elif [[ -z $step ]]; then\n    _describe -t steps step steps\n  fi\n}")
		fmt.Fprintln(stdout, "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then _cutover \"$@\"; else compdef _cutover cutover; fi")
	default:
		fmt.Fprintf(stderr, "cutover: completion %q: want bash or zsh%s\n", shell, app.DidYouMean(shell, []string{"bash", "zsh"}, ""))
		return app.ExitUsage
	}
	return app.ExitOK
}

// zshQuote quotes s for zsh in single quotes; a colon in the name part
// would split it, so flag names hold none.
func zshQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
