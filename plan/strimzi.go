package plan

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mm2cutover/mm2cutover/internal/jsonstr"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/redact"
)

// A connector whose lifecycle the Strimzi operator owns — a KafkaConnector
// on a KafkaConnect with strimzi.io/use-connector-resources: "true", or the
// source connector of a KafkaMirrorMaker2 — must not be created or written
// over the REST API: the operator deletes a connector no resource defines
// at its next reconcile. Its offsets are altered and listed through
// ConfigMaps named in the resource, on the operator's reconcile, when the
// resource carries the strimzi.io/connector-offsets annotation (alter, list).
// The names below are Strimzi's (verified in strimzi-kafka-operator 1.2.0,
// AbstractConnectOperator, KafkaConnectAssemblyOperator,
// KafkaMirrorMaker2AssemblyOperator, KafkaMirrorMaker2Connectors).

// StrimziKind is the kind of Strimzi custom resource that defines a
// connector.
type StrimziKind string

const (
	// StrimziKafkaConnector is a KafkaConnector: its metadata.name is the
	// connector's name, its offsets are under the ConfigMap key
	// "offsets.json".
	StrimziKafkaConnector StrimziKind = "KafkaConnector"
	// StrimziKafkaMirrorMaker2 is a KafkaMirrorMaker2, whose operator
	// names each mirror's source connector
	// "<source alias>-><target alias>.MirrorSourceConnector" and keeps its
	// offsets under the ConfigMap key of that name with "->" written "--"
	// and ".json" appended; the offsets annotations on the
	// KafkaMirrorMaker2 need strimzi.io/mirrormaker-connector naming the
	// connector beside them.
	StrimziKafkaMirrorMaker2 StrimziKind = "KafkaMirrorMaker2"
)

// strimziMirrorSuffix ends the name of a KafkaMirrorMaker2's source
// connector.
const strimziMirrorSuffix = ".MirrorSourceConnector"

// StrimziMirrorMaker2Connector returns the name a KafkaMirrorMaker2 gives
// the source connector of a mirror from sourceAlias to targetAlias:
// "<source>-><target>.MirrorSourceConnector". A plan for such a connector
// must carry this name: Connect keys the offsets by it.
func StrimziMirrorMaker2Connector(sourceAlias, targetAlias string) string {
	return sourceAlias + "->" + targetAlias + strimziMirrorSuffix
}

// StrimziKindOf tells which resource can define a connector of this name:
// a name of the form StrimziMirrorMaker2Connector gives is a
// KafkaMirrorMaker2's ("->" cannot be in a KafkaConnector's name, a
// Kubernetes object name), any other a KafkaConnector's.
func StrimziKindOf(connector string) StrimziKind {
	if src, rest, ok := strings.Cut(connector, "->"); ok && src != "" && strings.HasSuffix(rest, strimziMirrorSuffix) && len(rest) > len(strimziMirrorSuffix) {
		return StrimziKafkaMirrorMaker2
	}
	return StrimziKafkaConnector
}

// StrimziOffsetsKey returns the ConfigMap data key under which Strimzi
// reads the offsets to alter, and writes the offsets it lists, for the
// connector: "offsets.json" for a KafkaConnector, the connector's name with
// "->" replaced by "--" and ".json" appended for a KafkaMirrorMaker2
// ("src--dst.MirrorSourceConnector.json").
func StrimziOffsetsKey(connector string) string {
	if StrimziKindOf(connector) == StrimziKafkaMirrorMaker2 {
		return strings.ReplaceAll(connector, "->", "--") + ".json"
	}
	return "offsets.json"
}

// StrimziResources says how to render a plan's connector as Strimzi
// resources ([Plan.WriteStrimzi]).
type StrimziResources struct {
	// Namespace of every resource ("" leaves it to kubectl's context).
	Namespace string
	// Cluster is the name of the KafkaConnect the KafkaConnector belongs
	// to (its strimzi.io/cluster label), or of the KafkaMirrorMaker2.
	Cluster string
	// Config is the connector's configuration, as [Plan.CheckConfig]
	// accepts it: the rendered resource makes Strimzi create the connector
	// with exactly this configuration, so that the plan's config digest
	// holds for it. Secret values must be config provider references
	// (${strimzisecrets:NAMESPACE/SECRET:KEY}, ${env:...}); a secret in
	// clear is refused, never written.
	Config map[string]string
	// PasswordKeys are the keys the connector plugin defines as PASSWORD
	// (Connect's validate answer), besides those redact knows by name.
	PasswordKeys []string
	// AlterConfigMap names the ConfigMap that holds the plan's offsets
	// (spec.alterOffsets.fromConfigMap); ListConfigMap the one Strimzi
	// writes the connector's offsets to when asked to list them
	// (spec.listOffsets.toConfigMap), read back by [ParseStrimziOffsets].
	// They must differ: a listing into the alter ConfigMap would overwrite
	// the plan's offsets with Connect's, and a read-back of it would prove
	// nothing.
	AlterConfigMap, ListConfigMap string

	// For a KafkaMirrorMaker2 only: its Connect cluster's replicas (0, the
	// zero value, renders 1; a negative number is refused: a mirror with no
	// worker never applies the plan), group.id and internal topics
	// (spec.target, required by Strimzi's v1 API; "" takes Strimzi's former
	// defaults mirrormaker2-cluster and mirrormaker2-cluster-configs,
	// -offsets, -status).
	Replicas                                                            int
	GroupID, ConfigStorageTopic, OffsetStorageTopic, StatusStorageTopic string
}

// strimziOwned are the connector configuration keys a KafkaMirrorMaker2
// sets from other fields of the resource: they are rendered there, not in
// sourceConnector.config.
var strimziOwned = []string{"name", "connector.class", "tasks.max", "topics", "topics.exclude",
	"source.cluster.alias", "target.cluster.alias", "source.cluster.bootstrap.servers", "target.cluster.bootstrap.servers"}

// WriteStrimzi writes, as one YAML stream, the Strimzi resources that carry
// out the plan on a connector Strimzi owns: the ConfigMap of the plan's
// offsets under [StrimziOffsetsKey] (as [Plan.WriteStrimziConfigMap]), and
// either a KafkaConnector (for a connector name of the KafkaConnector
// form) or a KafkaMirrorMaker2 (for the StrimziMirrorMaker2Connector form)
// whose connector has the plan's configuration, spec.state stopped, and
// alterOffsets/listOffsets naming the two ConfigMaps; apiVersion
// kafka.strimzi.io/v1. The comment at the top lists the steps. Strimzi
// 1.2.0 or newer creates a connector whose spec.state is stopped in that
// state; older operators create it running and stop it afterwards, so MM2
// would copy from the start of every partition for a moment: do not use
// them for a cutover.
//
// A KafkaMirrorMaker2 is rendered whole, with the plan's clusters and
// topics, its Connect cluster's settings from r and no authentication or
// TLS of its own (spec.target, spec.mirrors[].source): add those, or merge
// spec.mirrors[0] into an existing resource. Strimzi always sets
// security.protocol on both clusters' connector keys from them, so
// r.Config must hold source.cluster.security.protocol and
// target.cluster.security.protocol (and every other client key Strimzi
// derives from the authentication given), or the connector's configuration
// would differ from the plan's. For the same reason spec.target.config and
// spec.mirrors[].source.config must stay empty: Strimzi copies every key of
// a cluster's config into each connector's configuration, prefixed
// target.cluster. or source.cluster. (seen with the 1.2.0 operator: a
// worker setting, config.storage.replication.factor, added to
// spec.target.config became target.cluster.config.storage.replication.factor
// of the running source connector, whose config digest then was not the
// plan's, and the CLI's verify refused it). Create the Connect cluster's
// internal topics beforehand instead of setting their replication factor
// there.
//
// Errors: a [*BlockedError] while any entry is blocked; a
// [*ConfigChangedError] when r.Config is not the plan's connector
// configuration; a [*FieldError] matching [ErrInvalidField] for a name that
// is not a Kubernetes name, a connector name that is not a Kubernetes name
// either (KafkaConnector) or does not end in the plan's aliases
// (KafkaMirrorMaker2), equal ConfigMap names, a secret in clear in
// r.Config (named by key, never by value), a missing security.protocol
// (KafkaMirrorMaker2), or offsets beyond the 1 MiB a ConfigMap holds; the
// error of w. Nothing is written on error, except what w took before
// failing.
func (p *Plan) WriteStrimzi(w io.Writer, r StrimziResources) error {
	kind := StrimziKindOf(p.ConnectorName)
	if err := p.CheckConfig(r.Config); err != nil {
		return err
	}
	for _, n := range []struct{ field, name string }{{"cluster", r.Cluster}, {"alter configmap", r.AlterConfigMap}, {"list configmap", r.ListConfigMap}} {
		if !dnsSubdomain(n.name) {
			return &FieldError{Field: "strimzi " + n.field, Err: ErrInvalidField, Detail: fmt.Sprintf("%q is not a DNS subdomain name", n.name)}
		}
	}
	if r.Namespace != "" && !dnsLabel(r.Namespace) {
		return &FieldError{Field: "strimzi namespace", Err: ErrInvalidField, Detail: fmt.Sprintf("%q is not a DNS label", r.Namespace)}
	}
	if r.Replicas < 0 {
		return &FieldError{Field: "strimzi replicas", Err: ErrInvalidField, Detail: fmt.Sprintf("%d: a KafkaMirrorMaker2 needs a Connect worker to apply the plan", r.Replicas)}
	}
	if r.AlterConfigMap == r.ListConfigMap {
		return &FieldError{Field: "strimzi list configmap", Err: ErrInvalidField,
			Detail: "the list ConfigMap must not be the alter ConfigMap: Strimzi would overwrite the plan's offsets with Connect's, and reading them back would prove nothing"}
	}
	var inClear []string
	for _, k := range slices.Sorted(maps.Keys(r.Config)) {
		if len(redact.SecretValues(map[string]string{k: r.Config[k]}, r.PasswordKeys)) > 0 {
			inClear = append(inClear, k)
		}
	}
	if len(inClear) > 0 {
		return &FieldError{Field: "strimzi connector config", Err: ErrInvalidField,
			Detail: fmt.Sprintf("secrets in clear under %s: a resource file is no place for them; use config provider references (${strimzisecrets:NAMESPACE/SECRET:KEY})", strings.Join(inClear, ", "))}
	}
	cm, err := p.strimziConfigMap(r.AlterConfigMap, r.Namespace)
	if err != nil {
		return err
	}
	var b []byte
	switch kind {
	case StrimziKafkaConnector:
		if !dnsSubdomain(p.ConnectorName) {
			return &FieldError{Field: "connector_name", Err: ErrInvalidField,
				Detail: fmt.Sprintf("%q is not a Kubernetes object name, which a KafkaConnector's name (the connector's) must be", p.ConnectorName)}
		}
		b = p.strimziSteps(b, kind, r)
		b = append(b, cm...)
		b = p.appendKafkaConnector(b, r)
	default:
		var err error
		if b, err = p.appendKafkaMirrorMaker2(p.strimziSteps(b, kind, r), cm, r); err != nil {
			return err
		}
	}
	_, err = w.Write(b)
	return err
}

// strimziSteps is the comment at the top of WriteStrimzi's stream.
func (p *Plan) strimziSteps(b []byte, kind StrimziKind, r StrimziResources) []byte {
	res, annotate := "kafkaconnector/"+p.ConnectorName, "strimzi.io/connector-offsets"
	if kind == StrimziKafkaMirrorMaker2 {
		res = "kafkamirrormaker2/" + r.Cluster
		annotate += "=%s strimzi.io/mirrormaker-connector=" + strconv.Quote(p.ConnectorName)
	} else {
		annotate += "=%s"
	}
	state := "{.status.connectorStatus.connector.state}"
	if kind == StrimziKafkaMirrorMaker2 {
		state = `{.status.connectors[?(@.name=="` + p.ConnectorName + `")].connector.state}`
	}
	ns := ""
	if r.Namespace != "" {
		ns = " -n " + r.Namespace
	}
	lines := []string{
		fmt.Sprintf("Strimzi resources for plan %s, connector %q (%s %s; Strimzi 1.2.0 or newer).", p.Fingerprint, p.ConnectorName, kind, r.Cluster),
		"1. kubectl apply --server-side -f THIS FILE: the connector is created STOPPED (spec.state: stopped).",
	}
	if kind == StrimziKafkaMirrorMaker2 {
		lines = append(lines, strimziMirrorConfigNote...)
	}
	if strings.EqualFold(strings.TrimSpace(p.ConnectorConfig["exactly.once.support"]), "required") {
		// The connector requires exactly-once: Connect refuses to create it
		// on a worker without the support, and a worker without it would run
		// its tasks at least once.
		lines = append(lines, "   Exactly-once: first set exactly.once.source.support: enabled in the Connect cluster's config (spec.config"+
			" of the KafkaConnect, the Connect cluster's config of the KafkaMirrorMaker2) and let every worker restart with it.")
	}
	lines = append(lines, []string{
		fmt.Sprintf("2. when kubectl get %s%s -o jsonpath='%s' says STOPPED:", res, ns, state),
		fmt.Sprintf("   kubectl annotate %s%s "+annotate, res, ns, "alter"),
		"3. when Strimzi has removed that annotation (the offsets are written):",
		fmt.Sprintf("   kubectl annotate %s%s "+annotate, res, ns, "list"),
		fmt.Sprintf("4. when it has removed that one: kubectl get configmap %s%s -o json > listed.json", r.ListConfigMap, ns),
		"   cutover verify -strimzi-offsets listed.json: the read-back, 100% equal to the plan or no resume.",
		fmt.Sprintf("5. resume: kubectl patch %s%s %s", res, ns, strimziResumePatch(kind)),
		strimziResumeNote,
		"   then cutover verify (boundary records, lag, acceptance) as after any resume.",
	}...)
	for _, l := range lines {
		b = append(b, "# "...)
		b = append(b, l...)
		b = append(b, '\n')
	}
	return b
}

// What the 1.2.0 operator showed, for the steps of the rendered file: a
// KafkaMirrorMaker2's spec.target.config (and a source's config) reaches
// the connector's configuration, prefixed target.cluster. (source.cluster.),
// so that it is no longer the plan's; and after the resume patch the
// operator resumes the connector at once, but its status may keep STOPPED
// until the next periodic reconciliation.
var strimziMirrorConfigNote = []string{
	"   Add the clusters' authentication and tls if they need them, but no key under spec.target.config or",
	"   spec.mirrors[0].source.config: Strimzi copies those into the connector's configuration, which then is",
	"   not the plan's (create the Connect cluster's internal topics beforehand instead).",
}

const strimziResumeNote = "   the status may say STOPPED until the operator's next periodic reconciliation (2 minutes as shipped);"

// strimziResumePatch is the kubectl patch that resumes the connector: a
// merge patch of spec.state for a KafkaConnector, a JSON patch of the
// mirror's sourceConnector.state for a KafkaMirrorMaker2 (a merge patch
// would replace the whole mirrors list).
func strimziResumePatch(kind StrimziKind) string {
	if kind == StrimziKafkaMirrorMaker2 {
		return `--type json -p '[{"op":"replace","path":"/spec/mirrors/0/sourceConnector/state","value":"running"}]'`
	}
	return `--type merge -p '{"spec":{"state":"running"}}'`
}

// strimziConfigMap renders the alter ConfigMap, as WriteStrimziConfigMap.
func (p *Plan) strimziConfigMap(name, namespace string) ([]byte, error) {
	var b strings.Builder
	if err := p.WriteStrimziConfigMap(&b, name, namespace); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

func (p *Plan) appendMetadata(b []byte, indent, name, namespace string, labels map[string]string) []byte {
	b = append(b, indent+"metadata:\n"+indent+"  name: "...)
	b = jsonstr.Append(b, name)
	if namespace != "" {
		b = append(b, "\n"+indent+"  namespace: "...)
		b = jsonstr.Append(b, namespace)
	}
	if len(labels) > 0 {
		b = append(b, "\n"+indent+"  labels:"...)
		for _, k := range slices.Sorted(maps.Keys(labels)) {
			b = append(b, "\n"+indent+"    "...)
			b = jsonstr.Append(b, k)
			b = append(b, ": "...)
			b = jsonstr.Append(b, labels[k])
		}
	}
	b = append(b, "\n"+indent+"  annotations:\n"+indent+"    mm2cutover.io/plan-fingerprint: "...)
	b = jsonstr.Append(b, p.Fingerprint)
	b = append(b, "\n"+indent+"    mm2cutover.io/connector: "...)
	b = jsonstr.Append(b, p.ConnectorName)
	return append(b, '\n')
}

// appendConnectorSpec writes the fields a KafkaConnector's spec and a
// KafkaMirrorMaker2's sourceConnector share, at indent.
func appendConnectorSpec(b []byte, indent string, config map[string]string, skip []string, r StrimziResources) []byte {
	tasks := 1
	if n, err := strconv.Atoi(config["tasks.max"]); err == nil && n > 0 {
		tasks = n
	}
	b = append(b, indent+"tasksMax: "...)
	b = strconv.AppendInt(b, int64(tasks), 10)
	b = append(b, "\n"+indent+"state: stopped\n"+indent+"config:"...)
	n := 0
	for _, k := range slices.Sorted(maps.Keys(config)) {
		if slices.Contains(skip, k) {
			continue
		}
		n++
		b = append(b, "\n"+indent+"  "...)
		b = jsonstr.Append(b, k)
		b = append(b, ": "...)
		b = jsonstr.Append(b, config[k])
	}
	if n == 0 {
		b = append(b, " {}"...)
	}
	b = append(b, "\n"+indent+"alterOffsets:\n"+indent+"  fromConfigMap:\n"+indent+"    name: "...)
	b = jsonstr.Append(b, r.AlterConfigMap)
	b = append(b, "\n"+indent+"listOffsets:\n"+indent+"  toConfigMap:\n"+indent+"    name: "...)
	b = jsonstr.Append(b, r.ListConfigMap)
	return append(b, '\n')
}

func (p *Plan) appendKafkaConnector(b []byte, r StrimziResources) []byte {
	b = append(b, "---\napiVersion: kafka.strimzi.io/v1\nkind: KafkaConnector\n"...)
	b = p.appendMetadata(b, "", p.ConnectorName, r.Namespace, map[string]string{"strimzi.io/cluster": r.Cluster})
	b = append(b, "spec:\n  class: "...)
	class := r.Config["connector.class"]
	b = jsonstr.Append(b, class)
	b = append(b, '\n')
	return appendConnectorSpec(b, "  ", r.Config, []string{"name", "connector.class", "tasks.max"}, r)
}

func (p *Plan) appendKafkaMirrorMaker2(b, cm []byte, r StrimziResources) ([]byte, error) {
	cfg := r.Config
	src, tgt := cfg["source.cluster.alias"], cfg["target.cluster.alias"]
	if want := StrimziMirrorMaker2Connector(src, tgt); p.ConnectorName != want {
		return nil, &FieldError{Field: "connector_name", Err: ErrInvalidField,
			Detail: fmt.Sprintf("a KafkaMirrorMaker2 names this mirror's source connector %q (its aliases), not %q", want, p.ConnectorName)}
	}
	for _, k := range []string{"source.cluster.security.protocol", "target.cluster.security.protocol"} {
		if cfg[k] == "" {
			return nil, &FieldError{Field: "strimzi connector config", Err: ErrInvalidField,
				Detail: fmt.Sprintf("%s is not set: Strimzi always sets it (from the cluster's tls and authentication), so the connector's configuration would not be the plan's; state security.protocol in the connector's client settings", k)}
		}
	}
	if r.Replicas < 1 {
		r.Replicas = 1
	}
	def := func(v, d string) string {
		if v == "" {
			return d
		}
		return v
	}
	b = append(b, cm...)
	b = append(b, "---\napiVersion: kafka.strimzi.io/v1\nkind: KafkaMirrorMaker2\n"...)
	b = p.appendMetadata(b, "", r.Cluster, r.Namespace, nil)
	b = append(b, "spec:\n  replicas: "...)
	b = strconv.AppendInt(b, int64(r.Replicas), 10)
	for _, f := range []struct{ key, val string }{
		{"\n  target:\n    alias: ", tgt},
		{"\n    bootstrapServers: ", cfg["target.cluster.bootstrap.servers"]},
		{"\n    groupId: ", def(r.GroupID, "mirrormaker2-cluster")},
		{"\n    configStorageTopic: ", def(r.ConfigStorageTopic, "mirrormaker2-cluster-configs")},
		{"\n    offsetStorageTopic: ", def(r.OffsetStorageTopic, "mirrormaker2-cluster-offsets")},
		{"\n    statusStorageTopic: ", def(r.StatusStorageTopic, "mirrormaker2-cluster-status")},
		{"\n  mirrors:\n  - source:\n      alias: ", src},
		{"\n      bootstrapServers: ", cfg["source.cluster.bootstrap.servers"]},
		{"\n    topicsPattern: ", cfg["topics"]},
	} {
		b = append(b, f.key...)
		b = jsonstr.Append(b, f.val)
	}
	if ex, ok := cfg["topics.exclude"]; ok {
		b = append(b, "\n    topicsExcludePattern: "...)
		b = jsonstr.Append(b, ex)
	}
	b = append(b, "\n    sourceConnector:\n"...)
	return appendConnectorSpec(b, "      ", cfg, strimziOwned, r), nil
}

// ParseStrimziOffsets reads the offsets Strimzi listed for connector into
// a ConfigMap (spec.listOffsets.toConfigMap, annotation
// strimzi.io/connector-offsets=list): data is the ConfigMap as the
// Kubernetes API returns it (kubectl get configmap NAME -o json), and the
// offsets are the JSON under [StrimziOffsetsKey](connector), the body of
// Connect's GET /connectors/{name}/offsets as Strimzi wrote it. Compare
// them with [Plan.ExpectedOffsets] by offsets.CompareReadBack, as a
// read-back over REST.
//
// Errors match [ErrInvalidField]: not a ConfigMap, no such key (Strimzi has
// not listed this connector's offsets into it yet), a ConfigMap that
// carries a plan's fingerprint annotation (a ConfigMap this package
// rendered, the alter ConfigMap: its offsets are the plan's, not what
// Connect holds), or offsets that are not a MirrorSourceConnector's (the
// error of offsets.ParseConnectOffsets inside).
func ParseStrimziOffsets(data []byte, connector string) ([]offsets.ConnectOffset, error) {
	var cm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name        string            `json:"name"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(data, &cm); err != nil {
		return nil, &FieldError{Field: "strimzi list configmap", Err: ErrInvalidField, Detail: fmt.Sprintf("not a ConfigMap in JSON (kubectl get configmap NAME -o json): %v", err)}
	}
	if cm.Kind != "ConfigMap" || cm.APIVersion != "v1" {
		return nil, &FieldError{Field: "strimzi list configmap", Err: ErrInvalidField, Detail: fmt.Sprintf("kind %q, apiVersion %q: want a v1 ConfigMap", cm.Kind, cm.APIVersion)}
	}
	if fp, ok := cm.Metadata.Annotations["mm2cutover.io/plan-fingerprint"]; ok {
		return nil, &FieldError{Field: "strimzi list configmap", Err: ErrInvalidField,
			Detail: fmt.Sprintf("ConfigMap %q holds plan %s's offsets for Strimzi to write (the alter ConfigMap): read back the one Strimzi lists the connector's offsets into", cm.Metadata.Name, fp)}
	}
	key := StrimziOffsetsKey(connector)
	body, ok := cm.Data[key]
	if !ok {
		return nil, &FieldError{Field: "strimzi list configmap", Err: ErrInvalidField,
			Detail: fmt.Sprintf("ConfigMap %q has no key %s: Strimzi has not listed the offsets of %s into it (annotate the resource with strimzi.io/connector-offsets=list and wait until the annotation is gone)", cm.Metadata.Name, key, connector)}
	}
	list, err := offsets.ParseConnectOffsets([]byte(body))
	if err != nil {
		return nil, &FieldError{Field: "strimzi list configmap", Err: ErrInvalidField, Detail: fmt.Sprintf("%s: %v", key, err)}
	}
	return list, nil
}

// dnsLabel reports whether s is a Kubernetes DNS label (RFC 1123), the form
// of a namespace's name.
func dnsLabel(s string) bool {
	return len(s) <= 63 && !strings.Contains(s, ".") && dnsSubdomain(s)
}
