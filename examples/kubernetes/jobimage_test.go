package kubernetes_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mm2cutover/mm2cutover/internal/containers"
	"github.com/mm2cutover/mm2cutover/internal/flinklike"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
)

// The offset Job's image: examples/job/Dockerfile, built from the repository
// root (the main module, which this module replaces with ../..).
const (
	jobDockerfilePath = "../job/Dockerfile"
	repoRoot          = "../.."
	jobImageName      = "mm2cutover-job"
	jobBinary         = "/mm2cutover-job"
	connectorClients  = "mm2cutover-connector-clients"
	planKey           = "plan.json" // the key of ConfigMap mm2cutover-plan (README.md)
)

// jobDockerfile is what examples/job/Dockerfile declares.
type jobDockerfile struct {
	version    string // ARG VERSION's default, stamped into the binary
	uid, gid   int64  // USER of the final stage
	entrypoint []string
	stages     map[string]bool // named stages
}

// readJobDockerfile reads examples/job/Dockerfile.
func readJobDockerfile(t *testing.T) jobDockerfile {
	t.Helper()
	data, err := os.ReadFile(jobDockerfilePath)
	if err != nil {
		t.Fatal(err)
	}
	d, err := parseJobDockerfile(string(data))
	if err != nil {
		t.Fatalf("%s: %v", jobDockerfilePath, err)
	}
	return d
}

// parseJobDockerfile follows the stages of the Job's Dockerfile: a stage
// FROM another stage inherits its USER and ENTRYPOINT, as in a build.
func parseJobDockerfile(text string) (jobDockerfile, error) {
	type stage struct {
		user       string
		entrypoint []string
	}
	named := map[string]stage{}
	var cur stage
	var curName string
	d := jobDockerfile{stages: map[string]bool{}}
	for _, line := range strings.Split(strings.ReplaceAll(text, "\\\n", " "), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "FROM":
			if curName != "" {
				named[curName] = cur
			}
			cur, curName = named[f[1]], ""
			if len(f) == 4 && strings.EqualFold(f[2], "AS") {
				curName = f[3]
				d.stages[curName] = true
			}
		case "ARG":
			if v, ok := strings.CutPrefix(f[1], "VERSION="); ok {
				d.version = v
			}
		case "USER":
			cur.user = f[1]
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(strings.TrimSpace(strings.TrimPrefix(line, f[0]))), &cur.entrypoint); err != nil {
				return d, fmt.Errorf("ENTRYPOINT %q: want the JSON (exec) form: %v", line, err)
			}
		}
	}
	u, g, ok := strings.Cut(cur.user, ":")
	uid, err1 := strconv.ParseInt(u, 10, 64)
	gid, err2 := strconv.ParseInt(g, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return d, fmt.Errorf("final stage USER %q: want a numeric UID:GID (runAsNonRoot needs a numeric user)", cur.user)
	}
	d.uid, d.gid, d.entrypoint = uid, gid, cur.entrypoint
	if d.version == "" {
		return d, errors.New("no ARG VERSION default")
	}
	return d, nil
}

// splitImage splits an image reference into its name and tag.
func splitImage(ref string) (name, tag string) {
	name = imageName(ref)
	tag = strings.TrimPrefix(strings.TrimPrefix(ref, name), ":")
	if i := strings.Index(tag, "@"); i >= 0 {
		tag = tag[:i]
	}
	return name, tag
}

// jobImageProblems: the Job's container names the image that
// examples/job/Dockerfile builds, at the version the build stamps by default
// (also kustomize's tag), and runs it as built: through its entrypoint.
func jobImageProblems(c *corev1.Container, k *Kustomization, d jobDockerfile) []string {
	var p []string
	name, tag := splitImage(c.Image)
	if name != jobImageName || tag != d.version {
		p = append(p, fmt.Sprintf("Job image: got %q, want %s:%s (the name kustomize rewrites, and the Dockerfile's VERSION)", c.Image, jobImageName, d.version))
	}
	for _, img := range k.Images {
		if img.Name == name && img.Digest == "" && img.NewTag != d.version {
			p = append(p, fmt.Sprintf("cutover/kustomization.yaml newTag: got %q, want %q (the Dockerfile's VERSION)", img.NewTag, d.version))
		}
	}
	if len(c.Command) > 0 || len(c.Args) > 0 || c.WorkingDir != "" {
		p = append(p, fmt.Sprintf("Job container: got command %v, args %v, workingDir %q; want none (the image's entrypoint)", c.Command, c.Args, c.WorkingDir))
	}
	if !slices.Equal(d.entrypoint, []string{jobBinary}) {
		p = append(p, fmt.Sprintf("%s ENTRYPOINT: got %v, want [%s]", jobDockerfilePath, d.entrypoint, jobBinary))
	}
	if !d.stages["prebuilt"] || !d.stages["build"] {
		p = append(p, fmt.Sprintf("%s: stages %v, want build and prebuilt (README.md documents both)", jobDockerfilePath, sortedKeys(d.stages)))
	}
	return p
}

// TestJobImageReference holds the manifests to the Job's Dockerfile, and
// shows that each mistake is caught.
func TestJobImageReference(t *testing.T) {
	m := load(t)
	df, err := os.ReadFile(jobDockerfilePath)
	if err != nil {
		t.Fatal(err)
	}
	check := func(c corev1.Container, k Kustomization, dockerfile string) ([]string, error) {
		d, err := parseJobDockerfile(dockerfile)
		if err != nil {
			return nil, err
		}
		return jobImageProblems(&c, &k, d), nil
	}
	if p, err := check(*m.offsetJob(t), *m.kustomizations["cutover"], string(df)); err != nil || len(p) > 0 {
		t.Fatalf("got %v %v, want no problem", err, p)
	}
	for _, tc := range []struct {
		name       string
		container  func(*corev1.Container)
		kustomize  func(*Kustomization)
		dockerfile func(string) string
		want       string
	}{
		{name: "tag is not the Dockerfile's VERSION", container: func(c *corev1.Container) { c.Image = jobImageName + ":0.1.0" }, want: "want mm2cutover-job:"},
		{name: "another image", container: func(c *corev1.Container) { c.Image = "mm2-connect:" + readJobDockerfile(t).version }, want: "Job image"},
		{name: "kustomize tag", kustomize: func(k *Kustomization) {
			k.Images = append([]Image(nil), k.Images...)
			k.Images[0].NewTag = "latest"
		}, want: "newTag"},
		{name: "a command replaces the entrypoint", container: func(c *corev1.Container) { c.Command = []string{"/bin/sh"} }, want: "the image's entrypoint"},
		{name: "VERSION default changed", dockerfile: func(s string) string { return strings.Replace(s, "ARG VERSION=", "ARG VERSION=9", 1) }, want: "want mm2cutover-job:9"},
		{name: "entrypoint moved", dockerfile: func(s string) string {
			return strings.Replace(s, `ENTRYPOINT ["/mm2cutover-job"]`, `ENTRYPOINT ["/job"]`, 1)
		}, want: "ENTRYPOINT"},
		{name: "no prebuilt stage", dockerfile: func(s string) string { return strings.Replace(s, "AS prebuilt", "AS binary", 1) }, want: "want build and prebuilt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, k, d := *m.offsetJob(t), *m.kustomizations["cutover"], string(df)
			if tc.container != nil {
				tc.container(&c)
			}
			if tc.kustomize != nil {
				tc.kustomize(&k)
			}
			if tc.dockerfile != nil {
				if d = tc.dockerfile(d); d == string(df) {
					t.Fatal("the mutation changed nothing: update it")
				}
			}
			p, err := check(c, k, d)
			if err != nil || !strings.Contains(strings.Join(p, "\n"), tc.want) {
				t.Errorf("got %v %v, want a problem mentioning %q", err, p, tc.want)
			}
		})
	}
	for name, mutate := range map[string]func(string) string{
		"USER by name": func(s string) string { return strings.Replace(s, "USER 10001:10001", "USER mm2cutover", 1) },
		"no USER":      func(s string) string { return strings.Replace(s, "USER 10001:10001", "", 1) },
		"shell entrypoint": func(s string) string {
			return strings.Replace(s, `ENTRYPOINT ["/mm2cutover-job"]`, `ENTRYPOINT /mm2cutover-job`, 1)
		},
		"no VERSION": func(s string) string { return strings.Replace(s, "ARG VERSION=", "ARG VERSION_=", 1) },
	} {
		if d := mutate(string(df)); d == string(df) {
			t.Errorf("%s: the mutation changed nothing", name)
		} else if _, err := parseJobDockerfile(d); err == nil {
			t.Errorf("%s: parsed without error", name)
		}
	}
}

// jobResult is the Job's one line of result on stdout.
type jobResult struct {
	Result      string  `json:"result"`
	Connector   string  `json:"connector"`
	Fingerprint string  `json:"plan_fingerprint"`
	PlanSource  string  `json:"plan_source"`
	Created     bool    `json:"created"`
	Patched     bool    `json:"patched"`
	Partitions  int     `json:"partitions"`
	Matched     int     `json:"matched"`
	Error       string  `json:"error"`
	Seconds     float64 `json:"seconds"`
}

// TestJobImage builds examples/job/Dockerfile both ways its header documents
// and runs the image as cutover/job.yaml runs it, against the sandbox:
//
//   - from source, as CI and users build it: the build stage's GO_IMAGE is
//     this machine's Go toolchain on the Debian base of the worker image's
//     test (containers.GoToolchain; no registry here), and its modules come
//     from this machine's module cache, served on loopback as GOPROXY;
//   - with --target prebuilt from a binary built on the host with the same
//     flags: the two images hold the same files and the same binary, byte for
//     byte.
//
// The image holds only the static binary, the CA bundle, passwd and group
// entries for 10001, and /tmp. It runs with the podman flags that the
// manifest's security context means (read-only root, --user 10001:10001,
// all capabilities dropped, no new privileges), the manifest's environment
// variables and its volume mounts (the connector-clients ConfigMap's files,
// the optional plan ConfigMap, an emptyDir on /tmp) — every variable the
// manifest declares is given a sandbox value, kept, or left out because the
// sandbox is PLAINTEXT, and the test fails on one it does not know. It
// checks the one-line JSON result and the exit statuses: applied (0), already
// applied on a rerun (0), a plan named but not mounted (2), and a stale
// mounted plan refused (4), against the podFailurePolicy.
func TestJobImage(t *testing.T) {
	m := load(t)
	pod := &m.job().Spec.Template.Spec
	c := m.offsetJob(t)
	_, version := splitImage(c.Image)
	pm, cache := jobPodman(t)
	sb := sandboxtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(logWriter{t}, nil))
	suffix := randomSuffix()

	// The base images: Debian with CA certificates and a shell (the worker
	// image test's), and the Go toolchain on it.
	start := time.Now()
	containersDir := filepath.Join(cache, "containers")
	base, err := containers.JRE17.Ensure(ctx, pm, containersDir, log)
	if err != nil {
		t.Fatal(err)
	}
	goImage, err := containers.GoToolchain{Name: "mm2cutover-go", Base: base, GOROOT: goEnv(t, "GOROOT"), GOVERSION: goEnv(t, "GOVERSION")}.Ensure(ctx, pm, containersDir, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("base images %s and %s ready in %v", base, goImage, time.Since(start).Round(time.Millisecond))

	// Host builds: the Job for --target prebuilt (which also puts every
	// module it needs into the module cache the proxy serves), and the
	// cutover CLI that makes a plan to mount.
	prebuiltDir, bin := t.TempDir(), t.TempDir()
	hostBuild(ctx, t, filepath.Join(prebuiltDir, "mm2cutover-job"), "./examples/job", version)
	hostBuild(ctx, t, filepath.Join(prebuiltDir, "cutover"), "./examples/cutover", version)
	hostBuild(ctx, t, filepath.Join(bin, "cutover"), "./examples/cutover", "")
	proxy := serveDir(t, filepath.Join(goEnv(t, "GOMODCACHE"), "cache", "download"))

	srcTag := "localhost/" + jobImageName + "-test:" + version + "-src-" + suffix
	preTag := "localhost/" + jobImageName + "-test:" + version + "-pre-" + suffix
	build := func(o containers.BuildOptions) {
		t.Helper()
		var out bytes.Buffer
		o.Log = &out
		start := time.Now()
		if err := pm.Build(ctx, o); err != nil {
			t.Fatalf("%v\n%s", err, lastLines(out.String(), 40))
		}
		t.Cleanup(func() {
			if err := pm.RemoveImage(context.Background(), o.Tag); err != nil {
				t.Errorf("remove image: %v", err)
			}
		})
		t.Logf("built %s (target %q) in %v", o.Tag, o.Target, time.Since(start).Round(time.Millisecond))
	}
	build(containers.BuildOptions{
		ContextDir: repoRoot, Dockerfile: filepath.Join(repoRoot, "examples/job/Dockerfile"), Tag: srcTag, HostNetwork: true,
		BuildArgs: map[string]string{"GO_IMAGE": goImage, "GOPROXY": proxy, "VERSION": version},
	})
	build(containers.BuildOptions{
		ContextDir: prebuiltDir, Dockerfile: filepath.Join(repoRoot, "examples/job/Dockerfile"), Tag: preTag, Target: "prebuilt",
		BuildArgs: map[string]string{"CERTS_IMAGE": base},
	})

	// What the images hold, and that both paths give the same.
	src, pre := inspectJobImage(ctx, t, pm, srcTag), inspectJobImage(ctx, t, pm, preTag)
	t.Logf("image %s: %.1f MB (binary %.1f MB), %d files", srcTag, float64(src.size)/1e6, float64(src.binarySize)/1e6, len(src.files))
	wantFiles := []string{"cutover", "etc/", "etc/group", "etc/passwd", "etc/ssl/", "etc/ssl/certs/", "etc/ssl/certs/ca-certificates.crt", "mm2cutover-job", "tmp/"}
	if !slices.Equal(src.files, wantFiles) {
		t.Errorf("image files: got %v, want only %v (no shell, no package manager)", src.files, wantFiles)
	}
	if !slices.Equal(src.files, pre.files) || src.binarySHA != pre.binarySHA || !src.sameConfig(pre) {
		t.Errorf("the prebuilt path differs from the source build:\nsource   %+v\nprebuilt %+v", src, pre)
	}
	wantUser := fmt.Sprintf("%d:%d", deref64(pod.SecurityContext.RunAsUser), deref64(pod.SecurityContext.RunAsGroup))
	if src.config.User != wantUser || !slices.Equal(src.config.Entrypoint, []string{jobBinary}) || len(src.config.Cmd) > 0 {
		t.Errorf("image config: got user %q, entrypoint %v, cmd %v; want %s (the manifest's runAsUser:runAsGroup), [%s], none",
			src.config.User, src.config.Entrypoint, src.config.Cmd, wantUser, jobBinary)
	}
	if src.size > 40e6 {
		t.Errorf("image size %d bytes: want a few MB more than the two binaries (the Job's: %d)", src.size, src.binarySize)
	}

	// The old job: two topics, its group's commits at the log ends, stopped.
	group, topicA, topicB := "jobimage-"+suffix+"-flink", "jobimage-"+suffix+"-a", "jobimage-"+suffix+"-b"
	for topic, n := range map[string]int32{topicA: 3, topicB: 2} {
		for _, b := range []string{sb.Source().Bootstrap(), sb.Target().Bootstrap()} {
			if err := sandbox.CreateTopic(ctx, b, topic, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	parts := []flinklike.Partition{{Topic: topicA, Partition: 0}, {Topic: topicA, Partition: 1}, {Topic: topicA, Partition: 2}, {Topic: topicB, Partition: 0}}
	committed := map[flinklike.Partition]int64{{Topic: topicB, Partition: 1}: 0} // empty: cleared
	for _, p := range parts {
		committed[p] = 30
	}
	if err := flinklike.Produce(ctx, sb.Source().Bootstrap(), parts, 30); err != nil {
		t.Fatal(err)
	}
	oldJob(ctx, t, sb, group, []string{topicA, topicB}, committed)

	// The manifest's environment, with the sandbox's values.
	connectURL := sb.Workers()[len(sb.Workers())-1].URL() // writes forwarded to the leader
	connector := "jobimage-" + suffix
	env := m.environment(t, c)
	sandboxValue := map[string]string{
		"MM2CUTOVER_CONNECT_URL":              connectURL,
		"MM2CUTOVER_SOURCE_BOOTSTRAP":         sb.Source().Bootstrap(),
		"MM2CUTOVER_TARGET_BOOTSTRAP":         sb.Target().Bootstrap(),
		"MM2CUTOVER_SOURCE_SECURITY_PROTOCOL": "PLAINTEXT",
		"MM2CUTOVER_TARGET_SECURITY_PROTOCOL": "PLAINTEXT",
		"MM2CUTOVER_GROUP":                    group,
		"MM2CUTOVER_TOPICS":                   topicA + "," + topicB,
		"MM2CUTOVER_CONNECTOR":                connector,
	}
	if p := jobEnvProblems(env); len(p) > 0 {
		t.Fatal(strings.Join(p, "\n"))
	}
	baseEnv := map[string]string{}
	for _, name := range jobEnvSandbox {
		v, ok := sandboxValue[name]
		if !ok {
			t.Fatalf("no sandbox value for %s", name)
		}
		baseEnv[name] = v
	}
	for _, name := range jobEnvKept {
		baseEnv[name] = env[name].value
	}
	for name, v := range jobEnvTestOnly {
		baseEnv[name] = v
	}

	// The ConfigMap volumes: the connector's client files (PLAINTEXT here),
	// and the optional plan ConfigMap, absent unless a run mounts a plan.
	clientsDir := t.TempDir()
	for key, text := range m.configMaps[connectorClients].Data {
		props, err := parseProperties(text)
		if err != nil {
			t.Fatalf("%s %s: %v", connectorClients, key, err)
		}
		if _, ok := props["security.protocol"]; !ok {
			t.Fatalf("%s %s: no security.protocol to adapt to the sandbox", connectorClients, key)
		}
		var lines []string
		for _, k := range sortedKeys(props) {
			switch {
			case k == "security.protocol":
				lines = append(lines, k+"=PLAINTEXT")
			case !strings.HasPrefix(k, "sasl."):
				lines = append(lines, k+"="+props[k])
			}
		}
		if err := os.WriteFile(filepath.Join(clientsDir, key), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := jobRunner{t: t, pm: pm, image: srcTag, pod: pod, c: c, env: baseEnv}
	failJob := failJobCodes(m.job())
	if failJob[0] || failJob[1] {
		t.Errorf("podFailurePolicy FailJob codes %v: want neither 0 (done) nor 1 (worth a retry)", sortedCodes(failJob))
	}
	noPlan := t.TempDir()

	// 1. The Job as the manifest runs it: builds the plan and applies it.
	r := run.run(ctx, nil, map[string]string{connectorClients: clientsDir, planConfigMap: noPlan})
	if r.code != 0 || r.res.Result != "applied" || !r.res.Created || !r.res.Patched || r.res.Partitions != 5 || r.res.PlanSource != "built" || r.res.Connector != connector {
		t.Fatalf("first run: exit %d, %+v; want 0, applied, created, patched, 5 partitions, a built plan\n%s", r.code, r.res, r.stderr)
	}
	if want := `"tool_version":"mm2cutover-job/` + version + `"`; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr does not log the plan's tool version %s:\n%s", want, lastLines(r.stderr, 10))
	}
	wantOffsets := map[string]int64{}
	for _, p := range parts {
		wantOffsets[fmt.Sprintf("%s-%d", p.Topic, p.Partition)] = 29
	}
	if got := connectOffsets(ctx, t, connectURL, connector); !mapsEqual(got, wantOffsets) {
		t.Errorf("Connect's offsets of %s: got %v, want %v", connector, got, wantOffsets)
	}

	// 2. A rerun (a retried Pod) finds the offsets applied and writes nothing.
	r = run.run(ctx, nil, map[string]string{connectorClients: clientsDir, planConfigMap: noPlan})
	if r.code != 0 || r.res.Result != "already-applied" || r.res.Created || r.res.Patched {
		t.Fatalf("rerun: exit %d, %+v; want 0, already-applied, nothing written\n%s", r.code, r.res, r.stderr)
	}

	// 3. MM2CUTOVER_PLAN set but the optional plan ConfigMap missing: the
	// kubelet mounts an empty directory; bad settings, no retry.
	planPath := documentedPlanPath(t, pod, c)
	r = run.run(ctx, map[string]string{"MM2CUTOVER_PLAN": planPath}, map[string]string{connectorClients: clientsDir, planConfigMap: noPlan})
	if r.code != 2 || !strings.Contains(r.res.Error, "no such file") || !failJob[int32(r.code)] {
		t.Errorf("plan named but not mounted: exit %d, %+v; want 2 (a podFailurePolicy FailJob code %v), no such file\n%s", r.code, r.res, sortedCodes(failJob), r.stderr)
	}

	// 4. A reviewed plan for a second connector, made with the cutover CLI,
	// goes stale: the old job ran again and its commit moved. Mounted, the
	// Job refuses it (exit 4) and creates nothing.
	stale := connector + "-stale"
	planDir, planOut := t.TempDir(), filepath.Join(t.TempDir(), "plan.json")
	cli := exec.CommandContext(ctx, filepath.Join(bin, "cutover"), "plan")
	cli.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "MM2CUTOVER_PLAN=" + planOut, "MM2CUTOVER_STABILITY_WINDOW=1s"}
	for _, name := range sortedKeys(baseEnv) {
		v := baseEnv[name]
		switch name {
		case "MM2CUTOVER_CONNECTOR":
			v = stale
		case "MM2CUTOVER_MM2_SOURCE_CLIENT", "MM2CUTOVER_MM2_TARGET_CLIENT":
			v = hostPath(t, c, v, clientsDir)
		}
		cli.Env = append(cli.Env, name+"="+v)
	}
	if out, err := cli.CombinedOutput(); err != nil {
		t.Fatalf("cutover plan: %v\n%s", err, lastLines(string(out), 30))
	}
	plan, err := os.ReadFile(planOut)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(planDir, planKey), plan, 0o644); err != nil {
		t.Fatal(err)
	}
	a0 := flinklike.Partition{Topic: topicA, Partition: 0}
	if err := flinklike.Produce(ctx, sb.Source().Bootstrap(), []flinklike.Partition{a0}, 5); err != nil {
		t.Fatal(err)
	}
	committed[a0] = 35
	oldJob(ctx, t, sb, group, []string{topicA, topicB}, committed)
	r = run.run(ctx, map[string]string{"MM2CUTOVER_PLAN": planPath, "MM2CUTOVER_CONNECTOR": stale},
		map[string]string{connectorClients: clientsDir, planConfigMap: planDir})
	if r.code != 4 || r.res.Result != "refused" || r.res.PlanSource != "mounted" || !failJob[int32(r.code)] {
		t.Fatalf("stale mounted plan: exit %d, %+v; want 4 (a podFailurePolicy FailJob code %v), refused\n%s", r.code, r.res, sortedCodes(failJob), r.stderr)
	}
	if code := connectStatus(ctx, t, connectURL+"/connectors/"+stale); code != http.StatusNotFound {
		t.Errorf("GET /connectors/%s after the refusal: got %d, want 404 (nothing created)", stale, code)
	}
	t.Logf("stale plan refused: %s", r.res.Error)

	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, connectURL+"/connectors/"+connector, nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
}

// jobRunner runs the Job's image the way its manifest runs the container.
type jobRunner struct {
	t     *testing.T
	pm    *containers.Podman
	image string
	pod   *corev1.PodSpec
	c     *corev1.Container
	env   map[string]string
}

// jobOutcome is one run: exit status, result line, streams.
type jobOutcome struct {
	code           int
	res            jobResult
	stdout, stderr string
}

// podmanRunArgs maps the Job's pod and container to `podman run` flags:
// user and groups, read-only root, capabilities, privilege escalation, and
// the volume mounts, configMaps naming the host directory that holds each
// ConfigMap's files. A setting it cannot map is an error, never ignored.
func podmanRunArgs(pod *corev1.PodSpec, c *corev1.Container, configMaps map[string]string) ([]string, error) {
	psc, sc := pod.SecurityContext, c.SecurityContext
	if psc == nil || sc == nil {
		return nil, errors.New("no pod or container securityContext")
	}
	var problems []string
	known := func(what string, v any, keys ...string) {
		b, _ := json.Marshal(v)
		var fields map[string]any
		json.Unmarshal(b, &fields)
		for _, k := range sortedKeys(fields) {
			if !slices.Contains(keys, k) {
				problems = append(problems, fmt.Sprintf("%s.%s is not mapped to a podman flag", what, k))
			}
		}
	}
	known("pod securityContext", psc, "runAsNonRoot", "runAsUser", "runAsGroup", "fsGroup", "seccompProfile")
	known("container securityContext", sc, "allowPrivilegeEscalation", "readOnlyRootFilesystem", "runAsNonRoot", "capabilities")
	for _, p := range []*corev1.SeccompProfile{psc.SeccompProfile, sc.SeccompProfile} {
		if p != nil && p.Type != corev1.SeccompProfileTypeRuntimeDefault {
			problems = append(problems, fmt.Sprintf("seccompProfile %s: podman runs its default profile only", p.Type))
		}
	}
	uid, gid := psc.RunAsUser, psc.RunAsGroup
	switch {
	case uid == nil || gid == nil:
		problems = append(problems, "the pod securityContext has no runAsUser or runAsGroup")
	case *uid == 0:
		problems = append(problems, "runAsUser 0")
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	args := []string{"--user", fmt.Sprintf("%d:%d", *uid, *gid)}
	if psc.FSGroup != nil {
		args = append(args, "--group-add", strconv.FormatInt(*psc.FSGroup, 10))
	}
	if sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem {
		// Only the manifest's volumes are writable: no tmpfs of podman's own.
		args = append(args, "--read-only", "--read-only-tmpfs=false")
	}
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		args = append(args, "--security-opt", "no-new-privileges")
	}
	if sc.Capabilities != nil {
		for _, c := range sc.Capabilities.Drop {
			args = append(args, "--cap-drop", string(c))
		}
		for _, c := range sc.Capabilities.Add {
			args = append(args, "--cap-add", string(c))
		}
	}
	for _, vm := range c.VolumeMounts {
		i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == vm.Name })
		if i < 0 {
			return nil, fmt.Errorf("volume mount %s: no volume of that name", vm.Name)
		}
		v := pod.Volumes[i]
		if vm.SubPath != "" || vm.SubPathExpr != "" || vm.MountPropagation != nil {
			return nil, fmt.Errorf("volume mount %s: subPath and propagation are not mapped to podman", vm.Name)
		}
		switch {
		case v.ConfigMap != nil:
			dir, ok := configMaps[v.ConfigMap.Name]
			if !ok {
				return nil, fmt.Errorf("volume %s: no directory for ConfigMap %s", v.Name, v.ConfigMap.Name)
			}
			if len(v.ConfigMap.Items) > 0 {
				return nil, fmt.Errorf("volume %s: ConfigMap items are not mapped to podman", v.Name)
			}
			// The kubelet mounts ConfigMaps read-only, whatever the mount says.
			args = append(args, "--volume", dir+":"+vm.MountPath+":ro")
		case v.EmptyDir != nil:
			opts := "rw,mode=1777"
			if v.EmptyDir.SizeLimit != nil {
				opts += ",size=" + strconv.FormatInt(v.EmptyDir.SizeLimit.Value(), 10)
			}
			args = append(args, "--tmpfs", vm.MountPath+":"+opts)
		default:
			return nil, fmt.Errorf("volume %s: only ConfigMap and emptyDir volumes are mapped to podman", v.Name)
		}
	}
	return args, nil
}

// The Job's environment variables, as the image test gives them.
var (
	// a value of the sandbox's
	jobEnvSandbox = []string{
		"MM2CUTOVER_CONNECT_URL", "MM2CUTOVER_SOURCE_BOOTSTRAP", "MM2CUTOVER_TARGET_BOOTSTRAP",
		"MM2CUTOVER_SOURCE_SECURITY_PROTOCOL", "MM2CUTOVER_TARGET_SECURITY_PROTOCOL",
		"MM2CUTOVER_GROUP", "MM2CUTOVER_TOPICS", "MM2CUTOVER_CONNECTOR",
	}
	// the manifest's value: the alias, and the paths of the mounted files
	jobEnvKept = []string{"MM2CUTOVER_SOURCE_ALIAS", "MM2CUTOVER_MM2_SOURCE_CLIENT", "MM2CUTOVER_MM2_TARGET_CLIENT"}
	// left out: the sandbox's clusters are PLAINTEXT, where SASL settings are a usage error
	jobEnvPlaintext = []string{
		"MM2CUTOVER_SOURCE_SASL_MECHANISM", "MM2CUTOVER_SOURCE_SASL_USERNAME", "MM2CUTOVER_SOURCE_SASL_PASSWORD",
		"MM2CUTOVER_TARGET_SASL_MECHANISM", "MM2CUTOVER_TARGET_SASL_USERNAME", "MM2CUTOVER_TARGET_SASL_PASSWORD",
	}
	// left out: podman runs no Kubernetes API to keep the plan in (the
	// cluster test, kube_test.go, runs the Job with it)
	jobEnvNoAPI = []string{"MM2CUTOVER_PLAN_CONFIGMAP"}
	// added by the test, and only these: the manifest keeps the 30 s default
	jobEnvTestOnly = map[string]string{"MM2CUTOVER_STABILITY_WINDOW": "2s"}
)

// jobEnvProblems: the image test knows every variable of the Job's
// environment, and every one it knows the manifest declares.
func jobEnvProblems(env map[string]envVar) []string {
	var p []string
	known := map[string]bool{}
	for _, list := range [][]string{jobEnvSandbox, jobEnvKept, jobEnvPlaintext, jobEnvNoAPI} {
		for _, name := range list {
			known[name] = true
			if _, ok := env[name]; !ok {
				p = append(p, fmt.Sprintf("the image test sets %s, which the Job's manifest does not declare", name))
			}
		}
	}
	for _, name := range sortedKeys(env) {
		if !known[name] {
			p = append(p, fmt.Sprintf("the Job's environment has %s, which the image test does not know: give it a sandbox value, keep it, or say why it is left out", name))
		}
		if _, ok := jobEnvTestOnly[name]; ok {
			p = append(p, fmt.Sprintf("the image test adds %s, which the manifest now sets: use the manifest's value", name))
		}
	}
	return p
}

// TestJobImageRunSettings: what the image test gives the container is what
// the manifest says — every flag, mount and variable — and a setting it
// does not know fails it instead of being dropped.
func TestJobImageRunSettings(t *testing.T) {
	m := load(t)
	pod, c := &m.job().Spec.Template.Spec, m.offsetJob(t)
	dirs := map[string]string{connectorClients: "/C", planConfigMap: "/P"}
	got, err := podmanRunArgs(pod, c, dirs)
	want := []string{"--user", "10001:10001", "--group-add", "10001", "--read-only", "--read-only-tmpfs=false",
		"--security-opt", "no-new-privileges", "--cap-drop", "ALL",
		"--volume", "/P:/plan:ro", "--volume", "/C:/etc/mm2cutover:ro", "--tmpfs", "/tmp:rw,mode=1777,size=67108864"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("podman run flags of the manifest:\ngot  %v %v\nwant %v", got, err, want)
	}
	if p := jobEnvProblems(m.environment(t, c)); len(p) > 0 {
		t.Errorf("the manifest's environment: %v", p)
	}
	yes := true
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.PodSpec, *corev1.Container)
		want   string
	}{
		{"privileged", func(_ *corev1.PodSpec, c *corev1.Container) { c.SecurityContext.Privileged = &yes }, "container securityContext.privileged"},
		{"container user", func(_ *corev1.PodSpec, c *corev1.Container) { c.SecurityContext.RunAsUser = new(int64(5)) }, "container securityContext.runAsUser"},
		{"pod sysctls", func(p *corev1.PodSpec, _ *corev1.Container) {
			p.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "a", Value: "b"}}
		}, "pod securityContext.sysctls"},
		{"no user", func(p *corev1.PodSpec, _ *corev1.Container) { p.SecurityContext.RunAsUser = nil }, "no runAsUser"},
		{"localhost seccomp", func(p *corev1.PodSpec, _ *corev1.Container) {
			p.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost}
		}, "seccompProfile Localhost"},
		{"subPath", func(_ *corev1.PodSpec, c *corev1.Container) { c.VolumeMounts[0].SubPath = "x" }, "subPath"},
		{"hostPath volume", func(p *corev1.PodSpec, _ *corev1.Container) {
			p.Volumes[0].VolumeSource = corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}
		}, "only ConfigMap and emptyDir"},
		{"another ConfigMap", func(p *corev1.PodSpec, _ *corev1.Container) { p.Volumes[0].ConfigMap.Name = "other" }, "no directory for ConfigMap other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod, c := m.job().Spec.Template.Spec.DeepCopy(), m.offsetJob(t).DeepCopy()
			tc.mutate(pod, c)
			if _, err := podmanRunArgs(pod, c, dirs); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
	for name, mutate := range map[string]func(map[string]envVar){
		"a new variable":        func(e map[string]envVar) { e["MM2CUTOVER_TASKS_MAX"] = envVar{value: "4"} },
		"a variable removed":    func(e map[string]envVar) { delete(e, "MM2CUTOVER_GROUP") },
		"the test's one is set": func(e map[string]envVar) { e["MM2CUTOVER_STABILITY_WINDOW"] = envVar{value: "1m"} },
	} {
		env := m.environment(t, c)
		mutate(env)
		if p := jobEnvProblems(env); len(p) == 0 {
			t.Errorf("%s: no problem found", name)
		}
	}
}

// run runs the Job once with the environment plus extra, and returns its
// exit status and its result: the one line on stdout.
func (j jobRunner) run(ctx context.Context, extra, configMaps map[string]string) jobOutcome {
	t := j.t
	t.Helper()
	flags, err := podmanRunArgs(j.pod, j.c, configMaps)
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"run", "--rm", "--network", "host"}, flags...)
	env := map[string]string{}
	for k, v := range j.env {
		env[k] = v
	}
	for k, v := range extra {
		env[k] = v
	}
	for _, k := range sortedKeys(env) {
		args = append(args, "--env", k+"="+env[k])
	}
	cmd := j.pm.Command(ctx, append(args, j.image)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	o := jobOutcome{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		o.code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	if o.code >= 125 {
		t.Fatalf("podman run failed (exit %d): %s", o.code, o.stderr)
	}
	if lines := strings.Split(strings.TrimRight(o.stdout, "\n"), "\n"); len(lines) != 1 || !strings.HasSuffix(o.stdout, "\n") {
		t.Fatalf("stdout: got %q, want exactly one line", o.stdout)
	}
	if err := json.Unmarshal([]byte(o.stdout), &o.res); err != nil {
		t.Fatalf("stdout %q is not the JSON result: %v", o.stdout, err)
	}
	t.Logf("Job run: exit %d, result %s, %.1f s in the Job, %v in all", o.code, o.res.Result, o.res.Seconds, time.Since(start).Round(time.Millisecond))
	return o
}

// failJobCodes are the exit codes on which the Job's podFailurePolicy fails
// the Job at once (checkPodFailurePolicy holds them to exit.go's).
func failJobCodes(job *batchv1.Job) map[int32]bool {
	codes := map[int32]bool{}
	if job.Spec.PodFailurePolicy == nil {
		return codes
	}
	for _, r := range job.Spec.PodFailurePolicy.Rules {
		if r.Action == batchv1.PodFailurePolicyActionFailJob && r.OnExitCodes != nil && r.OnExitCodes.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn {
			for _, v := range r.OnExitCodes.Values {
				codes[v] = true
			}
		}
	}
	return codes
}

func sortedCodes(codes map[int32]bool) []int32 {
	var out []int32
	for c := range codes {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// documentedPlanPath is the MM2CUTOVER_PLAN value that cutover/configmap.yaml
// tells an operator to add, checked to lie on the plan ConfigMap's mount
// under the key README.md creates.
func documentedPlanPath(t *testing.T, pod *corev1.PodSpec, c *corev1.Container) string {
	t.Helper()
	data, err := os.ReadFile("cutover/configmap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	mm := regexp.MustCompile(`(?m)^#\s+MM2CUTOVER_PLAN:\s+"([^"]+)"`).FindSubmatch(data)
	if mm == nil {
		t.Fatal("cutover/configmap.yaml: no commented MM2CUTOVER_PLAN line telling how to mount a plan")
	}
	path := string(mm[1])
	for _, vm := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name == vm.Name && v.ConfigMap != nil && v.ConfigMap.Name == planConfigMap && path == vm.MountPath+"/"+planKey {
				return path
			}
		}
	}
	t.Fatalf("MM2CUTOVER_PLAN %q is not %s on the %s ConfigMap's mount", path, planKey, planConfigMap)
	return ""
}

// hostPath maps a path in the container to the host directory that is
// mounted there for a ConfigMap.
func hostPath(t *testing.T, c *corev1.Container, path, dir string) string {
	t.Helper()
	for _, vm := range c.VolumeMounts {
		if rel, ok := strings.CutPrefix(path, vm.MountPath+"/"); ok {
			return filepath.Join(dir, rel)
		}
	}
	t.Fatalf("%s is on no mount of the Job's container", path)
	return ""
}

// oldJob runs the replicator being replaced on group until it has committed
// want, and stops it.
func oldJob(ctx context.Context, t *testing.T, sb *sandbox.Sandbox, group string, topics []string, want map[flinklike.Partition]int64) {
	t.Helper()
	job, err := flinklike.Start(ctx, flinklike.Config{Source: sb.Source().Bootstrap(), Target: sb.Target().Bootstrap(),
		Group: group, Topics: topics, Checkpoint: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := job.WaitCommitted(ctx, want); err != nil {
		job.Stop()
		t.Fatal(err)
	}
	if _, err := job.Stop(); err != nil {
		t.Fatal(err)
	}
}

// connectOffsets reads a MirrorSourceConnector's offsets with Connect's REST
// API (GET /connectors/NAME/offsets) as topic-partition -> offset.
func connectOffsets(ctx context.Context, t *testing.T, url, connector string) map[string]int64 {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/connectors/"+connector+"/offsets", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Offsets []struct {
			Partition struct {
				Cluster   string `json:"cluster"`
				Topic     string `json:"topic"`
				Partition int32  `json:"partition"`
			} `json:"partition"`
			Offset struct {
				Offset int64 `json:"offset"`
			} `json:"offset"`
		} `json:"offsets"`
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET offsets of %s: %s", connector, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, o := range body.Offsets {
		got[fmt.Sprintf("%s-%d", o.Partition.Topic, o.Partition.Partition)] = o.Offset.Offset
	}
	return got
}

func connectStatus(ctx context.Context, t *testing.T, url string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// jobImage is what an image holds: its config, files and binary.
type jobImage struct {
	config struct {
		User       string
		Entrypoint []string
		Cmd        []string
		Env        []string
		WorkingDir string
	}
	size       int64
	files      []string // paths relative to /, directories with a trailing /
	binarySHA  string
	binarySize int64
}

func (a jobImage) sameConfig(b jobImage) bool {
	return a.config.User == b.config.User && slices.Equal(a.config.Entrypoint, b.config.Entrypoint) &&
		slices.Equal(a.config.Cmd, b.config.Cmd) && slices.Equal(a.config.Env, b.config.Env) && a.config.WorkingDir == b.config.WorkingDir
}

// inspectJobImage reads an image's config and, through `podman image
// mount`, its files.
func inspectJobImage(ctx context.Context, t *testing.T, pm *containers.Podman, ref string) jobImage {
	t.Helper()
	var img jobImage
	out, err := pm.Run(ctx, "image", "inspect", "--format", "{{json .Config}}", ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &img.config); err != nil {
		t.Fatalf("image config %q: %v", out, err)
	}
	if img.size, err = pm.ImageSize(ctx, ref); err != nil {
		t.Fatal(err)
	}
	out, err = pm.Run(ctx, "image", "mount", ref)
	if err != nil {
		t.Fatal(err)
	}
	defer pm.Run(context.Background(), "image", "unmount", ref)
	root := strings.TrimSpace(out)
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == root {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			rel += "/"
		}
		img.files = append(img.files, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(img.files)
	b, err := os.ReadFile(filepath.Join(root, jobBinary))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	img.binarySHA, img.binarySize = hex.EncodeToString(sum[:]), int64(len(b))
	ca, err := os.ReadFile(filepath.Join(root, "etc/ssl/certs/ca-certificates.crt"))
	if err != nil || !bytes.Contains(ca, []byte("-----BEGIN CERTIFICATE-----")) {
		t.Errorf("image %s: no CA bundle at /etc/ssl/certs/ca-certificates.crt (%v)", ref, err)
	}
	return img
}

// hostBuild builds pkg of the main module on this machine, static. With a
// version it uses the Dockerfile's flags (-trimpath, -s -w, -X main.version)
// and no VCS stamping (the image build's context has no .git), so that the
// binary is the one the image build makes.
func hostBuild(ctx context.Context, t *testing.T, out, pkg, version string) {
	t.Helper()
	args := []string{"build", "-o", out}
	if version != "" {
		args = append(args, "-trimpath", "-buildvcs=false", "-ldflags", "-s -w -X main.version="+version)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkg)...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// serveDir serves a directory on a loopback port and returns its URL: the
// module cache's download directory is a GOPROXY.
func serveDir(t *testing.T, dir string) string {
	t.Helper()
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir))}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String()
}

// jobPodman returns the project's podman setup and the sandbox cache
// directory, or skips the test where podman cannot run (never with CI=true:
// CI installs it).
func jobPodman(t *testing.T) (*containers.Podman, string) {
	t.Helper()
	if testing.Short() {
		if os.Getenv("CI") == "true" {
			t.Fatal("image test skipped by -short, which CI=true does not allow")
		}
		t.Skip("image test: runs without -short")
	}
	cache := sandbox.ConfigFromEnv().CacheDir
	if cache == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		cache = filepath.Join(d, "mm2cutover")
	}
	p, err := containers.New(filepath.Join(cache, "containers"))
	if errors.Is(err, containers.ErrUnavailable) && os.Getenv("CI") != "true" {
		t.Skipf("no podman here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p, cache
}

func deref64(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

func randomSuffix() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// logWriter sends a logger's lines to t.Log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
