package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/mm2cutover/mm2cutover/clientconf"
	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// The Strimzi path: a connector the Strimzi operator owns (-strimzi-cluster
// names its KafkaConnect or KafkaMirrorMaker2) is never created or written
// over REST — the operator deletes what no resource defines. precheck and
// plan run as usual (Connect's REST API read, e.g. through kubectl
// port-forward: Strimzi's NetworkPolicy admits only the operator); the
// strimzi step re-checks the plan against the clusters and renders the
// resources to a file (plan.WriteStrimzi), which the operator applies with
// kubectl, and verify -strimzi-offsets reads back what Strimzi listed into
// its listOffsets ConfigMap. A step of its own rather than a flag of plan:
// the plan is reviewed as a file first, as before apply, and the render
// takes the plan file as it is, without building another.

// strimziConfigMaps returns the names of the alter and list ConfigMaps: the
// flags', else the connector's resource name (the KafkaConnector's, or the
// KafkaMirrorMaker2's) with -alter-offsets and -list-offsets.
func (c *cli) strimziConfigMaps() (alter, list string) {
	base := c.s.Connector
	if plan.StrimziKindOf(base) == plan.StrimziKafkaMirrorMaker2 {
		base = c.s.StrimziCluster
	}
	alter, list = c.o.strimziAlter, c.o.strimziList
	if alter == "" {
		alter = base + "-alter-offsets"
	}
	if list == "" {
		list = base + "-list-offsets"
	}
	return alter, list
}

// strimziOut is the file the strimzi step writes.
func (c *cli) strimziOut() string {
	if c.o.strimziOut != "" {
		return c.o.strimziOut
	}
	return strings.TrimSuffix(c.o.planPath, ".json") + ".strimzi.yaml"
}

// strimzi is the strimzi step: the plan checked against the settings and
// re-checked against the clusters (read only: the same facts as before
// apply, but not the Connect workers, which the operator writes to), then
// the resources rendered to strimziOut.
func (c *cli) strimzi(ctx context.Context) error {
	if c.s.StrimziCluster == "" {
		return fmt.Errorf("%w: the strimzi step needs -strimzi-cluster: the KafkaConnect or KafkaMirrorMaker2 whose operator owns the connector", settings.ErrSettings)
	}
	p, err := c.readPlan()
	if err != nil {
		return err
	}
	if err := app.CheckPlan(ctx, c.env, c.s, p); err != nil {
		return err
	}
	if err := c.recheckReadOnly(ctx, p); err != nil {
		return err
	}
	cfg, err := c.s.ConnectorConfig()
	if err != nil {
		return err
	}
	alter, list := c.strimziConfigMaps()
	r := plan.StrimziResources{Namespace: c.s.StrimziNamespace, Cluster: c.s.StrimziCluster, Config: cfg,
		AlterConfigMap: alter, ListConfigMap: list, Replicas: c.o.strimziReplicas,
		ConfigStorageTopic: c.s.WorkerStorage.ConfigTopic, OffsetStorageTopic: c.s.WorkerStorage.OffsetTopic, StatusStorageTopic: c.s.WorkerStorage.StatusTopic,
		GroupID: c.o.strimziGroupID}
	var b strings.Builder
	if err := p.WriteStrimzi(&b, r); err != nil {
		return fmt.Errorf("%w: %w", settings.ErrSettings, err)
	}
	out := c.strimziOut()
	if err := writeFileAtomic(out, []byte(b.String())); err != nil {
		return err
	}
	kind := plan.StrimziKindOf(p.ConnectorName)
	if err := c.record("strimzi", p.Fingerprint, map[string]any{"file": out, "kind": kind, "cluster": r.Cluster, "namespace": r.Namespace,
		"alter_configmap": alter, "list_configmap": list}); err != nil {
		return err
	}
	var steps []string
	for _, l := range strings.Split(b.String(), "\n") {
		if s, ok := strings.CutPrefix(l, "# "); ok && (len(s) > 1 && s[0] >= '1' && s[0] <= '9' || strings.HasPrefix(s, "   ")) {
			steps = append(steps, s)
		} else if !strings.HasPrefix(l, "#") {
			break
		}
	}
	c.emit("strimzi", map[string]any{"file": out, "kind": kind, "cluster": r.Cluster, "namespace": r.Namespace, "connector": p.ConnectorName,
		"plan_fingerprint": p.Fingerprint, "alter_configmap": alter, "list_configmap": list,
		"offsets_key": plan.StrimziOffsetsKey(p.ConnectorName), "steps": steps}, func(w io.Writer) {
		fmt.Fprintf(w, "wrote\t%s\n", out)
		fmt.Fprintf(w, "resources\t%s %s and ConfigMap %s (key %s), plan %s\n", kind, resourceName(kind, p.ConnectorName, r.Cluster), alter, plan.StrimziOffsetsKey(p.ConnectorName), p.Fingerprint)
		fmt.Fprintf(w, "offsets listed to\tConfigMap %s\n\n", list)
		for _, s := range steps {
			fmt.Fprintln(w, s)
		}
	})
	return nil
}

func resourceName(kind plan.StrimziKind, connector, cluster string) string {
	if kind == plan.StrimziKafkaMirrorMaker2 {
		return cluster
	}
	return connector
}

// recheckReadOnly refuses a plan that no longer describes the clusters
// (verify.Observe and verify.Recheck, as before apply), without asking the
// Connect workers where they write: on a Strimzi-managed Connect that
// question would only find the operator (strimzi-managed), whose path this
// is.
func (c *cli) recheckReadOnly(ctx context.Context, p *plan.Plan) error {
	var input verify.OffsetsInput
	switch {
	case p.OffsetsFrom.Kind == plan.FromConnectorOffsets && c.s.OffsetsTopic != "":
		input = verify.ConnectorOffsets{Reader: c.env.Target, Topic: c.s.OffsetsTopic, ConnectorTopic: c.s.OffsetsConnectorTopic, Connector: c.s.OffsetsConnector, Alias: c.s.OffsetsAlias, Topics: c.s.Topics}
	case p.OffsetsFrom.Kind == plan.FromFlinkSavepoint:
		sp, err := verify.FlinkSavepointOfPlan(p)
		if err != nil {
			return fmt.Errorf("%w: the plan's savepoint: %w", verify.ErrStalePlan, err)
		}
		input = sp
	}
	obs, err := verify.Observe(ctx, c.env.Source, c.env.Target, p, input)
	if err != nil {
		return err
	}
	return verify.Recheck(p, obs)
}

// maxListedConfigMap bounds the -strimzi-offsets file: a ConfigMap holds at
// most 1 MiB of data, kubectl's JSON of it a little more.
const maxListedConfigMap = 4 << 20

// verifyStrimzi is verify -strimzi-offsets FILE or configmap/NAME: the read-back before
// resume from the ConfigMap Strimzi listed the connector's offsets into,
// with the same verdict as over REST (offsets.CompareReadBack: 100% equal
// or it fails), for a plan of the settings' connector (app.CheckPlan).
// It asks Connect nothing.
func (c *cli) verifyStrimzi(ctx context.Context, p *plan.Plan) error {
	if err := app.CheckPlan(ctx, c.env, c.s, p); err != nil {
		return err
	}
	data, err := c.listedConfigMap(ctx)
	if err != nil {
		return err
	}
	got, err := plan.ParseStrimziOffsets(data, p.ConnectorName)
	if err != nil {
		return fmt.Errorf("%w: -strimzi-offsets %s: %w", settings.ErrSettings, c.o.strimziOffsets, err)
	}
	want, err := p.ExpectedOffsets()
	if err != nil {
		return err
	}
	rb := offsets.CompareReadBack(want, got)
	err = nil
	if !rb.OK() {
		err = fmt.Errorf("%w: the offsets Strimzi listed are not the plan's: %s", app.ErrCheckFailed, rb)
	}
	if rerr := c.record("verify", p.Fingerprint, map[string]any{"from": "strimzi-list-configmap", "file": c.o.strimziOffsets, "ok": rb.OK(), "read_back": rb.String()}); rerr != nil && err == nil {
		err = rerr
	}
	c.emit("read-back", map[string]any{"from": "strimzi-list-configmap", "ok": rb.OK(), "read_back": rb.Partitions}, func(w io.Writer) {
		fmt.Fprintf(w, "connector %s, offsets Strimzi listed into %s, against plan %s: %s\n", p.ConnectorName, c.o.strimziOffsets, p.Fingerprint, rb)
		if d := rb.Diff(); d != "" {
			fmt.Fprintf(w, "diff (-plan +connect):\n%s", d)
		}
	})
	return err
}

// errStrimziREST refuses a step that writes over REST when the settings say
// Strimzi owns the connector.
var errStrimziREST = errors.New("-strimzi-cluster is set: the Strimzi operator owns this connector and deletes or reverts what is written over REST; render the resources with 'cutover strimzi' and apply them with kubectl (docs/strimzi.md)")

// strimziRefusesREST reports the refusal for a step that writes over REST,
// or nil.
func strimziRefusesREST(step string, s settings.Settings, dryRun bool) error {
	switch step {
	case "apply", "resume", "rollback", "run":
		if s.StrimziCluster != "" && !dryRun {
			return fmt.Errorf("%w: %w", settings.ErrSettings, errStrimziREST)
		}
	}
	return nil
}

// listedConfigMap returns the ConfigMap -strimzi-offsets names as the
// Kubernetes API returns it: the file's content, or, for configmap/NAME,
// the ConfigMap NAME of -strimzi-namespace read straight from the API
// server with kubectl (-strimzi-kubectl, kubectl on PATH by default), which
// authenticates as kubectl does everywhere: KUBECONFIG or ~/.kube/config,
// and in a Pod its service account (the in-cluster config). kubectl rather
// than a Go client library: it speaks every way a kubeconfig authenticates
// (exec plugins, OIDC, client certificates) and the runbook's Strimzi steps
// use it already, and it keeps Kubernetes' modules out of this module.
func (c *cli) listedConfigMap(ctx context.Context) ([]byte, error) {
	name, fromAPI := strings.CutPrefix(c.o.strimziOffsets, "configmap/")
	if !fromAPI {
		data, err := clientconf.ReadFileLimited(c.o.strimziOffsets, maxListedConfigMap)
		if err != nil {
			return nil, fmt.Errorf("%w: -strimzi-offsets: %w", settings.ErrSettings, err)
		}
		return data, nil
	}
	kubectl := c.o.strimziKubectl
	if kubectl == "" {
		kubectl = "kubectl"
	}
	args := []string{"get", "configmap", name, "-o", "json"}
	if c.s.StrimziNamespace != "" {
		args = append(args, "--namespace", c.s.StrimziNamespace)
	}
	cmd := exec.CommandContext(ctx, kubectl, args...)
	var stdout limitedBuffer
	stdout.limit = maxListedConfigMap
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	msg := strings.TrimSpace(stderr.String())
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return nil, fmt.Errorf("%w: -strimzi-offsets %s: %s not found (-strimzi-kubectl): %w", settings.ErrSettings, c.o.strimziOffsets, kubectl, err)
	case err != nil && (strings.Contains(msg, "(NotFound)") || strings.Contains(msg, "(Forbidden)") || strings.Contains(msg, "(Unauthorized)")):
		// Not there (Strimzi has not listed yet, or another name or
		// namespace), or not allowed: a retry without a change fails the
		// same way.
		return nil, fmt.Errorf("%w: -strimzi-offsets %s: kubectl %s: %s", settings.ErrSettings, c.o.strimziOffsets, strings.Join(args, " "), msg)
	case err != nil:
		return nil, fmt.Errorf("-strimzi-offsets %s: kubectl %s: %w: %s", c.o.strimziOffsets, strings.Join(args, " "), err, msg)
	case stdout.over:
		return nil, fmt.Errorf("%w: -strimzi-offsets %s: more than %d bytes, more than a ConfigMap holds", settings.ErrSettings, c.o.strimziOffsets, maxListedConfigMap)
	}
	return stdout.b, nil
}

// limitedBuffer keeps at most limit bytes and says whether more came.
type limitedBuffer struct {
	b     []byte
	limit int
	over  bool
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.limit - len(l.b); len(p) > room {
		l.b = append(l.b, p[:max(room, 0)]...)
		l.over = true
		return len(p), nil
	}
	l.b = append(l.b, p...)
	return len(p), nil
}
