package javahome

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMajor(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		release string
		want    int
	}{{`JAVA_VERSION="25.0.3"` + "\n", 25}, {`IMPLEMENTOR="x"` + "\n" + `JAVA_VERSION="17.0.15"`, 17}, {`JAVA_VERSION=25`, 0}, {"", 0}} {
		if err := os.WriteFile(filepath.Join(dir, "release"), []byte(tt.release), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := Major(dir); got != tt.want {
			t.Errorf("Major(%q) = %d, want %d", tt.release, got, tt.want)
		}
	}
	if got := Major(filepath.Join(dir, "none")); got != 0 {
		t.Errorf("Major of a missing home = %d", got)
	}
}

// home makes a Java home of version major with the named tools in bin/.
func home(t *testing.T, major string, tools ...string) string {
	t.Helper()
	h := t.TempDir()
	if err := os.WriteFile(filepath.Join(h, "release"), []byte(`JAVA_VERSION="`+major+`.0.1"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(h, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		if err := os.WriteFile(filepath.Join(h, "bin", tool), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// TestFind: the newest home with the tools wins, wherever it is named; a
// newer one without a tool asked for, or one below the minimum, does not.
func TestFind(t *testing.T) {
	full := home(t, "998", "java", "javac")
	jre := home(t, "999", "java")
	t.Setenv("MM2CUTOVER_JAVA21_HOME", jre)
	t.Setenv("JAVA_HOME", full)
	if got := Find(21, "java", "javac"); got != full {
		t.Errorf("Find(21, java, javac) = %q, want the JDK %q", got, full)
	}
	if got := Find(21, "java"); got != jre {
		t.Errorf("Find(21, java) = %q, want the newest %q", got, jre)
	}
	if got := Find(1000, "java"); got != "" {
		t.Errorf("Find(1000) = %q, want none", got)
	}
}
