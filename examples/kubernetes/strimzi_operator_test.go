//go:build strimzi

package kubernetes_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/flinklike"
	"github.com/mm2cutover/mm2cutover/internal/kube"
	"github.com/mm2cutover/mm2cutover/internal/kube/kubetest"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/internal/strimzi"
	"github.com/mm2cutover/mm2cutover/plan"
)

// The Strimzi operator's objects on the test cluster: the operator watches
// its own namespace, where the KafkaConnect and the cutover's resources
// live.
const (
	operatorNS   = "strimzi"
	connectName  = "mm2-connect"
	connectGroup = "mm2-connect"
)

// operatorSite is the Strimzi cluster operator, built from its source, on
// the test cluster, with a KafkaConnect of its making against the
// sandbox's target cluster, and the cutover CLI built here.
type operatorSite struct {
	c       *kube.Cluster
	sb      *sandbox.Sandbox
	cli     string // the cutover binary
	dir     string
	restURL string // the KafkaConnect's REST Service, reached from this machine
	log     *slog.Logger
}

// newOperatorSite builds what is missing (the operator, its images), installs
// the operator and rolls out the KafkaConnect; each cost is logged.
func newOperatorSite(ctx context.Context, t *testing.T) *operatorSite {
	t.Helper()
	c := kubetest.Shared(t)
	pm, cache := jobPodman(t)
	s := &operatorSite{c: c, dir: t.TempDir(), log: slog.New(slog.NewTextHandler(logWriter{t}, nil))}
	start := time.Now()
	a, err := strimzi.Build(ctx, cache, s.log)
	if errors.Is(err, strimzi.ErrNoSource) || errors.Is(err, strimzi.ErrNoJava21) {
		// Built with -tags strimzi, which scripts/test gives only where the
		// source is at hand: a run asked for it and it is not there.
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Strimzi %s built (or found in the cache) in %v", strimzi.Version, time.Since(start).Round(time.Second))
	s.sb = sandboxtest.Dedicated(t, sandbox.Config{BrokerHost: c.HostIP().String()})
	if v := s.sb.KafkaVersion(); v != strimzi.KafkaVersion {
		t.Fatalf("the sandbox runs Kafka %s; the Strimzi image is made for %s", v, strimzi.KafkaVersion)
	}
	start = time.Now()
	imgs, err := strimzi.EnsureImages(ctx, pm, a, s.sb.KafkaLibs(), cache, s.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("operator and Kafka images ready in %v", time.Since(start).Round(time.Second))
	start = time.Now()
	if err := strimzi.Install(ctx, c, pm, a, imgs, operatorNS); err != nil {
		t.Fatal(err)
	}
	t.Logf("operator installed and ready in %v", time.Since(start).Round(time.Second))
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := c.Kubectl(context.Background(), "-n", operatorNS, "logs", "deployment/strimzi-cluster-operator", "--tail=60")
			t.Logf("operator log:\n%s", logs)
		}
		// The cluster is shared with the package's other tests: its JVMs
		// (the operator, the Connect workers) go with the namespace.
		if _, err := c.Kubectl(context.Background(), "delete", "namespace", operatorNS, "--wait=false"); err != nil {
			t.Logf("deleting namespace %s: %v", operatorNS, err)
		}
	})

	s.cli = filepath.Join(s.dir, "cutover")
	hostBuild(ctx, t, s.cli, "./examples/cutover", "")

	// The Connect cluster, as Strimzi makes it: sized for a 2-core node
	// shared with other tests (heap, serial GC, probes that wait for a
	// slow JVM), internal topics of replication factor 1 (one broker).
	start = time.Now()
	s.apply(ctx, t, fmt.Sprintf(`apiVersion: kafka.strimzi.io/v1
kind: KafkaConnect
metadata:
  name: %[1]s
  namespace: %[2]s
  annotations:
    strimzi.io/use-connector-resources: "true"
spec:
  version: %[3]s
  replicas: 1
  bootstrapServers: %[4]q
  groupId: %[5]s
  configStorageTopic: %[5]s-configs
  offsetStorageTopic: %[5]s-offsets
  statusStorageTopic: %[5]s-status
  config:
    config.storage.replication.factor: 1
    offset.storage.replication.factor: 1
    status.storage.replication.factor: 1
  resources:
    requests: {cpu: 100m, memory: 1Gi}
    limits: {memory: 1536Mi}
  jvmOptions:
    "-Xms": 128m
    "-Xmx": 512m
    "-XX": {UseSerialGC: "true", TieredStopAtLevel: "1"}
  readinessProbe: {initialDelaySeconds: 15, timeoutSeconds: 5, failureThreshold: 3}
  livenessProbe: {initialDelaySeconds: 600, timeoutSeconds: 5, failureThreshold: 6}
`, connectName, operatorNS, strimzi.KafkaVersion, s.sb.Target().Bootstrap(), connectGroup))
	s.waitReady(ctx, t, "kafkaconnect/"+connectName, 20*time.Minute)
	t.Logf("KafkaConnect %s ready in %v: %s", connectName, time.Since(start).Round(time.Second), s.conditions(ctx, t, "kafkaconnect/"+connectName))
	ip := strings.TrimSpace(s.kubectl(ctx, t, "-n", operatorNS, "get", "service", connectName+"-connect-api", "-o", "jsonpath={.spec.clusterIP}"))
	s.restURL = "http://" + ip + ":8083"
	return s
}

func (s *operatorSite) kubectl(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	out, err := s.c.Kubectl(ctx, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (s *operatorSite) apply(ctx context.Context, t *testing.T, yaml string) {
	t.Helper()
	if _, err := s.c.KubectlIn(ctx, strings.NewReader(yaml), "apply", "--server-side", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, yaml)
	}
}

// waitReady waits for the resource's Ready condition.
func (s *operatorSite) waitReady(ctx context.Context, t *testing.T, res string, timeout time.Duration) {
	t.Helper()
	if _, err := s.c.Kubectl(ctx, "-n", operatorNS, "wait", res, "--for=condition=Ready", fmt.Sprintf("--timeout=%s", timeout)); err != nil {
		pods, _ := s.c.Kubectl(ctx, "-n", operatorNS, "get", "pods", "-o", "wide")
		logs, _ := s.c.Kubectl(ctx, "-n", operatorNS, "logs", "-l", "strimzi.io/kind=KafkaConnect", "--tail=40", "--prefix")
		t.Fatalf("%s not Ready: %v\nconditions: %s\n%s\n%s", res, err, s.conditions(ctx, t, res), pods, logs)
	}
}

// condition is one of a Strimzi resource's status conditions.
type condition struct {
	Type, Status, Reason, Message string
}

// strimziStatus is what the tests read of a Strimzi resource's status.
type strimziStatus struct {
	Metadata struct {
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Status struct {
		ObservedGeneration int64       `json:"observedGeneration"`
		Conditions         []condition `json:"conditions"`
		ConnectorStatus    struct {
			Connector struct{ State string }   `json:"connector"`
			Tasks     []struct{ State string } `json:"tasks"`
		} `json:"connectorStatus"`
		Connectors []struct {
			Name      string                   `json:"name"`
			Connector struct{ State string }   `json:"connector"`
			Tasks     []struct{ State string } `json:"tasks"`
		} `json:"connectors"`
	} `json:"status"`
}

func (s *operatorSite) status(ctx context.Context, t *testing.T, res string) strimziStatus {
	t.Helper()
	var st strimziStatus
	if err := json.Unmarshal([]byte(s.kubectl(ctx, t, "-n", operatorNS, "get", res, "-o", "json")), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// conditions is the resource's status conditions, one string, as the
// operator reports them.
func (s *operatorSite) conditions(ctx context.Context, t *testing.T, res string) string {
	t.Helper()
	out, err := s.c.Kubectl(ctx, "-n", operatorNS, "get", res, "-o", "json")
	if err != nil {
		return err.Error()
	}
	var st strimziStatus
	json.Unmarshal([]byte(out), &st)
	var parts []string
	for _, c := range st.Status.Conditions {
		p := c.Type + "=" + c.Status
		if c.Reason != "" || c.Message != "" {
			p += " (" + strings.TrimSpace(c.Reason+" "+c.Message) + ")"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "no conditions yet"
	}
	return strings.Join(parts, "; ")
}

// until polls cond every second until it returns "" or timeout passes; it
// fails the test with cond's last answer.
func until(ctx context.Context, t *testing.T, what string, timeout time.Duration, cond func() string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := ""
	for {
		if last = cond(); last == "" {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("%s: not within %v: %s", what, timeout, last)
		}
		sleepCtx(ctx, time.Second)
	}
}

// cutoverRun runs the cutover CLI with args and the settings file env, and
// returns its stdout and exit status; kubectl is the cluster's, with its
// administrator's kubeconfig.
func (s *operatorSite) cutoverRun(ctx context.Context, t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, code, _ := s.cutoverRunStderr(ctx, t, args...)
	return out, code
}

// cutoverRunStderr is cutoverRun that also returns what the CLI wrote on
// its standard error.
func (s *operatorSite) cutoverRunStderr(ctx context.Context, t *testing.T, args ...string) (string, int, string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, s.cli, args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "KUBECONFIG="+s.c.Kubeconfig(), "MM2CUTOVER_STRIMZI_KUBECTL="+s.c.KubectlPath())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	t.Logf("cutover %s: exit %d\n%s%s", strings.Join(args, " "), code, out, lastLines(stderr.String(), 15))
	return string(out), code, stderr.String()
}

// settings writes the cutover's settings file for a cutover co on the
// Strimzi resources of kind (the connector's name decides it).
func (s *operatorSite) settings(t *testing.T, co cutover, connector, cluster string) string {
	t.Helper()
	path := filepath.Join(s.dir, co.name+".env")
	lines := []string{
		"MM2CUTOVER_SOURCE_BOOTSTRAP=" + s.sb.Source().Bootstrap(),
		"MM2CUTOVER_TARGET_BOOTSTRAP=" + s.sb.Target().Bootstrap(),
		"MM2CUTOVER_SOURCE_SECURITY_PROTOCOL=PLAINTEXT",
		"MM2CUTOVER_TARGET_SECURITY_PROTOCOL=PLAINTEXT",
		"MM2CUTOVER_CONNECT_URL=" + s.restURL,
		// Quoted: Strimzi's KafkaMirrorMaker2 names its connector
		// "source->target.MirrorSourceConnector", and a shell (which
		// the settings file is read as) would take > for a redirection.
		"MM2CUTOVER_CONNECTOR='" + connector + "'",
		"MM2CUTOVER_GROUP=" + co.group,
		"MM2CUTOVER_TOPICS=" + co.topicList(),
		"MM2CUTOVER_STABILITY_WINDOW=2s",
		"MM2CUTOVER_WORKER_CONFIG_TOPIC=" + connectGroup + "-configs",
		"MM2CUTOVER_WORKER_OFFSET_TOPIC=" + connectGroup + "-offsets",
		"MM2CUTOVER_WORKER_STATUS_TOPIC=" + connectGroup + "-status",
		"MM2CUTOVER_WORKER_STORAGE_REPLICATION_FACTOR=1",
		"MM2CUTOVER_STRIMZI_CLUSTER=" + cluster,
		"MM2CUTOVER_STRIMZI_NAMESPACE=" + operatorNS,
		"MM2CUTOVER_PLAN=" + filepath.Join(s.dir, co.name+".plan.json"),
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// newCutover makes the topics of a cutover on both clusters, lets the old
// job replicate n records per partition and commit them, then stops it.
func (s *operatorSite) newCutover(ctx context.Context, t *testing.T, name string, n int) cutover {
	t.Helper()
	co := cutover{name: "stz-" + name + "-" + randomSuffix(), topics: map[string]int32{}}
	co.group = co.name + "-flink"
	co.topics[co.name+"-a"], co.topics[co.name+"-b"] = 2, 1
	for topic, parts := range co.topics {
		for _, b := range []string{s.sb.Source().Bootstrap(), s.sb.Target().Bootstrap()} {
			if err := sandbox.CreateTopic(ctx, b, topic, parts); err != nil {
				t.Fatal(err)
			}
		}
	}
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
	return co
}

// counted waits until every source record of co is on the target and
// fails on a lost, duplicated, foreign or reordered one.
func (s *operatorSite) counted(ctx context.Context, t *testing.T, co cutover) {
	t.Helper()
	var rs []flinklike.Result
	until(ctx, t, "every source record on the target", 5*time.Minute, func() string {
		rs = rs[:0]
		lost := 0
		for _, p := range co.partitions() {
			r, err := flinklike.Check(ctx, s.sb.Source().Bootstrap(), s.sb.Target().Bootstrap(), p.Topic, p.Partition, p.Topic)
			if err != nil {
				return err.Error()
			}
			rs = append(rs, r)
			lost += r.Lost
		}
		if lost > 0 {
			return fmt.Sprintf("%d lost: %+v", lost, rs)
		}
		return ""
	})
	src, lost, dup := 0, 0, 0
	for _, r := range rs {
		src += r.Source
		lost += r.Lost
		dup += r.Duplicated
		if r.Duplicated > 0 || r.Foreign > 0 || r.OutOfOrder > 0 {
			t.Errorf("%s-%d: %+v", r.Topic, r.Partition, r)
		}
	}
	t.Logf("records counted on the target: %d source records, %d lost, %d duplicated", src, lost, dup)
}

// annotateAndWait sets the offsets annotation on res (with extra
// annotations) and waits until the operator has removed it: the operation
// is done.
func (s *operatorSite) annotateAndWait(ctx context.Context, t *testing.T, res, op string, extra ...string) {
	t.Helper()
	args := append([]string{"-n", operatorNS, "annotate", res, "strimzi.io/connector-offsets=" + op, "--overwrite"}, extra...)
	s.kubectl(ctx, t, args...)
	until(ctx, t, "the operator to carry out "+op+" on "+res, 5*time.Minute, func() string {
		st := s.status(ctx, t, res)
		if _, ok := st.Metadata.Annotations["strimzi.io/connector-offsets"]; ok {
			return "annotation still there; conditions: " + s.conditions(ctx, t, res)
		}
		return ""
	})
	t.Logf("%s %s done; conditions: %s", res, op, s.conditions(ctx, t, res))
}

// TestStrimziOperatorCutover runs the cutover through the real Strimzi
// cluster operator (built from its source, internal/strimzi), as
// docs/runbook.md's Strimzi section orders it, command by command: the
// precheck and the plan, the strimzi step's resources applied, the
// connector created STOPPED by the operator, the offsets written by the
// alter annotation and listed by the list annotation, the listing read
// back by the CLI from the API server and from a saved file, a forced
// reconciliation that leaves the offsets and the stopped state alone, the
// approval (state: running), verify after resume, and every record counted
// on the target. The operator's status conditions are logged at each step.
func TestStrimziOperatorCutover(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	s := newOperatorSite(ctx, t)
	for _, st := range []struct {
		name string
		run  func(context.Context, *testing.T)
	}{
		{"KafkaConnector", s.kafkaConnectorCutover},
		{"KafkaMirrorMaker2", s.kafkaMirrorMaker2Cutover},
		{"rollback before resume", s.rollbackBeforeResume},
		{"rollback after resume", s.rollbackAfterResume},
	} {
		start := time.Now()
		ran := false
		t.Run(st.name, func(t *testing.T) { ran = true; st.run(ctx, t) })
		if ran {
			t.Logf("%s: %v", st.name, time.Since(start).Round(time.Second))
		}
	}
}

// kafkaConnectorCutover is the cutover of a KafkaConnector on the
// KafkaConnect.
func (s *operatorSite) kafkaConnectorCutover(ctx context.Context, t *testing.T) {
	t.Helper()
	co := s.newCutover(ctx, t, "kc", 40)
	env := s.settings(t, co, co.name, connectName)
	res := "kafkaconnector/" + co.name
	listCM := co.name + "-list-offsets"

	// Sections 3 and 4: precheck and plan, reading Connect's REST API.
	if out, code := s.cutoverRun(ctx, t, "precheck", "-config", env); code != 0 {
		t.Fatalf("precheck: exit %d\n%s", code, out)
	}
	if out, code := s.cutoverRun(ctx, t, "plan", "-config", env); code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	p := s.plan(t, co)
	// The strimzi step renders the resources; kubectl applies them.
	out, code := s.cutoverRun(ctx, t, "strimzi", "-config", env)
	if code != 0 {
		t.Fatalf("strimzi: exit %d\n%s", code, out)
	}
	rendered := filepath.Join(s.dir, co.name+".plan.strimzi.yaml")
	s.kubectl(ctx, t, "apply", "--server-side", "-f", rendered)

	// The operator creates the connector STOPPED: it never ran, so it
	// holds no offsets and copied nothing.
	until(ctx, t, "the connector STOPPED", 5*time.Minute, func() string {
		st := s.status(ctx, t, res)
		if got := st.Status.ConnectorStatus.Connector.State; got != "STOPPED" {
			return fmt.Sprintf("state %q; conditions: %s", got, s.conditions(ctx, t, res))
		}
		return ""
	})
	t.Logf("applied: %s STOPPED; conditions: %s", res, s.conditions(ctx, t, res))
	if got := connectOffsets(ctx, t, s.restURL, co.name); len(got) != 0 {
		t.Fatalf("the connector created by the operator has offsets %v: it ran", got)
	}

	// Alter, then list.
	s.annotateAndWait(ctx, t, res, "alter")
	s.annotateAndWait(ctx, t, res, "list")
	want := wantOffsets(t, p)
	if got := connectOffsets(ctx, t, s.restURL, co.name); !mapsEqual(got, want) {
		t.Fatalf("Connect's offsets after alter %v, the plan's %v", got, want)
	}

	// The read-back: from the API server, and from a saved file.
	for _, from := range []string{"configmap/" + listCM, "listed.json"} {
		if from == "listed.json" {
			saved := s.kubectl(ctx, t, "-n", operatorNS, "get", "configmap", listCM, "-o", "json")
			if err := os.WriteFile(filepath.Join(s.dir, from), []byte(saved), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out, code := s.cutoverRun(ctx, t, "verify", "-config", env, "-strimzi-offsets", from)
		if code != 0 || !strings.Contains(out, fmt.Sprintf("%d match, 0 wrong value, 0 missing, 0 unexpected", len(want))) {
			t.Fatalf("verify -strimzi-offsets %s: exit %d\n%s", from, code, out)
		}
	}
	// A ConfigMap the operator never listed into: exit 2, nothing read.
	if out, code := s.cutoverRun(ctx, t, "verify", "-config", env, "-strimzi-offsets", "configmap/"+co.name+"-no-such-list"); code != 2 {
		t.Errorf("verify of a missing ConfigMap: exit %d, want 2\n%s", code, out)
	}

	// A forced reconciliation before approval: the offsets and the
	// stopped state stay as they are.
	s.forceReconcile(ctx, t, res, "KafkaConnect/"+connectName)
	if got := s.status(ctx, t, res).Status.ConnectorStatus.Connector.State; got != "STOPPED" {
		t.Fatalf("after a forced reconciliation the connector is %s", got)
	}
	if got := connectOffsets(ctx, t, s.restURL, co.name); !mapsEqual(got, want) {
		t.Fatalf("after a forced reconciliation Connect's offsets are %v, the plan's %v", got, want)
	}

	// Records that arrived after the old job stopped: MM2's to copy.
	if err := flinklike.Produce(ctx, s.sb.Source().Bootstrap(), co.partitions(), 10); err != nil {
		t.Fatal(err)
	}
	// Approval: the resume patch the rendered file shows.
	s.kubectl(ctx, t, "-n", operatorNS, "patch", res, "--type", "merge", "-p", `{"spec":{"state":"running"}}`)
	until(ctx, t, "the connector RUNNING", 5*time.Minute, func() string {
		st := s.status(ctx, t, res)
		if got := st.Status.ConnectorStatus.Connector.State; got != "RUNNING" {
			return fmt.Sprintf("state %q; conditions: %s", got, s.conditions(ctx, t, res))
		}
		return ""
	})
	t.Logf("resumed: %s RUNNING; conditions: %s", res, s.conditions(ctx, t, res))
	s.counted(ctx, t, co)
	if out, code := s.cutoverRun(ctx, t, "verify", "-config", env); code != 0 {
		t.Fatalf("verify after resume: exit %d\n%s", code, out)
	}
}

// plan reads the plan the plan step wrote for co.
func (s *operatorSite) plan(t *testing.T, co cutover) *plan.Plan {
	t.Helper()
	f, err := os.Open(filepath.Join(s.dir, co.name+".plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := plan.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// forceReconcile makes the operator reconcile res now (a change of an
// annotation of its own is a watch event), and waits until the operator's
// log shows that reconciliation of owner (the KafkaConnect of a
// KafkaConnector, as "Kind/name", or the KafkaMirrorMaker2 itself) ended,
// and then its next periodic one (timer) too.
func (s *operatorSite) forceReconcile(ctx context.Context, t *testing.T, res, owner string) {
	t.Helper()
	mark := len(s.operatorLog(ctx, t))
	s.kubectl(ctx, t, "-n", operatorNS, "annotate", res, "mm2cutover.io/force-reconcile="+time.Now().UTC().Format("20060102T150405.000000000"), "--overwrite")
	kind, name, _ := strings.Cut(owner, "/")
	subject := kind + "(" + operatorNS + "/" + name + "): reconciled"
	for _, trigger := range []string{"watch)", "(timer)"} {
		until(ctx, t, "a "+trigger+" reconciliation of "+owner, 5*time.Minute, func() string {
			lines := s.operatorLog(ctx, t)
			for i := mark; i < len(lines); i++ {
				if strings.Contains(lines[i], trigger) && strings.Contains(lines[i], subject) {
					mark = i + 1
					return ""
				}
			}
			return fmt.Sprintf("no line with %q and %q in the operator's log since the annotation", trigger, subject)
		})
		t.Logf("%s reconciliation of %s after the annotation done; %s conditions: %s", trigger, owner, res, s.conditions(ctx, t, res))
	}
}

// operatorLog returns the operator's log, a line each.
func (s *operatorSite) operatorLog(ctx context.Context, t *testing.T) []string {
	t.Helper()
	return strings.Split(s.kubectl(ctx, t, "-n", operatorNS, "logs", "deployment/strimzi-cluster-operator"), "\n")
}

// connectorState is the state of connector over Connect's REST API, "" when
// Connect does not know it.
func (s *operatorSite) connectorState(ctx context.Context, t *testing.T, connector string) string {
	t.Helper()
	code, out := httpDo(ctx, t, "GET", s.restURL+"/connectors/"+connector+"/status", "")
	if code == 404 {
		return ""
	}
	var st struct {
		Connector struct{ State string } `json:"connector"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status of %s: %d %s", connector, code, out)
	}
	return st.Connector.State
}

// rollbackBeforeResume is the runbook's section 9.1 on the Strimzi path: a
// KafkaConnector whose offsets were written but that never ran is rolled
// back by resetting its offsets through the operator and deleting it; the
// old job then continues from its group, and every record is on the
// target once.
func (s *operatorSite) rollbackBeforeResume(ctx context.Context, t *testing.T) {
	co := s.newCutover(ctx, t, "rb1", 20)
	env := s.settings(t, co, co.name, connectName)
	res := "kafkaconnector/" + co.name
	for _, step := range []string{"plan", "strimzi"} {
		if out, code := s.cutoverRun(ctx, t, step, "-config", env); code != 0 {
			t.Fatalf("%s: exit %d\n%s", step, code, out)
		}
	}
	s.kubectl(ctx, t, "apply", "--server-side", "-f", filepath.Join(s.dir, co.name+".plan.strimzi.yaml"))
	s.waitState(ctx, t, res, co.name, "STOPPED")
	s.annotateAndWait(ctx, t, res, "alter")
	if got := connectOffsets(ctx, t, s.restURL, co.name); len(got) == 0 {
		t.Fatal("no offsets written before the rollback")
	}

	// The rollback: reset the offsets, see them gone, delete the resource.
	s.annotateAndWait(ctx, t, res, "reset")
	s.annotateAndWait(ctx, t, res, "list")
	listed := s.kubectl(ctx, t, "-n", operatorNS, "get", "configmap", co.name+"-list-offsets", "-o", `jsonpath={.data.offsets\.json}`)
	var l struct{ Offsets []json.RawMessage }
	if err := json.Unmarshal([]byte(listed), &l); err != nil || len(l.Offsets) != 0 {
		t.Fatalf("the listing after reset: %v %s; want no offsets", err, listed)
	}
	s.kubectl(ctx, t, "-n", operatorNS, "delete", res)
	until(ctx, t, "the operator to delete the connector", 5*time.Minute, func() string {
		if st := s.connectorState(ctx, t, co.name); st != "" {
			return "connector " + st
		}
		return ""
	})
	t.Logf("rolled back before resume: offsets reset, %s deleted", res)

	// The old job continues where it stopped, from its group: nothing was
	// copied twice, nothing skipped.
	if err := flinklike.Produce(ctx, s.sb.Source().Bootstrap(), co.partitions(), 10); err != nil {
		t.Fatal(err)
	}
	s.oldJobUntilCaughtUp(ctx, t, co, 30)
	s.counted(ctx, t, co)
}

// rollbackAfterResume is the runbook's section 9.2 on the Strimzi path: the
// resumed connector is stopped through the resource, its offsets M' listed,
// C' = M'+1 committed to the old job's group with kafka-consumer-groups
// (--reset-offsets --from-file), the connector's offsets reset and the
// resource deleted; the old job then continues from C', and every record
// is on the target once.
func (s *operatorSite) rollbackAfterResume(ctx context.Context, t *testing.T) {
	co := s.newCutover(ctx, t, "rb2", 20)
	env := s.settings(t, co, co.name, connectName)
	res := "kafkaconnector/" + co.name
	for _, step := range []string{"plan", "strimzi"} {
		if out, code := s.cutoverRun(ctx, t, step, "-config", env); code != 0 {
			t.Fatalf("%s: exit %d\n%s", step, code, out)
		}
	}
	s.kubectl(ctx, t, "apply", "--server-side", "-f", filepath.Join(s.dir, co.name+".plan.strimzi.yaml"))
	s.waitState(ctx, t, res, co.name, "STOPPED")
	s.annotateAndWait(ctx, t, res, "alter")
	s.kubectl(ctx, t, "-n", operatorNS, "patch", res, "--type", "merge", "-p", `{"spec":{"state":"running"}}`)
	s.waitState(ctx, t, res, co.name, "RUNNING")
	// MM2 copies what arrives after the old job's last commit.
	if err := flinklike.Produce(ctx, s.sb.Source().Bootstrap(), co.partitions(), 10); err != nil {
		t.Fatal(err)
	}
	s.counted(ctx, t, co)

	// The rollback: stop, list M', commit C' = M'+1 to the group.
	s.kubectl(ctx, t, "-n", operatorNS, "patch", res, "--type", "merge", "-p", `{"spec":{"state":"stopped"}}`)
	s.waitState(ctx, t, res, co.name, "STOPPED")
	s.annotateAndWait(ctx, t, res, "list")
	listed := filepath.Join(s.dir, co.name+".listed-after-resume.json")
	if err := os.WriteFile(listed, []byte(s.kubectl(ctx, t, "-n", operatorNS, "get", "configmap", co.name+"-list-offsets", "-o", "json")), 0o644); err != nil {
		t.Fatal(err)
	}
	reverse := filepath.Join(s.dir, co.name+".reverse.csv")
	jq := exec.CommandContext(ctx, "jq", "-r", `.data["offsets.json"] | fromjson | .offsets[] | "\(.partition.topic),\(.partition.partition),\(.offset.offset + 1)"`, listed)
	csv, err := jq.Output()
	if err != nil {
		t.Fatalf("jq: %v", err)
	}
	if err := os.WriteFile(reverse, csv, 0o644); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(csv), "\n"); n != len(co.partitions()) {
		t.Fatalf("the reverse offsets have %d lines, want %d:\n%s", n, len(co.partitions()), csv)
	}
	// kafka-consumer-groups.sh is Kafka's ConsumerGroupCommand class.
	cmd := exec.CommandContext(ctx, "java", "-cp", filepath.Join(s.sb.KafkaLibs(), "*"), "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
		"--bootstrap-server", s.sb.Source().Bootstrap(), "--group", co.group, "--reset-offsets", "--from-file", reverse, "--execute", "--timeout", "60000")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kafka-consumer-groups --reset-offsets --from-file: %v\n%s", err, out)
	}
	t.Logf("reverse offsets C' = M'+1 committed to %s:\n%s", co.group, csv)

	// The old job continues from C' while the connector is stopped; then
	// the connector's offsets are reset and the resource deleted.
	if err := flinklike.Produce(ctx, s.sb.Source().Bootstrap(), co.partitions(), 10); err != nil {
		t.Fatal(err)
	}
	s.oldJobUntilCaughtUp(ctx, t, co, 40)
	s.counted(ctx, t, co)
	s.annotateAndWait(ctx, t, res, "reset")
	s.kubectl(ctx, t, "-n", operatorNS, "delete", res)
	t.Logf("rolled back after resume: the old job continued from C', %s reset and deleted", res)
}

// waitState waits until the operator reports connector in state on res.
func (s *operatorSite) waitState(ctx context.Context, t *testing.T, res, connector, state string) {
	t.Helper()
	until(ctx, t, res+" "+state, 5*time.Minute, func() string {
		st := s.status(ctx, t, res)
		got := st.Status.ConnectorStatus.Connector.State
		for _, c := range st.Status.Connectors {
			if c.Name == connector {
				got = c.Connector.State
			}
		}
		if got != state {
			return fmt.Sprintf("state %q; conditions: %s", got, s.conditions(ctx, t, res))
		}
		return ""
	})
	t.Logf("%s: %s; conditions: %s", res, state, s.conditions(ctx, t, res))
}

// oldJobUntilCaughtUp runs the old job from its group's commits until it
// has committed n records per partition (every record of the source), then
// stops it.
func (s *operatorSite) oldJobUntilCaughtUp(ctx context.Context, t *testing.T, co cutover, n int) {
	t.Helper()
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

// mm2Name is the KafkaMirrorMaker2 of the test, and its Connect group.
const mm2Name = "mm2-mirror"

// kafkaMirrorMaker2Cutover is the cutover of a KafkaMirrorMaker2's source
// connector: the strimzi step renders the whole resource, to which the
// site adds what the render leaves to it (its Connect workers' JVM,
// resources and probes for this machine); its internal topics exist
// beforehand with the replication factor the one broker allows.
func (s *operatorSite) kafkaMirrorMaker2Cutover(ctx context.Context, t *testing.T) {
	co := s.newCutover(ctx, t, "mm2", 40)
	connector := plan.StrimziMirrorMaker2Connector("source", "target")
	env := s.settings(t, co, connector, mm2Name)
	// Its own Connect group and internal topics.
	settings, err := os.ReadFile(env)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(settings), "="+connectGroup+"-", "="+mm2Name+"-")
	// Strimzi sets both clusters' security.protocol in the connector's
	// configuration (from their tls and authentication): the plan's must
	// state it, as README's Strimzi path says.
	for _, side := range []string{"source", "target"} {
		f := filepath.Join(s.dir, co.name+"-mm2-"+side+".properties")
		if err := os.WriteFile(f, []byte("security.protocol=PLAINTEXT\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		text += "MM2CUTOVER_MM2_" + strings.ToUpper(side) + "_CLIENT=" + f + "\n"
	}
	if err := os.WriteFile(env, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"-configs", "-offsets", "-status"} {
		parts := int32(1)
		if topic == "-offsets" || topic == "-status" {
			parts = 5
		}
		if err := sandbox.CreateTopicWithConfig(ctx, s.sb.Target().Bootstrap(), mm2Name+topic, parts, map[string]string{"cleanup.policy": "compact"}); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Fatal(err)
		}
	}
	res := "kafkamirrormaker2/" + mm2Name
	listCM := mm2Name + "-list-offsets"
	annotate := "strimzi.io/mirrormaker-connector=" + connector

	if out, code := s.cutoverRun(ctx, t, "precheck", "-config", env); code != 0 {
		t.Fatalf("precheck: exit %d\n%s", code, out)
	}
	if out, code := s.cutoverRun(ctx, t, "plan", "-config", env); code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	p := s.plan(t, co)
	if out, code := s.cutoverRun(ctx, t, "strimzi", "-config", env, "-strimzi-group-id", mm2Name); code != 0 {
		t.Fatalf("strimzi: exit %d\n%s", code, out)
	}
	rendered := filepath.Join(s.dir, co.name+".plan.strimzi.yaml")
	b, err := os.ReadFile(rendered)
	if err != nil {
		t.Fatal(err)
	}
	const at = "kind: KafkaMirrorMaker2\n"
	i := strings.Index(string(b), at)
	j := strings.Index(string(b)[i:], "\nspec:\n")
	if i < 0 || j < 0 {
		t.Fatalf("no KafkaMirrorMaker2 spec in the rendered file:\n%s", b)
	}
	site := `  version: ` + strimzi.KafkaVersion + `
  resources:
    requests: {cpu: 100m, memory: 1Gi}
    limits: {memory: 1536Mi}
  jvmOptions:
    "-Xms": 128m
    "-Xmx": 512m
    "-XX": {UseSerialGC: "true", TieredStopAtLevel: "1"}
  readinessProbe: {initialDelaySeconds: 15, timeoutSeconds: 5, failureThreshold: 3}
  livenessProbe: {initialDelaySeconds: 600, timeoutSeconds: 5, failureThreshold: 6}
`
	k := i + j + len("\nspec:\n")
	edited := string(b[:k]) + site + string(b[k:])
	if err := os.WriteFile(rendered, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	s.kubectl(ctx, t, "apply", "--server-side", "-f", rendered)
	s.waitReady(ctx, t, res, 20*time.Minute)
	s.waitState(ctx, t, res, connector, "STOPPED")
	// Its own Connect cluster's REST API, for the checks over REST.
	ip := strings.TrimSpace(s.kubectl(ctx, t, "-n", operatorNS, "get", "service", mm2Name+"-mirrormaker2-api", "-o", "jsonpath={.spec.clusterIP}"))
	mm2URL := "http://" + ip + ":8083"
	if got := connectOffsets(ctx, t, mm2URL, url.PathEscape(connector)); len(got) != 0 {
		t.Fatalf("the connector the operator created has offsets %v: it ran", got)
	}

	s.annotateAndWait(ctx, t, res, "alter", annotate)
	s.annotateAndWait(ctx, t, res, "list", annotate)
	want := wantOffsets(t, p)
	for _, from := range []string{"configmap/" + listCM, "listed-mm2.json"} {
		if from == "listed-mm2.json" {
			saved := s.kubectl(ctx, t, "-n", operatorNS, "get", "configmap", listCM, "-o", "json")
			if err := os.WriteFile(filepath.Join(s.dir, from), []byte(saved), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out, code := s.cutoverRun(ctx, t, "verify", "-config", env, "-strimzi-offsets", from)
		if code != 0 || !strings.Contains(out, fmt.Sprintf("%d match, 0 wrong value, 0 missing, 0 unexpected", len(want))) {
			t.Fatalf("verify -strimzi-offsets %s: exit %d\n%s", from, code, out)
		}
	}
	s.forceReconcile(ctx, t, res, "KafkaMirrorMaker2/"+mm2Name)
	s.waitState(ctx, t, res, connector, "STOPPED")
	if got := connectOffsets(ctx, t, mm2URL, url.PathEscape(connector)); !mapsEqual(got, want) {
		t.Fatalf("after a forced reconciliation Connect's offsets are %v, the plan's %v", got, want)
	}

	if err := flinklike.Produce(ctx, s.sb.Source().Bootstrap(), co.partitions(), 10); err != nil {
		t.Fatal(err)
	}
	s.kubectl(ctx, t, "-n", operatorNS, "patch", res, "--type", "json", "-p", `[{"op":"replace","path":"/spec/mirrors/0/sourceConnector/state","value":"running"}]`)
	s.waitState(ctx, t, res, connector, "RUNNING")
	s.counted(ctx, t, co)
	// verify after resume reads the MM2 workers' REST API.
	text = strings.Replace(text, "MM2CUTOVER_CONNECT_URL="+s.restURL, "MM2CUTOVER_CONNECT_URL="+mm2URL, 1)
	if err := os.WriteFile(env, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := s.cutoverRun(ctx, t, "verify", "-config", env); code != 0 {
		t.Fatalf("verify after resume: exit %d\n%s", code, out)
	}

	// What the render leaves to the site has limits the operator shows: a
	// key of spec.target.config (a Connect worker setting, here one a
	// single-broker target needs) also reaches the connector's
	// configuration, prefixed target.cluster. (Strimzi's
	// KafkaMirrorMaker2Connectors): the configuration is no longer the
	// plan's, and verify refuses the connector as not the plan's (exit 4).
	s.kubectl(ctx, t, "-n", operatorNS, "patch", res, "--type", "merge", "-p", `{"spec":{"target":{"config":{"config.storage.replication.factor":1}}}}`)
	until(ctx, t, "the target's config in the connector's configuration", 10*time.Minute, func() string {
		code, out := httpDo(ctx, t, "GET", mm2URL+"/connectors/"+url.PathEscape(connector)+"/config", "")
		if code != 200 || !strings.Contains(out, `"target.cluster.config.storage.replication.factor":"1"`) {
			return fmt.Sprintf("%d %s", code, out)
		}
		return ""
	})
	out, code, stderr := s.cutoverRunStderr(ctx, t, "verify", "-config", env)
	if code != 4 || !strings.Contains(stderr, "is not the plan's: its config_digest is") {
		t.Errorf("verify after a key was added to spec.target.config: exit %d, want 4, the connector not the plan's\n%s%s", code, out, stderr)
	}
}
