package plan

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/mm2cutover/mm2cutover/internal/jsonstr"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// PatchBody returns the body of Kafka Connect's
// PATCH /connectors/{name}/offsets that applies the plan: {"offsets": [...]}
// with {"offset": M} for set entries and null for cleared ones, in plan
// order, as compact JSON with plain integers. It returns a [*BlockedError]
// while any entry is blocked.
func (p *Plan) PatchBody() ([]byte, error) {
	list, err := p.ConnectOffsets()
	if err != nil {
		return nil, err
	}
	return offsets.PatchBody(list), nil
}

// maxConfigMapData is the most data a Kubernetes ConfigMap may hold.
const maxConfigMapData = 1 << 20

// WriteStrimziConfigMap writes, as YAML, a ConfigMap named name (in
// namespace, if not empty) that holds the same {"offsets": [...]} as
// [Plan.PatchBody] under the key Strimzi reads for the plan's connector
// ([StrimziOffsetsKey]: offsets.json for a KafkaConnector,
// "<source>--<target>.MirrorSourceConnector.json" for a KafkaMirrorMaker2's
// source connector). It is for a connector whose lifecycle Strimzi owns:
// the resource names the ConfigMap in spec.alterOffsets.fromConfigMap (a
// KafkaMirrorMaker2 in its mirror's sourceConnector), the connector is
// stopped (state: stopped), and the resource is annotated with
// strimzi.io/connector-offsets=alter (a KafkaMirrorMaker2 also with
// strimzi.io/mirrormaker-connector=<the connector's name>); the comment at
// the top says the same, and [Plan.WriteStrimzi] renders the resource too.
// The ConfigMap carries the plan's fingerprint as an annotation.
//
// It returns a [*BlockedError] while any entry is blocked, a [*FieldError]
// matching [ErrInvalidField] when name is not a DNS subdomain name or
// namespace not a DNS label, or when the offsets exceed the 1 MiB a ConfigMap
// holds (then apply with PATCH instead), and the error of w. Nothing is
// written on error, except what w took before failing.
func (p *Plan) WriteStrimziConfigMap(w io.Writer, name, namespace string) error {
	if !dnsSubdomain(name) {
		return &FieldError{Field: "configmap name", Err: ErrInvalidField, Detail: fmt.Sprintf("%q is not a DNS subdomain name", name)}
	}
	if namespace != "" && !dnsLabel(namespace) {
		return &FieldError{Field: "configmap namespace", Err: ErrInvalidField, Detail: fmt.Sprintf("%q is not a DNS label", namespace)}
	}
	list, err := p.ConnectOffsets()
	if err != nil {
		return err
	}
	var data []byte
	data = append(data, "    {\n      \"offsets\": ["...)
	for i, o := range list {
		if i > 0 {
			data = append(data, ',')
		}
		data = append(data, "\n        "...)
		data = o.AppendJSON(data)
	}
	if len(list) > 0 {
		data = append(data, "\n      "...)
	}
	data = append(data, "]\n    }\n"...)
	if len(data) > maxConfigMapData {
		return &FieldError{Field: "offsets.json", Err: ErrInvalidField,
			Detail: fmt.Sprintf("%d bytes of offsets exceed the 1 MiB a ConfigMap holds; apply with PATCH /connectors/{name}/offsets instead", len(data))}
	}

	key := StrimziOffsetsKey(p.ConnectorName)
	if !configMapKey(key) {
		return &FieldError{Field: "connector_name", Err: ErrInvalidField,
			Detail: fmt.Sprintf("Strimzi keeps this connector's offsets under the ConfigMap key %q, which Kubernetes refuses (a key is made of letters, digits, '-', '_' and '.')", key)}
	}
	var b []byte
	b = append(b, "# Connect offsets for connector "...)
	b = jsonstr.Append(b, p.ConnectorName)
	b = append(b, ", plan "...)
	b = append(b, p.Fingerprint...)
	if StrimziKindOf(p.ConnectorName) == StrimziKafkaMirrorMaker2 {
		b = append(b, ".\n# Set alterOffsets.fromConfigMap.name: "...)
		b = append(b, name...)
		b = append(b, " on the KafkaMirrorMaker2's mirror's sourceConnector, stop it (state: stopped),\n"+
			"# then annotate the KafkaMirrorMaker2 with strimzi.io/connector-offsets=alter and\n# strimzi.io/mirrormaker-connector="...)
		b = append(b, strconv.Quote(p.ConnectorName)...)
		b = append(b, ".\n"...)
	} else {
		b = append(b, ".\n# Set spec.alterOffsets.fromConfigMap.name: "...)
		b = append(b, name...)
		b = append(b, " on the KafkaConnector, stop it (spec.state: stopped),\n"+
			"# then annotate it with strimzi.io/connector-offsets=alter.\n"...)
	}
	b = append(b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "...)
	b = append(b, name...)
	if namespace != "" {
		b = append(b, "\n  namespace: "...)
		b = append(b, namespace...)
	}
	b = append(b, "\n  annotations:\n    mm2cutover.io/plan-fingerprint: "...)
	b = jsonstr.Append(b, p.Fingerprint)
	b = append(b, "\n    mm2cutover.io/connector: "...)
	b = jsonstr.Append(b, p.ConnectorName)
	b = append(b, "\ndata:\n  "...)
	b = append(b, key...)
	b = append(b, ": |\n"...)
	b = append(b, data...)
	_, err = w.Write(b)
	return err
}

// configMapKey reports whether s is a valid ConfigMap data key: at most 253
// characters of [-._a-zA-Z0-9].
func configMapKey(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// dnsSubdomain reports whether s is a Kubernetes DNS subdomain name
// (RFC 1123): at most 253 characters of [a-z0-9.-], starting and ending with
// a letter or digit.
func dnsSubdomain(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
		if !alnum && (c != '-' && c != '.' || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}

// WriteSummary writes the plan for a person: the header fields, counts per
// action, the accepted losses, whether the plan can be applied, and the
// partitions that need a person's attention (blocked, or losing records),
// as rows of the table WriteTable writes; the others are counted, not
// listed. The format is for reading, not parsing. It returns the error of
// w.
func (p *Plan) WriteSummary(w io.Writer) error {
	var set, cleared, blocked int
	var lost int64
	for _, e := range p.Entries {
		switch e.Action {
		case offsets.ActionSet:
			set++
		case offsets.ActionClear:
			cleared++
		default:
			blocked++
		}
		lost += e.Lost
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "plan\t%s (schema %d, created %s, tool %s)\n", p.Fingerprint, p.SchemaVersion, p.CreatedAt.UTC().Format("2006-01-02T15:04:05Z07:00"), orNone(p.ToolVersion))
	fmt.Fprintf(tw, "connector\t%s (source.cluster.alias %s, config %s)\n", p.ConnectorName, p.SourceAlias, p.ConfigDigest)
	if p.ConnectorConfig != nil {
		fmt.Fprintf(tw, "target topics\t%s\n", p.ReplicationPolicy)
	}
	fmt.Fprintf(tw, "group\t%s\n", p.GroupID)
	fmt.Fprintf(tw, "offsets from\t%s\n", p.OffsetsFrom)
	fmt.Fprintf(tw, "clusters\tsource %s -> target %s\n", p.SourceClusterID, p.TargetClusterID)
	fmt.Fprintf(tw, "savepoint\t%s\n", orNone(p.Savepoint))
	fmt.Fprintf(tw, "partitions\t%d: %d set, %d clear, %d blocked\n", len(p.Entries), set, cleared, blocked)
	for _, a := range p.Accepted {
		fmt.Fprintf(tw, "accepted loss\t%s by %s (%s)\n", a.Partition, a.By, orNone(a.Note))
	}
	if lost > 0 {
		fmt.Fprintf(tw, "records lost\t%d, accepted\n", lost)
	}
	if blocked > 0 {
		fmt.Fprintf(tw, "applicable\tno: fix the %d blocked partitions and build a new plan\n", blocked)
	} else {
		fmt.Fprintf(tw, "applicable\tyes\n")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if blocked == 0 && lost == 0 {
		return nil
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	return p.writeRows(w, func(e Entry) bool { return e.Action == offsets.ActionBlock || e.Lost > 0 })
}

// WriteTable writes a table of every partition of the plan with its
// offsets, action and reason: a line per partition, for reading, not
// parsing (the encoded plan is for machines). It returns the error of w.
func (p *Plan) WriteTable(w io.Writer) error {
	return p.writeRows(w, func(Entry) bool { return true })
}

// writeRows writes the table's header and the entries that keep selects.
func (p *Plan) writeRows(w io.Writer, keep func(Entry) bool) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tGROUP OFFSET\tLOG START\tLOG END\tTARGET END\tACTION\tCONNECT OFFSET\tLOST\tREASON")
	for _, e := range p.Entries {
		if keep(e) {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%s\t%s\t%d\t%s\n", printable(e.Partition.Topic), e.Partition.Partition, e.GroupOffset,
				e.Bounds.Start, e.Bounds.End, e.TargetEnd, e.Action, e.Offset, e.Lost, e.Reason)
		}
	}
	return tw.Flush()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// printable returns a topic as is when it is a valid Kafka topic name and
// quoted otherwise, so that no input can break the table.
func printable(topic string) string {
	if (offsets.SourcePartition{Topic: topic}).Validate() != nil {
		return strconv.Quote(topic)
	}
	return topic
}
