package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mm2cutover/mm2cutover/cutover"
	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// ErrPlanMismatch matches a plan that does not belong to these settings or
// these clusters, or a connector whose configuration changed since the plan.
var ErrPlanMismatch = errkind.New(errkind.Refused, "plan does not match")

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

// Record appends one entry (a nil Audit records nothing). Its error says the record of the change could
// not be written; a step stops there rather than change anything unrecorded.
func (a *Audit) Record(step, connector, fingerprint string, detail any) error {
	if a == nil {
		return nil
	}
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

// RedactConfig returns a connector configuration as the cutover may show
// or record it (cutover.RedactConfig).
func RedactConfig(ctx context.Context, env *Env, s settings.Settings, cfg map[string]string) map[string]string {
	return cutover.RedactConfig(ctx, env.Connect, cfg, s.Logger)
}

// CheckPlan refuses a plan that cannot be applied with these settings:
// invalid, blocked entries, another connector or alias, or a configuration
// that is not the one the plan recorded (plan.Plan.AttachConfig, which
// gives a plan older than schema version 4 the settings' configuration).
// It reads nothing; the library's steps recheck the plan against the
// clusters.
func CheckPlan(ctx context.Context, env *Env, s settings.Settings, p *plan.Plan) error {
	s = s.WithPlan(p)
	if err := p.Validate(); err != nil {
		return err
	}
	if err := p.Blocked(); err != nil {
		return err
	}
	cfg, err := s.ConnectorConfig()
	if err != nil {
		return err
	}
	if err := p.AttachConfig(cfg); err != nil {
		return fmt.Errorf("the settings' connector configuration: %w", err)
	}
	return nil
}

// CheckScope refuses a plan for another connector or alias than the
// settings name (an error matching ErrPlanMismatch). It reads nothing;
// the library's cutover.Open refuses a plan of other clusters.
func CheckScope(s settings.Settings, p *plan.Plan) error {
	if p.ConnectorName != s.Connector || p.SourceAlias != s.SourceAlias {
		return fmt.Errorf("%w: the plan is for connector %q with source alias %q, the settings name %q and %q",
			ErrPlanMismatch, p.ConnectorName, p.SourceAlias, s.Connector, s.SourceAlias)
	}
	return nil
}

// Cutover opens the library's cutover of p with these settings: the
// connector configuration they make, the step's record in audit (and the
// Job's test points, settings.Settings.OnStep), and approve as its approval. An Env
// keeps one per plan, so that the precheck's observation and an early
// boundary capture serve the steps after them in this process.
func (env *Env) Cutover(ctx context.Context, s settings.Settings, p *plan.Plan, approve bool, audit *Audit) (*cutover.Cutover, error) {
	s = s.WithPlan(p).WithDefaults()
	env.approve, env.audit, env.onStep = approve, audit, s.OnStep
	if env.cutover != nil && env.cutover.Plan().Fingerprint == p.Fingerprint {
		return env.cutover, nil
	}
	cfg, err := s.ConnectorConfig()
	if err != nil {
		return nil, err
	}
	opts := cutover.Options{
		Logger: s.Logger, Record: env.record, ToolVersion: s.ToolVersion,
		Approve:         func(context.Context, cutover.Intent) (bool, error) { return env.approve, nil },
		ReadBackTimeout: s.ReadBackTimeout, RunningTimeout: s.RunningTimeout, CatchUpTimeout: s.CatchUpTimeout,
	}
	if p.OffsetsFrom.Kind == plan.FromConnectorOffsets && s.OffsetsTopic != "" {
		opts.Input = mm2Input(env, s)
	}
	c, err := cutover.Open(ctx, cutover.Clients{Connect: env.Connect, Source: env.Source, Target: env.Target}, p, cfg, opts)
	if err != nil {
		return nil, err
	}
	if env.observed != nil {
		c.WithObservation(*env.observed)
	}
	env.cutover = c
	return c, nil
}

// record writes an entry of the library's record to the audit: a write's
// intent as an "intent" entry naming the write, a write that failed as a
// "failed" entry with its error, anything else under its own step. It
// calls the Job's test points as the apply reaches them: before-create,
// created, after-create, before-patch, after-patch and before-verify.
func (env *Env) record(_ context.Context, e cutover.Event) error {
	step, detail, point := e.Step, e.Detail, e.Step
	switch {
	case e.Intent:
		step, detail, point = "intent", map[string]any{"write": e.Step, "detail": e.Detail}, e.Step+"!"
	case e.Err != "":
		step, detail, point = "failed", map[string]any{"write": e.Step, "error": e.Err}, ""
	}
	points := map[string][]string{"create!": {"before-create"}, "create": {"created"}, "backup": {"after-create"},
		"patch!": {"before-patch"}, "patch": {"after-patch", "before-verify"}}[point]
	if e.Step == "backup" && env.alreadyApplied(e) {
		points = append(points, "before-verify")
	}
	if err := env.audit.Record(step, e.Connector, e.Fingerprint, detail); err != nil {
		return err
	}
	for _, pt := range points {
		if env.onStep != nil {
			env.onStep(pt)
		}
	}
	return nil
}

// alreadyApplied reports whether a backup record holds exactly the plan's
// offsets, so that no PATCH follows it.
func (env *Env) alreadyApplied(e cutover.Event) bool {
	d, ok := e.Detail.(map[string]any)
	if !ok || env.cutover == nil {
		return false
	}
	got, _ := d["offsets"].([]offsets.ConnectOffset)
	a, err := env.cutover.Plan().Guard(got)
	return err == nil && a == plan.GuardAlreadyApplied
}

// ConfirmConnector refuses, before a step reads the connector for the
// record (verify before resume, status), a plan that is not for these
// settings or these clusters, or a connector that is not the plan's
// (verify.ConfirmConnector). It writes nothing.
func ConfirmConnector(ctx context.Context, env *Env, s settings.Settings, p *plan.Plan) error {
	s = s.WithPlan(p)
	if err := CheckScope(s, p); err != nil {
		return err
	}
	reached, err := verify.ReadClusters(ctx, env.Source, env.Target)
	if err != nil {
		return err
	}
	_, err = verify.ConfirmConnector(ctx, env.Connect, p, s.Connector, reached)
	return err
}

// Apply runs steps 3 to 7 of p through the library (cutover.Cutover.Apply):
// create the connector STOPPED (or find it STOPPED with the plan's
// configuration), back up its offsets, guard against offsets that differ
// from the plan, PATCH, and read back. It never resumes the connector.
func Apply(ctx context.Context, env *Env, s settings.Settings, p *plan.Plan, audit *Audit) (*cutover.ApplyResult, error) {
	c, err := env.Cutover(ctx, s, p, false, audit)
	if err != nil {
		return nil, recordRefusal(audit, "apply", s.Connector, p.Fingerprint, err)
	}
	return c.Apply(ctx)
}

// recordRefusal records a refusal of the settings' own checks (before the
// library's steps run, which record their own).
func recordRefusal(audit *Audit, step, connector, fingerprint string, err error) error {
	if errkind.Of(err) != errkind.Refused {
		return err
	}
	if aerr := audit.Record("refuse", connector, fingerprint, map[string]any{"step": step, "reason": err.Error()}); aerr != nil {
		return errors.Join(err, aerr)
	}
	return err
}
