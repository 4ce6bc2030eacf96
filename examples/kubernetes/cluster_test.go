package kubernetes_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/mm2cutover/mm2cutover/internal/containers"
	"github.com/mm2cutover/mm2cutover/internal/flinklike"
	"github.com/mm2cutover/mm2cutover/internal/kube"
	"github.com/mm2cutover/mm2cutover/internal/kube/kubetest"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/plan"
)

// The objects of the manifests the cluster test acts on.
const (
	ns           = "mm2"
	workerLabels = "app.kubernetes.io/name=mm2-connect,app.kubernetes.io/instance=mm2"
	offsetsJob   = "mm2cutover-offsets"
	resumeJob    = "mm2cutover-resume"
	planCM       = "mm2cutover-plan"
	holdCM       = "mm2cutover-test-hold" // the test's MM2CUTOVER_JOB_HOLD_AT, per attempt
)

// site is the deployment of these manifests on the test cluster: the
// sandbox's two Kafka clusters with their brokers on the cluster's HostIP,
// the worker and Job images imported under the kustomizations' names, the
// Secrets, and overlays that change only what README's "Site values" lists
// (addresses, security protocol, replication factor, heap and
// requests sized for a 2-core node, and a startup probe that waits 10
// minutes instead of 3: three JVMs starting at once on two cores shared with
// other tests take 2 to 4 minutes to open their REST port), plus the test's
// hold hook on the Job.
type site struct {
	c       *kube.Cluster
	sb      *sandbox.Sandbox
	m       *manifests
	dir     string // the overlays
	restURL string // the REST Service's ClusterIP, reached from this machine
	log     *slog.Logger
}

// newSite sets everything up and rolls the workers out.
func newSite(ctx context.Context, t *testing.T) *site {
	t.Helper()
	c := kubetest.Shared(t)
	pm, cache := jobPodman(t)
	sb := sandboxtest.Dedicated(t, sandbox.Config{BrokerHost: c.HostIP().String()})
	s := &site{c: c, sb: sb, m: load(t), dir: t.TempDir(), log: slog.New(slog.NewTextHandler(logWriter{t}, nil))}
	start := time.Now()

	// The worker image, on the JRE17 base, with the sandbox's Kafka jars.
	agent, err := sandbox.JMXExporterAgent(ctx, cache, s.log)
	if err != nil {
		t.Fatal(err)
	}
	workerRef, err := containers.WorkerImage{ContextDir: "../../docker/mm2", KafkaLibs: sb.KafkaLibs(), KafkaVersion: sb.KafkaVersion(),
		JMXAgent: agent, Name: "localhost/mm2kube/mm2-connect"}.Ensure(ctx, pm, filepath.Join(cache, "containers"), s.log)
	if err != nil {
		t.Fatal(err)
	}
	// The Job's image, from binaries built here (--target prebuilt).
	d := readJobDockerfile(t)
	base, err := containers.JRE17.Ensure(ctx, pm, filepath.Join(cache, "containers"), s.log)
	if err != nil {
		t.Fatal(err)
	}
	prebuilt := t.TempDir()
	hostBuild(ctx, t, filepath.Join(prebuilt, "mm2cutover-job"), "./examples/job", d.version)
	hostBuild(ctx, t, filepath.Join(prebuilt, "cutover"), "./examples/cutover", d.version)
	jobRef := "localhost/mm2kube/mm2cutover-job:" + d.version + "-" + randomSuffix()
	if err := pm.Build(ctx, containers.BuildOptions{ContextDir: prebuilt, Dockerfile: filepath.Join(repoRoot, "examples/job/Dockerfile"),
		Tag: jobRef, Target: "prebuilt", BuildArgs: map[string]string{"CERTS_IMAGE": base}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pm.RemoveImage(context.Background(), jobRef) })
	for ref, dir := range map[string]string{workerRef: "connect", jobRef: "cutover"} {
		img := s.m.kustomizations[dir].Images[0]
		if err := c.LoadPodmanImage(ctx, pm, ref, img.NewName+":"+img.NewTag); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("images ready and imported in %v", time.Since(start).Round(time.Second))

	// The Namespace, the Secrets (PLAINTEXT here: empty values), the CRDs,
	// the workers.
	applyNamespace(ctx, t, c)
	installCRDs(ctx, t, c)
	for name, keys := range map[string][]string{
		"mm2-connect-auth":     {"sasl-jaas-config", "source-sasl-jaas-config"},
		"mm2cutover-job-kafka": {"source-sasl-username", "source-sasl-password", "target-sasl-username", "target-sasl-password"},
	} {
		args := []string{"-n", ns, "create", "secret", "generic", name}
		for _, k := range keys {
			args = append(args, "--from-literal="+k+"=")
		}
		c.Kubectl(ctx, "-n", ns, "delete", "secret", name, "--ignore-not-found")
		s.kubectl(ctx, t, args...)
	}
	s.writeOverlay(t, "workers", "connect", fmt.Sprintf(`
  - patch: |-
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: mm2-connect-env, namespace: mm2}
      data:
        CONNECT_BOOTSTRAP_SERVERS: %q
        CONNECT_REPLICATION_FACTOR: "1"
        CONNECT_SECURITY_PROTOCOL: PLAINTEXT
        KAFKA_HEAP_OPTS: "-Xms128m -Xmx512m"
        KAFKA_JVM_PERFORMANCE_OPTS: "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError"
  - target: {kind: Deployment, name: mm2-connect}
    patch: |-
      - op: replace
        path: /spec/template/spec/containers/0/resources
        value: {requests: {cpu: 100m, memory: 1Gi}, limits: {memory: 1536Mi}}
      - op: replace
        path: /spec/template/spec/containers/0/startupProbe/failureThreshold
        value: 120
`, sb.Target().Bootstrap()))
	start = time.Now()
	s.kubectl(ctx, t, "apply", "-k", filepath.Join(s.dir, "workers"))
	s.rolledOut(ctx, t)
	t.Logf("three workers ready in %v", time.Since(start).Round(time.Second))
	ip := strings.TrimSpace(s.kubectl(ctx, t, "-n", ns, "get", "service", "mm2-connect", "-o", "jsonpath={.spec.clusterIP}"))
	s.restURL = "http://" + ip + ":8088"
	return s
}

// writeOverlay writes s.dir/name/kustomization.yaml: the manifests of base
// (a directory of this module) with patches (YAML list items).
func (s *site) writeOverlay(t *testing.T, name, base, patches string) {
	t.Helper()
	abs, err := filepath.Abs(base)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(s.dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// kustomize takes a base only as a relative path.
	rel, err := filepath.Rel(dir, abs)
	if err != nil {
		t.Fatal(err)
	}
	k := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\n", rel)
	if patches != "" {
		k += "patches:" + patches
	}
	if err := os.WriteFile(filepath.Join(dir, kustomization), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (s *site) kubectl(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	out, err := s.c.Kubectl(ctx, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rolledOut waits until the Deployment has rolled out: three workers ready
// for minReadySeconds, none left of an older revision.
func (s *site) rolledOut(ctx context.Context, t *testing.T) {
	t.Helper()
	if out, err := s.c.Kubectl(ctx, "-n", ns, "rollout", "status", "deployment/mm2-connect", "--timeout=15m"); err != nil {
		pods, _ := s.c.Kubectl(ctx, "-n", ns, "get", "pods", "-o", "wide")
		logs, _ := s.c.Kubectl(ctx, "-n", ns, "logs", "-l", workerLabels, "--tail=30", "--prefix")
		t.Fatalf("rollout: %v\n%s\n%s\n%s", err, out, pods, logs)
	}
}

// pods returns the Pods selected by labels.
func (s *site) pods(ctx context.Context, t *testing.T, labels string) []corev1.Pod {
	t.Helper()
	var l corev1.PodList
	if err := json.Unmarshal([]byte(s.kubectl(ctx, t, "-n", ns, "get", "pods", "-l", labels, "-o", "json")), &l); err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// workerPods returns the running workers, ready or not.
func (s *site) workerPods(ctx context.Context, t *testing.T) []corev1.Pod {
	t.Helper()
	return slices.DeleteFunc(s.pods(ctx, t, workerLabels), func(p corev1.Pod) bool {
		return p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning
	})
}

// leader returns the IP of the Pod whose worker leads the Connect group, as
// the workers' metrics say (the leader's advertised URL).
func (s *site) leader(ctx context.Context, t *testing.T) string {
	t.Helper()
	re := regexp.MustCompile(`kafka_connect_worker_rebalance_leader\{[^}]*leader="http://([0-9.]+):8088/?"`)
	var last error
	for ctx.Err() == nil {
		for _, p := range s.workerPods(ctx, t) {
			body, err := httpGet(ctx, "http://"+p.Status.PodIP+":9404/metrics")
			if err != nil {
				last = err
				continue
			}
			if m := re.FindStringSubmatch(body); m != nil {
				return m[1]
			}
		}
		sleepCtx(ctx, time.Second)
	}
	t.Fatalf("no worker reports its leader: %v", last)
	return ""
}

// cutover is one cutover's names and its old job's topics.
type cutover struct {
	name, group string
	topics      map[string]int32
}

func (co cutover) partitions() []flinklike.Partition { return flinklike.All(co.topics) }

func (co cutover) topicList() string {
	var ts []string
	for t := range co.topics {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return strings.Join(ts, ",")
}

// newCutover makes the topics of a cutover on both clusters and lets the
// old job replicate n records per partition and commit them, then stop.
func (s *site) newCutover(ctx context.Context, t *testing.T, name string, n int) cutover {
	t.Helper()
	co := cutover{name: "k8s-" + name + "-" + randomSuffix(), topics: map[string]int32{}}
	co.group = co.name + "-flink"
	co.topics[co.name+"-a"], co.topics[co.name+"-b"] = 2, 1
	for topic, parts := range co.topics {
		for _, b := range []string{s.sb.Source().Bootstrap(), s.sb.Target().Bootstrap()} {
			if err := sandbox.CreateTopic(ctx, b, topic, parts); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n > 0 {
		if err := flinklike.Produce(ctx, s.sb.Source().Bootstrap(), co.partitions(), n); err != nil {
			t.Fatal(err)
		}
		want := map[flinklike.Partition]int64{}
		for _, p := range co.partitions() {
			want[p] = int64(n)
		}
		oldJob(ctx, t, s.sb, co.group, slices.Sorted(func(yield func(string) bool) {
			for t := range co.topics {
				if !yield(t) {
					return
				}
			}
		}), want)
	}
	return co
}

// applyJob deletes the Jobs and the kept plan of an earlier cutover, then
// applies the cutover directory with co's settings (and env overriding
// the Job ConfigMap's values), and returns once the offset Job exists.
func (s *site) applyJob(ctx context.Context, t *testing.T, co cutover, env map[string]string) {
	t.Helper()
	s.kubectl(ctx, t, "-n", ns, "delete", "job", offsetsJob, resumeJob, "--ignore-not-found", "--cascade=foreground", "--wait=true")
	s.kubectl(ctx, t, "-n", ns, "delete", "configmap", planCM, "--ignore-not-found")
	values := map[string]string{
		"MM2CUTOVER_SOURCE_BOOTSTRAP":         s.sb.Source().Bootstrap(),
		"MM2CUTOVER_TARGET_BOOTSTRAP":         s.sb.Target().Bootstrap(),
		"MM2CUTOVER_SOURCE_SECURITY_PROTOCOL": "PLAINTEXT",
		"MM2CUTOVER_TARGET_SECURITY_PROTOCOL": "PLAINTEXT",
		"MM2CUTOVER_GROUP":                    co.group,
		"MM2CUTOVER_TOPICS":                   co.topicList(),
		"MM2CUTOVER_CONNECTOR":                co.name,
		"MM2CUTOVER_STABILITY_WINDOW":         "2s",
	}
	for k, v := range env {
		values[k] = v
	}
	var data strings.Builder
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range values {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(&data, "        %s: %q\n", k, values[k])
	}
	s.writeOverlay(t, "cutover", "cutover", `
  - patch: |-
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: mm2cutover-job-env, namespace: mm2}
      data:
`+data.String()+`  - target: {kind: ConfigMap, name: mm2cutover-job-env}
    patch: |-
      - {op: remove, path: /data/MM2CUTOVER_SOURCE_SASL_MECHANISM}
      - {op: remove, path: /data/MM2CUTOVER_TARGET_SASL_MECHANISM}
  - patch: |-
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: mm2cutover-connector-clients, namespace: mm2}
      data:
        source-client.properties: "security.protocol=PLAINTEXT\n"
        target-client.properties: "security.protocol=PLAINTEXT\n"
  - target: {kind: Job, name: mm2cutover-offsets}
    patch: |-
      - op: add
        path: /spec/template/spec/containers/0/env/-
        value: {name: MM2CUTOVER_JOB_HOLD_AT, valueFrom: {configMapKeyRef: {name: `+holdCM+`, key: at, optional: true}}}
`)
	s.kubectl(ctx, t, "apply", "-k", filepath.Join(s.dir, "cutover"))
}

// hold makes the next Pod of the offset Job wait at step (see
// MM2CUTOVER_JOB_HOLD_AT in examples/job); "" removes the hold.
func (s *site) hold(ctx context.Context, t *testing.T, step string) {
	t.Helper()
	s.kubectl(ctx, t, "-n", ns, "delete", "configmap", holdCM, "--ignore-not-found")
	if step != "" {
		s.kubectl(ctx, t, "-n", ns, "create", "configmap", holdCM, "--from-literal=at="+step)
	}
}

// jobEnd is how a Job ended and what its Pods said.
type jobEnd struct {
	job     batchv1.Job
	reason  string // the Complete or Failed condition's reason, "" if complete
	results []jobResult
}

// waitJob waits until the Job name is Complete or Failed.
func (s *site) waitJob(ctx context.Context, t *testing.T, name string, timeout time.Duration) jobEnd {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		var j batchv1.Job
		out, err := s.c.Kubectl(ctx, "-n", ns, "get", "job", name, "-o", "json")
		if err == nil && json.Unmarshal([]byte(out), &j) == nil {
			for _, cond := range j.Status.Conditions {
				if (cond.Type == batchv1.JobComplete || cond.Type == batchv1.JobFailed) && cond.Status == corev1.ConditionTrue {
					o := jobEnd{job: j}
					if cond.Type == batchv1.JobFailed {
						o.reason = cond.Reason
					}
					o.results = s.jobResults(ctx, t, name)
					return o
				}
			}
		}
		if ctx.Err() != nil {
			pods, _ := s.c.Kubectl(context.Background(), "-n", ns, "get", "pods", "-o", "wide")
			logs, _ := s.c.Kubectl(context.Background(), "-n", ns, "logs", "job/"+name, "--all-containers", "--tail=40")
			t.Fatalf("Job %s did not finish in %v: %v\n%s\n%s", name, timeout, err, pods, logs)
		}
		sleepCtx(ctx, time.Second)
	}
}

// jobResults returns the result line of each Pod of the offset Job name,
// oldest first.
func (s *site) jobResults(ctx context.Context, t *testing.T, name string) []jobResult {
	t.Helper()
	pods := s.pods(ctx, t, "batch.kubernetes.io/job-name="+name)
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	var rs []jobResult
	for _, p := range pods {
		logs, err := s.c.Kubectl(ctx, "-n", ns, "logs", p.Name)
		if err != nil {
			continue
		}
		var r jobResult
		for _, line := range strings.Split(logs, "\n") {
			if strings.HasPrefix(line, `{"result"`) {
				json.Unmarshal([]byte(line), &r)
			}
		}
		rs = append(rs, r)
	}
	return rs
}

// waitLog waits until the log of a Pod of the Job name contains want, and
// returns that Pod's name.
func (s *site) waitLog(ctx context.Context, t *testing.T, job, want string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for ctx.Err() == nil {
		for _, p := range s.pods(ctx, t, "batch.kubernetes.io/job-name="+job) {
			if logs, err := s.c.Kubectl(ctx, "-n", ns, "logs", p.Name); err == nil && strings.Contains(logs, want) {
				return p.Name
			}
		}
		sleepCtx(ctx, 500*time.Millisecond)
	}
	logs, _ := s.c.Kubectl(context.Background(), "-n", ns, "logs", "job/"+job, "--tail=30")
	t.Fatalf("no Pod of Job %s logged %q:\n%s", job, want, logs)
	return ""
}

// keptPlan returns the plan in the ConfigMap the offset Job keeps it in.
func (s *site) keptPlan(ctx context.Context, t *testing.T) *plan.Plan {
	t.Helper()
	var cm corev1.ConfigMap
	if err := json.Unmarshal([]byte(s.kubectl(ctx, t, "-n", ns, "get", "configmap", planCM, "-o", "json")), &cm); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Decode(strings.NewReader(cm.Data[planKey]))
	if err != nil {
		t.Fatalf("the kept plan: %v", err)
	}
	if got := cm.Annotations["mm2cutover.io/plan-fingerprint"]; got != p.Fingerprint {
		t.Errorf("the plan ConfigMap's fingerprint annotation %q, its plan's %q", got, p.Fingerprint)
	}
	return p
}

// wantOffsets are Connect's offsets a plan sets (M = C-1 where C > 0), as
// connectOffsets reads them.
func wantOffsets(t *testing.T, p *plan.Plan) map[string]int64 {
	t.Helper()
	exp, err := p.ExpectedOffsets()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for _, o := range exp {
		m, _ := o.Offset.Get()
		want[fmt.Sprintf("%s-%d", o.Partition.Topic, o.Partition.Partition)] = m
	}
	return want
}

// checkRecords waits until every source record of co's partitions is on
// the target (the connector caught up), and returns what Check found per
// partition; lost records fail the test.
func (s *site) checkRecords(ctx context.Context, t *testing.T, co cutover) []flinklike.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	for {
		var rs []flinklike.Result
		lost := 0
		for _, p := range co.partitions() {
			r, err := flinklike.Check(ctx, s.sb.Source().Bootstrap(), s.sb.Target().Bootstrap(), p.Topic, p.Partition, p.Topic)
			if err != nil {
				t.Fatal(err)
			}
			rs = append(rs, r)
			lost += r.Lost
		}
		if lost == 0 {
			for _, r := range rs {
				if r.Foreign > 0 || r.OutOfOrder > 0 {
					t.Errorf("%s-%d: %+v", r.Topic, r.Partition, r)
				}
			}
			return rs
		}
		if ctx.Err() != nil {
			t.Fatalf("records still missing on the target after 5 minutes: %+v", rs)
		}
		sleepCtx(ctx, 2*time.Second)
	}
}

// TestCutoverOnKubernetes runs the design's deployment for real: the worker
// image as the three-Pod Deployment, the Job image as the offset Job, the
// flow of README.md's "Order" (plan kept by the Job, review, approval by
// the resume Job, verification), and the Kubernetes acceptance of the
// design: a rolling restart after catch-up with every record counted, the
// Job's Pod deleted at each step and a worker deleted during the Job's
// PATCH converging, the Job's exit codes driving its podFailurePolicy, and
// a drain stopping at the PodDisruptionBudget. Each step's cost is logged.
func TestCutoverOnKubernetes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	s := newSite(ctx, t)
	var main cutover
	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"workers", func(t *testing.T) { s.checkWorkers(ctx, t) }},
		{"cutover as README orders it", func(t *testing.T) { main = s.checkCutover(ctx, t) }},
		{"rollout restart after catch-up", func(t *testing.T) { s.checkRolloutRestart(ctx, t, main) }},
		{"Job Pod deleted at each step", func(t *testing.T) { s.checkJobPodDeleted(ctx, t) }},
		{"leader worker deleted during the PATCH", func(t *testing.T) { s.checkWorkerDeletedDuringPatch(ctx, t) }},
		{"podFailurePolicy", func(t *testing.T) { s.checkFailurePolicy(ctx, t) }},
		{"drain stops at the PDB", func(t *testing.T) { s.checkDrain(ctx, t) }},
		// Last: from here on the workers run every source task in
		// transactions.
		{"exactly-once: rollout restart under traffic", func(t *testing.T) { s.checkExactlyOnceRestart(ctx, t) }},
	}
	for _, st := range steps {
		start := time.Now()
		ok := t.Run(st.name, st.run)
		t.Logf("%s: %v", st.name, time.Since(start).Round(time.Second))
		if !ok && (st.name == "workers" || st.name == "cutover as README orders it") {
			t.Fatalf("%s failed: the steps after it need it", st.name)
		}
	}
}

// checkWorkers: three ready workers, each on its own Pod IP, running as
// the manifest says (uid 10001, no capabilities, read-only root, seccomp);
// a write sent to each worker (two of them not the leader) is forwarded to
// the leader's advertised Pod IP; the Service answers; and a FAILED
// connector leaves the probes' endpoints healthy.
func (s *site) checkWorkers(ctx context.Context, t *testing.T) {
	pods := s.workerPods(ctx, t)
	if len(pods) != 3 {
		t.Fatalf("got %d worker Pods, want 3", len(pods))
	}
	ips := map[string]bool{}
	for _, p := range pods {
		if !s.c.PodCIDR().Contains(mustAddr(t, p.Status.PodIP)) {
			t.Errorf("Pod %s IP %s is outside the Pod range %s", p.Name, p.Status.PodIP, s.c.PodCIDR())
		}
		ips[p.Status.PodIP] = true
	}
	if len(ips) != 3 {
		t.Errorf("Pod IPs %v: want three", ips)
	}
	status := s.kubectl(ctx, t, "-n", ns, "exec", pods[0].Name, "--", "sh", "-c",
		`id -u; id -g; grep -E '^(CapEff|Seccomp|NoNewPrivs):' /proc/1/status; touch /opt/x 2>&1 || echo read-only; echo "$POD_IP"`)
	for _, want := range []string{"10001\n10001\n", "CapEff:\t0000000000000000", "Seccomp:\t2", "NoNewPrivs:\t1", "read-only", pods[0].Status.PodIP} {
		if !strings.Contains(status, want) {
			t.Errorf("worker %s: %q lacks %q", pods[0].Name, status, want)
		}
	}
	leader := s.leader(ctx, t)
	t.Logf("workers %v, leader %s, Service %s", slices.Sorted(func(y func(string) bool) {
		for ip := range ips {
			if !y(ip) {
				return
			}
		}
	}), leader, s.restURL)
	// A write only the leader may do, sent to each worker's Pod IP, and
	// through the Service.
	for i, p := range pods {
		name := fmt.Sprintf("k8s-forward-%d-%s", i, randomSuffix())
		body := fmt.Sprintf(`{"name":%q,"config":{"connector.class":"org.apache.kafka.connect.mirror.MirrorSourceConnector",
			"source.cluster.alias":"source","target.cluster.alias":"target","topics":"none-%s",
			"source.cluster.bootstrap.servers":%q,"target.cluster.bootstrap.servers":%q},"initial_state":"STOPPED"}`,
			name, name, s.sb.Source().Bootstrap(), s.sb.Target().Bootstrap())
		url := "http://" + p.Status.PodIP + ":8088"
		if code, out := httpDo(ctx, t, http.MethodPost, url+"/connectors", body); code != http.StatusCreated {
			t.Errorf("create through worker %s (leader %v): %d %s", p.Status.PodIP, p.Status.PodIP == leader, code, out)
		}
		if code, out := httpDo(ctx, t, http.MethodDelete, s.restURL+"/connectors/"+name, ""); code != http.StatusNoContent {
			t.Errorf("delete through the Service: %d %s", code, out)
		}
	}
	// A connector that FAILS at once (a source that does not resolve):
	// the probes' endpoints stay 200, and no worker restarts.
	name := "k8s-failed-" + randomSuffix()
	body := fmt.Sprintf(`{"name":%q,"config":{"connector.class":"org.apache.kafka.connect.mirror.MirrorSourceConnector",
		"source.cluster.alias":"source","target.cluster.alias":"target","topics":".*",
		"source.cluster.bootstrap.servers":"no-such-broker.invalid:9092","target.cluster.bootstrap.servers":%q}}`, name, s.sb.Target().Bootstrap())
	if code, out := httpDo(ctx, t, http.MethodPost, s.restURL+"/connectors", body); code != http.StatusCreated {
		t.Fatalf("create %s: %d %s", name, code, out)
	}
	defer httpDo(ctx, t, http.MethodDelete, s.restURL+"/connectors/"+name, "")
	failed := false
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline) && !failed; sleepCtx(ctx, time.Second) {
		_, out := httpDo(ctx, t, http.MethodGet, s.restURL+"/connectors/"+name+"/status", "")
		failed = strings.Contains(out, `"state":"FAILED"`)
	}
	if !failed {
		t.Fatalf("connector %s never FAILED", name)
	}
	for _, p := range pods {
		for _, path := range []string{"/", "/health"} {
			if code, out := httpDo(ctx, t, http.MethodGet, "http://"+p.Status.PodIP+":8088"+path, ""); code != http.StatusOK {
				t.Errorf("worker %s GET %s with a FAILED connector: %d %s (a probe would fail)", p.Name, path, code, out)
			}
		}
	}
}

// checkCutover runs README.md's order on the cluster: the old job stopped,
// the offset Job (plan built and kept, applied, read back), the review of
// the kept plan, the approval (the resume Job: `cutover resume -yes`, then
// `cutover verify`), every record counted; and the offset Job applied again
// after the resume refuses (exit 4) and fails at once.
func (s *site) checkCutover(ctx context.Context, t *testing.T) cutover {
	co := s.newCutover(ctx, t, "main", 40)
	s.hold(ctx, t, "")
	start := time.Now()
	s.applyJob(ctx, t, co, nil)
	o := s.waitJob(ctx, t, offsetsJob, 5*time.Minute)
	if o.reason != "" || len(o.results) != 1 {
		t.Fatalf("offset Job: failed %q, results %+v", o.reason, o.results)
	}
	r := o.results[0]
	if r.Result != "applied" || r.PlanSource != "built" || !r.Created || !r.Patched || r.Partitions != 3 || r.Matched != 3 {
		t.Fatalf("offset Job result %+v: want applied, a built plan, created, patched, 3 of 3 partitions", r)
	}
	t.Logf("offset Job: %s in %v", r.Result, time.Since(start).Round(time.Second))

	// Review: the kept plan is the one applied, and the connector holds it.
	p := s.keptPlan(ctx, t)
	if p.Fingerprint != r.Fingerprint || p.ConnectorName != co.name {
		t.Fatalf("kept plan %s for %s; the Job applied %s for %s", p.Fingerprint, p.ConnectorName, r.Fingerprint, co.name)
	}
	if got, want := connectOffsets(ctx, t, s.restURL, co.name), wantOffsets(t, p); !mapsEqual(got, want) {
		t.Fatalf("Connect's offsets %v, the plan's %v", got, want)
	}
	if _, out := httpDo(ctx, t, http.MethodGet, s.restURL+"/connectors/"+co.name+"/status", ""); !strings.Contains(out, `"state":"STOPPED"`) {
		t.Fatalf("connector before approval: %s", out)
	}
	// Applying the manifests again keeps the plan (the ConfigMap comes
	// without data).
	s.kubectl(ctx, t, "apply", "-k", filepath.Join(s.dir, "cutover"))
	if again := s.keptPlan(ctx, t); again.Fingerprint != p.Fingerprint {
		t.Fatalf("after applying cutover/ again the kept plan is %s, was %s", again.Fingerprint, p.Fingerprint)
	}

	// Approval: the resume Job.
	start = time.Now()
	s.writeOverlay(t, "resume", "cutover/resume", "")
	s.kubectl(ctx, t, "apply", "-k", filepath.Join(s.dir, "resume"))
	ro := s.waitJob(ctx, t, resumeJob, 10*time.Minute)
	resumeLog, _ := s.c.Kubectl(ctx, "-n", ns, "logs", "job/"+resumeJob, "-c", "resume")
	verifyLog, _ := s.c.Kubectl(ctx, "-n", ns, "logs", "job/"+resumeJob, "-c", "verify")
	if ro.reason != "" {
		t.Fatalf("resume Job failed (%s):\nresume: %s\nverify: %s", ro.reason, lastLines(resumeLog, 20), lastLines(verifyLog, 20))
	}
	for step, want := range map[string]string{resumeLog: `"schema": "mm2cutover/resume/v1"`, verifyLog: `"schema": "mm2cutover/verify/v1"`} {
		if !strings.Contains(step, want) {
			t.Errorf("resume Job log lacks %s:\n%s", want, lastLines(step, 20))
		}
	}
	if !strings.Contains(verifyLog, `"boundary_captured": true`) {
		t.Errorf("verify did not compare with the boundary records resume captured:\n%s", lastLines(verifyLog, 30))
	}
	t.Logf("resume Job (resume -yes, verify) in %v", time.Since(start).Round(time.Second))
	for _, res := range s.checkRecords(ctx, t, co) {
		if res.Duplicated > 0 {
			t.Errorf("%s-%d: %d duplicated; the old job committed every record it copied", res.Topic, res.Partition, res.Duplicated)
		}
	}

	// The offset Job applied again after the resume: its kept plan is
	// stale now, the guard refuses (4), and podFailurePolicy fails the Job
	// at once.
	s.kubectl(ctx, t, "-n", ns, "delete", "job", offsetsJob, "--cascade=foreground", "--wait=true")
	s.kubectl(ctx, t, "apply", "-k", filepath.Join(s.dir, "cutover"))
	o = s.waitJob(ctx, t, offsetsJob, 5*time.Minute)
	if o.reason != "PodFailurePolicy" || o.job.Status.Failed != 1 || len(o.results) != 1 || o.results[0].Result != "refused" || o.results[0].PlanSource != "stored" {
		t.Errorf("the offset Job after resume: reason %q, %d failed Pods, %+v; want PodFailurePolicy after one Pod, refused, the stored plan", o.reason, o.job.Status.Failed, o.results)
	}
	return co
}

// checkRolloutRestart: with records still arriving, `kubectl rollout
// restart` replaces the workers one at a time; MM2 continues from
// Connect's offsets: no record lost, the duplicates counted and bounded by
// what arrived during the restart.
func (s *site) checkRolloutRestart(ctx context.Context, t *testing.T, co cutover) {
	if n, dup := s.restartUnderTraffic(ctx, t, co, "at-least-once"); int64(dup) > n {
		t.Errorf("%d duplicates, more than the %d records produced during the restart", dup, n)
	}
}

// restartUnderTraffic: with records arriving on co's partitions, `kubectl
// rollout restart` replaces every worker, one at a time; then it waits
// until the target holds every source record (none lost) and returns the
// records produced meanwhile and the duplicates on the target.
func (s *site) restartUnderTraffic(ctx context.Context, t *testing.T, co cutover, mode string) (produced int64, dup int) {
	t.Helper()
	traffic, err := flinklike.StartTraffic(ctx, s.sb.Source().Bootstrap(), co.partitions(), 1, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	before := s.workerPods(ctx, t)
	start := time.Now()
	s.kubectl(ctx, t, "-n", ns, "rollout", "restart", "deployment/mm2-connect")
	s.rolledOut(ctx, t)
	took := time.Since(start)
	n, err := traffic.Stop()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range s.workerPods(ctx, t) {
		if slices.ContainsFunc(before, func(b corev1.Pod) bool { return b.UID == p.UID }) {
			t.Errorf("worker %s was not replaced", p.Name)
		}
	}
	for _, r := range s.checkRecords(ctx, t, co) {
		t.Logf("%s-%d: %d source records, %d on the target (read_committed), %d lost, %d duplicated", r.Topic, r.Partition, r.Source, r.Target, r.Lost, r.Duplicated)
		dup += r.Duplicated
	}
	t.Logf("%s: rollout restart in %v with %d records produced meanwhile: 0 lost, %d duplicated", mode, took.Round(time.Second), n, dup)
	return n, dup
}

// checkExactlyOnceRestart moves the workers to the exactly-once variant
// (examples/kubernetes/exactly-once) as its comment says a running cluster
// goes there: a rolling restart with preparing, then one with its own
// patch (enabled). A cutover through the offset Job and the resume Job with
// the variant's Job settings (exactly-once/cutover) creates an exactly-once
// connector; then, with records arriving, `kubectl rollout restart`
// replaces the workers one at a time, and the target, read read_committed,
// holds every source record once. The at-least-once connector of "rollout
// restart after catch-up" went through the same restart on the same
// workers before they changed; its duplicates are logged there.
func (s *site) checkExactlyOnceRestart(ctx context.Context, t *testing.T) {
	patch := mustRead(t, "exactly-once/configmap-patch.yaml")
	if !strings.Contains(patch, `CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT: "enabled"`) {
		t.Fatalf("exactly-once/configmap-patch.yaml does not enable exactly-once:\n%s", patch)
	}
	for _, support := range []string{"preparing", "enabled"} {
		start := time.Now()
		s.writeOverlay(t, "workers-eos", filepath.Join(s.dir, "workers"), "\n  - path: configmap-patch.yaml\n")
		edited := strings.Replace(patch, `"enabled"`, strconv.Quote(support), 1)
		if err := os.WriteFile(filepath.Join(s.dir, "workers-eos", "configmap-patch.yaml"), []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		s.kubectl(ctx, t, "apply", "-k", filepath.Join(s.dir, "workers-eos"))
		s.kubectl(ctx, t, "-n", ns, "rollout", "restart", "deployment/mm2-connect")
		s.rolledOut(ctx, t)
		t.Logf("workers restarted with exactly.once.source.support=%s in %v", support, time.Since(start).Round(time.Second))
	}

	var jobPatch corev1.ConfigMap
	if err := yaml.UnmarshalStrict([]byte(mustRead(t, "exactly-once/cutover/configmap-patch.yaml")), &jobPatch); err != nil {
		t.Fatal(err)
	}
	co := s.newCutover(ctx, t, "eos", 40)
	s.hold(ctx, t, "")
	// The Jobs go when the step ends: the server-side validation tests
	// that follow dry-run the Jobs of every site, which an existing Job
	// of another template refuses (spec.template is immutable).
	defer s.c.Kubectl(context.Background(), "-n", ns, "delete", "job", offsetsJob, resumeJob, "--ignore-not-found", "--cascade=foreground", "--wait=true")
	start := time.Now()
	s.applyJob(ctx, t, co, jobPatch.Data)
	o := s.waitJob(ctx, t, offsetsJob, 5*time.Minute)
	if o.reason != "" || len(o.results) != 1 || o.results[0].Result != "applied" || !o.results[0].Created {
		logs, _ := s.c.Kubectl(ctx, "-n", ns, "logs", "job/"+offsetsJob, "--tail=30")
		t.Fatalf("offset Job with the exactly-once settings: failed %q, results %+v\n%s", o.reason, o.results, logs)
	}
	if _, out := httpDo(ctx, t, http.MethodGet, s.restURL+"/connectors/"+co.name+"/config", ""); !strings.Contains(out, `"exactly.once.support":"required"`) ||
		!strings.Contains(out, `"source.consumer.isolation.level":"read_committed"`) {
		t.Fatalf("the connector the Job created is not exactly-once: %s", out)
	}
	s.writeOverlay(t, "resume", "cutover/resume", "")
	s.kubectl(ctx, t, "apply", "-k", filepath.Join(s.dir, "resume"))
	if ro := s.waitJob(ctx, t, resumeJob, 10*time.Minute); ro.reason != "" {
		logs, _ := s.c.Kubectl(ctx, "-n", ns, "logs", "job/"+resumeJob, "--all-containers", "--tail=30")
		t.Fatalf("resume Job failed (%s):\n%s", ro.reason, logs)
	}
	t.Logf("exactly-once cutover (offset Job, resume Job) in %v", time.Since(start).Round(time.Second))
	for _, r := range s.checkRecords(ctx, t, co) {
		if r.Duplicated > 0 {
			t.Errorf("%s-%d: %d duplicated after the cutover", r.Topic, r.Partition, r.Duplicated)
		}
	}

	if _, dup := s.restartUnderTraffic(ctx, t, co, "exactly-once"); dup > 0 {
		t.Errorf("%d duplicates on the exactly-once connector's target through a rolling restart; want 0", dup)
	}
}

// checkJobPodDeleted deletes the offset Job's Pod while it waits at each
// step of its work; the Job's next Pod converges on the kept plan.
func (s *site) checkJobPodDeleted(ctx context.Context, t *testing.T) {
	for _, step := range []string{"before-create", "after-create", "before-patch", "after-patch", "before-verify"} {
		t.Run(step, func(t *testing.T) {
			co := s.newCutover(ctx, t, step, 10)
			s.hold(ctx, t, step)
			s.applyJob(ctx, t, co, nil)
			pod := s.waitLog(ctx, t, offsetsJob, `"holding on purpose"`)
			s.hold(ctx, t, "")
			s.kubectl(ctx, t, "-n", ns, "delete", "pod", pod, "--wait=false")
			o := s.waitJob(ctx, t, offsetsJob, 5*time.Minute)
			// The deleted Pod is gone with its log; the Job counted it.
			if o.reason != "" || o.job.Status.Failed < 1 || len(o.results) == 0 {
				t.Fatalf("Job: failed %q, %d failed Pods, results %+v; want complete after a second Pod", o.reason, o.job.Status.Failed, o.results)
			}
			last := o.results[len(o.results)-1]
			p := s.keptPlan(ctx, t)
			if last.Result != "applied" && last.Result != "already-applied" || last.PlanSource != "stored" || last.Fingerprint != p.Fingerprint {
				t.Errorf("the retried Pod: %+v; want applied with the kept plan %s", last, p.Fingerprint)
			}
			if got, want := connectOffsets(ctx, t, s.restURL, co.name), wantOffsets(t, p); !mapsEqual(got, want) {
				t.Errorf("Connect's offsets %v, the plan's %v", got, want)
			}
			t.Logf("deleted at %s: %d failed Pod(s), then %s (created %v, patched %v) with the kept plan", step, o.job.Status.Failed, last.Result, last.Created, last.Patched)
		})
	}
}

// checkWorkerDeletedDuringPatch deletes the leader's Pod as the Job is
// about to PATCH the offsets (the write every worker forwards to the
// leader): the Job still converges, and the Deployment comes back.
func (s *site) checkWorkerDeletedDuringPatch(ctx context.Context, t *testing.T) {
	co := s.newCutover(ctx, t, "patch", 10)
	s.hold(ctx, t, "before-patch:3s")
	s.applyJob(ctx, t, co, nil)
	s.waitLog(ctx, t, offsetsJob, `"holding on purpose"`)
	s.hold(ctx, t, "")
	leader := s.leader(ctx, t)
	var victim string
	for _, p := range s.workerPods(ctx, t) {
		if p.Status.PodIP == leader {
			victim = p.Name
		}
	}
	if victim == "" {
		t.Fatalf("no worker Pod has the leader's IP %s", leader)
	}
	s.kubectl(ctx, t, "-n", ns, "delete", "pod", victim, "--wait=false")
	o := s.waitJob(ctx, t, offsetsJob, 8*time.Minute)
	if o.reason != "" {
		t.Fatalf("Job failed (%s): %+v", o.reason, o.results)
	}
	p := s.keptPlan(ctx, t)
	if got, want := connectOffsets(ctx, t, s.restURL, co.name), wantOffsets(t, p); !mapsEqual(got, want) {
		t.Errorf("Connect's offsets %v, the plan's %v", got, want)
	}
	t.Logf("leader %s deleted 3 s before the PATCH: Job complete after %d Pod(s): %+v", victim, len(o.results), o.results)
	s.rolledOut(ctx, t)
}

// checkFailurePolicy: the Job's exit codes against its podFailurePolicy —
// 2 (settings) and 3 (a check failed) fail it at once, 1 (unreachable) is
// retried.
func (s *site) checkFailurePolicy(ctx context.Context, t *testing.T) {
	for _, tc := range []struct {
		name   string
		commit bool
		env    map[string]string
		code   int
	}{
		{"2: a topic name Kafka refuses", true, map[string]string{"MM2CUTOVER_TOPICS": "no spaces allowed"}, 2},
		{"3: the group never committed", false, nil, 3},
		{"1: Connect unreachable", true, map[string]string{"MM2CUTOVER_CONNECT_URL": "http://mm2-connect-nowhere:8088"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			if tc.commit {
				n = 5
			}
			co := s.newCutover(ctx, t, fmt.Sprintf("exit%d", tc.code), n)
			s.applyJob(ctx, t, co, tc.env)
			if tc.code == 1 {
				// Retried: a second Pod starts after the first failed.
				s.waitPods(ctx, t, offsetsJob, 2)
				rs := s.jobResults(ctx, t, offsetsJob)
				if len(rs) == 0 || rs[0].Result != "error" {
					t.Errorf("first Pod: %+v; want an error worth a retry", rs)
				}
				s.kubectl(ctx, t, "-n", ns, "delete", "job", offsetsJob, "--cascade=foreground", "--wait=true")
				return
			}
			o := s.waitJob(ctx, t, offsetsJob, 5*time.Minute)
			if o.reason != "PodFailurePolicy" || o.job.Status.Failed != 1 {
				t.Errorf("Job: reason %q after %d failed Pods, results %+v; want PodFailurePolicy after one", o.reason, o.job.Status.Failed, o.results)
			}
		})
	}
}

// waitPods waits until the Job name has had n Pods.
func (s *site) waitPods(ctx context.Context, t *testing.T, job string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for ctx.Err() == nil {
		if len(s.pods(ctx, t, "batch.kubernetes.io/job-name="+job)) >= n {
			return
		}
		sleepCtx(ctx, time.Second)
	}
	t.Fatalf("Job %s did not get %d Pods", job, n)
}

// checkDrain: `kubectl drain` evicts one worker, then stops at the PDB
// (maxUnavailable 1) for the others; after uncordon the Deployment is whole.
func (s *site) checkDrain(ctx context.Context, t *testing.T) {
	s.rolledOut(ctx, t)
	before := s.workerPods(ctx, t)
	node := s.c.NodeName()
	_, stderr, err := s.c.KubectlStreams(ctx, nil, "drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=30s")
	defer func() {
		s.kubectl(ctx, t, "uncordon", node)
		s.rolledOut(ctx, t)
	}()
	var ke *kube.KubectlError
	if !errors.As(err, &ke) || !strings.Contains(ke.Stderr, "disruption budget") {
		t.Fatalf("drain: %v %s; want it to stop at the PodDisruptionBudget", err, stderr)
	}
	left := 0
	for _, p := range s.workerPods(ctx, t) {
		if slices.ContainsFunc(before, func(b corev1.Pod) bool { return b.UID == p.UID }) {
			left++
		}
	}
	if left != 2 {
		t.Errorf("%d of the 3 workers left after the drain; want 2 (one eviction allowed)", left)
	}
	t.Logf("drain stopped at the PDB: %s", lastLines(ke.Stderr, 2))
}

func mustAddr(t *testing.T, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// httpGet returns the body of a GET.
func httpGet(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(b), err
}

// httpDo sends a request (a JSON body unless empty) and returns the status
// and body.
func httpDo(ctx context.Context, t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 1<<20))
	for sc.Scan() {
		b.WriteString(sc.Text())
	}
	return resp.StatusCode, b.String()
}

// sleepCtx waits d or until ctx ends: the pause between two polls of a
// condition.
func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
