package clientconf

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseProperties(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       map[string]string
	}{
		{"separators", "a=1\nb: 2\nc 3\nd\t=\t4\ne:=5\n", map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": "=5"}},
		{"comments and blanks", "# c\n  ! c\n\n   \nk=v\n", map[string]string{"k": "v"}},
		{"continuation", "k=one \\\n    two\\\n three\n", map[string]string{"k": "one twothree"}},
		{"even backslashes end the line", "k=a\\\\\nj=b\n", map[string]string{"k": `a\`, "j": "b"}},
		{"continued at end of file", "k=a\\", map[string]string{"k": "a"}},
		{"comment does not continue", "# c \\\nk=v\n", map[string]string{"k": "v"}},
		{"escaped separators in key", `a\=b\:c\ d=e` + "\n", map[string]string{"a=b:c d": "e"}},
		{"escapes", `k=\t\n\r\f\\\q\"` + "\n", map[string]string{"k": "\t\n\r\f\\q\""}},
		{`\u`, `k=caf\u00e9 \u6CE8`, map[string]string{"k": "café 注"}},
		{`\u surrogate pair`, `k=\ud83d\ude00`, map[string]string{"k": "😀"}},
		{"utf-8 text", "k=café 注\n", map[string]string{"k": "café 注"}},
		{"bom", "\ufeffsasl.jaas.config=x\n", map[string]string{"sasl.jaas.config": "x"}},
		{"cr and crlf", "a=1\rb=2\r\nc=3", map[string]string{"a": "1", "b": "2", "c": "3"}},
		{"later wins", "k=1\nk=2\n", map[string]string{"k": "2"}},
		{"empty value", "k=\nj\n", map[string]string{"k": "", "j": ""}},
		{"trailing blanks kept", "k=v  \n", map[string]string{"k": "v  "}},
		{"quotes kept", `k="v"` + "\n", map[string]string{"k": `"v"`}},
		{"jaas", `sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";`,
			map[string]string{"sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseProperties([]byte(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestParsePropertiesRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		line       int
	}{
		{`short \u`, "a=1\nk=\\u12", 2},
		{`bad hex`, "k=\\u12zz", 1},
		{"not utf-8", "a=1\nb=2\nk=\xff\n", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseProperties([]byte(tc.text))
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line != tc.line {
				t.Fatalf("got %v, want a *SyntaxError at line %d", err, tc.line)
			}
		})
	}
}

// TestReadFileBounded: a device or a huge file is refused after
// MaxFileSize bytes, not read whole (-config /dev/zero once grew to 22 GB).
func TestReadFileBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := ReadProperties("/dev/zero"); !errors.Is(err, ErrTooLarge) {
			t.Errorf("/dev/zero: %v, want ErrTooLarge", err)
		}
	}
	big := filepath.Join(t.TempDir(), "big.properties")
	if err := os.WriteFile(big, make([]byte, MaxFileSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(big); !errors.Is(err, ErrTooLarge) {
		t.Errorf("big file: %v, want ErrTooLarge", err)
	}
	if _, err := ReadFile(t.TempDir()); err == nil {
		t.Errorf("a directory was read")
	}
}

func FuzzParseProperties(f *testing.F) {
	for _, s := range []string{"a=b", "k=\\u00e9\\\n x", "\ufeff#c\n!d\nk:v", "\\", "=\\u"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseProperties(b) // never panics
	})
}
