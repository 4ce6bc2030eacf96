package strimzi

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// What Strimzi 1.2.0's build needs on this machine, found by hand and made
// by Build to its copy of the source, never to a repository:
//
//   - a JDK 21 or newer (Build's JAVA_HOME, and PATH: the build's exec steps
//     run java);
//   - -proc:full among javac's arguments: JDK 23 and newer run no
//     annotation processor unless asked (Lombok and sundrio's builders
//     would be missing: the api module's CRD generator reports 1,571
//     errors). It goes after -Xlint:unchecked,deprecation in the root POM
//     and in api's, which replaces the root's compiler arguments with its
//     own; the compiler plugin's proc parameter (maven.compiler.proc=full)
//     does not take effect with Strimzi's compiler plugin 3.10.1;
//   - Lombok 1.18.48 (1.18.32 crashes on the newer JDK);
//   - fabric8's Kubernetes client 7.7.0 instead of 7.8.0: 7.8.0's OpenShift
//     client needs a package Maven Central does not serve here, and 8.0.0
//     moved to Jackson 3, which operator-common does not build with;
//   - the cluster-operator module's test-scoped dependencies left out (some
//     are not served here, and -DskipTests still resolves them), and so its
//     tests too (src/test: -DskipTests still compiles them).
//
// The versions are Maven properties given on the command line (they win
// over the POMs'); the rest are edits of the POMs.

// mavenProperties are the -D arguments Build gives mvn.
func mavenProperties() []string {
	return []string{
		"-Dlombok.version=1.18.48",
		"-Dfabric8.kubernetes-client.version=7.7.0",
		"-Dfabric8.openshift-client.version=7.7.0",
		"-Dfabric8.kubernetes-model.version=7.7.0",
		"-Dfabric8.zjsonpatch.version=7.7.0",
	}
}

// xlint is the compiler argument -proc:full is added after, in the POMs
// that set compiler arguments (procFullPOMs).
const xlint = "<arg>-Xlint:unchecked,deprecation</arg>"

var procFullPOMs = []string{"pom.xml", "api/pom.xml"}

var (
	dependencyBlock = regexp.MustCompile(`(?s)\s*<dependency>.*?</dependency>`)
	testScope       = regexp.MustCompile(`<scope>\s*test\s*</scope>`)
)

// dropTestDependencies removes the test-scoped <dependency> blocks of a
// module's pom: those that say <scope>test</scope>, and those without a
// scope whose version and scope come from a test-scoped entry of the
// parent's dependencyManagement (root), matched as Maven matches them, by
// groupId, artifactId, type and classifier. It says how many it removed.
func dropTestDependencies(pom, root string) (string, int) {
	managed := map[string]bool{}
	if i, j := strings.Index(root, "<dependencyManagement>"), strings.Index(root, "</dependencyManagement>"); i >= 0 && j > i {
		for _, dep := range dependencyBlock.FindAllString(root[i:j], -1) {
			if testScope.MatchString(dep) {
				managed[dependencyKey(dep)] = true
			}
		}
	}
	n := 0
	out := dependencyBlock.ReplaceAllStringFunc(pom, func(dep string) string {
		if testScope.MatchString(dep) || !anyScope.MatchString(dep) && managed[dependencyKey(dep)] {
			n++
			return ""
		}
		return dep
	})
	return out, n
}

var anyScope = regexp.MustCompile(`<scope>`)

// dependencyKey is groupId:artifactId:type:classifier of a <dependency>
// block (type jar and no classifier unless it says otherwise).
func dependencyKey(dep string) string {
	field := func(name, def string) string {
		m := regexp.MustCompile(`<` + name + `>\s*([^<]*?)\s*</` + name + `>`).FindStringSubmatch(dep)
		if m == nil {
			return def
		}
		return m[1]
	}
	return field("groupId", "") + ":" + field("artifactId", "") + ":" + field("type", "jar") + ":" + field("classifier", "")
}

// addProcFull adds -proc:full after -Xlint:unchecked,deprecation in pom,
// which must have that argument once.
func addProcFull(pom string) (string, error) {
	if n := strings.Count(pom, xlint); n != 1 {
		return "", fmt.Errorf("strimzi: %d %s, want 1: the compiler configuration changed", n, xlint)
	}
	return strings.Replace(pom, xlint, xlint+"<arg>-proc:full</arg>", 1), nil
}

// applyPatches edits the source tree at dir.
func applyPatches(dir string) error {
	for _, f := range procFullPOMs {
		path := filepath.Join(dir, filepath.FromSlash(f))
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		pom, err := addProcFull(string(b))
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if err := os.WriteFile(path, []byte(pom), 0o644); err != nil {
			return err
		}
	}
	co := filepath.Join(dir, "cluster-operator", "pom.xml")
	b, err := os.ReadFile(co)
	if err != nil {
		return err
	}
	root, err := os.ReadFile(filepath.Join(dir, "pom.xml"))
	if err != nil {
		return err
	}
	out, n := dropTestDependencies(string(b), string(root))
	if n == 0 {
		return fmt.Errorf("strimzi: cluster-operator/pom.xml has no test-scoped dependency to leave out: the module changed")
	}
	if err := os.WriteFile(co, []byte(out), 0o644); err != nil {
		return err
	}
	return os.RemoveAll(filepath.Join(dir, "cluster-operator", "src", "test"))
}

// patchDigest names the patches in the cache folder's name: a change to
// them builds into a new folder.
func patchDigest() string {
	h := sha256.New()
	fmt.Fprintln(h, mavenProperties(), xlint, procFullPOMs, dependencyBlock, testScope, "-pl cluster-operator,kafka-agent,tracing-agent", "rm cluster-operator/src/test")
	return hex.EncodeToString(h.Sum(nil))[:12]
}
