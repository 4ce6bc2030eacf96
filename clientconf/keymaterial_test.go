package clientconf

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pemLines returns the lines of the test key (an EC key, PKCS#8).
func pemLines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "client.pem"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	end := strings.Index(s, "-----END PRIVATE KEY-----")
	return strings.Split(s[:end+len("-----END PRIVATE KEY-----")], "\n")
}

// TestF2PEMWithoutContinuations: a private key pasted into a properties
// file as it is, each line a line of the file, is refused at the line it
// starts, and the error shows none of the key: Java would read each of its
// lines as a key, and every message naming keys would show them.
func TestF2PEMWithoutContinuations(t *testing.T) {
	lines := pemLines(t)
	body := lines[1 : len(lines)-1]
	for _, tc := range []struct {
		name, text string
		line       int
	}{
		{"key pasted", "security.protocol=SSL\nssl.keystore.type=PEM\nssl.keystore.key=" + strings.Join(lines, "\n") + "\n", 3},
		{"key pasted after a blank key", "ssl.keystore.key=\n" + strings.Join(lines, "\n"), 2},
		{"one continuation missing", "ssl.keystore.key=" + strings.Join(lines[:3], "\\\n") + "\n" + strings.Join(lines[3:], "\\\n"), 1},
		{"body without armor", "a=b\n" + strings.Join(body, "\n"), 2},
		{"END line alone", "a=b\n" + lines[len(lines)-1], 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			props, err := ParseProperties([]byte(tc.text))
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line != tc.line {
				t.Fatalf("got %v (%d keys), want a *SyntaxError at line %d", err, len(props), tc.line)
			}
			for _, l := range body {
				if l != "" && strings.Contains(err.Error(), l[:12]) {
					t.Errorf("the error shows key material: %v", err)
				}
			}
		})
	}
	// The same key with a '\' at the end of each line but the last, or
	// with \n escapes, is one value.
	for _, text := range []string{
		"ssl.keystore.key=" + strings.Join(lines, "\\\n"),
		"ssl.keystore.key=" + strings.Join(lines, "\\n\\\n  "),
		"ssl.keystore.key=" + strings.Join(lines, "\\n"),
	} {
		props, err := ParseProperties([]byte(text))
		if err != nil || len(props) != 1 || !strings.HasPrefix(props["ssl.keystore.key"], "-----BEGIN PRIVATE KEY-----") {
			t.Errorf("%d keys, %v; want the key as one value", len(props), err)
		}
	}
}
