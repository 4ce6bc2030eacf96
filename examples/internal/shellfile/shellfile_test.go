package shellfile

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func settingsFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cutover.env")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRead: the assignments of the good lines with their line numbers, and
// each line a shell would read otherwise with why, whatever the line ends.
func TestRead(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []Assignment
		bad        map[int]string // line: part of the error
	}{
		{"empty", "", nil, nil},
		{"bom, comments, export", "\ufeff# c\nexport A=1 B='2 3' # c\n\n", []Assignment{{"A", "1", 2}, {"B", "2 3", 2}}, nil},
		{"lone CR", "A=1\rB=2\r", []Assignment{{"A", "1", 1}, {"B", "2", 2}}, nil},
		{"CR LF", "A=1\r\nB=2\r\n", []Assignment{{"A", "1", 1}, {"B", "2", 2}}, nil},
		{"bad beside good", "A=1\nB= x\nC = 1\nD=$x\nE=\"x\nF=a;b\nG=~/x\nH=1 \\\nI=ok\n",
			[]Assignment{{"A", "1", 1}, {"I", "ok", 9}},
			map[int]string{2: "a blank ends a value", 3: "no blanks around =", 4: "would expand it", 5: "not closed on its line",
				6: "shell syntax", 7: "home directory", 8: "trailing backslash"}},
		{"a command", "rm -rf /\n", nil, map[int]string{1: `"rm" is not NAME=value: a shell would run it`}},
		{"key material not echoed", "-----BEGIN PRIVATE KEY-----\n", nil, map[int]string{1: "a word that looks like key material"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, bad, err := Read(settingsFile(t, tc.text), "NAME=value")
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("assignments (-want +got):\n%s", d)
			}
			if len(bad) != len(tc.bad) {
				t.Errorf("bad lines: %v, want lines %v", bad, tc.bad)
			}
			for _, e := range bad {
				if want, ok := tc.bad[e.Line]; !ok || !strings.Contains(e.Error(), want) || !strings.Contains(e.Error(), "cutover.env:") {
					t.Errorf("line %d: %v, want %q", e.Line, e, want)
				}
				if errors.Unwrap(e) == nil {
					t.Errorf("line %d: nothing wrapped", e.Line)
				}
			}
		})
	}
	if _, _, err := Read(filepath.Join(t.TempDir(), "missing"), "NAME=value"); err == nil {
		t.Error("a missing file read")
	}
}

// TestAsShellsReadIt sources files with each shell on this
// machine (sh, bash, dash, busybox sh) and compares what they export with
// what the tool reads. Lone CR line ends are given to the shells as LF: a
// shell would keep the CR in the value, which no setting wants.
func TestAsShellsReadIt(t *testing.T) {
	var shells [][]string
	for _, sh := range [][]string{{"sh"}, {"bash", "--posix"}, {"dash"}, {"busybox", "sh"}} {
		if _, err := exec.LookPath(sh[0]); err == nil {
			shells = append(shells, sh)
		}
	}
	if len(shells) == 0 {
		t.Skip("no shell")
	}
	files := []string{
		"MM2CUTOVER_GROUP=g # old job\nMM2CUTOVER_TOPICS=a,b\n",
		"export MM2CUTOVER_GROUP='flink orders'  # quoted\n\texport   MM2CUTOVER_TOPICS=orders\n",
		`MM2CUTOVER_GROUP="say \"hi\" \\ \$HOME \n"` + "\n",
		`MM2CUTOVER_GROUP=a"b c"'d e'\ f` + "\n",
		"MM2CUTOVER_GROUP=g#1 MM2CUTOVER_TOPICS=x=y\n",
		"MM2CUTOVER_GROUP=\nMM2CUTOVER_CONNECTOR='#'\n",
		"MM2CUTOVER_GROUP='a~b' MM2CUTOVER_TOPICS=x~y MM2CUTOVER_CONNECTOR=\\~z\n",
		"MM2CUTOVER_GROUP='*' MM2CUTOVER_TOPICS=[a] MM2CUTOVER_CONNECTOR={b,c}\n",
	}
	keys := []string{"MM2CUTOVER_GROUP", "MM2CUTOVER_TOPICS", "MM2CUTOVER_CONNECTOR"}
	for _, text := range files {
		path := settingsFile(t, text)
		assigns, bad, err := Read(path, "NAME=value")
		if err != nil || len(bad) > 0 {
			t.Errorf("%q: %v %v", text, err, bad)
			continue
		}
		values := map[string]string{}
		for _, a := range assigns {
			values[a.Name] = a.Value
		}
		for _, sh := range shells {
			// Each variable, set or not, as one NUL-terminated field.
			script := `. "$1"; for k in ` + strings.Join(keys, " ") + `; do eval "v=\${$k-unset}"; printf '%s\0' "$v"; done`
			cmd := exec.Command(sh[0], append(sh[1:], "-c", script, "sh", path)...)
			cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent"}
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("%v on %q: %v", sh, text, err)
				continue
			}
			got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
			want := make([]string, len(keys))
			for i, k := range keys {
				v, ok := values[k]
				if !ok {
					v = "unset"
				}
				want[i] = v
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%v on %q: the tool (-) and the shell (+) differ:\n%s", sh, text, d)
			}
		}
	}
}

// FuzzRead: any file is read without a panic; each assignment has a shell
// name and a value of one line; a bad line is named by a line of the file.
func FuzzRead(f *testing.F) {
	for _, s := range []string{"A=1\n", "export A='x y' B=\"q\\\"\" # c\r\n", "A= b\n", "A=$x\rB=~/y\n", "\ufeffA=1 \\\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		path := filepath.Join(t.TempDir(), "f.env")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		assigns, bad, err := Read(path, "NAME=value")
		if err != nil {
			t.Fatal(err)
		}
		lines := len(splitLines(strings.TrimPrefix(text, "\ufeff")))
		for _, a := range assigns {
			if !isName(a.Name) || strings.ContainsAny(a.Value, "\r\n") || a.Line < 1 || a.Line > lines {
				t.Errorf("assignment %+v of %q", a, text)
			}
		}
		for _, e := range bad {
			if e.Line < 1 || e.Line > lines {
				t.Errorf("bad line %d of %d in %q", e.Line, lines, text)
			}
		}
	})
}
