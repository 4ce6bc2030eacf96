package cutover

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/redact"
	"github.com/mm2cutover/mm2cutover/verify"
)

// Cluster is what the steps read from a Kafka cluster, and, on the
// source, the commit of a rollback after resume: *kafkaadmin.Client
// implements it, and so does package kafkaadmin/kafkafake's cluster in
// memory, for a tool's tests. An implementation must be safe for
// concurrent use.
type Cluster interface {
	verify.ClusterReader
	verify.BoundarySource
	verify.GroupCommitter
	verify.ConnectOffsetsReader
	verify.TopicMatcher
}

var _ Cluster = (*kafkaadmin.Client)(nil)

// Clients are the systems a cutover talks to: the Connect cluster that
// runs MirrorMaker 2 (a worker URL or a load balancer in front of the
// workers), and the source and target Kafka clusters.
type Clients struct {
	Connect *connect.Client
	Source  Cluster
	Target  Cluster
}

// Options are what a tool adds to the steps. The zero value runs each
// step with the default waits, records nothing, approves nothing and logs
// nothing.
type Options struct {
	// Logger receives the steps' progress; nil discards it.
	Logger *slog.Logger
	// Record is called with each entry of the record of the change (see
	// Event): before each write, with the write it is about to send, and
	// with each fact a step read (the offsets it backed up, the read-back,
	// the boundary records) and each refusal. An error stops the step
	// before the write, and is returned joined with the step's error: a
	// step never writes what it could not record. Nil records nothing.
	Record func(ctx context.Context, e Event) error
	// Approve is asked, with what the step would do, before the writes of
	// a resume and of a rollback; the step goes on only when it answers
	// true. Nil approves nothing: those steps only say what they would do
	// (an error matching ErrNotApproved, with the Intent in the result).
	// An apply is not asked: it only writes to a connector that is STOPPED
	// and that a rollback before resume removes.
	Approve func(ctx context.Context, in Intent) (bool, error)
	// ToolVersion is recorded in a rollback's reverse plan.
	ToolVersion string
	// Input reads the offsets input of a plan from another connector's
	// stored offsets again (verify.ConnectorOffsets), for the recheck
	// before every write. A plan from a Flink savepoint reads its
	// savepoint itself; a plan from a group needs nothing.
	Input verify.OffsetsInput
	// ReadBackTimeout bounds the read-back after the PATCH (2 minutes when
	// zero), RunningTimeout the waits for a connector RUNNING after resume
	// or STOPPED in a rollback (2 minutes), CatchUpTimeout the wait for MM2
	// to catch up in Verify (5 minutes).
	ReadBackTimeout, RunningTimeout, CatchUpTimeout time.Duration
}

// Defaults of Options.
const (
	DefaultReadBackTimeout = 2 * time.Minute
	DefaultRunningTimeout  = 2 * time.Minute
	DefaultCatchUpTimeout  = 5 * time.Minute
)

// Event is one entry of the record of a change, given to Options.Record.
type Event struct {
	// Step names what is done or found: the writes "create", "patch",
	// "resume", "stop", "reset", "delete", "commit"; the facts "backup"
	// (the offsets the connector held before the apply's PATCH),
	// "read-back", "boundary-capture", "rollback-backup" (the offsets M' a
	// rollback read), "rollback-plan" (the reverse plan); "refuse" (a
	// guard refused the step: Detail holds the step and the reason); and
	// "rollback" (a rollback done).
	Step string
	// Intent is true for the entry of a write about to be sent: it is sent
	// only when Record returns nil. The entry after it, of the same Step
	// and Intent false, says it was answered; a write whose outcome is
	// unknown leaves its intent and an entry with Err set.
	Intent bool
	// Connector is the connector's name, Fingerprint the plan's (the
	// reverse plan's for "rollback-plan", "commit" and the rollback after
	// resume's "rollback").
	Connector, Fingerprint string
	// Detail is what the entry says, as JSON would: the redacted
	// configuration of a create, offsets, counts, a summary.
	Detail any
	// Err is the error of a write that failed, in words; "" otherwise.
	Err string
}

// Intent is what a resume or a rollback would do, given to Options.Approve
// and returned in the step's result.
type Intent struct {
	// Step is "resume", "rollback-before-resume" or "rollback-after-resume".
	Step        string `json:"step"`
	Connector   string `json:"connector"`
	Fingerprint string `json:"plan_fingerprint"`
	Partitions  int    `json:"partitions"`
	// Group is the consumer group a rollback after resume commits C' to.
	Group string `json:"group,omitempty"`
	// Action says in words which requests the step will send.
	Action string `json:"action"`
}

// ErrNotApproved matches a resume or rollback that Options.Approve did not
// approve (or that had no Approve): it only said what it would do.
var ErrNotApproved = errkind.New(errkind.NotApproved, "cutover: not approved")

// Cutover runs the steps of one plan's cutover that write, each in the
// order that keeps it safe. Make one with Open. Its methods are safe to
// call one at a time; a step may be called again after an error, and
// finds what its earlier call wrote.
type Cutover struct {
	clients Clients
	plan    *plan.Plan
	config  map[string]string
	opts    Options
	log     *slog.Logger

	mu       sync.Mutex
	reached  verify.Reached
	observed *verify.Observation
	capture  *boundaryCapture
	captured []verify.BoundaryRecord
}

// Open checks that p can be applied with config on these clients and
// returns its Cutover. config is the connector configuration the
// connector is created with (with "name"; secrets as the worker needs
// them): it must be the one the plan was built for. Open validates the
// plan (an error matching plan.ErrInvalid), proves config is the plan's
// (a *plan.ConfigChangedError), and reads the cluster IDs the clients
// reach: a plan built on other clusters is refused with a
// *verify.ForeignConnectorError. It writes nothing.
//
// A blocked plan opens (its rollback and status work), and Apply and
// Resume refuse it.
func Open(ctx context.Context, c Clients, p *plan.Plan, config map[string]string, opts Options) (*Cutover, error) {
	if c.Connect == nil || c.Source == nil || c.Target == nil {
		return nil, fmt.Errorf("%w: a cutover needs the Connect client and both Kafka clusters", ErrInvalidUse)
	}
	if p == nil {
		return nil, fmt.Errorf("%w: no plan", ErrInvalidUse)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := p.AttachConfig(config); err != nil {
		return nil, fmt.Errorf("the connector configuration: %w", err)
	}
	reached, err := verify.ReadClusters(ctx, c.Source, c.Target)
	if err != nil {
		return nil, err
	}
	if reached.Source() != p.SourceClusterID || reached.Target() != p.TargetClusterID {
		check, want, have := "source-cluster", p.SourceClusterID, reached.Source()
		if reached.Source() == p.SourceClusterID {
			check, want, have = "target-cluster", p.TargetClusterID, reached.Target()
		}
		return nil, &verify.ForeignConnectorError{Connector: p.ConnectorName, Check: check, Plan: want, Have: have}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts.ReadBackTimeout = cmpOr(opts.ReadBackTimeout, DefaultReadBackTimeout)
	opts.RunningTimeout = cmpOr(opts.RunningTimeout, DefaultRunningTimeout)
	opts.CatchUpTimeout = cmpOr(opts.CatchUpTimeout, DefaultCatchUpTimeout)
	return &Cutover{clients: c, plan: p, config: config, opts: opts, log: log, reached: reached}, nil
}

// ErrInvalidUse matches a call of this package given what it cannot use
// (no client, no plan): a mistake of the calling code.
var ErrInvalidUse = errkind.New(errkind.Rejected, "cutover: invalid use")

// WithObservation returns a Cutover whose first recheck reuses obs, the
// precheck's observation of the same plan moments ago in this process
// (verify.PrecheckReport.Observation), so that `plan` followed at once by
// `apply` reads the clusters once. An observation older than
// verify.ObservationReuse, or not made by a read, is read again.
func (c *Cutover) WithObservation(obs verify.Observation) *Cutover {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.observed = &obs
	return c
}

// Plan returns the plan the Cutover runs.
func (c *Cutover) Plan() *plan.Plan { return c.plan }

// record calls Options.Record.
func (c *Cutover) record(ctx context.Context, e Event) error {
	if c.opts.Record == nil {
		return nil
	}
	if e.Connector == "" {
		e.Connector = c.plan.ConnectorName
	}
	if e.Fingerprint == "" {
		e.Fingerprint = c.plan.Fingerprint
	}
	return c.opts.Record(ctx, e)
}

// write records the intent of a write, sends it, and records its answer:
// the write is not sent when the intent cannot be recorded.
func (c *Cutover) write(ctx context.Context, step string, detail any, send func() error) error {
	if err := c.record(ctx, Event{Step: step, Intent: true, Detail: detail}); err != nil {
		return err
	}
	err := send()
	done := Event{Step: step, Detail: detail}
	if err != nil {
		done.Err = err.Error()
	}
	return errors.Join(err, c.record(ctx, done))
}

// refused records a refusal of step (an error of kind errkind.Refused) and
// returns err, joined with the record's error when it could not be
// written. Every step defers it, so no refusal goes unrecorded, whichever
// guard it came from.
func (c *Cutover) refused(ctx context.Context, step string, err error) error {
	if err == nil || errkind.Of(err) != errkind.Refused {
		return err
	}
	return errors.Join(err, c.record(ctx, Event{Step: "refuse", Detail: map[string]any{"step": step, "reason": err.Error()}}))
}

// approve asks Options.Approve.
func (c *Cutover) approve(ctx context.Context, in Intent) error {
	if c.opts.Approve == nil {
		return fmt.Errorf("%w: %s of connector %s", ErrNotApproved, in.Step, in.Connector)
	}
	ok, err := c.opts.Approve(ctx, in)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: %s of connector %s", ErrNotApproved, in.Step, in.Connector)
	}
	return nil
}

// prepare is verify.Prepare for a step that writes: the plan applicable,
// the configuration the plan's and linted, the clusters as the plan saw
// them. It keeps the observation for the next step of this Cutover.
func (c *Cutover) prepare(ctx context.Context) error {
	c.mu.Lock()
	previous := c.observed
	c.mu.Unlock()
	opts := verify.PrepareOptions{Previous: previous, Input: c.opts.Input, Writers: c.writers}
	prep, err := verify.Prepare(ctx, c.clients.Connect, c.clients.Source, c.clients.Target, c.plan, c.config, opts)
	if prep.Reached.Proven() { // every fact was read
		c.mu.Lock()
		c.observed, c.reached = &prep.Observation, prep.Reached
		c.mu.Unlock()
	}
	return err
}

// writers reads which clusters the worker and MM2's producer write to
// (verify.ObserveWriters). A producer.override.bootstrap.servers is dialed
// with the target client's settings, which only a *kafkaadmin.Client has:
// with another Cluster such a configuration cannot be checked.
func (c *Cutover) writers(ctx context.Context) (verify.Writers, error) {
	target, _ := c.clients.Target.(*kafkaadmin.Client)
	if target == nil && c.config["producer.override.bootstrap.servers"] != "" {
		return verify.Writers{}, fmt.Errorf("%w: producer.override.bootstrap.servers is checked only with a *kafkaadmin.Client for the target", ErrInvalidUse)
	}
	return verify.ObserveWriters(ctx, c.clients.Connect, target, c.config)
}

// redactedConfig is RedactConfig of the Cutover's configuration.
func (c *Cutover) redactedConfig(ctx context.Context) map[string]string {
	return RedactConfig(ctx, c.clients.Connect, c.config, c.log)
}

// RedactConfig returns a connector configuration as a record, a log or a
// report may hold it: the values of the keys the connector plugin defines
// as PASSWORD (the worker's validate answer, which it asks for), of the
// Kafka clients' password keys and of keys whose names say secret, and any
// value equal to one of them, replaced (redact.ConfigWith). When the worker
// cannot be asked, the clients' keys and the names decide alone, and log
// says so.
func RedactConfig(ctx context.Context, c *connect.Client, config map[string]string, log *slog.Logger) map[string]string {
	class := config["connector.class"]
	if class == "" {
		class = connect.MirrorSourceConnectorClass
	}
	infos, err := c.Validate(ctx, class, config)
	if err != nil {
		if log != nil {
			log.Warn("cannot ask the worker which keys are PASSWORD: the clients' password keys and the key names decide what is redacted", "error", err)
		}
		return redact.Config(config)
	}
	return redact.ConfigWith(config, infos.PasswordKeys())
}

// clusters returns the clusters the last read proved.
func (c *Cutover) clusters() verify.Reached {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reached
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
