package offsets

import (
	"fmt"
	"strings"

	"github.com/mm2cutover/mm2cutover/errkind"
)

// PolicyKind names a MirrorMaker 2 replication policy
// (replication.policy.class).
type PolicyKind string

// The replication policies MirrorMaker 2 ships.
const (
	// IdentityPolicy is IdentityReplicationPolicy: a source topic keeps its
	// name on the target, as a Flink job copying topic to topic did. It is
	// what the zero ReplicationPolicy means.
	IdentityPolicy PolicyKind = "identity"
	// DefaultPolicy is DefaultReplicationPolicy, MM2's own default: a source
	// topic t becomes "<source alias><separator>t" on the target, "source.t"
	// by default.
	DefaultPolicy PolicyKind = "default"
)

// Class names of the replication policies, as replication.policy.class
// takes them.
const (
	IdentityPolicyClass = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
	DefaultPolicyClass  = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
)

// MirrorMaker 2's default cluster aliases (source.cluster.alias,
// target.cluster.alias).
const (
	DefaultSourceAlias = "source"
	DefaultTargetAlias = "target"
)

// SourceAliasOf returns the source.cluster.alias a MirrorSourceConnector
// with this configuration runs with, the "cluster" of every source
// partition it stores an offset for: the value trimmed, as Kafka's
// ConfigDef parses a STRING, or DefaultSourceAlias when the key is absent.
// A key present with an empty value is the empty alias: Kafka falls back
// to the default only for a missing key.
func SourceAliasOf(config map[string]string) string {
	return aliasOf(config, "source.cluster.alias", DefaultSourceAlias)
}

// TargetAliasOf returns the target.cluster.alias of the configuration, by
// the rule of SourceAliasOf.
func TargetAliasOf(config map[string]string) string {
	return aliasOf(config, "target.cluster.alias", DefaultTargetAlias)
}

func aliasOf(config map[string]string, key, def string) string {
	v, ok := config[key]
	if !ok {
		return def
	}
	return strings.TrimSpace(v)
}

// PolicyOf returns the replication policy a MirrorSourceConnector
// configuration names, as MM2 reads it: replication.policy.class (default
// DefaultReplicationPolicy), replication.policy.separator (default ".") and
// source.cluster.alias (default "source"), values trimmed as Kafka's
// ConfigDef trims them. The identity policy ignores the separator and the
// alias for topic names. A separator equal to "." is returned as "".
//
// Errors, matching [ErrInvalidPolicy]: a class other than MM2's
// IdentityReplicationPolicy and DefaultReplicationPolicy (the cutover
// cannot tell which topics another policy writes), an empty separator, or
// a policy [ReplicationPolicy.Validate] refuses.
func PolicyOf(config map[string]string) (ReplicationPolicy, error) {
	class := strings.TrimSpace(config["replication.policy.class"])
	switch class {
	case IdentityPolicyClass:
		return ReplicationPolicy{Kind: IdentityPolicy}, nil
	case "", DefaultPolicyClass:
	default:
		return ReplicationPolicy{}, fmt.Errorf("%w: replication.policy.class %s: the cutover names target topics only under %s or %s",
			ErrInvalidPolicy, class, IdentityPolicyClass, DefaultPolicyClass)
	}
	p := ReplicationPolicy{Kind: DefaultPolicy, SourceAlias: SourceAliasOf(config)}
	if sep, ok := config["replication.policy.separator"]; ok {
		switch sep = strings.TrimSpace(sep); sep {
		case "":
			return ReplicationPolicy{}, fmt.Errorf("%w: replication.policy.separator is empty", ErrInvalidPolicy)
		case ".":
		default:
			p.Separator = sep
		}
	}
	return p, p.Validate()
}

// ErrInvalidPolicy: a replication policy that cannot name target topics.
var ErrInvalidPolicy = errkind.New(errkind.Rejected, "offsets: invalid replication policy")

// ReplicationPolicy maps source topic names to target topic names as
// MirrorMaker 2 does. The zero value is the identity policy.
type ReplicationPolicy struct {
	Kind PolicyKind `json:"kind"`
	// SourceAlias is source.cluster.alias; required by DefaultPolicy.
	SourceAlias string `json:"source_alias,omitempty"`
	// Separator is replication.policy.separator. Empty means ".".
	Separator string `json:"separator,omitempty"`
}

// Validate reports a policy that cannot name target topics: an unknown
// kind, or a default policy without a source alias or whose alias holds the
// separator. The error matches [ErrInvalidPolicy].
func (p ReplicationPolicy) Validate() error {
	switch p.Kind {
	case IdentityPolicy, "":
		return nil
	case DefaultPolicy:
		if p.SourceAlias == "" {
			return fmt.Errorf("%w: the default policy needs a source alias", ErrInvalidPolicy)
		}
		if strings.Contains(p.SourceAlias, p.separator()) {
			return fmt.Errorf("%w: source alias %q contains the separator %q", ErrInvalidPolicy, p.SourceAlias, p.separator())
		}
		return nil
	}
	return fmt.Errorf("%w: unknown kind %q", ErrInvalidPolicy, string(p.Kind))
}

func (p ReplicationPolicy) separator() string {
	if p.Separator == "" {
		return "."
	}
	return p.Separator
}

// Same reports whether p and q name every target topic alike: both
// identity (the zero value included), or both the default policy with the
// same source alias and separator ("" and "." alike).
func (p ReplicationPolicy) Same(q ReplicationPolicy) bool {
	identity := func(p ReplicationPolicy) bool { return p.Kind == "" || p.Kind == IdentityPolicy }
	if identity(p) || identity(q) {
		return identity(p) && identity(q)
	}
	return p.Kind == q.Kind && p.SourceAlias == q.SourceAlias && p.separator() == q.separator()
}

// TargetTopic returns the target topic name of a source topic, or the
// error of Validate.
func (p ReplicationPolicy) TargetTopic(source string) (string, error) {
	if err := p.Validate(); err != nil {
		return "", err
	}
	if p.Kind == DefaultPolicy {
		return p.SourceAlias + p.separator() + source, nil
	}
	return source, nil
}

// String says how the policy names target topics, for a person: "<topic>
// (IdentityReplicationPolicy)" or "source.<topic>
// (DefaultReplicationPolicy)".
func (p ReplicationPolicy) String() string {
	if p.Kind == DefaultPolicy {
		return p.SourceAlias + p.separator() + "<topic> (DefaultReplicationPolicy)"
	}
	if p.Kind == IdentityPolicy || p.Kind == "" {
		return "<topic> (IdentityReplicationPolicy)"
	}
	return "unknown policy " + string(p.Kind)
}

// Class returns the policy's replication.policy.class.
func (p ReplicationPolicy) Class() string {
	if p.Kind == DefaultPolicy {
		return DefaultPolicyClass
	}
	return IdentityPolicyClass
}
