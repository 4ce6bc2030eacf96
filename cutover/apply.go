package cutover

import (
	"context"
	"errors"
	"fmt"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// ApplyResult is what Apply found and did.
type ApplyResult struct {
	Connector string `json:"connector"`
	// Created is true when Apply created the connector (STOPPED).
	Created bool `json:"created"`
	// Backup is what the connector held before, also recorded ("backup").
	Backup []offsets.ConnectOffset `json:"backup"`
	// Guard is what the guard decided: "apply", or "already-applied".
	Guard string `json:"guard"`
	// Patched is true when Apply sent the PATCH.
	Patched bool `json:"patched"`
	// ReadBack is the last comparison of Connect's offsets with the plan;
	// Matched counts its partitions that match.
	ReadBack offsets.ReadBack `json:"-"`
	Matched  int              `json:"matched"`
	// ReadBackRan is true when the read-back ran; Unread is true when it
	// ran and no read of the offsets succeeded (connect.ErrOffsetsUnread):
	// ReadBack then says nothing about them.
	ReadBackRan bool `json:"read_back_ran"`
	Unread      bool `json:"read_back_unread,omitempty"`
}

// Apply runs steps 3 to 7 of the plan: it rechecks the plan against the
// clusters (verify.Prepare: the plan valid and not blocked, the
// configuration the plan's and passing the worker's lint, every fact the
// precheck checked as the plan saw it), creates the connector STOPPED or
// adopts it when it is the plan's and STOPPED, backs up its offsets,
// guards against offsets that differ from the plan, sends one PATCH, and
// reads back until Connect's offsets equal the plan or
// Options.ReadBackTimeout passes. It never resumes the connector.
//
// Run again, it does nothing but the read-back (the guard finds the plan
// applied); run after the connector resumed, or after another plan was
// applied, it refuses (*plan.StaleOffsetsError) and writes nothing. A
// connector of the plan's name that is another flow's is never written
// (*verify.ForeignConnectorError), nor one RUNNING, PAUSED or FAILED
// (*connect.NotStoppedError). An error of kind errkind.OutcomeUnknown
// means the PATCH may have landed: run Apply again.
func (c *Cutover) Apply(ctx context.Context) (_ *ApplyResult, err error) {
	p := c.plan
	name := p.ConnectorName
	res := &ApplyResult{Connector: name}
	defer func() { err = c.refused(ctx, "apply", err) }()
	// What the connector is (whether it exists, its configuration, STOPPED,
	// its offsets) is read while the recheck reads the clusters: the two ask
	// different systems, and both are read before anything is written.
	lookCtx, stopLook := context.WithCancel(ctx)
	defer stopLook()
	looked := make(chan connectorLook, 1)
	go func() { looked <- c.lookAtConnector(lookCtx) }()
	if err := c.prepare(ctx); err != nil {
		stopLook()
		<-looked
		return res, err
	}
	look := <-looked
	reached := c.clusters()

	// Step 3: the connector exists, STOPPED, with the plan's configuration.
	var created bool
	create := func() error {
		var err error
		created, err = createOrAdopt(ctx, c.clients.Connect, p, c.config, reached, &look)
		return err
	}
	if look.err == nil && !look.exists {
		err = c.write(ctx, "create", c.createDetail(ctx), create)
	} else {
		err = create() // adopts it, or refuses another flow's: no write
	}
	res.Created = created
	if err != nil {
		return res, err
	}
	stopped := look.stopped
	if created {
		c.log.Info("created the connector STOPPED", "connector", name)
		stopped = c.clients.Connect.RequireStopped(ctx, name)
	}
	if stopped != nil {
		return res, NotStopped(name, stopped, "the cutover never changes the state of a connector it finds running or paused; "+
			"if it has never run, stop it with PUT /connectors/"+name+"/stop and apply again")
	}

	// Steps 4 and 5: back up what it holds, and the guard.
	g, err := look.guard, look.guardErr
	if created {
		g, err = verify.GuardOffsets(ctx, c.clients.Connect, p)
	}
	res.Backup = g.Backup()
	if g.Plan() != nil {
		if rerr := c.record(ctx, Event{Step: "backup", Detail: map[string]any{"offsets": g.Backup()}}); rerr != nil {
			return res, errors.Join(err, rerr)
		}
	}
	if err != nil {
		return res, err
	}
	res.Guard = g.Action().String()

	// Step 6: one PATCH, retried by the client on transient errors.
	if g.Action() == plan.GuardApply {
		c.log.Info("altering the connector's offsets", "connector", name, "partitions", len(p.Entries))
		err := c.write(ctx, "patch", map[string]any{"partitions": len(p.Entries)}, func() error {
			_, err := Patch(ctx, c.clients.Connect, g, reached)
			return err
		})
		if err != nil {
			return res, err
		}
		res.Patched = true
	}

	// Step 7: read back until equal.
	rbCtx, cancel := context.WithTimeout(ctx, c.opts.ReadBackTimeout)
	defer cancel()
	rb, err := verify.ReadBack(rbCtx, c.clients.Connect, p)
	res.ReadBackRan, res.ReadBack, res.Matched = true, rb, rb.Count(offsets.Match)
	detail := map[string]any{"ok": err == nil && rb.OK(), "summary": rb.String()}
	if errors.Is(err, connect.ErrOffsetsUnread) {
		res.Unread = true
		detail = map[string]any{"ok": false, "read": false, "summary": "not read: " + err.Error()}
		err = fmt.Errorf("%w; the PATCH was answered, so run apply again once the worker answers: it finds the offsets applied, or applies them", err)
	}
	if rerr := c.record(ctx, Event{Step: "read-back", Detail: detail}); rerr != nil {
		return res, errors.Join(err, rerr)
	}
	return res, err
}

// connectorLook is what Apply reads of the plan's connector before it
// writes, in this order: whether it exists and its configuration (GET
// /connectors/{name}, of which Kafka Connect's GET .../config is a subset:
// AbstractHerder.connectorConfig answers from connectorInfo), that it is
// STOPPED with no tasks ((*connect.Client).RequireStopped) and, only then,
// its offsets (verify.GuardOffsets). A read that fails ends the look: the
// facts after it are not read.
type connectorLook struct {
	exists   bool
	config   map[string]string
	err      error // reading the connector or its configuration
	stopped  error // RequireStopped's
	guard    verify.Guarded
	guardErr error
}

// lookAtConnector reads the connectorLook of the plan's connector. It
// writes nothing.
func (c *Cutover) lookAtConnector(ctx context.Context) connectorLook {
	var l connectorLook
	name := c.plan.ConnectorName
	info, err := c.clients.Connect.Connector(ctx, name)
	switch {
	case errors.Is(err, connect.ErrNotFound):
		return l
	case err != nil:
		l.err = err
		return l
	}
	l.exists, l.config = true, info.Config
	if l.config == nil { // Connect answers the configuration with the connector (its GET .../config is a subset of this)
		if l.config, l.err = c.clients.Connect.Config(ctx, name); l.err != nil {
			l.err = fmt.Errorf("config of connector %s: %w", name, l.err)
			return l
		}
	}
	if l.stopped = c.clients.Connect.RequireStopped(ctx, name); l.stopped != nil {
		return l
	}
	l.guard, l.guardErr = verify.GuardOffsets(ctx, c.clients.Connect, c.plan)
	return l
}

// createDetail is the record of a create: the configuration, redacted,
// and the initial state.
func (c *Cutover) createDetail(ctx context.Context) map[string]any {
	return map[string]any{"config": c.redactedConfig(ctx), "initial_state": "STOPPED"}
}

// NotStopped words an error of the STOPPED guard
// ((*connect.Client).RequireStopped) for a step: a connector RUNNING,
// PAUSED or FAILED is refused (connect.ErrNotStopped, with the step's
// refusal); a connector that did not settle in STOPPED in time, or a
// worker that did not answer, is said to be that, and is worth a retry; a
// connector that does not exist is refused.
func NotStopped(name string, err error, refusal string) error {
	var nse *connect.NotStoppedError
	switch {
	case errors.Is(err, connect.ErrNotFound):
		return fmt.Errorf("connector %s does not exist: %w", name, err)
	case !errors.As(err, &nse):
		return fmt.Errorf("cannot tell whether connector %s is STOPPED: the worker did not answer (%w); nothing more was written: run the step again once it answers", name, err)
	case nse.Settling:
		return fmt.Errorf("connector %s did not show STOPPED with no tasks in time (last seen %s): %w; run the step again once it settles", name, nse.State, err)
	case nse.State == connect.StateFailed:
		return fmt.Errorf("connector %s is FAILED, not STOPPED: it was resumed, so MM2 may have copied records, and no step but the rollback "+
			"after resume acts on it; read its trace (GET /connectors/%s/status), fix the cause and restart it "+
			"(POST /connectors/%s/restart?includeTasks=true&onlyFailed=true), then verify, or roll back after resume: %w", name, name, name, err)
	case refusal != "":
		return fmt.Errorf("connector %s is %s, not STOPPED: %s: %w", name, nse.State, refusal, err)
	}
	return err
}
