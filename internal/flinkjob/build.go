package flinkjob

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/filelock"
)

// sources are the job's Maven project: pom.xml and src/.
//
//go:embed pom.xml src
var sources embed.FS

// Version is a Flink release and the flink-connector-kafka release built for
// it, with the release of Flink's State Processor API the reference reader of
// savepoints uses (ReadPositions).
type Version struct {
	Flink          string // e.g. 1.20.3
	Connector      string // e.g. 3.4.0-1.20
	StateProcessor string // e.g. 1.20.0: Maven Central serves no 1.20.3 of flink-state-processor-api
}

// versions are the Flink lines the job is built and tested for, by short name.
var versions = map[string]Version{
	"1.20": {Flink: "1.20.3", Connector: "3.4.0-1.20", StateProcessor: "1.20.0"}, // the 1.x LTS line
	"2.2":  {Flink: "2.2.0", Connector: "5.0.0-2.2", StateProcessor: "2.2.0"},
}

// DefaultVersion is the Flink line used when none is named: 1.20, the LTS
// line most jobs being replaced still run.
const DefaultVersion = "1.20"

// VersionEnv names the environment variable that selects the Flink line
// ("1.20" or "2.2"), as MM2CUTOVER_KAFKA_VERSION selects Kafka's.
const VersionEnv = "MM2CUTOVER_FLINK_VERSION"

// Versions lists the short names of the supported Flink lines, sorted.
func Versions() []string {
	var vs []string
	for v := range versions {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return vs
}

// ErrNoFlink means the job could not be built: no Maven, no Java compiler,
// an unknown version, or Maven failed.
var ErrNoFlink = errors.New("no flink job")

// LookupVersion returns the release pair of a short name ("1.20", "2.2") or
// of a full Flink version that one of them names ("1.20.3"); "" means
// DefaultVersion. Errors match ErrNoFlink.
func LookupVersion(name string) (Version, error) {
	if name == "" {
		name = DefaultVersion
	}
	if v, ok := versions[name]; ok {
		return v, nil
	}
	for _, v := range versions {
		if v.Flink == name {
			return v, nil
		}
	}
	return Version{}, fmt.Errorf("%w: flink version %q is not one of %s", ErrNoFlink, name, strings.Join(Versions(), ", "))
}

// Dist is a built job: the job jar and the jars it runs with.
type Dist struct {
	Version Version
	Dir     string // holds replicator.jar and lib/
}

// classpath returns the java class path of the job.
func (d Dist) classpath() string {
	return filepath.Join(d.Dir, "replicator.jar") + string(os.PathListSeparator) + filepath.Join(d.Dir, "lib", "*")
}

// DefaultCacheDir returns the jar cache the sandbox uses: MM2CUTOVER_CACHE,
// else the user cache directory's mm2cutover folder.
func DefaultCacheDir() (string, error) {
	if dir := os.Getenv("MM2CUTOVER_CACHE"); dir != "" {
		return dir, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("%w: no cache directory: %v", ErrNoFlink, err)
	}
	return filepath.Join(dir, "mm2cutover"), nil
}

// Build returns the job built for version in cacheDir ("" means
// DefaultCacheDir), building it with Maven on first use: the embedded
// project is written to a temporary directory, `mvn package
// dependency:copy-dependencies` compiles it and copies its jars, and the
// result is renamed into place as flink-<version>-<hash of the sources>, so
// a changed job is rebuilt and a half-built one never used. Concurrent
// builders wait on a file lock. Errors match ErrNoFlink.
func Build(ctx context.Context, version, cacheDir string, log *slog.Logger) (Dist, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	v, err := LookupVersion(version)
	if err != nil {
		return Dist{}, err
	}
	if cacheDir == "" {
		if cacheDir, err = DefaultCacheDir(); err != nil {
			return Dist{}, err
		}
	}
	hash, err := sourceHash()
	if err != nil {
		return Dist{}, fmt.Errorf("%w: %v", ErrNoFlink, err)
	}
	d := Dist{Version: v, Dir: filepath.Join(cacheDir, "flink-"+v.Flink+"-"+hash)}
	if built(d.Dir) {
		return d, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return Dist{}, fmt.Errorf("%w: %v", ErrNoFlink, err)
	}
	unlock, err := filelock.Lock(ctx, filepath.Join(cacheDir, ".lock-flink"))
	if err != nil {
		return Dist{}, fmt.Errorf("%w: lock cache: %v", ErrNoFlink, err)
	}
	defer unlock()
	if built(d.Dir) { // another process built it while we waited
		return d, nil
	}
	log.Info("building the flink job with maven", "flink", v.Flink, "connector", v.Connector, "cache", d.Dir)
	start := time.Now()
	if err := buildWithMaven(ctx, v, cacheDir, d.Dir); err != nil {
		return Dist{}, err
	}
	log.Info("flink job built", "took", time.Since(start).Round(time.Millisecond))
	return d, nil
}

func built(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "replicator.jar")); err != nil {
		return false
	}
	m, _ := filepath.Glob(filepath.Join(dir, "lib", "flink-runtime-*.jar"))
	return len(m) > 0
}

// sourceHash is a short digest of the embedded project, so that a cache
// entry belongs to one version of the job's source.
func sourceHash() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(sources, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := sources.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:12], err
}

func buildWithMaven(ctx context.Context, v Version, cacheDir, dir string) error {
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return fmt.Errorf("%w: Maven (mvn) is not installed; it builds the Flink job on first use", ErrNoFlink)
	}
	if _, err := exec.LookPath("javac"); err != nil {
		return fmt.Errorf("%w: no Java compiler (javac): install a JDK 17 or newer", ErrNoFlink)
	}
	tmp, err := os.MkdirTemp(cacheDir, "build-flink-")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoFlink, err)
	}
	defer os.RemoveAll(tmp)
	project := filepath.Join(tmp, "project")
	if err := os.CopyFS(project, sources); err != nil {
		return fmt.Errorf("%w: write sources: %v", ErrNoFlink, err)
	}
	dist := filepath.Join(tmp, "dist")
	cmd := exec.CommandContext(ctx, mvn, "-B", "-q", "-f", filepath.Join(project, "pom.xml"),
		"-Dflink.version="+v.Flink, "-Dflink.kafka.version="+v.Connector, "-Dflink.spa.version="+v.StateProcessor,
		"package", "dependency:copy-dependencies", "-DoutputDirectory="+filepath.Join(dist, "lib"))
	cmd.Dir = project
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: mvn package for flink %s: %v\n%s", ErrNoFlink, v.Flink, err, lastLines(string(out), 30))
	}
	jar, err := os.ReadFile(filepath.Join(project, "target", "flink-replicator-1.jar"))
	if err != nil {
		return fmt.Errorf("%w: maven built no job jar: %v", ErrNoFlink, err)
	}
	if err := os.WriteFile(filepath.Join(dist, "replicator.jar"), jar, 0o644); err != nil {
		return fmt.Errorf("%w: %v", ErrNoFlink, err)
	}
	if !built(dist) {
		return fmt.Errorf("%w: maven copied no flink-runtime jar for %s", ErrNoFlink, v.Flink)
	}
	if err := os.Rename(dist, dir); err != nil {
		return fmt.Errorf("%w: %v", ErrNoFlink, err)
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
