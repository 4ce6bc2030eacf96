package plan

import (
	"errors"
	"fmt"
)

// ErrConfigChanged matches a *ConfigChangedError.
var ErrConfigChanged = errors.New("the connector configuration is not the plan's")

// ConfigChangedError says how a connector configuration differs from the
// one a plan was built for: another connector name or source.cluster.alias
// (offsets under another alias are accepted by Connect and never read), or
// another digest (the configuration changed since the plan, or belongs to
// another plan). The plan is valid; the connector is not the one it is for.
type ConfigChangedError struct {
	Field      string // "name", "source.cluster.alias" or "config_digest"
	Plan, Have string
}

func (e *ConfigChangedError) Error() string {
	return fmt.Sprintf("plan: %v: %s is %q, the plan's is %q", ErrConfigChanged, e.Field, e.Have, e.Plan)
}

// Is makes errors.Is(err, ErrConfigChanged) true.
func (e *ConfigChangedError) Is(target error) bool { return target == ErrConfigChanged }

// CheckConfig reports whether config — the configuration a caller is about
// to create the connector with, or the one GET /connectors/{name}/config
// returns — is the one the plan was built for: its name (when it has one)
// is the plan's connector, its source.cluster.alias (default "source") the
// plan's alias, and its digest the plan's (ConfigDigest; for a schema
// version 1 plan, the digest of the configuration as given). It returns nil
// or a *ConfigChangedError. It is pure.
func (p *Plan) CheckConfig(config map[string]string) error {
	if name, ok := config["name"]; ok && name != p.ConnectorName {
		return &ConfigChangedError{Field: "name", Plan: p.ConnectorName, Have: name}
	}
	alias, ok := config["source.cluster.alias"]
	if !ok {
		alias = mmSourceAliasDefault
	}
	if alias != p.SourceAlias {
		return &ConfigChangedError{Field: "source.cluster.alias", Plan: p.SourceAlias, Have: alias}
	}
	d := ConfigDigest(config)
	if p.SchemaVersion == 1 {
		d = configDigestV1(config)
	}
	if d != p.ConfigDigest {
		return &ConfigChangedError{Field: "config_digest", Plan: p.ConfigDigest, Have: d}
	}
	return nil
}
