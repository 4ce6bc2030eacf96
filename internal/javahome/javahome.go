// Package javahome finds a Java installation of a given version on this
// machine: the JDK 21 or newer that the Strimzi builds need (the machine
// image has one beside Debian's 17, which the sandbox runs).
package javahome

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// Find returns the home of the newest Java of major version min or newer
// whose bin/ holds each of tools ("java", "javac", ...), among
// MM2CUTOVER_JAVA21_HOME, JAVA_HOME and every folder of /usr/lib/jvm; ""
// when there is none. The version is read from each home's release file.
func Find(min int, tools ...string) string {
	var homes []string
	for _, env := range []string{"MM2CUTOVER_JAVA21_HOME", "JAVA_HOME"} {
		if h := os.Getenv(env); h != "" {
			homes = append(homes, h)
		}
	}
	if m, _ := filepath.Glob("/usr/lib/jvm/*"); len(m) > 0 {
		homes = append(homes, m...)
	}
	best, bestMajor := "", 0
	for _, h := range homes {
		if major := Major(h); major >= min && major > bestMajor && hasTools(h, tools) {
			best, bestMajor = h, major
		}
	}
	return best
}

func hasTools(home string, tools []string) bool {
	for _, t := range tools {
		if _, err := os.Stat(filepath.Join(home, "bin", t)); err != nil {
			return false
		}
	}
	return true
}

var javaVersion = regexp.MustCompile(`(?m)^JAVA_VERSION="(\d+)`)

// Major reads the major version from a Java home's release file, 0 when
// it has none.
func Major(home string) int {
	b, err := os.ReadFile(filepath.Join(home, "release"))
	if err != nil {
		return 0
	}
	m := javaVersion.FindSubmatch(b)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}
