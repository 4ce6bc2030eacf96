// Package strimzicrd makes Strimzi's own CustomResourceDefinitions for tests
// that validate resources against them on a real API server: it fetches
// Strimzi's model classes (io.strimzi:api) and its CRD generator
// (io.strimzi:crd-generator) from Maven Central and runs the generator
// (io.strimzi.crdgenerator.CrdGenerator) with the arguments Strimzi's own
// build gives it (api/pom.xml, generate-crd-co-install-v1). Nothing is
// copied by hand: for 1.2.0 the output equals the 047-Crd-kafkaconnector.yaml
// and 048-Crd-kafkamirrormaker2.yaml Strimzi ships (checked byte for byte).
//
// Maven Central serves the generator from Strimzi 1.x only here (0.49.0's is
// not served), and 1.x's classes need Java 21 or newer: Generate finds one
// (MM2CUTOVER_JAVA21_HOME, JAVA_HOME, or a JDK under /usr/lib/jvm) and
// fails with ErrNoJava21 when there is none. A package of its own, under
// internal: only tests use it, and it shares nothing with the sandbox's jar
// cache but the cache directory and its lock.
package strimzicrd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mm2cutover/mm2cutover/internal/filelock"
	"github.com/mm2cutover/mm2cutover/internal/javahome"
)

// Version is the Strimzi release whose CRDs the tests validate against:
// the first whose operator creates a connector asked to be stopped in that
// state (initial_state), which the cutover's Strimzi path needs.
const Version = "1.2.0"

// Files are the CRD files Generate writes, by kind.
var Files = map[string]string{
	"KafkaConnector":    "047-Crd-kafkaconnector.yaml",
	"KafkaMirrorMaker2": "048-Crd-kafkamirrormaker2.yaml",
}

// ErrNoJava21 means no Java 21 or newer was found to run the generator.
var ErrNoJava21 = errors.New("strimzicrd: no Java 21 or newer (Strimzi 1.x's CRD generator needs one): set MM2CUTOVER_JAVA21_HOME")

// ErrNoMaven means mvn is not on the PATH.
var ErrNoMaven = errors.New("strimzicrd: mvn not found")

const pom = `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>mm2cutover</groupId><artifactId>strimzi-crds</artifactId><version>1</version><packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>io.strimzi</groupId><artifactId>api</artifactId><version>VERSION</version></dependency>
    <dependency><groupId>io.strimzi</groupId><artifactId>crd-generator</artifactId><version>VERSION</version></dependency>
  </dependencies>
</project>
`

// Generate returns the directory under cacheDir that holds the CRDs of
// Strimzi version (Files), making them the first time: about 40 MB of jars
// from Maven Central (kept in Maven's local repository) and a second of the
// generator. Concurrent callers wait on a file lock.
func Generate(ctx context.Context, cacheDir, version string) (string, error) {
	dir := filepath.Join(cacheDir, "strimzi-crds-"+version)
	if complete(dir) {
		return dir, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", err
	}
	unlock, err := filelock.Lock(ctx, dir+".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if complete(dir) {
		return dir, nil
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return "", ErrNoMaven
	}
	java, err := findJava21()
	if err != nil {
		return "", err
	}
	work, err := os.MkdirTemp(cacheDir, ".strimzi-crds-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	if err := os.WriteFile(filepath.Join(work, "pom.xml"), []byte(strings.ReplaceAll(pom, "VERSION", version)), 0o644); err != nil {
		return "", err
	}
	if err := run(ctx, work, mvn, "-q", "-B", "dependency:copy-dependencies", "-DoutputDirectory=lib"); err != nil {
		return "", fmt.Errorf("strimzicrd: fetch io.strimzi:api and crd-generator %s: %w", version, err)
	}
	out := filepath.Join(work, "crds")
	if err := os.Mkdir(out, 0o755); err != nil {
		return "", err
	}
	// The arguments of Strimzi's api/pom.xml (generate-crd-co-install-v1).
	args := []string{"-cp", filepath.Join(work, "lib", "*"), "io.strimzi.crdgenerator.CrdGenerator",
		"--label", "app:strimzi", "--label", "strimzi.io/crd-install:true", "--target-kube", "1.16+",
		"--crd-api-version", "v1", "--api-versions", "v1", "--storage-version", "v1", "--yaml",
		"io.strimzi.api.kafka.model.connector.KafkaConnector=" + filepath.Join(out, Files["KafkaConnector"]),
		"io.strimzi.api.kafka.model.mirrormaker2.KafkaMirrorMaker2=" + filepath.Join(out, Files["KafkaMirrorMaker2"])}
	if err := run(ctx, work, java, args...); err != nil {
		return "", fmt.Errorf("strimzicrd: CrdGenerator %s: %w", version, err)
	}
	if !complete(out) {
		return "", fmt.Errorf("strimzicrd: CrdGenerator %s wrote no CRDs", version)
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	return dir, os.Rename(out, dir)
}

// complete reports whether dir holds every file of Files, not empty.
func complete(dir string) bool {
	for _, f := range Files {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			return false
		}
	}
	return true
}

func run(ctx context.Context, dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		tail := out.String()
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return fmt.Errorf("%w: %s", err, tail)
	}
	return nil
}

// findJava21 returns the java binary of the newest JDK or JRE of version
// 21 or newer (javahome.Find).
func findJava21() (string, error) {
	if h := javahome.Find(21, "java"); h != "" {
		return filepath.Join(h, "bin", "java"), nil
	}
	return "", ErrNoJava21
}
