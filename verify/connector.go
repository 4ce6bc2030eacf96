package verify

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// ErrForeignConnector matches a *ForeignConnectorError.
var ErrForeignConnector = errkind.New(errkind.Refused, "verify: the connector is not the plan's")

// ForeignConnectorError is the refusal of [CheckConnector]: the connector a
// step is about to write is not the one the plan is for. It carries the
// plan's connector name but replicates other topics, from another alias,
// with another configuration — another team's flow, another plan's
// connector, or the plan's own connector reconfigured since — or the plan
// is for other clusters than those the step reaches. Creating, altering,
// resuming, stopping, resetting or deleting it, or committing its offsets to
// a group, would change replication that is not the plan's.
type ForeignConnectorError struct {
	// Connector is the connector's name.
	Connector string
	// Check names what differs: "name" (the plan is for another
	// connector), "source-cluster" or "target-cluster" (the plan was built
	// on other clusters), "config" (the worker has no configuration for
	// it), "source.cluster.alias", "topics" (it does not replicate every
	// topic of the plan), "config_digest" (any other key or value) or
	// "plan" (an apply of another plan created it: CheckClaim).
	Check string
	// Plan and Have are the plan's value and the connector's (or the
	// cluster's) of what Check names; digests for "config_digest".
	Plan, Have string
	// Topics is the connector's "topics" setting, "" when unknown: what it
	// replicates, for the operator who has to find its owner.
	Topics string
	// Err is the *plan.ConfigChangedError behind a "name",
	// "source.cluster.alias" or "config_digest" difference; nil otherwise.
	Err error
}

func (e *ForeignConnectorError) Error() string {
	s := fmt.Sprintf("verify: connector %q is not the plan's: its %s is %q, the plan's is %q", e.Connector, e.Check, e.Have, e.Plan)
	switch e.Check {
	case "source-cluster", "target-cluster":
		s = fmt.Sprintf("verify: the plan for connector %q was built on %s %q, the step reaches %q", e.Connector, strings.TrimSuffix(e.Check, "-cluster")+" cluster", e.Plan, e.Have)
	case "config":
		s = fmt.Sprintf("verify: connector %q has no configuration to compare with the plan's", e.Connector)
	case "plan":
		s = fmt.Sprintf("verify: connector %q was created by the apply of another plan (claim %s; this plan's is %s): apply that plan, or roll the connector back with it (before resume) and apply this plan again", e.Connector, e.Have, e.Plan)
	}
	if e.Topics != "" {
		s += fmt.Sprintf(" (it replicates topics %q)", e.Topics)
	}
	return s + ": nothing was written to it"
}

// Is makes errors.Is(err, ErrForeignConnector) true.
func (e *ForeignConnectorError) Is(target error) bool { return target == ErrForeignConnector }

// Unwrap returns the *plan.ConfigChangedError behind the refusal, if any.
func (e *ForeignConnectorError) Unwrap() error { return e.Err }

// ErrorKind is errkind.Refused: the connector is another flow's.
func (e *ForeignConnectorError) ErrorKind() errkind.Kind { return errkind.Refused }

// Advice says what to do about a connector that is not the plan's.
func (e *ForeignConnectorError) Advice() string {
	if e.Check == "source-cluster" || e.Check == "target-cluster" {
		return "use the settings of the clusters the plan was built on, or build a new plan on these"
	}
	return "the connector of this name belongs to another flow or plan, or was reconfigured after the plan: " +
		"leave it alone and build the plan for a connector name nobody uses; " +
		"if it is yours and was changed by hand, restore the configuration the plan was built with"
}

// Clusters names, by cluster ID, the Kafka clusters a step's clients reach,
// for the pure checks; a write takes a [Reached], which only a read makes.
type Clusters struct {
	Source, Target string
}

// ConnectorFacts is what tells whether a connector is the plan's: its name,
// its configuration as the worker holds it, and the clusters the step that
// would write it reaches.
type ConnectorFacts struct {
	// Name is the connector the step writes.
	Name string
	// Config is GET /connectors/{name}/config.
	Config map[string]string
	// Clusters are the cluster IDs the step's Kafka clients read; both are
	// required.
	Clusters Clusters
	// WorkerVersion is the Kafka version of the Connect worker (GET /),
	// which decides MirrorMaker 2's default topics.exclude
	// (connect.NewTopicFilter); empty reads it as below 4.0, whose default
	// excludes more: a refusal at worst, never a write.
	WorkerVersion string
}

// CheckConnector decides whether the connector described by f is the one
// plan p is for, before any step writes it (creates, alters its offsets,
// resumes, stops, resets or deletes it, or commits its offsets to a group):
// its name is the plan's; the clusters reached are the plan's; its
// configuration sets the plan's source.cluster.alias, replicates every
// topic of the plan (its "topics" and "topics.exclude", read as
// MirrorMaker 2 does), and has the plan's configuration digest
// ([plan.Plan.CheckConfig]). It returns nil or a *ForeignConnectorError
// naming the first difference, in that order. It is pure.
func CheckConnector(p *plan.Plan, f ConnectorFacts) error {
	refuse := func(check, want, have string, err error) error {
		return &ForeignConnectorError{Connector: f.Name, Check: check, Plan: want, Have: have, Topics: f.Config["topics"], Err: err}
	}
	if f.Name != p.ConnectorName {
		return refuse("name", p.ConnectorName, f.Name, nil)
	}
	if f.Clusters.Source != p.SourceClusterID {
		return refuse("source-cluster", p.SourceClusterID, f.Clusters.Source, nil)
	}
	if f.Clusters.Target != p.TargetClusterID {
		return refuse("target-cluster", p.TargetClusterID, f.Clusters.Target, nil)
	}
	if len(f.Config) == 0 {
		return refuse("config", "", "", nil)
	}
	if alias := offsets.SourceAliasOf(f.Config); alias != p.SourceAlias {
		return refuse("source.cluster.alias", p.SourceAlias, alias, nil)
	}
	filter, ferr := connect.NewTopicFilter(f.Config, f.WorkerVersion)
	for _, topic := range planTopics(p) {
		if ferr != nil || !filter.Covers(topic) {
			return refuse("topics", strings.Join(planTopics(p), ","), f.Config["topics"], nil)
		}
	}
	if err := p.CheckConfig(f.Config); err != nil {
		var changed *plan.ConfigChangedError
		if errors.As(err, &changed) {
			return refuse(changed.Field, changed.Plan, changed.Have, err)
		}
		return refuse("config_digest", p.ConfigDigest, "", err)
	}
	return nil
}

// planTopics returns the plan's source topics in plan order (sorted).
func planTopics(p *plan.Plan) []string {
	var topics []string
	for _, e := range p.Entries {
		if len(topics) == 0 || topics[len(topics)-1] != e.Partition.Topic {
			topics = append(topics, e.Partition.Topic)
		}
	}
	return topics
}

// CheckClaim refuses, with a *ForeignConnectorError whose Check is "plan",
// a connector configuration that records the claim of another plan's apply
// under plan.ClaimKey: that apply created the connector, and only its plan
// may write the connector's offsets or resume it. Of two applies of
// different plans racing for one connector, one creates it and the other
// is refused here (or its create is answered 409), so at most one reports
// success. A configuration without the key (a connector created by hand,
// by an operator such as Strimzi, or by an older version of this module)
// passes: its other checks are CheckConnector's.
func CheckClaim(p *plan.Plan, name string, config map[string]string) error {
	have, ok := config[plan.ClaimKey]
	if !ok {
		return nil
	}
	if want := p.Claim(); have != want {
		return &ForeignConnectorError{Connector: name, Check: "plan", Plan: want, Have: have, Topics: config["topics"]}
	}
	return nil
}

// ConnectorConfigReader reads a connector's configuration, as
// *connect.Client does.
type ConnectorConfigReader interface {
	Config(ctx context.Context, name string) (map[string]string, error)
}

// ConfirmConnector reads the named connector's configuration and checks it
// with [CheckConnector] against the plan and the clusters the step reaches.
// A step calls it right before each write to the connector (or to a group,
// from the connector's offsets), so that what it writes is the plan's
// connector as the worker holds it now. It returns the configuration read,
// and a *ForeignConnectorError for a connector that is not the plan's, or
// the reader's error (for a connector that does not exist, one matching
// connect.ErrNotFound), or ErrNoProof for clusters no read proved.
func ConfirmConnector(ctx context.Context, c ConnectorConfigReader, p *plan.Plan, name string, reached Reached) (map[string]string, error) {
	if !reached.Proven() {
		return nil, fmt.Errorf("%w: the clusters the step reaches were not read", ErrNoProof)
	}
	cfg, err := c.Config(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("config of connector %s: %w", name, err)
	}
	if err := CheckConnector(p, ConnectorFacts{Name: name, Config: cfg, Clusters: reached.Clusters()}); err != nil {
		return cfg, err
	}
	return cfg, nil
}
