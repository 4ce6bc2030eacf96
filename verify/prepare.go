package verify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// PrepareOptions are the inputs of [Prepare] beyond the plan and its
// configuration. The zero value suits a plan built from a consumer group.
type PrepareOptions struct {
	// Input is the offsets input of a plan from another connector's stored
	// offsets (see Observe), read again. A plan from a Flink savepoint
	// needs none: Prepare reads the savepoint the plan names
	// (FlinkSavepointOfPlan).
	Input OffsetsInput
	// Previous is an observation of this plan made moments ago in this
	// process by a step that linted this configuration (the precheck's, or
	// a previous Prepare's): within ObservationReuse of its time only the
	// group's members are read again (RecheckRecent), and the lint is not
	// asked of the worker again. Nil, or an Observation that Observe did
	// not make (filled by hand, or decoded), reads everything.
	Previous *Observation
	// Writers, when set, reads which clusters the Connect worker and MM2's
	// producer write to, for Recheck (usually ObserveWriters with the
	// tool's clients). Nil leaves them unchecked. Prepare calls it while
	// the lint and Observe run, from another goroutine.
	Writers func(ctx context.Context) (Writers, error)
	// Now is the time Previous is compared with; zero means time.Now().
	Now time.Time
}

// Prepared is what [Prepare] proved and read: what the steps that write
// take next.
type Prepared struct {
	// Policy is the replication policy the plan records
	// (plan.Plan.Policy), which names the target topics.
	Policy offsets.ReplicationPolicy
	// Reached proves the clusters the tool's clients reach, which every
	// write compares with the plan's.
	Reached Reached
	// Observation is what the clusters held; pass it as
	// PrepareOptions.Previous to the next step of this process. It is
	// the zero value unless every fact was read (an error of Recheck
	// leaves it set, one of a read does not).
	Observation Observation
	// Reused is true when Previous served (only the group was read again).
	Reused bool
}

// LintError is the lint of a connector configuration failing in
// [Prepare]: connect.Lint's and Connect's own findings, errors first. It
// matches ErrCheckFailed.
type LintError struct {
	Findings []connect.Finding
}

func (e *LintError) Error() string {
	var errs []string
	for _, f := range e.Findings {
		if f.Severity == connect.SeverityError {
			errs = append(errs, f.Key+": "+f.Message)
		}
	}
	return "verify: the connector configuration fails its lint: " + strings.Join(errs, "; ")
}

// Is reports whether target is ErrCheckFailed.
func (e *LintError) Is(target error) bool { return target == ErrCheckFailed }

// ErrorKind is errkind.CheckFailed.
func (e *LintError) ErrorKind() errkind.Kind { return errkind.CheckFailed }

// Prepare is what a tool calls first in every step that writes (apply,
// resume): it proves the plan still holds, so that the steps after it act
// on facts of now, not of the day the plan was built. In order, it
//
//   - validates the plan and refuses blocked entries (plan.Plan.Validate,
//     plan.Plan.Blocked);
//   - proves config is the configuration the plan was built for
//     (plan.Plan.AttachConfig: a *plan.ConfigChangedError naming the keys
//     that differ otherwise; a plan older than schema version 4 is given
//     config, which it records only as a digest);
//   - takes the replication policy the plan records (plan.Plan.Policy);
//   - with a recent opts.Previous, reads the group again and rechecks
//     (RecheckRecent), and stops there;
//   - lints config on the worker c (connect.Client.LintConfig, with the
//     plan's alias, topics and cleared partitions: a *LintError when a
//     finding is an error);
//   - observes the clusters (Observe) and the writers (opts.Writers), and
//     rechecks the plan against them (Recheck: a *StalePlanError naming
//     every change).
//
// The lint, the observation and the writers are read at once (they ask
// different systems, and none depends on another); their errors are
// returned in the order above.
//
// It writes nothing. The result's Reached is what CreateOrAdopt, Patch,
// CheckResumable and Resume take.
func Prepare(ctx context.Context, c *connect.Client, source, target ClusterReader, p *plan.Plan, config map[string]string, opts PrepareOptions) (Prepared, error) {
	var out Prepared
	if err := p.Validate(); err != nil {
		return out, err
	}
	if err := p.Blocked(); err != nil {
		return out, err
	}
	if err := p.AttachConfig(config); err != nil {
		return out, fmt.Errorf("the connector configuration: %w", err)
	}
	var err error
	if out.Policy, err = p.Policy(); err != nil {
		return out, err
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	if opts.Previous != nil && opts.Previous.read {
		obs := *opts.Previous
		if reused, err := RecheckRecent(ctx, source, p, &obs, now); reused {
			out.Reused = true
			out.Reached = Reached{source: obs.SourceClusterID, target: obs.TargetClusterID}
			if err == nil || errors.Is(err, ErrStalePlan) { // the group was read
				out.Observation = obs
			}
			return out, err
		}
	}
	input := opts.Input
	if p.OffsetsFrom.Kind == plan.FromFlinkSavepoint && input == nil {
		sp, err := FlinkSavepointOfPlan(p)
		if err != nil {
			return out, &staleInput{what: "the plan's savepoint", err: err}
		}
		input = sp
	}
	var (
		wg                    sync.WaitGroup
		findings              []connect.Finding
		obs                   Observation
		w                     Writers
		lintErr, obsErr, wErr error
	)
	wg.Go(func() { findings, lintErr = c.LintConfig(ctx, config, lintExpectations(p)) })
	wg.Go(func() { obs, obsErr = Observe(ctx, source, target, p, input) })
	if opts.Writers != nil {
		wg.Go(func() { w, wErr = opts.Writers(ctx) })
	}
	wg.Wait()
	if lintErr != nil {
		return out, fmt.Errorf("lint the connector configuration: %w", lintErr)
	}
	if connect.HasErrors(findings) {
		return out, &LintError{Findings: findings}
	}
	if obsErr != nil {
		return out, obsErr
	}
	if wErr != nil {
		return out, wErr
	}
	if opts.Writers != nil {
		obs.Writers = &w
	}
	out.Observation = obs
	out.Reached = Reached{source: obs.SourceClusterID, target: obs.TargetClusterID}
	return out, Recheck(p, obs)
}

// lintExpectations are the facts of a plan the lint checks a
// configuration against: its source alias, its topics, and whether it
// clears a partition (C = 0, which relies on auto.offset.reset=earliest).
func lintExpectations(p *plan.Plan) connect.LintExpectations {
	exp := connect.LintExpectations{SourceAlias: p.SourceAlias}
	for _, e := range p.Entries {
		if n := len(exp.Topics); n == 0 || exp.Topics[n-1] != e.Partition.Topic {
			exp.Topics = append(exp.Topics, e.Partition.Topic)
		}
		if e.Action == offsets.ActionClear {
			exp.HasClearedPartition = true
		}
	}
	return exp
}

// ClusterIDReader reads the ID of the cluster a client reaches, as
// *kafkaadmin.Client does.
type ClusterIDReader interface {
	ClusterID(ctx context.Context) (string, error)
}

// ReadClusters reads the IDs of the clusters the tool's clients reach,
// for a step that has no fresh observation to take them from (a rollback:
// the plan's facts have moved on since the resume).
//
// The two clusters are read at once: over a network, each first read
// opens a connection (TLS, SASL) of several round trips.
func ReadClusters(ctx context.Context, source, target ClusterIDReader) (Reached, error) {
	var (
		src, tgt       string
		srcErr, tgtErr error
		wg             sync.WaitGroup
	)
	wg.Go(func() { src, srcErr = source.ClusterID(ctx) })
	wg.Go(func() { tgt, tgtErr = target.ClusterID(ctx) })
	wg.Wait()
	if srcErr != nil {
		return Reached{}, fmt.Errorf("source cluster: %w", srcErr)
	}
	if tgtErr != nil {
		return Reached{}, fmt.Errorf("target cluster: %w", tgtErr)
	}
	if src == "" || tgt == "" {
		return Reached{}, fmt.Errorf("%w: a cluster answered an empty cluster ID", ErrCheckFailed)
	}
	return Reached{source: src, target: tgt}, nil
}

// staleInput is a plan whose offsets input can no longer be read (its
// savepoint gone or damaged): the plan is stale, refused, whatever the
// input's own error says of the input (a savepoint that does not read is
// rejected input to flinksavepoint, a stale plan here).
type staleInput struct {
	what string
	err  error
}

func (e *staleInput) Error() string { return fmt.Sprintf("%v: %s: %v", ErrStalePlan, e.what, e.err) }

// Is makes errors.Is(err, ErrStalePlan) true.
func (e *staleInput) Is(target error) bool { return target == ErrStalePlan }

func (e *staleInput) Unwrap() error { return e.err }

// ErrorKind is errkind.Refused.
func (e *staleInput) ErrorKind() errkind.Kind { return errkind.Refused }
