package settings

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// settingsFromConfig parses a command line of only -config FILE and
// returns its settings.
func settingsFromConfig(t *testing.T, text string) (Settings, error) {
	t.Helper()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	f := BindFlags(fs)
	if err := fs.Parse([]string{"-config", settingsFile(t, text)}); err != nil {
		t.Fatal(err)
	}
	return f.Settings()
}

// TestConfigFileComments: a comment after a value is a comment, as in the
// shell that sources the file, on every kind of line end. The file's values
// were read to the end of the line before: the group was named
// "g # old job" without a word, and the retry timeout failed with
// "parse error" alone.
func TestConfigFileComments(t *testing.T) {
	lines := []string{
		"# the cutover of the orders flow",
		"export MM2CUTOVER_SOURCE_BOOTSTRAP=src:9092   # the old cluster",
		"MM2CUTOVER_TARGET_BOOTSTRAP='dst:9092' # quoted, then a comment",
		`MM2CUTOVER_CONNECT_URL="http://connect:8083"`,
		"MM2CUTOVER_CONNECTOR=mm2-orders#2 # a # inside a word is part of it",
		"MM2CUTOVER_GROUP=g # old job",
		"MM2CUTOVER_TOPICS=orders,payments\t# tab, then a comment",
		"MM2CUTOVER_RETRY_TIMEOUT=2s # short",
		"",
		"   # an indented comment",
	}
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		t.Run(fmt.Sprintf("%q", eol), func(t *testing.T) {
			s, err := settingsFromConfig(t, strings.Join(lines, eol)+eol)
			if err != nil {
				t.Fatal(err)
			}
			got := []any{s.Source.BootstrapServers, s.Target.BootstrapServers, s.ConnectURL, s.Connector, s.Group, s.Topics, s.RetryTimeout}
			want := []any{[]string{"src:9092"}, []string{"dst:9092"}, "http://connect:8083", "mm2-orders#2", "g", []string{"orders", "payments"}, 2 * time.Second}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestConfigFileBadLines: every line a shell would read otherwise, and
// every value a setting refuses, is named with its line number, in one
// error; nothing else is.
func TestConfigFileBadLines(t *testing.T) {
	file := strings.Join([]string{
		"MM2CUTOVER_SOURCE_BOOTSTRAP=src:9092", // 1, good
		"MM2CUTOVER_GROUP= g",                  // 2: the shell runs g
		"MM2CUTOVER_TOPICS = orders",           // 3: the shell runs MM2CUTOVER_TOPICS
		"MM2CUTOVER_CONNECTOR=mm2 orders",      // 4: the shell runs orders
		`MM2CUTOVER_SOURCE_ALIAS="src`,         // 5: not closed on its line
		"MM2CUTOVER_TARGET_ALIAS=$USER",        // 6: expanded by the shell
		`MM2CUTOVER_SOURCE_TLS_CA=~/ca.pem`,    // 7: expanded by the shell
		"MM2CUTOVER_GRUOP=g",                   // 8: no such setting
		"MM2CUTOVER_SOURCE_SASL_PASSWORD=x",    // 9: environment only
		"MM2CUTOVER_SOURCE_BOOTSTRAP=other:1",  // 10: twice
		"MM2CUTOVER_POLICY=identity; rm -rf /", // 11: shell syntax
		"MM2CUTOVER_TARGET_BOOTSTRAP=dst:9092", // 12, good
		"export",                               // 13
		"MM2CUTOVER_CONNECT_URL=http://c:1 \\", // 14: continued in a shell
	}, "\n")
	_, err := settingsFromConfig(t, file)
	if !errors.Is(err, ErrSettings) {
		t.Fatalf("got %v, want ErrSettings", err)
	}
	msg := err.Error()
	var lines []int
	for _, l := range strings.Split(msg, "\n") {
		var n int
		if _, after, ok := strings.Cut(l, "cutover.env:"); ok {
			fmt.Sscanf(after, "%d:", &n)
			lines = append(lines, n)
		}
	}
	if want := []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14}; !slices.Equal(lines, want) {
		t.Errorf("lines named: got %v, want %v\n%s", lines, want, msg)
	}
	for _, want := range []string{`a blank ends a value`, `no blanks around =`, `not closed on its line`, `would expand it`, `home directory`,
		`names no setting`, `environment only`, `given twice (first on line 1)`, `shell syntax`, `trailing backslash`} {
		if !strings.Contains(msg, want) {
			t.Errorf("no %q in:\n%s", want, msg)
		}
	}

	// A value its setting refuses: the line, the value and what it takes.
	_, err = settingsFromConfig(t, "MM2CUTOVER_RETRY_TIMEOUT=2x\nMM2CUTOVER_TASKS_MAX=many\nMM2CUTOVER_GROUP=g\n")
	for _, want := range []string{
		`cutover.env:1: MM2CUTOVER_RETRY_TIMEOUT: invalid value "2x": parse error (want a duration such as 30s, 2m or 1h30m)`,
		`cutover.env:2: MM2CUTOVER_TASKS_MAX: invalid value "many": parse error (want a whole number)`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
	t.Setenv("MM2CUTOVER_RETRY_TIMEOUT", "soon")
	if _, err := settingsFromConfig(t, "MM2CUTOVER_GROUP=g\n"); err == nil ||
		!strings.Contains(err.Error(), `MM2CUTOVER_RETRY_TIMEOUT (environment): invalid value "soon"`) {
		t.Errorf("environment: got %v", err)
	}
}

// TestTyposInSettingsSayWhatTheyMean: a mistyped variable in the
// environment or in a -config file is refused, as before, and named with
// the setting it may have meant.
func TestTyposInSettingsSayWhatTheyMean(t *testing.T) {
	names := map[string]bool{"group": true, "topics": true, "stability-window": true}
	err := checkEnv([]string{"MM2CUTOVER_GRUOP=g", "MM2CUTOVER_TOPICS=t", "MM2CUTOVER_NOTHING_LIKE_IT=x"}, names)
	if err == nil || !strings.Contains(err.Error(), "MM2CUTOVER_GRUOP (did you mean MM2CUTOVER_GROUP?)") ||
		!strings.Contains(err.Error(), "MM2CUTOVER_NOTHING_LIKE_IT") || strings.Contains(err.Error(), "MM2CUTOVER_NOTHING_LIKE_IT (did") {
		t.Errorf("checkEnv: %v", err)
	}
	path := filepath.Join(t.TempDir(), "cutover.env")
	if err := os.WriteFile(path, []byte("MM2CUTOVER_GROUP=g\nMM2CUTOVER_STABILITY_WINDOWS=1m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readConfigFile(path, names); err == nil || !strings.Contains(err.Error(), ":2: MM2CUTOVER_STABILITY_WINDOWS names no setting; did you mean MM2CUTOVER_STABILITY_WINDOW?") {
		t.Errorf("readConfigFile: %v", err)
	}
}

// TestF12ConfigFileLineEnds: a -config file whose lines end with a lone
// CR (an old Mac editor's) was one line: its settings were reported
// missing. Lines end with \n, \r\n or \r.
func TestF12ConfigFileLineEnds(t *testing.T) {
	names := map[string]bool{"group": true, "topics": true}
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		file := settingsFile(t, "# settings"+eol+"MM2CUTOVER_GROUP=g"+eol+eol+"MM2CUTOVER_TOPICS='a,b'"+eol)
		got, err := readConfigFile(file, names)
		if err != nil || got.values["MM2CUTOVER_GROUP"] != "g" || got.values["MM2CUTOVER_TOPICS"] != "a,b" || len(got.values) != 2 {
			t.Errorf("lines ended with %q: %+v, %v", eol, got, err)
		}
	}
	if _, err := readConfigFile(settingsFile(t, "MM2CUTOVER_GROUP=g\rMM2CUTOVER_NOPE=x\r"), names); err == nil || !strings.Contains(err.Error(), ":2: MM2CUTOVER_NOPE names no setting") {
		t.Errorf("the error names the line: %v", err)
	}
}
