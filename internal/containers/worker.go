package containers

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// WorkerImage says how to build the Kafka Connect worker image of
// docker/mm2 without a registry: the Kafka distribution is a tarball of
// the sandbox's jars and the JMX exporter agent the sandbox's cache holds,
// both served to the build on a loopback port, on the JRE17 base.
type WorkerImage struct {
	ContextDir   string // docker/mm2
	KafkaLibs    string // the jars (internal/sandbox's KafkaLibs)
	KafkaVersion string
	JMXAgent     string // the agent jar (sandbox.JMXExporterAgent)
	Name         string // the image name; the tag is a digest of the inputs
	// Version labels the image (the Dockerfile's VERSION); "" keeps the
	// Dockerfile's default, the repository's VERSION.
	Version string
}

// Ensure returns the reference of the worker image, building it when
// podman's storage lacks it: the tag is a digest of the Dockerfile, the
// context's files, the jars' names and sizes and the agent, so an
// unchanged image is built once. Builders share the cache's file lock.
func (w WorkerImage) Ensure(ctx context.Context, p *Podman, cacheDir string, log *slog.Logger) (string, error) {
	key, err := w.key()
	if err != nil {
		return "", err
	}
	ref := w.Name + ":" + key
	return p.ensureImage(ctx, ref, cacheDir, func(ref string) error {
		base, err := JRE17.Ensure(ctx, p, cacheDir, log)
		if err != nil {
			return err
		}
		tarball, sum, err := kafkaTarball(w.KafkaLibs, w.KafkaVersion, cacheDir)
		if err != nil {
			return err
		}
		defer os.Remove(tarball)
		url, stop, err := serveFiles(map[string]string{"/kafka.tgz": tarball, "/agent.jar": w.JMXAgent})
		if err != nil {
			return err
		}
		defer stop()
		start := time.Now()
		args := map[string]string{
			"BASE_IMAGE": base, "KAFKA_URL": url + "/kafka.tgz", "KAFKA_SHA512": sum, "JMX_EXPORTER_URL": url + "/agent.jar",
			"KAFKA_VERSION": w.KafkaVersion,
		}
		if w.Version != "" {
			args["VERSION"] = w.Version
		}
		err = p.Build(ctx, BuildOptions{ContextDir: w.ContextDir, Tag: ref, HostNetwork: true, BuildArgs: args})
		if err == nil {
			log.Info("containers: worker image built", "ref", ref, "seconds", time.Since(start).Round(time.Second).Seconds())
		}
		return err
	})
}

func (w WorkerImage) key() (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(w.ContextDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", path[len(w.ContextDir):], len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", err
	}
	jars, err := filepath.Glob(filepath.Join(w.KafkaLibs, "*.jar"))
	if err != nil {
		return "", err
	}
	slices.Sort(jars)
	for _, j := range append(jars, w.JMXAgent) {
		fi, err := os.Stat(j)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(j), fi.Size())
	}
	fmt.Fprintln(h, w.KafkaVersion, w.Version)
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// kafkaTarball writes, in dir, a Kafka-distribution-shaped
// kafka_2.13-VERSION.tgz of the jars in libs (what the entrypoint needs:
// libs/, with connect-mirror, and the site-docs and bin/windows directories
// the Dockerfile removes) and returns its path and SHA-512.
func kafkaTarball(libs, version, dir string) (path, sum string, err error) {
	top := "kafka_2.13-" + version
	f, err := os.CreateTemp(dir, ".kafka-*.tgz")
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	h := sha512.New()
	gz, _ := gzip.NewWriterLevel(io.MultiWriter(f, h), gzip.BestSpeed)
	tw := tar.NewWriter(gz)
	for _, d := range []string{top, top + "/libs", top + "/bin", top + "/bin/windows", top + "/site-docs"} {
		if err := tw.WriteHeader(&tar.Header{Name: d + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: time.Now()}); err != nil {
			return "", "", err
		}
	}
	jars, err := filepath.Glob(filepath.Join(libs, "*.jar"))
	if err != nil || len(jars) == 0 {
		return "", "", fmt.Errorf("containers: no jars in %s: %v", libs, err)
	}
	for _, jar := range jars {
		b, err := os.ReadFile(jar)
		if err != nil {
			return "", "", err
		}
		if err := tw.WriteHeader(&tar.Header{Name: top + "/libs/" + filepath.Base(jar), Mode: 0o644, Size: int64(len(b)), ModTime: time.Now()}); err != nil {
			return "", "", err
		}
		if _, err := tw.Write(b); err != nil {
			return "", "", err
		}
	}
	if err := tw.Close(); err != nil {
		return "", "", err
	}
	if err := gz.Close(); err != nil {
		return "", "", err
	}
	return f.Name(), hex.EncodeToString(h.Sum(nil)), nil
}

// serveFiles serves files (URL path -> file) on a loopback port and returns
// the base URL: a build's RUN steps reach it over the host network.
func serveFiles(files map[string]string) (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, path)
	})}
	go srv.Serve(l)
	return "http://" + l.Addr().String(), func() { srv.Close() }, nil
}
