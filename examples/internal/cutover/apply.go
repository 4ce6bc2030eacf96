package cutover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/redact"
	"github.com/mm2cutover/mm2cutover/verify"
)

// ErrPlanMismatch matches a plan that does not belong to these settings or
// these clusters, or a connector whose configuration changed since the plan.
var ErrPlanMismatch = verify.Mark(verify.KindRefused, "plan does not match")

// Audit appends one JSON line per step to w: what was found and done, for
// the record of the change. It never holds a secret: plans and offsets
// carry none, and configurations go through RedactConfig (package redact).
type Audit struct {
	mu sync.Mutex
	w  io.Writer
}

// NewAudit returns an audit trail writing to w (nil discards).
func NewAudit(w io.Writer) *Audit {
	if w == nil {
		w = io.Discard
	}
	return &Audit{w: w}
}

// Record appends one entry. Its error says the record of the change could
// not be written; a step stops there rather than change anything unrecorded.
func (a *Audit) Record(step, connector, fingerprint string, detail any) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	b, err := json.Marshal(struct {
		At          time.Time `json:"at"`
		Step        string    `json:"step"`
		Connector   string    `json:"connector"`
		Fingerprint string    `json:"plan_fingerprint,omitempty"`
		Detail      any       `json:"detail,omitempty"`
	}{time.Now().UTC(), step, connector, fingerprint, detail})
	if err != nil {
		return err
	}
	if _, err = a.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("%w: %w", ErrAudit, err)
	}
	return nil
}

// ErrAudit matches a failure to write the audit file.
var ErrAudit = errors.New("cannot write the audit record")

// refused records the refusal of a step by a guard — an error for which
// ExitStatus gives ExitRefused — and returns err, or err joined with the
// audit error when the refusal could not be recorded. Any other error is
// returned as it is. Every step defers it, so that no refusal goes
// unrecorded, whichever guard it came from.
func (a *Audit) refused(step, connector, fingerprint string, err error) error {
	if err == nil || ExitStatus(err) != ExitRefused {
		return err
	}
	if aerr := a.Record("refuse", connector, fingerprint, map[string]any{"step": step, "reason": err.Error()}); aerr != nil {
		return errors.Join(err, aerr)
	}
	return err
}

// ConnectorConfig is the configuration the cutover creates the connector
// with. It includes "name", as Connect's GET .../config returns it, so that
// the plan's digest can be compared with the running connector's.
func ConnectorConfig(s Settings) (map[string]string, error) {
	return s.MirrorSource().Config()
}

// RedactConfig returns a connector configuration as the cutover may show
// or record it: the values of the keys the connector plugin defines as
// PASSWORD (its validate answer, which the worker is asked for), of the
// Kafka clients' password keys and of keys whose names say secret, and any
// value equal to one of them, replaced by redact.Redacted
// (redact.ConfigWith). When the worker cannot be asked, the clients' keys
// and the names decide alone, and the logger says so.
func RedactConfig(ctx context.Context, env *Env, s Settings, cfg map[string]string) map[string]string {
	class := cfg["connector.class"]
	if class == "" {
		class = connect.MirrorSourceConnectorClass
	}
	infos, err := env.Connect.Validate(ctx, class, cfg)
	if err != nil {
		s.Logger.Warn("cannot ask the worker which keys are PASSWORD: the clients' password keys and the key names decide what is redacted", "error", err)
		return redact.Config(cfg)
	}
	return redact.ConfigWith(cfg, infos.PasswordKeys())
}

// ApplyResult is what Apply found and did.
type ApplyResult struct {
	Connector string `json:"connector"`
	// Created is true when Apply created the connector (STOPPED).
	Created bool `json:"created"`
	// Backup is what the connector held before, also written to the audit.
	Backup []offsets.ConnectOffset `json:"backup"`
	// Guard is what the guard decided: apply, or already-applied.
	Guard string `json:"guard"`
	// Patched is true when Apply sent the PATCH.
	Patched bool `json:"patched"`
	// ReadBackRan is true once the read-back (step 7) ran: a step that
	// stopped before it (a PATCH that failed) has read nothing, and
	// ReadBack and Matched say nothing then.
	ReadBackRan bool `json:"read_back_ran"`
	// ReadBack is the final comparison of Connect's offsets with the plan.
	ReadBack offsets.ReadBack `json:"-"`
	Matched  int              `json:"matched"`
	// Unread is true when no read of the offsets succeeded after the
	// PATCH (connect.ErrOffsetsUnread): ReadBack is then empty, and says
	// nothing about them.
	Unread bool `json:"read_back_unread,omitempty"`
}

// CheckPlan refuses a plan that cannot be applied with these settings:
// invalid, blocked entries, another connector or alias, or a configuration
// that is not the one the plan recorded (plan.Plan.AttachConfig, which
// gives a plan older than schema version 4 the settings' configuration).
// It reads nothing; Recheck compares the plan with the clusters.
func CheckPlan(ctx context.Context, env *Env, s Settings, p *plan.Plan) error {
	s = s.WithPlan(p)
	if err := p.Validate(); err != nil {
		return err
	}
	if err := p.Blocked(); err != nil {
		return err
	}
	cfg, err := ConnectorConfig(s)
	if err != nil {
		return err
	}
	if err := p.AttachConfig(cfg); err != nil {
		return fmt.Errorf("the settings' connector configuration: %w", err)
	}
	return nil
}

// Recheck refuses a plan that no longer describes the clusters or the
// settings, before a step that writes: verify.Prepare validates the plan,
// proves the settings' connector configuration is the plan's and passes its
// lint, and reads every fact the precheck checked that can change (cluster
// IDs, the group's members and commits, the source partitions and bounds,
// the target topics and their end offsets, the offsets input of a plan
// from a savepoint or another connector, the clusters the worker and MM2's
// producer write to), then compares them with the plan. It returns a
// *verify.StalePlanError listing every problem, so a plan mounted or resumed
// days later is checked against now. Moments after the precheck (or the
// previous step) in this process, the observation it made serves again.
func Recheck(ctx context.Context, env *Env, s Settings, p *plan.Plan) error {
	s = s.WithPlan(p)
	cfg, err := ConnectorConfig(s)
	if err != nil {
		return err
	}
	opts := verify.PrepareOptions{
		Previous: env.observed,
		Writers:  func(ctx context.Context) (verify.Writers, error) { return env.observeWriters(ctx, cfg) },
	}
	if p.OffsetsFrom.Kind == plan.FromConnectorOffsets && s.OffsetsTopic != "" {
		opts.Input = mm2Input(env, s)
	}
	prep, err := verify.Prepare(ctx, env.Connect, env.Source, env.Target, p, cfg, opts)
	if prep.Observation.SourceClusterID != "" { // every fact was read
		env.observed = &prep.Observation
		env.clusters = &prep.Clusters
	}
	return err
}

// observeWriters reads which clusters the worker and MM2's producer write
// to (verify.ObserveWriters). A producer.override.bootstrap.servers is
// dialed with the target client's settings; a cluster in memory has none,
// and only the worker's own answer counts.
func (env *Env) observeWriters(ctx context.Context, cfg map[string]string) (verify.Writers, error) {
	_, target, err := env.clients()
	if err != nil && cfg["producer.override.bootstrap.servers"] != "" {
		return verify.Writers{}, err
	}
	return verify.ObserveWriters(ctx, env.Connect, target, cfg)
}

// clusterIDs returns the cluster IDs of the source and target clusters
// the settings' clients reach, read once per Env.
func (env *Env) clusterIDs(ctx context.Context) (verify.Clusters, error) {
	if env.clusters != nil {
		return *env.clusters, nil
	}
	ids, err := verify.ReadClusters(ctx, env.Source, env.Target)
	if err != nil {
		return ids, err
	}
	env.clusters = &ids
	return ids, nil
}

// CheckScope refuses a plan for another connector or alias than the
// settings name, or for other clusters than those the settings reach (an
// error matching ErrPlanMismatch). It writes nothing.
func CheckScope(ctx context.Context, env *Env, s Settings, p *plan.Plan) error {
	s = s.WithPlan(p)
	if p.ConnectorName != s.Connector || p.SourceAlias != s.SourceAlias {
		return fmt.Errorf("%w: the plan is for connector %q with source alias %q, the settings name %q and %q",
			ErrPlanMismatch, p.ConnectorName, p.SourceAlias, s.Connector, s.SourceAlias)
	}
	ids, err := env.clusterIDs(ctx)
	if err != nil {
		return err
	}
	if ids.Source != p.SourceClusterID || ids.Target != p.TargetClusterID {
		return fmt.Errorf("%w: the plan was built on source %s and target %s, these are %s and %s",
			ErrPlanMismatch, p.SourceClusterID, p.TargetClusterID, ids.Source, ids.Target)
	}
	return nil
}

// confirm proves, right before a write to the connector name (or to a
// group from its offsets), that it is the plan's connector
// (verify.ConfirmConnector: its live configuration, topics and alias, and
// the clusters reached). It returns the live configuration, or a
// *verify.ForeignConnectorError, or the error of the read.
func confirm(ctx context.Context, env *Env, p *plan.Plan, name string) (map[string]string, error) {
	ids, err := env.clusterIDs(ctx)
	if err != nil {
		return nil, err
	}
	return verify.ConfirmConnector(ctx, env.Connect, p, name, ids)
}

// ConfirmConnector refuses, before a step reads the connector for the
// record (verify before resume, status), a plan that is not for these
// settings or these clusters (CheckScope), or a connector that is not the
// plan's (verify.ConfirmConnector). It writes nothing.
func ConfirmConnector(ctx context.Context, env *Env, s Settings, p *plan.Plan) error {
	s = s.WithPlan(p)
	if err := CheckScope(ctx, env, s, p); err != nil {
		return err
	}
	_, err := confirm(ctx, env, p, s.Connector)
	return err
}

// Apply runs steps 3 to 7 for an applicable plan: create the connector
// STOPPED (or find it STOPPED with the plan's configuration), back up its
// offsets, guard against offsets that differ from the plan, PATCH, and read
// back until Connect's offsets equal the plan. It never resumes the
// connector. Run twice, it does nothing the second time
// (plan.GuardAlreadyApplied); run after the connector has resumed, it refuses
// (*plan.StaleOffsetsError) and writes nothing.
func Apply(ctx context.Context, env *Env, s Settings, p *plan.Plan, audit *Audit) (_ *ApplyResult, err error) {
	s = s.WithPlan(p)
	s = s.WithDefaults()
	defer func() { err = audit.refused("apply", s.Connector, p.Fingerprint, err) }()
	if err := Recheck(ctx, env, s, p); err != nil {
		return nil, err
	}
	cfg, err := ConnectorConfig(s)
	if err != nil {
		return nil, err
	}
	res := &ApplyResult{Connector: s.Connector}
	name := s.Connector
	ids, err := env.clusterIDs(ctx)
	if err != nil {
		return nil, err
	}

	// Step 3: the connector exists STOPPED with the plan's configuration.
	s.step("before-create")
	res.Created, err = verify.CreateOrAdopt(ctx, env.Connect, p, cfg, ids)
	if res.Created {
		s.Logger.Info("created the connector STOPPED", "connector", name)
		if aerr := audit.Record("create", name, p.Fingerprint, map[string]any{"config": RedactConfig(ctx, env, s, cfg), "initial_state": "STOPPED"}); aerr != nil && err == nil {
			return res, aerr
		}
		if err == nil {
			s.step("created")
		}
	}
	if err != nil {
		return res, err
	}
	if err := env.Connect.RequireStopped(ctx, name); err != nil {
		return nil, notStopped(name, err, "the cutover never changes the state of a connector it finds running or paused; "+
			"if it has never run, stop it with PUT /connectors/"+name+"/stop and retry")
	}
	s.step("after-create")

	// Steps 4 and 5: back up what it holds, and the guard.
	existing, action, err := verify.GuardOffsets(ctx, env.Connect, p)
	if existing != nil {
		res.Backup = existing
		if aerr := audit.Record("backup", name, p.Fingerprint, map[string]any{"offsets": existing}); aerr != nil {
			return nil, fmt.Errorf("audit: %w", aerr)
		}
	}
	if err != nil {
		return res, err
	}
	res.Guard = action.String()

	// Step 6: one PATCH, retried by the client on transient errors.
	if action == plan.GuardApply {
		s.step("before-patch")
		s.Logger.Info("altering the connector's offsets", "connector", name, "partitions", len(p.Entries))
		n, err := verify.Patch(ctx, env.Connect, p, ids)
		if err != nil {
			return res, err
		}
		res.Patched = true
		if err := audit.Record("patch", name, p.Fingerprint, map[string]any{"partitions": n}); err != nil {
			return res, err
		}
		s.step("after-patch")
	}

	// Step 7: read back until equal.
	s.step("before-verify")
	rbCtx, cancel := context.WithTimeout(ctx, s.ReadBackTimeout)
	defer cancel()
	rb, err := verify.ReadBack(rbCtx, env.Connect, p)
	res.ReadBackRan, res.ReadBack, res.Matched = true, rb, rb.Count(offsets.Match)
	detail := map[string]any{"ok": err == nil && rb.OK(), "summary": rb.String()}
	if errors.Is(err, connect.ErrOffsetsUnread) {
		res.Unread = true
		detail = map[string]any{"ok": false, "read": false, "summary": "not read: " + err.Error()}
		err = fmt.Errorf("%w; the PATCH was answered, so run apply again once the worker answers: it finds the offsets applied, or applies them", err)
	}
	if aerr := audit.Record("read-back", name, p.Fingerprint, detail); aerr != nil && err == nil {
		return res, aerr
	}
	return res, err
}

// notStopped words an error of the STOPPED guard
// ((*connect.Client).RequireStopped) for a step: a connector RUNNING,
// PAUSED or FAILED is refused (connect.ErrNotStopped, with the step's
// refusal); a connector that did not settle in STOPPED in time, or a worker
// that did not answer, is said to be that, and is worth a retry.
func notStopped(name string, err error, refusal string) error {
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
			"(POST /connectors/%s/restart?includeTasks=true&onlyFailed=true), then run verify, or roll back after resume: %w", name, name, name, err)
	case refusal != "":
		return fmt.Errorf("connector %s is %s, not STOPPED: %s: %w", name, nse.State, refusal, err)
	}
	return err
}
