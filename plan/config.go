package plan

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/redact"
)

// ErrConfigNotRecorded: the plan records no connector configuration and
// replication policy (schema version 1 to 3, which recorded only a digest)
// and none was attached with [Plan.AttachConfig]. It matches [ErrInvalid].
var ErrConfigNotRecorded error = invalid("plan: the plan records no connector configuration")

// recordConfig returns what a plan records of a connector configuration:
// its redacted form without "name", and the replication policy it names.
// The policy is read from the configuration as given; a policy setting
// that redaction hides (a value equal to a secret) would make the record
// contradict itself, so it is refused.
func recordConfig(config map[string]string) (map[string]string, offsets.ReplicationPolicy, error) {
	policy, err := offsets.PolicyOf(config)
	if err != nil {
		return nil, offsets.ReplicationPolicy{}, &FieldError{Field: "replication_policy", Err: ErrInvalidField, Detail: err.Error(), cause: err}
	}
	rec := recordedForm(config)
	if p, err := offsets.PolicyOf(rec); err != nil || p != policy {
		return nil, offsets.ReplicationPolicy{}, &FieldError{Field: "replication_policy", Err: ErrInvalidField,
			Detail: "a replication policy setting (source.cluster.alias, replication.policy.class or replication.policy.separator) equals a secret value and would be redacted"}
	}
	return rec, policy, nil
}

// recordedForm is the form a plan records a configuration in: redacted by
// redact.Config, without "name" (the plan records it as connector_name).
func recordedForm(config map[string]string) map[string]string {
	rec := redact.Config(config)
	delete(rec, "name")
	return rec
}

// Policy returns the replication policy the plan records: how its source
// topics are named on the target, as its connector configuration names
// them. A plan of schema version 1 to 3 records none: Policy then returns
// [ErrConfigNotRecorded] until [Plan.AttachConfig] gave it the
// configuration it was built for.
func (p *Plan) Policy() (offsets.ReplicationPolicy, error) {
	if p.ConnectorConfig == nil {
		return offsets.ReplicationPolicy{}, &FieldError{Field: "connector_config", Err: ErrConfigNotRecorded,
			Detail: "schema version " + strconv.Itoa(p.SchemaVersion) + " records only a digest; attach the configuration the plan was built for (Plan.AttachConfig) or build a new plan"}
	}
	return p.ReplicationPolicy, nil
}

// AttachConfig checks config against the plan ([Plan.CheckConfig]) and,
// for a plan of schema version 1 to 3, which records only the
// configuration's digest, then records its redacted form and replication
// policy in the plan as [Build] does for version 4, so that the steps that
// need them ([Plan.Policy]) can run. The fingerprint of such a plan does
// not cover what was attached, and [Plan.Encode] does not write it. For a
// version 4 plan it only checks. It returns the error of CheckConfig, or
// the *FieldError of a policy [offsets.PolicyOf] refuses.
func (p *Plan) AttachConfig(config map[string]string) error {
	if err := p.CheckConfig(config); err != nil {
		return err
	}
	if p.SchemaVersion >= 4 {
		return nil
	}
	rec, policy, err := recordConfig(config)
	if err != nil {
		return err
	}
	p.ConnectorConfig, p.ReplicationPolicy = rec, policy
	return nil
}

// ConfigDifference is one key in which a connector configuration differs
// from the one a plan records. Values are as redact.Config shows them (a
// secret is redact.Redacted on both sides, so a password rotation never
// shows); a key absent on one side has InPlan or InConfig false.
type ConfigDifference struct {
	Key              string
	Plan, Config     string
	InPlan, InConfig bool
}

func (d ConfigDifference) String() string {
	side := func(v string, ok bool) string {
		if !ok {
			return "absent"
		}
		return strconv.Quote(v)
	}
	return d.Key + " (plan " + side(d.Plan, d.InPlan) + ", now " + side(d.Config, d.InConfig) + ")"
}

// configDifferences lists, sorted by key, the keys in which config differs
// from recorded, both compared as recordConfig records them.
func configDifferences(recorded, config map[string]string) []ConfigDifference {
	have := recordedForm(withoutClaim(config))
	keys := slices.AppendSeq(slices.Collect(maps.Keys(recorded)), maps.Keys(have))
	slices.Sort(keys)
	var out []ConfigDifference
	for _, k := range slices.Compact(keys) {
		pv, inPlan := recorded[k]
		hv, inHave := have[k]
		if pv != hv || inPlan != inHave {
			out = append(out, ConfigDifference{Key: k, Plan: pv, Config: hv, InPlan: inPlan, InConfig: inHave})
		}
	}
	return out
}

func formatDifferences(ds []ConfigDifference) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return strings.Join(parts, ", ")
}
