package verify

import (
	"context"
	"errors"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// The connector-name check of Precheck: is the cutover's own connector
// name free, or taken by a connector apply would adopt? apply refuses a
// connector of that name that is another flow's, another plan's, running,
// or holding offsets the plan does not set; the precheck says so first,
// with what to do, instead of a plan that can never be applied.

// ownConnector is what the Connect cluster holds under the cutover's
// connector name.
type ownConnector struct {
	exists bool
	config map[string]string
	// state is the connector's state; "" when it could not be read.
	state string
	// offsets are its offsets, read only when it is STOPPED with the
	// cutover's configuration; offsetsErr the error of that read.
	offsets    []offsets.ConnectOffset
	offsetsErr error
}

// readOwnConnector reads the connector called name: its configuration, its
// state and, when it is STOPPED with the configuration want, its offsets.
func readOwnConnector(ctx context.Context, c *connect.Client, name string, want map[string]string) (ownConnector, error) {
	cfg, err := c.Config(ctx, name)
	if errors.Is(err, connect.ErrNotFound) {
		return ownConnector{}, nil
	}
	if err != nil {
		return ownConnector{}, err
	}
	have := ownConnector{exists: true, config: cfg}
	if st, err := c.Status(ctx, name); err == nil {
		have.state = st.Connector.State
	}
	if have.state == connect.StateStopped && plan.ConfigDigest(cfg) == plan.ConfigDigest(want) {
		have.offsets, have.offsetsErr = c.MirrorOffsets(ctx, name)
	}
	return have, nil
}

// checkOwnConnector decides the connector-name check from what the Connect
// cluster holds under the cutover's name (have), the configuration the
// cutover creates (want), and the plan this precheck would build (wouldBe;
// nil when it cannot be built). It passes when no connector has the name,
// or one that apply adopts: STOPPED, with the cutover's configuration, and
// no offsets but the plan's with the plan's values (plan.Plan.Guard). It
// fails, saying what to do, for one with another configuration, one that
// is not STOPPED, or one holding other offsets. It is pure.
func checkOwnConnector(cs *Checks, name string, want map[string]string, wouldBe *plan.Plan, have ownConnector) {
	const check = "connector-name"
	if !have.exists {
		cs.add(check, Pass, "no connector named %s yet: apply creates it STOPPED", name)
		return
	}
	state := have.state
	if state == "" {
		state = "in a state Connect did not report"
	}
	if plan.ConfigDigest(have.config) != plan.ConfigDigest(want) {
		cs.add(check, Fail, "a connector named %s already exists (%s, source alias %q, topics %q) with another configuration than the cutover's: "+
			"apply would refuse it, and no step writes to it; choose a connector name nobody uses, or, if it is a leftover of "+
			"an earlier attempt of yours, remove it and its offsets (PUT /connectors/%s/stop, DELETE /connectors/%s/offsets, DELETE /connectors/%s)",
			name, state, offsets.SourceAliasOf(have.config), have.config["topics"], name, name, name)
		return
	}
	switch have.state {
	case connect.StateStopped:
	case "":
		cs.add(check, Warn, "connector %s exists with the cutover's configuration, but its state cannot be read: apply needs it STOPPED", name)
		return
	default:
		cs.add(check, Fail, "connector %s exists with the cutover's configuration and is %s: it runs or has run, so its offsets are past the old job's "+
			"and apply refuses it; if this cutover resumed it, use verify and status; to hand back to the old job, roll back after resume "+
			"(the rollback after resume, into the old job's group)", name, have.state)
		return
	}
	if have.offsetsErr != nil {
		cs.add(check, Warn, "connector %s exists STOPPED with the cutover's configuration; its offsets cannot be read (%v): apply compares them with the plan", name, have.offsetsErr)
		return
	}
	if wouldBe == nil {
		cs.add(check, Warn, "connector %s exists STOPPED with the cutover's configuration and %d offsets, not compared: no plan can be built yet (see the other checks)", name, len(have.offsets))
		return
	}
	action, err := wouldBe.Guard(have.offsets)
	var stale *plan.StaleOffsetsError
	switch {
	case errors.As(err, &stale):
		cs.add(check, Fail, "connector %s exists STOPPED with the cutover's configuration but holds offsets the plan would not set (%s): "+
			"MM2 ran under it, or another plan was applied, and apply refuses it; if MM2 ran, roll back after resume first; "+
			"if the offsets are leftovers, reset them (DELETE /connectors/%s/offsets while it is STOPPED)", name, stale.ReadBack, name)
	case err != nil:
		cs.add(check, Warn, "connector %s exists STOPPED with the cutover's configuration and %d offsets, not compared: %v", name, len(have.offsets), err)
	case action == plan.GuardAlreadyApplied:
		cs.add(check, Pass, "connector %s exists STOPPED with the cutover's configuration and holds exactly the plan's offsets: apply finds it already applied", name)
	case len(have.offsets) == 0:
		cs.add(check, Pass, "connector %s exists STOPPED with the cutover's configuration and no offsets: apply adopts it", name)
	default:
		cs.add(check, Pass, "connector %s exists STOPPED with the cutover's configuration and %d of the plan's offsets: apply sets the others", name, len(have.offsets))
	}
}

// precheckOwnConnector reads the connector of the cutover's name and checks
// it (checkOwnConnector) against the plan the report's snapshot makes.
func precheckOwnConnector(ctx context.Context, cs *Checks, c *connect.Client, spec PrecheckSpec, r *PrecheckReport) {
	if spec.Connector == "" {
		return
	}
	have, err := readOwnConnector(ctx, c, spec.Connector, spec.Config)
	if err != nil {
		cs.add("connector-name", Warn, "cannot read connector %s: %v; apply checks it", spec.Connector, err)
		return
	}
	var wouldBe *plan.Plan
	if snap, err := r.PlanSnapshot(); err == nil && have.exists {
		wouldBe, _ = plan.Build(plan.Spec{
			CreatedAt: time.Now().UTC(), SourceClusterID: r.SourceClusterID, TargetClusterID: r.TargetClusterID,
			ConnectorName: spec.Connector, SourceAlias: offsets.SourceAliasOf(spec.Config), ConnectorConfig: spec.Config, GroupID: spec.Group,
			OffsetsFrom: r.OffsetsFrom, AcceptExpired: spec.AcceptExpired,
		}, snap) // nil when it cannot be built: the offsets are then not compared
	}
	checkOwnConnector(cs, spec.Connector, spec.Config, wouldBe, have)
}
