package strimzi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/containers"
	"github.com/mm2cutover/mm2cutover/internal/filelock"
	"github.com/mm2cutover/mm2cutover/internal/javahome"
)

// The images, without a registry. Strimzi's own are built on Red Hat's UBI
// with Java 21 and tini, and their Dockerfiles fetch tini, the JMX and Kafka
// exporters and Kafka's release archive from the internet; here:
//
//   - the base is the project's Debian base (containers.JRE17), with tini,
//     openssl, gawk and hostname from Debian's packages (Strimzi's scripts
//     use them) and the JDK 21+ Build used copied to
//     /usr/lib/jvm/strimzi-java (Strimzi 1.2.0's classes, the agents' too,
//     are Java 21 class files);
//   - the operator image is Strimzi's docker-images/operator/Dockerfile as
//     it is, on that base, with the distribution Build made;
//   - the Kafka image (what Strimzi runs a KafkaConnect's and a
//     KafkaMirrorMaker2's Pods from) is the last stage of Strimzi's
//     docker-images/kafka-based/kafka/Dockerfile: Kafka in /opt/kafka with
//     Strimzi's scripts beside it, its agents and third-party libraries
//     (docker-images/artifacts/kafka-thirdparty-libs, fetched with Maven as
//     Strimzi's build does) in libs/, user 1001 in group 0. Kafka's jars are
//     the sandbox's (Maven Central's); Kafka's bin/ scripts are not on Maven
//     Central, so bin/connect-distributed.sh is a stand-in that starts the
//     same class with the same environment variables (KAFKA_HEAP_OPTS,
//     KAFKA_JVM_PERFORMANCE_OPTS, KAFKA_GC_LOG_OPTS, KAFKA_JMX_OPTS,
//     KAFKA_LOG4J_OPTS, KAFKA_OPTS). Left out: the Kafka and JMX exporters
//     and Cruise Control, which Connect Pods without metrics do not run,
//     and the third-party libraries Maven Central does not serve here
//     (notServed).

// Images are the local references of the images Ensure built.
type Images struct {
	Operator, Kafka string
}

// ClusterOperatorImage and KafkaImage are the names the images get inside
// the cluster (imported, never pulled).
const (
	ClusterOperatorImage = "localhost/strimzi/operator:" + Version
	KafkaImage           = "localhost/strimzi/kafka:" + Version + "-kafka-" + KafkaVersion
)

// EnsureImages returns the operator and Kafka images in podman's storage,
// building those missing from a (Build's output), the Kafka jars in
// kafkaLibs (sandbox.KafkaDistribution's libs/) and Strimzi's third-party
// libraries (fetched with Maven into a.Dir once). Tags carry a digest of
// the inputs, so an unchanged image is built once; builders share a file
// lock in cacheDir.
func EnsureImages(ctx context.Context, p *containers.Podman, a Artifacts, kafkaLibs, cacheDir string, log *slog.Logger) (Images, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	unlock, err := filelock.Lock(ctx, filepath.Join(cacheDir, ".lock-strimzi-images"))
	if err != nil {
		return Images{}, err
	}
	defer unlock()
	jre, err := containers.JRE17.Ensure(ctx, p, filepath.Join(cacheDir, "containers"), log)
	if err != nil {
		return Images{}, err
	}
	base, err := ensureBase(ctx, p, jre, a.JavaHome, cacheDir, log)
	if err != nil {
		return Images{}, err
	}
	var imgs Images
	if imgs.Operator, err = ensureOperator(ctx, p, base, a, cacheDir, log); err != nil {
		return Images{}, err
	}
	thirdParty, err := thirdPartyLibs(ctx, a, log)
	if err != nil {
		return Images{}, err
	}
	if imgs.Kafka, err = ensureKafka(ctx, p, base, a, kafkaLibs, thirdParty, cacheDir, log); err != nil {
		return Images{}, err
	}
	return imgs, nil
}

// ensureBase is the base of both images: JRE17's Debian with tini,
// openssl and the JDK at javaHome.
func ensureBase(ctx context.Context, p *containers.Podman, jre, javaHome, cacheDir string, log *slog.Logger) (string, error) {
	containerfile := "FROM " + jre + "\n" +
		"RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tini openssl gawk hostname >/dev/null && rm -rf /var/lib/apt/lists/*\n" +
		"COPY . /usr/lib/jvm/strimzi-java\n" +
		"ENV JAVA_HOME=/usr/lib/jvm/strimzi-java PATH=/usr/lib/jvm/strimzi-java/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
	h := sha256.Sum256([]byte(containerfile + javaHome + fmt.Sprint(javahome.Major(javaHome))))
	ref := "localhost/mm2cutover-strimzi-base:" + hex.EncodeToString(h[:])[:12]
	return ref, ensure(ctx, p, ref, func() error {
		work, err := os.MkdirTemp(cacheDir, ".strimzi-base-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(work)
		cf := filepath.Join(work, "Containerfile")
		if err := os.WriteFile(cf, []byte(containerfile), 0o644); err != nil {
			return err
		}
		return build(ctx, p, log, containers.BuildOptions{ContextDir: javaHome, Dockerfile: cf, Tag: ref, HostNetwork: true})
	})
}

// ensureOperator builds Strimzi's docker-images/operator/Dockerfile on
// base, with the distribution's bin/ and lib/ as its tmp/.
func ensureOperator(ctx context.Context, p *containers.Podman, base string, a Artifacts, cacheDir string, log *slog.Logger) (string, error) {
	df, err := os.ReadFile(filepath.Join(a.Images, "operator", "Dockerfile"))
	if err != nil {
		return "", err
	}
	text, err := replaceFrom(string(df), "strimzi/base:latest", base)
	if err != nil {
		return "", err
	}
	key, err := digest(text, filepath.Join(a.Images, "operator", "scripts"), a.Operator)
	if err != nil {
		return "", err
	}
	ref := "localhost/mm2cutover-strimzi-operator:" + Version + "-" + key
	return ref, ensure(ctx, p, ref, func() error {
		work, err := os.MkdirTemp(cacheDir, ".strimzi-operator-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(work)
		for from, to := range map[string]string{
			filepath.Join(a.Images, "operator", "scripts"): "scripts",
			filepath.Join(a.Operator, "bin"):               "tmp/bin",
			filepath.Join(a.Operator, "lib"):               "tmp/lib",
		} {
			if err := copyTree(ctx, from, filepath.Join(work, to)); err != nil {
				return err
			}
		}
		cf := filepath.Join(work, "Dockerfile")
		if err := os.WriteFile(cf, []byte(text), 0o644); err != nil {
			return err
		}
		return build(ctx, p, log, containers.BuildOptions{ContextDir: work, Dockerfile: cf, Tag: ref,
			BuildArgs: map[string]string{"strimzi_version": Version}})
	})
}

// kafkaContainerfile is the last stage of Strimzi's
// docker-images/kafka-based/kafka/Dockerfile, less what a Connect Pod
// without metrics does not run (see the package's comment on images).
const kafkaContainerfile = `FROM {{BASE}}
LABEL name='kafka' version="{{STRIMZI_VERSION}}-{{KAFKA_VERSION}}" release="{{STRIMZI_VERSION}}" summary="Kafka {{KAFKA_VERSION}} image of the Strimzi Kafka Operator project, built by mm2cutover's tests."
RUN useradd -r -m -u 1001 -g 0 kafka
ENV KAFKA_HOME=/opt/kafka
ENV KAFKA_VERSION={{KAFKA_VERSION}}
ENV STRIMZI_VERSION={{STRIMZI_VERSION}}
COPY kafka/ $KAFKA_HOME
COPY ./scripts/ $KAFKA_HOME
RUN mkdir $KAFKA_HOME/plugins
WORKDIR $KAFKA_HOME
USER 1001
`

// connectDistributed stands in for Kafka's bin/connect-distributed.sh and
// kafka-run-class.sh, which Maven Central does not serve: the same class,
// the same environment variables, the same defaults for the heap and the
// JVM options when unset.
const connectDistributed = `#!/usr/bin/env bash
# Stands in for Apache Kafka's bin/connect-distributed.sh (with
# kafka-run-class.sh): Maven Central serves Kafka's jars, not its scripts.
base_dir=$(dirname "$0")/..
if [ -z "$KAFKA_HEAP_OPTS" ]; then
  KAFKA_HEAP_OPTS="-Xms256M -Xmx2G"
fi
if [ -z "$KAFKA_JVM_PERFORMANCE_OPTS" ]; then
  KAFKA_JVM_PERFORMANCE_OPTS="-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true"
fi
JAVA="java"
if [ -n "$JAVA_HOME" ]; then
  JAVA="$JAVA_HOME/bin/java"
fi
# shellcheck disable=SC2086
exec "$JAVA" $KAFKA_HEAP_OPTS $KAFKA_JVM_PERFORMANCE_OPTS $KAFKA_GC_LOG_OPTS $KAFKA_JMX_OPTS $KAFKA_LOG4J_OPTS $KAFKA_OPTS -cp "$base_dir/libs/*" org.apache.kafka.connect.cli.ConnectDistributed "$@"
`

// ensureKafka builds the Kafka image on base.
func ensureKafka(ctx context.Context, p *containers.Podman, base string, a Artifacts, kafkaLibs, thirdParty, cacheDir string, log *slog.Logger) (string, error) {
	text := strings.NewReplacer("{{BASE}}", base, "{{STRIMZI_VERSION}}", Version, "{{KAFKA_VERSION}}", KafkaVersion).Replace(kafkaContainerfile)
	scripts := filepath.Join(a.Images, "kafka-based", "kafka", "scripts")
	key, err := digest(text+connectDistributed, scripts, kafkaLibs, thirdParty, a.KafkaAgent, a.TracingAgent)
	if err != nil {
		return "", err
	}
	ref := "localhost/mm2cutover-strimzi-kafka:" + Version + "-" + KafkaVersion + "-" + key
	return ref, ensure(ctx, p, ref, func() error {
		work, err := os.MkdirTemp(cacheDir, ".strimzi-kafka-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(work)
		libs := filepath.Join(work, "kafka", "libs")
		if err := copyTree(ctx, scripts, filepath.Join(work, "scripts")); err != nil {
			return err
		}
		// Kafka's jars, then Strimzi's third-party libraries over them, as
		// Strimzi's Dockerfile copies them (COPY tmp/thirdparty-libs-*/).
		for _, from := range []string{kafkaLibs, thirdParty} {
			if err := copyTree(ctx, from, libs); err != nil {
				return err
			}
		}
		for _, jar := range []string{a.KafkaAgent, a.TracingAgent} {
			if err := copyTree(ctx, jar, filepath.Join(libs, filepath.Base(jar))); err != nil {
				return err
			}
		}
		bin := filepath.Join(work, "kafka", "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(bin, "connect-distributed.sh"), []byte(connectDistributed), 0o755); err != nil {
			return err
		}
		cf := filepath.Join(work, "Containerfile")
		if err := os.WriteFile(cf, []byte(text), 0o644); err != nil {
			return err
		}
		return build(ctx, p, log, containers.BuildOptions{ContextDir: work, Dockerfile: cf, Tag: ref})
	})
}

// thirdPartyLibs returns the folder of the third-party libraries Strimzi's
// Kafka images add for Kafka KafkaVersion (docker-images/artifacts/
// kafka-thirdparty-libs/4.3.x: its Kubernetes config provider, which every
// Connect worker Strimzi configures loads, OAuth, OpenTelemetry, ...),
// fetched with `mvn dependency:copy-dependencies` on Strimzi's POM, as
// Strimzi's build does, into a.Dir once.
func thirdPartyLibs(ctx context.Context, a Artifacts, log *slog.Logger) (string, error) {
	dir := filepath.Join(a.Dir, "thirdparty-libs-4.3.x")
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir, nil
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return "", fmt.Errorf("strimzi: mvn not found: %w", err)
	}
	b, err := os.ReadFile(filepath.Join(a.Images, "artifacts", "kafka-thirdparty-libs", "4.3.x", "pom.xml"))
	if err != nil {
		return "", err
	}
	text, err := centralOnly(string(b))
	if err != nil {
		return "", err
	}
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", err
	}
	pom := filepath.Join(a.Dir, "thirdparty-libs-pom.xml")
	if err := os.WriteFile(pom, []byte(text), 0o644); err != nil {
		return "", err
	}
	start := time.Now()
	// -U: a resolution that failed earlier through the unreachable
	// repository is not cached as final.
	cmd := exec.CommandContext(ctx, mvn, "-B", "-q", "-U", "-f", pom, "dependency:copy-dependencies", "-DoutputDirectory="+tmp)
	cmd.Env = append(os.Environ(), "JAVA_HOME="+a.JavaHome)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("strimzi: third-party libraries (%s): %w\n%s", pom, err, lastLines(string(out), 30))
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return "", err
	}
	log.Info("strimzi: third-party libraries fetched", "seconds", time.Since(start).Round(time.Second).Seconds())
	return dir, os.Rename(tmp, dir)
}

// notServed are the dependencies of Strimzi's third-party libraries POM
// that Maven Central does not serve here: Cruise Control's metrics
// reporter (only in LinkedIn's repository, which the POM names), Strimzi's
// OAuth 0.18.0 libraries, its server metrics reporter and quotas plugin
// ("Could not find artifact ... in central"). The last four are broker
// plugins, and OAuth is for clusters that authenticate with it: none of
// them is loaded by a Connect worker on these PLAINTEXT clusters.
var notServed = []string{"cruise-control-metrics-reporter", "kafka-oauth-common", "kafka-oauth-server", "kafka-oauth-server-plain",
	"kafka-oauth-client", "kafka-oauth-keycloak-authorizer", "server-metrics-reporter", "kafka-quotas-plugin"}

var firstArtifact = regexp.MustCompile(`<artifactId>\s*([^<]*?)\s*</artifactId>`)

// centralOnly returns Strimzi's third-party libraries POM without
// LinkedIn's repository and without the notServed dependencies.
func centralOnly(pom string) (string, error) {
	i, j := strings.Index(pom, "<repositories>"), strings.Index(pom, "</repositories>")
	if i < 0 || j < i || !strings.Contains(pom[i:j], "cruise-control") {
		return "", fmt.Errorf("strimzi: the third-party libraries POM has no cruise-control repository to leave out: it changed")
	}
	pom = pom[:i] + pom[j+len("</repositories>"):]
	dropped := map[string]int{}
	pom = dependencyBlock.ReplaceAllStringFunc(pom, func(dep string) string {
		// The dependency's own artifactId is its first; exclusions follow.
		a := firstArtifact.FindStringSubmatch(dep)
		if a != nil && slices.Contains(notServed, a[1]) {
			dropped[a[1]]++
			return ""
		}
		return dep
	})
	for _, a := range notServed {
		if dropped[a] != 1 {
			return "", fmt.Errorf("strimzi: the third-party libraries POM has %d %s dependencies, want 1: it changed", dropped[a], a)
		}
	}
	return pom, nil
}

// replaceFrom replaces the FROM line naming from with one naming to.
func replaceFrom(dockerfile, from, to string) (string, error) {
	line := "FROM " + from
	if !strings.Contains(dockerfile, line+"\n") {
		return "", fmt.Errorf("strimzi: the Dockerfile has no %q line: it changed", line)
	}
	return strings.Replace(dockerfile, line+"\n", "FROM "+to+"\n", 1), nil
}

// ensure builds ref with make unless podman's storage holds it.
func ensure(ctx context.Context, p *containers.Podman, ref string, make func() error) error {
	if ok, err := p.ImageExists(ctx, ref); err != nil || ok {
		return err
	}
	return make()
}

func build(ctx context.Context, p *containers.Podman, log *slog.Logger, o containers.BuildOptions) error {
	start := time.Now()
	log.Info("strimzi: building an image", "ref", o.Tag)
	if err := p.Build(ctx, o); err != nil {
		return err
	}
	log.Info("strimzi: image built", "ref", o.Tag, "seconds", time.Since(start).Round(time.Second).Seconds())
	return nil
}

// digest hashes text and the names and sizes of the files under paths.
func digest(text string, paths ...string) (string, error) {
	h := sha256.New()
	h.Write([]byte(text))
	for _, root := range paths {
		var files []string
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			files = append(files, path)
			return nil
		})
		if err != nil {
			return "", err
		}
		slices.Sort(files)
		for _, f := range files {
			fi, err := os.Stat(f)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(h, "%s %d\n", strings.TrimPrefix(f, root), fi.Size())
			if filepath.Ext(f) != ".jar" {
				b, err := os.ReadFile(f)
				if err != nil {
					return "", err
				}
				h.Write(b)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// copyTree copies a file or a folder (cp -a; hard links would cross
// podman's build context as they are).
func copyTree(ctx context.Context, from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	fi, err := os.Stat(from)
	if err != nil {
		return err
	}
	args := []string{"-a", from, to}
	if fi.IsDir() {
		if err := os.MkdirAll(to, 0o755); err != nil {
			return err
		}
		args = []string{"-a", from + "/.", to}
	}
	if out, err := exec.CommandContext(ctx, "cp", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("cp %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}
