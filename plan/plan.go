package plan

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/mm2cutover/mm2cutover/offsets"
)

// SchemaVersion is the version of the plan format this package writes and
// the newest it reads. Version 2 added [Plan.OffsetsFrom]; version 3 hashes
// the connector configuration with only secret keys' values redacted
// ([ConfigDigest]) and added the kind [FromFlinkSavepoint]; version 4
// records the connector configuration itself, redacted
// ([Plan.ConnectorConfig]), and the replication policy it names
// ([Plan.ReplicationPolicy]). Every older version is still read (see the
// package documentation).
const SchemaVersion = 4

// OffsetsKind names where a plan's committed offsets C came from.
type OffsetsKind string

// The inputs a plan's committed offsets can come from.
const (
	// FromGroup: the consumer group's committed offsets, read from the source
	// cluster when the plan was built. Later re-checks compare the group's
	// commits with the plan's C: any change, a commit that disappeared
	// included, refuses the plan.
	FromGroup OffsetsKind = "group"
	// FromFile: a file an operator supplied, such as the CSV that
	// kafka-consumer-groups.sh --reset-offsets --export writes. Ref is the
	// file's "sha256:" digest. Re-checks accept a group that no longer holds
	// commits (the reason to export them), and refuse commits that differ
	// from the file unless OverridesGroup.
	FromFile OffsetsKind = "file"
	// FromConnectorOffsets: another MirrorSourceConnector's stored offsets
	// M, each turned into C = M+1 (a dedicated-mode MirrorMaker 2 or a
	// connector of another name). Ref names where they were read.
	FromConnectorOffsets OffsetsKind = "connector-offsets"
	// FromFlinkSavepoint: the positions of a Flink job's KafkaSource in its
	// final savepoint (package flinksavepoint), exact where the group's
	// commits may lag it by Flink's last commit. Ref names the savepoint
	// directory, the source's uid and operator ID, the checkpoint and the
	// digest of its _metadata. Re-checks read the savepoint again and refuse
	// positions that changed, and refuse group commits past them (the job
	// ran again); a group behind them or without commits passes. Schema
	// version 3 and later.
	FromFlinkSavepoint OffsetsKind = "flink-savepoint"
)

// OffsetsSource records where a plan's committed offsets came from, so that
// the re-checks before each later step know what may have changed since.
// The zero value (Kind "") is what a schema version 1 plan decodes to: the
// source was not recorded, and re-checks treat it as [FromGroup], the
// strictest rule.
type OffsetsSource struct {
	Kind OffsetsKind
	// Ref identifies the input of a file or connector-offsets plan; empty
	// for a group plan.
	Ref string
	// OverridesGroup records that the operator chose the file's positions
	// deliberately (for example --reset-offsets --to-datetime), so the
	// group's current commits are not compared with them. Only for FromFile.
	OverridesGroup bool
}

// Plan is the migration manifest: for one consumer group moving to one
// MirrorSourceConnector, where MM2 resumes on every source partition in
// scope and why. Build it with [Build] or read it with [Decode]; the fields
// are exported for reading. A Plan changed after it was built fails
// [Plan.Validate] (its fingerprint no longer matches), so it cannot be
// encoded or applied.
type Plan struct {
	SchemaVersion int
	// CreatedAt is when the snapshot was taken, in UTC.
	CreatedAt time.Time
	// ToolVersion names the program that built the plan; may be empty.
	ToolVersion string
	// SourceClusterID and TargetClusterID are the Kafka cluster IDs the
	// snapshot was read from, so a plan cannot be applied across clusters
	// unnoticed.
	SourceClusterID string
	TargetClusterID string
	// ConnectorName is the Connect connector the offsets are for; Connect
	// keys offsets by connector name.
	ConnectorName string
	// SourceAlias is the connector's source.cluster.alias, the "cluster" of
	// every Connect source partition.
	SourceAlias string
	// ConfigDigest is ConfigDigest of the connector configuration.
	ConfigDigest string
	// ConnectorConfig is the connector configuration the plan was built
	// for, without "name" and redacted by redact.Config: the values of
	// secret keys, and every value equal to or containing a secret, are
	// redact.Redacted. So a configuration that is not the plan's is told
	// apart key by key ([Plan.CheckConfig]). Schema version 4 and later; an
	// older plan has it only after [Plan.AttachConfig].
	ConnectorConfig map[string]string
	// ReplicationPolicy is the policy ConnectorConfig names
	// ([offsets.PolicyOf]): how the plan's source topics are named on the
	// target. Schema version 4 and later, like ConnectorConfig; read it
	// with [Plan.Policy], which refuses a plan that does not record it.
	ReplicationPolicy offsets.ReplicationPolicy
	// GroupID is the consumer group whose committed offsets were converted.
	GroupID string
	// OffsetsFrom records where the committed offsets C came from.
	OffsetsFrom OffsetsSource
	// Savepoint optionally references the old Flink job's final savepoint,
	// the rollback point before MM2 starts; empty when none was given.
	Savepoint string
	// Accepted lists the recorded acceptances of expired data, sorted by
	// partition.
	Accepted []ExpiredAcceptance
	// Entries has one entry per source partition in scope, sorted by topic
	// and partition.
	Entries []Entry
	// Fingerprint is "sha256:" and the hex SHA-256 of the canonical content.
	Fingerprint string
}

// Entry is the plan for one source partition: the decision of package
// offsets (the partition, C, its log bounds, the action, the Connect offset
// M, the records lost, and for a blocked partition the reason as an error),
// the target's end offset, and the reason in words.
type Entry struct {
	// Decision is offsets.Decide's, or offsets.DecideAcceptingLoss's for a
	// partition whose loss the plan records as accepted. A plan does not
	// record the last stable offset: Bounds.StableEnd is 0. Err is set only
	// for a blocked entry.
	offsets.Decision
	// TargetEnd is the end offset of the target partition when the snapshot
	// was taken; MM2's first record for this partition lands at or after it.
	TargetEnd int64
	// Reason says, for a person, what will happen or what to fix.
	Reason string
}

// ExpiredAcceptance records that an operator accepted the loss of the
// records of a partition that retention deleted before the cutover (the
// group's committed offset is below the log start offset). MM2 then starts at
// the log start offset. It never applies to a missing or invalid offset.
type ExpiredAcceptance struct {
	Partition offsets.SourcePartition
	// By names who accepted; required.
	By string
	// Note records why, for example a ticket; may be empty.
	Note string
}

// Spec names a cutover: everything a plan records that is not a snapshot of
// offsets.
type Spec struct {
	// CreatedAt is stored in UTC; required (this package reads no clock).
	CreatedAt       time.Time
	ToolVersion     string
	SourceClusterID string
	TargetClusterID string
	ConnectorName   string
	SourceAlias     string
	// ConnectorConfig is the MirrorSourceConnector configuration, as the
	// connector is created with it (every file and override merged). The
	// plan stores its ConfigDigest, its redacted form and the replication
	// policy it names (offsets.PolicyOf: MM2's identity or default policy).
	// Its source.cluster.alias (default "source") must be SourceAlias, and
	// its name, when it has one, ConnectorName.
	ConnectorConfig map[string]string
	GroupID         string
	// OffsetsFrom says where Snapshot.Group came from; the zero value means
	// FromGroup.
	OffsetsFrom   OffsetsSource
	Savepoint     string
	AcceptExpired []ExpiredAcceptance
}

// Snapshot is the data a plan is computed from, read by the caller just
// before building.
type Snapshot struct {
	// Group holds the committed offsets C of the consumer group. Offsets of
	// topics outside Source are ignored (the group may consume more than what
	// moves); an offset for a partition of a topic in Source that Source does
	// not list is an error.
	Group offsets.GroupOffsets
	// Source lists every source partition in scope with its log bounds. It
	// defines the scope: every partition of every topic that moves. Only
	// Start and End are used; StableEnd is ignored.
	Source map[offsets.SourcePartition]offsets.LogBounds
	// TargetEnd holds the end offset of each target partition, one for every
	// partition in Source.
	TargetEnd map[offsets.SourcePartition]int64
}

// Build computes the plan for spec from snap: one entry per partition of
// snap.Source, sorted, each decided by [offsets.Decide] (or
// [offsets.DecideAcceptingLoss] when spec records an acceptance for it), and
// the fingerprint. Blocked partitions do not make Build fail: they are in the
// plan with their reasons, and the plan is not applicable. Build returns an
// error only for input that cannot make a plan: a [*FieldError] for a missing
// or contradictory spec field or an empty scope, a [*PartitionError] for an
// offset or acceptance naming a partition outside the scope
// ([ErrUnknownPartition]), a missing or negative target end offset, or an
// acceptance listed twice or without a name. A configuration whose
// replication policy offsets.PolicyOf refuses is a *FieldError of field
// "replication_policy" that also matches [offsets.ErrInvalidPolicy].
func Build(spec Spec, snap Snapshot) (*Plan, error) {
	if err := checkSpec(spec); err != nil {
		return nil, err
	}
	from := spec.OffsetsFrom
	if from.Kind == "" {
		from.Kind = FromGroup
	}
	if err := from.validate(SchemaVersion); err != nil {
		return nil, err
	}
	config, policy, err := recordConfig(spec.ConnectorConfig)
	if err != nil {
		return nil, err
	}
	if len(snap.Source) == 0 {
		return nil, &FieldError{Field: "partitions", Err: ErrNoPartitions}
	}
	type part struct {
		p offsets.SourcePartition
		b offsets.LogBounds
	}
	parts := make([]part, 0, len(snap.Source))
	topics := make(map[string]bool)
	for p, b := range snap.Source {
		parts = append(parts, part{p, b})
		topics[p.Topic] = true
	}
	slices.SortFunc(parts, func(a, b part) int { return a.p.Compare(b.p) })

	// One lookup per partition in each input map. A key of Group or
	// TargetEnd outside Source can only exist when fewer keys matched than
	// the map holds; only then is the map searched for one.
	entries := make([]Entry, len(parts))
	groupMatched, targetMatched := 0, 0
	badTarget := -1 // the first partition without a usable target end offset
	for i, pt := range parts {
		e := &entries[i]
		e.Partition, e.Bounds = pt.p, offsets.LogBounds{Start: pt.b.Start, End: pt.b.End}
		if c, ok := snap.Group[pt.p]; ok {
			e.GroupOffset = offsets.NewGroupOffset(c)
			groupMatched++
		}
		te, ok := snap.TargetEnd[pt.p]
		if ok {
			targetMatched++
		}
		if (!ok || te < 0) && badTarget < 0 {
			badTarget = i
		}
		e.TargetEnd = te
	}
	if len(snap.Group) != groupMatched {
		if err := outOfScope(topics, snap.Source, snap.Group, "group offset"); err != nil {
			return nil, err
		}
	}
	if len(snap.TargetEnd) != targetMatched {
		if err := outOfScope(topics, snap.Source, snap.TargetEnd, "target end offset"); err != nil {
			return nil, err
		}
	}

	accepted := slices.Clone(spec.AcceptExpired)
	slices.SortFunc(accepted, compareAcceptances)
	acceptedSet := make(map[offsets.SourcePartition]bool, len(accepted))
	for _, a := range accepted {
		if err := checkAcceptance(a, acceptedSet, func(p offsets.SourcePartition) bool { _, ok := snap.Source[p]; return ok }); err != nil {
			return nil, err
		}
		acceptedSet[a.Partition] = true
	}

	if badTarget >= 0 {
		e := entries[badTarget]
		if _, ok := snap.TargetEnd[e.Partition]; !ok {
			return nil, &PartitionError{Partition: e.Partition, Err: ErrMissingTargetEnd}
		}
		return nil, &PartitionError{Partition: e.Partition, Err: &offsets.OffsetError{Offset: e.TargetEnd, Err: offsets.ErrNegative}, Detail: "target end offset"}
	}
	for i := range entries {
		e := &entries[i]
		e.Decision = decide(e.Partition, e.GroupOffset, e.Bounds, len(acceptedSet) > 0 && acceptedSet[e.Partition])
		e.Reason = e.Decision.Reason()
	}

	p := &Plan{
		SchemaVersion:     SchemaVersion,
		CreatedAt:         spec.CreatedAt.UTC().Round(0),
		ToolVersion:       spec.ToolVersion,
		SourceClusterID:   spec.SourceClusterID,
		TargetClusterID:   spec.TargetClusterID,
		ConnectorName:     spec.ConnectorName,
		SourceAlias:       spec.SourceAlias,
		ConfigDigest:      ConfigDigest(spec.ConnectorConfig),
		ConnectorConfig:   config,
		ReplicationPolicy: policy,
		GroupID:           spec.GroupID,
		OffsetsFrom:       from,
		Savepoint:         spec.Savepoint,
		Accepted:          accepted,
		Entries:           entries,
	}
	p.Fingerprint = p.computeFingerprint()
	return p, nil
}

func decide(p offsets.SourcePartition, c offsets.GroupOffset, b offsets.LogBounds, accepted bool) offsets.Decision {
	if accepted {
		return offsets.DecideAcceptingLoss(p, c, b)
	}
	return offsets.Decide(p, c, b)
}

// String says where the offsets came from, for a person: "group",
// "file sha256:…", "file sha256:… (overrides the group's commits)",
// "connector-offsets <ref>", "flink-savepoint <ref>", or "not recorded
// (schema version 1)".
func (o OffsetsSource) String() string {
	switch {
	case o.Kind == "":
		return "not recorded (schema version 1)"
	case o.Ref == "":
		return string(o.Kind)
	case o.OverridesGroup:
		return string(o.Kind) + " " + o.Ref + " (overrides the group's commits)"
	}
	return string(o.Kind) + " " + o.Ref
}

// validate checks the source against the plan's schema version: version 1
// records none; version 2 records a known kind, a reference exactly for the
// kinds that have one, and OverridesGroup only for a file.
func (o OffsetsSource) validate(version int) error {
	bad := func(detail string) error {
		return &FieldError{Field: "offsets_from", Err: ErrInvalidField, Detail: detail}
	}
	if version == 1 {
		if o != (OffsetsSource{}) {
			return bad("schema version 1 records no offsets source")
		}
		return nil
	}
	switch o.Kind {
	case FromGroup:
		if o.Ref != "" {
			return bad("a group source has no ref")
		}
	case FromFlinkSavepoint:
		if version < 3 {
			return bad("kind flink-savepoint needs schema version 3")
		}
		if o.Ref == "" {
			return bad(string(o.Kind) + " source needs a ref naming the input")
		}
	case FromFile, FromConnectorOffsets:
		if o.Ref == "" {
			return bad(string(o.Kind) + " source needs a ref naming the input")
		}
	case "":
		return &FieldError{Field: "offsets_from", Err: ErrMissingField, Detail: "kind"}
	default:
		return bad("unknown kind " + strconv.Quote(string(o.Kind)))
	}
	if o.OverridesGroup && o.Kind != FromFile {
		return bad("only a file source can override the group")
	}
	return nil
}

func checkSpec(s Spec) error {
	for _, f := range []struct{ name, v string }{
		{"source_cluster_id", s.SourceClusterID},
		{"target_cluster_id", s.TargetClusterID},
		{"connector_name", s.ConnectorName},
		{"source_alias", s.SourceAlias},
		{"group_id", s.GroupID},
	} {
		if f.v == "" {
			return &FieldError{Field: f.name, Err: ErrMissingField}
		}
	}
	if s.CreatedAt.IsZero() {
		return &FieldError{Field: "created_at", Err: ErrMissingField}
	}
	if len(s.ConnectorConfig) == 0 {
		return &FieldError{Field: "config_digest", Err: ErrMissingField, Detail: "no connector config given"}
	}
	if alias := offsets.SourceAliasOf(s.ConnectorConfig); alias != s.SourceAlias {
		return &FieldError{Field: "source_alias", Err: ErrConfigMismatch,
			Detail: "connector config has source.cluster.alias " + strconv.Quote(alias) + "; offsets under " + strconv.Quote(s.SourceAlias) + " would be accepted by Connect and never read"}
	}
	if name, ok := s.ConnectorConfig["name"]; ok && name != s.ConnectorName {
		return &FieldError{Field: "connector_name", Err: ErrConfigMismatch, Detail: "connector config has name " + strconv.Quote(name)}
	}
	return nil
}

// outOfScope reports a key of m that belongs to a topic in scope but is not a
// partition in source: the partition count of the snapshot disagrees.
func outOfScope[V any](topics map[string]bool, source map[offsets.SourcePartition]offsets.LogBounds, m map[offsets.SourcePartition]V, what string) error {
	var bad []offsets.SourcePartition
	for p := range m {
		if _, ok := source[p]; !ok && topics[p.Topic] {
			bad = append(bad, p)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	p := slices.MinFunc(bad, offsets.SourcePartition.Compare)
	return &PartitionError{Partition: p, Err: ErrUnknownPartition, Detail: what + " for a partition the source topic does not have"}
}

func checkAcceptance(a ExpiredAcceptance, seen map[offsets.SourcePartition]bool, in func(offsets.SourcePartition) bool) error {
	if seen[a.Partition] {
		return &PartitionError{Partition: a.Partition, Err: ErrDuplicatePartition, Detail: "expired data accepted twice"}
	}
	if !in(a.Partition) {
		return &PartitionError{Partition: a.Partition, Err: ErrUnknownPartition, Detail: "expired data accepted for a partition outside the plan"}
	}
	if a.By == "" {
		return &PartitionError{Partition: a.Partition, Err: ErrMissingField, Detail: "acceptance of expired data names nobody"}
	}
	return nil
}

func compareAcceptances(a, b ExpiredAcceptance) int {
	return cmp.Or(a.Partition.Compare(b.Partition), cmp.Compare(a.By, b.By), cmp.Compare(a.Note, b.Note))
}

// Applicable reports whether no entry is blocked, so that the plan may be
// applied to Connect.
func (p *Plan) Applicable() bool {
	for i := range p.Entries {
		if p.Entries[i].Action == offsets.ActionBlock {
			return false
		}
	}
	return true
}

// Blocked returns nil when the plan is applicable, and otherwise a
// [*BlockedError] listing the blocked entries in plan order.
func (p *Plan) Blocked() error {
	var blocked []Entry
	for _, e := range p.Entries {
		if e.Action == offsets.ActionBlock {
			blocked = append(blocked, e)
		}
	}
	if blocked == nil {
		return nil
	}
	return &BlockedError{Entries: blocked}
}

// ConnectOffsets returns the entries to send in Connect's
// PATCH /connectors/{name}/offsets, in plan order: {"offset": M} for set
// entries and null for cleared ones, all under the plan's source alias. It
// first refuses what [Plan.Validate] refuses (a plan edited in memory after
// Build or Decode, or one never built: its error), so that nothing derived
// from it (ExpectedOffsets, Guard, PatchBody) patches or compares offsets
// the plan's fingerprint does not vouch for. It returns a [*BlockedError]
// while any entry is blocked.
func (p *Plan) ConnectOffsets() ([]offsets.ConnectOffset, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := p.Blocked(); err != nil {
		return nil, err
	}
	out := make([]offsets.ConnectOffset, 0, len(p.Entries))
	for _, e := range p.Entries {
		out = append(out, offsets.ConnectOffset{Partition: e.Partition.Connect(p.SourceAlias), Offset: e.Offset})
	}
	return out, nil
}

// ExpectedOffsets returns, in plan order, what Connect's
// GET /connectors/{name}/offsets lists once the plan is applied and before
// MM2 runs: one entry per set partition. Cleared partitions are not listed,
// because Connect drops a partition whose offset was deleted. GET returns its
// entries in arbitrary order: compare as sets. It returns a [*BlockedError]
// while any entry is blocked.
func (p *Plan) ExpectedOffsets() ([]offsets.ConnectOffset, error) {
	all, err := p.ConnectOffsets()
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(o offsets.ConnectOffset) bool { return !o.Offset.Present() }), nil
}

// Lookup returns the entry for a source partition, and false when the
// partition is not in the plan.
func (p *Plan) Lookup(sp offsets.SourcePartition) (Entry, bool) {
	i, ok := slices.BinarySearchFunc(p.Entries, sp, func(e Entry, t offsets.SourcePartition) int { return e.Partition.Compare(t) })
	if !ok {
		return Entry{}, false
	}
	return p.Entries[i], true
}
