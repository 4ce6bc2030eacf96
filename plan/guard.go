package plan

import (
	"fmt"

	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// ErrConfigChanged matches a *ConfigChangedError.
var ErrConfigChanged = errkind.New(errkind.Refused, "plan: the connector configuration is not the plan's")

// ConfigChangedError says how a connector configuration differs from the
// one a plan was built for: another connector name or source.cluster.alias
// (offsets under another alias are accepted by Connect and never read), or
// another digest (the configuration changed since the plan, or belongs to
// another plan). The plan is valid; the connector is not the one it is for.
type ConfigChangedError struct {
	Field      string // "name", "source.cluster.alias" or "config_digest"
	Plan, Have string
	// Differences lists, for a plan that records its configuration
	// (schema version 4, or one given it by AttachConfig), the keys whose
	// values differ, sorted by key. It may be empty for a digest that
	// differs only in a value redaction hides.
	Differences []ConfigDifference
}

func (e *ConfigChangedError) Error() string {
	msg := fmt.Sprintf("plan: %s: %s is %q, the plan's is %q", words(ErrConfigChanged), e.Field, e.Have, e.Plan)
	if len(e.Differences) > 0 {
		msg += "; it differs in " + formatDifferences(e.Differences)
	}
	return msg
}

// Is makes errors.Is(err, ErrConfigChanged) true.
func (e *ConfigChangedError) Is(target error) bool { return target == ErrConfigChanged }

// ErrorKind is errkind.Refused.
func (e *ConfigChangedError) ErrorKind() errkind.Kind { return errkind.Refused }

// CheckConfig reports whether config — the configuration a caller is about
// to create the connector with, or the one GET /connectors/{name}/config
// returns — is the one the plan was built for: its name (when it has one)
// is the plan's connector, its source.cluster.alias (default "source") the
// plan's alias, and its digest the plan's (ConfigDigest; for a schema
// version 1 or 2 plan, the digest rule of that version). It returns nil
// or a *ConfigChangedError, which names the keys that differ when the plan
// records its configuration. It is pure.
func (p *Plan) CheckConfig(config map[string]string) error {
	if name, ok := config["name"]; ok && name != p.ConnectorName {
		return &ConfigChangedError{Field: "name", Plan: p.ConnectorName, Have: name}
	}
	if alias := offsets.SourceAliasOf(config); alias != p.SourceAlias {
		return &ConfigChangedError{Field: "source.cluster.alias", Plan: p.SourceAlias, Have: alias}
	}
	if d := configDigestOf(p.SchemaVersion, config); d != p.ConfigDigest {
		e := &ConfigChangedError{Field: "config_digest", Plan: p.ConfigDigest, Have: d}
		if p.ConnectorConfig != nil {
			e.Differences = configDifferences(p.ConnectorConfig, config)
		}
		return e
	}
	return nil
}

// GuardAction is what the guard before an apply decided.
type GuardAction int

const (
	// GuardApply: the connector holds no offset that the plan does not set
	// to the same value; applying the plan is safe (a fresh connector, or a
	// plan partly applied before).
	GuardApply GuardAction = iota + 1
	// GuardAlreadyApplied: the connector holds exactly the plan's offsets;
	// there is nothing to do (a retried Job, a repeated command).
	GuardAlreadyApplied
)

func (a GuardAction) String() string {
	switch a {
	case GuardApply:
		return "apply"
	case GuardAlreadyApplied:
		return "already-applied"
	}
	return fmt.Sprintf("GuardAction(%d)", int(a))
}

// ErrStaleOffsets matches a *StaleOffsetsError.
var ErrStaleOffsets = errkind.New(errkind.Refused, "plan: the connector holds offsets the plan does not set")

// StaleOffsetsError is the guard's refusal: the connector's existing
// offsets differ from the plan, so it has run since the plan was made,
// another plan was applied, or an earlier connector of the same name left
// them (Connect keeps offsets after a connector is deleted). Re-applying
// the plan would rewind or skip records: build a new plan, or reset the
// connector's offsets if they are leftovers.
type StaleOffsetsError struct {
	ReadBack offsets.ReadBack
}

func (e *StaleOffsetsError) Error() string {
	return "plan: " + words(ErrStaleOffsets) + ": " + e.ReadBack.String()
}

// Is makes errors.Is(err, ErrStaleOffsets) true.
func (e *StaleOffsetsError) Is(target error) bool { return target == ErrStaleOffsets }

// ErrorKind is errkind.Refused.
func (e *StaleOffsetsError) ErrorKind() errkind.Kind { return errkind.Refused }

// Advice says what to do about leftover or foreign offsets.
func (e *StaleOffsetsError) Advice() string {
	return "build a new plan from where the old job and the connector are now, or, if the offsets are leftovers of an earlier connector of this name, reset them (DELETE /connectors/{name}/offsets while it is STOPPED)"
}

// Guard decides, before the plan is applied, from the offsets the
// connector already holds (as GET /connectors/{name}/offsets lists them):
//
//   - exactly the plan's expected offsets: GuardAlreadyApplied;
//   - only offsets the plan sets, to the same values: GuardApply;
//   - anything else: a *StaleOffsetsError, and no action.
//
// It returns a *BlockedError for a plan with blocked entries. It is pure.
func (p *Plan) Guard(existing []offsets.ConnectOffset) (GuardAction, error) {
	want, err := p.ExpectedOffsets()
	if err != nil {
		return 0, err
	}
	rb := offsets.CompareReadBack(want, existing)
	if rb.OK() {
		return GuardAlreadyApplied, nil
	}
	if rb.Count(offsets.WrongValue) == 0 && rb.Count(offsets.Unexpected) == 0 {
		return GuardApply, nil
	}
	return 0, &StaleOffsetsError{ReadBack: rb}
}

// ReverseOffsets is the reverse of a forward plan that MirrorMaker 2 ran
// with: for each partition, the group offset C' = M'+1 from got, the
// connector's offsets M' read after it stopped (offsets.Reverse), and for a
// partition where MM2 stored nothing, the plan's own C (it replicated
// nothing there, so the old job continues where it stopped). Offsets of
// partitions the plan does not have (a connector whose topics match more)
// are left out: the old job reads the plan's partitions. An offset under
// another alias is an error (offsets.ErrAliasMismatch). It is pure.
func (p *Plan) ReverseOffsets(got []offsets.ConnectOffset) (offsets.GroupOffsets, error) {
	reverse, err := offsets.Reverse(p.SourceAlias, got)
	if err != nil {
		return nil, err
	}
	in := make(map[offsets.SourcePartition]bool, len(p.Entries))
	for _, e := range p.Entries {
		in[e.Partition] = true
		if _, ok := reverse[e.Partition]; !ok {
			if c, ok := e.GroupOffset.Get(); ok {
				reverse[e.Partition] = c
			}
		}
	}
	for tp := range reverse {
		if !in[tp] {
			delete(reverse, tp)
		}
	}
	return reverse, nil
}
