package verify

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// pollInterval is how often the waiting checks read again.
const pollInterval = time.Second

// ErrReadBack matches a *ReadBackError.
var ErrReadBack = errors.New("connect's offsets do not equal the plan")

// ReadBackError is returned when Connect's offsets did not equal the plan
// before the deadline; ReadBack is the last comparison.
type ReadBackError struct {
	Connector string
	ReadBack  ReadBack
	Err       error // the context's error, or the last read's
}

func (e *ReadBackError) Error() string {
	return fmt.Sprintf("connector %s: offsets read back do not equal the plan (%v): %s\n%s",
		e.Connector, e.Err, e.ReadBack, e.ReadBack.Diff)
}

// Is makes errors.Is(err, ErrReadBack) true.
func (e *ReadBackError) Is(target error) bool { return target == ErrReadBack }

// Unwrap returns the context's or the last read's error.
func (e *ReadBackError) Unwrap() error { return e.Err }

// ReadOffsets reads a connector's offsets from Connect as MirrorSourceConnector
// offsets. Errors: the client's, or ErrNotMirrorOffset.
func ReadOffsets(ctx context.Context, c *connect.Client, connector string) ([]offsets.ConnectOffset, error) {
	list, err := c.Offsets(ctx, connector)
	if err != nil {
		return nil, err
	}
	return FromConnect(list)
}

// WaitReadBack reads the connector's offsets until they equal want (as a
// set) or ctx ends, and returns the last comparison. Connect's GET offsets
// is eventually consistent, so a first read may lag a PATCH. When ctx ends
// first the error is a *ReadBackError carrying the comparison and its diff;
// a read that fails (the client has already retried transient errors) ends
// the wait with that error.
func WaitReadBack(ctx context.Context, c *connect.Client, connector string, want []offsets.ConnectOffset) (ReadBack, error) {
	for {
		got, err := ReadOffsets(ctx, c, connector)
		if err != nil {
			if ctx.Err() != nil {
				return ReadBack{}, &ReadBackError{Connector: connector, Err: ctx.Err()}
			}
			return ReadBack{}, err
		}
		last := CompareReadBack(want, got)
		if last.OK() {
			return last, nil
		}
		if err := sleep(ctx, pollInterval); err != nil {
			return last, &ReadBackError{Connector: connector, ReadBack: last, Err: err}
		}
	}
}

// LagSample is the total lag at one moment.
type LagSample struct {
	At    time.Time
	Total int64
}

// CatchUp is what WaitCaughtUp observed.
type CatchUp struct {
	// Samples is the total lag at each reading, first to last.
	Samples []LagSample
	// Last is the per-partition lag of the last reading.
	Last []PartitionLag
	// Reached is true when MM2 had replicated, on every partition, all that
	// the source held at the first reading.
	Reached bool
}

// WaitCaughtUp reads the lag every second until MM2 has replicated, on
// every partition of the plan, everything the source held at the first
// reading — its next offset reached that end offset — or ctx ends. Under
// continuing traffic the lag then only counts records produced since, so
// the samples show it converging; with no traffic it reaches 0. Connect
// stores offsets every offset.flush.interval.ms, so a wait takes at least
// that long. On timeout it returns what it saw and an error wrapping the
// context's.
func WaitCaughtUp(ctx context.Context, c *connect.Client, source *kafkaadmin.Reader, p *plan.Plan, connector string) (CatchUp, error) {
	var res CatchUp
	var goal map[offsets.SourcePartition]int64
	for {
		lags, err := ReadLag(ctx, c, source, p, connector)
		if err != nil {
			return res, err
		}
		res.Last = lags
		res.Samples = append(res.Samples, LagSample{At: time.Now(), Total: TotalLag(lags)})
		if goal == nil {
			goal = make(map[offsets.SourcePartition]int64, len(lags))
			for _, l := range lags {
				goal[l.Partition] = l.End
			}
		}
		res.Reached = true
		for _, l := range lags {
			if l.Next < goal[l.Partition] {
				res.Reached = false
				break
			}
		}
		if res.Reached {
			return res, nil
		}
		if err := sleep(ctx, pollInterval); err != nil {
			return res, fmt.Errorf("connector %s has not caught up (lag %d): %w", connector, res.Samples[len(res.Samples)-1].Total, err)
		}
	}
}

// ReadLag reads the source end offsets and the connector's offsets once and
// returns the lag of every partition of the plan (see Lag).
func ReadLag(ctx context.Context, c *connect.Client, source *kafkaadmin.Reader, p *plan.Plan, connector string) ([]PartitionLag, error) {
	got, err := ReadOffsets(ctx, c, connector)
	if err != nil {
		return nil, err
	}
	tps := make([]kafkaadmin.TopicPartition, 0, len(p.Entries))
	for _, e := range p.Entries {
		tps = append(tps, e.Partition)
	}
	bounds, err := source.LogBounds(ctx, tps)
	if err != nil {
		return nil, err
	}
	ends := make(map[offsets.SourcePartition]int64, len(bounds))
	for tp, b := range bounds {
		ends[tp] = b.End
	}
	return Lag(p, ends, got), nil
}

// Finding is one acceptance check.
type Finding struct {
	Check  string `json:"check"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// offsetSyncsTopic matches MM2's offset-syncs topics.
const offsetSyncsTopic = `mm2-offset-syncs\..*\.internal`

// Acceptance checks the shape the design insists on: no
// MirrorCheckpointConnector or MirrorHeartbeatConnector on the Connect
// cluster; no mm2-offset-syncs.*.internal topic on either cluster (the
// connector runs with emit.offset-syncs.enabled=false); and the running
// connector's configuration still has the plan's digest. It returns the
// findings, all OK or not, and an error only when a check could not run.
func Acceptance(ctx context.Context, c *connect.Client, source, target *kafkaadmin.Reader, p *plan.Plan, connector string) ([]Finding, error) {
	var out []Finding
	statuses, err := c.Connectors(ctx)
	if err != nil {
		return nil, err
	}
	var others []string
	for name := range statuses {
		if name == connector {
			continue
		}
		cfg, err := c.Config(ctx, name)
		if err != nil {
			if errors.Is(err, connect.ErrNotFound) {
				continue // deleted meanwhile
			}
			return nil, err
		}
		switch cfg["connector.class"] {
		case "org.apache.kafka.connect.mirror.MirrorCheckpointConnector", "MirrorCheckpointConnector", "MirrorCheckpoint",
			"org.apache.kafka.connect.mirror.MirrorHeartbeatConnector", "MirrorHeartbeatConnector", "MirrorHeartbeat":
			others = append(others, name+" ("+cfg["connector.class"]+")")
		}
	}
	out = append(out, Finding{Check: "no-checkpoint-or-heartbeat-connector", OK: len(others) == 0,
		Detail: detail(len(others) == 0, "none on the Connect cluster", fmt.Sprintf("found %v: the design runs MirrorSourceConnector alone", others))})

	for _, side := range []struct {
		name string
		r    *kafkaadmin.Reader
	}{{"source", source}, {"target", target}} {
		topics, err := side.r.TopicsMatching(ctx, offsetSyncsTopic)
		if err != nil {
			return nil, err
		}
		out = append(out, Finding{Check: "no-offset-syncs-topic-on-" + side.name, OK: len(topics) == 0,
			Detail: detail(len(topics) == 0, "no mm2-offset-syncs topic", fmt.Sprintf("found %v: emit.offset-syncs.enabled is not false, or the worker is older than 3.9 and ignores it", topicNames(topics)))})
	}

	cfg, err := c.Config(ctx, connector)
	if err != nil {
		return nil, err
	}
	digest := plan.ConfigDigest(cfg)
	out = append(out, Finding{Check: "config-digest", OK: digest == p.ConfigDigest,
		Detail: detail(digest == p.ConfigDigest, "the connector's configuration has the plan's digest "+p.ConfigDigest,
			fmt.Sprintf("the connector's configuration digest %s differs from the plan's %s: it was changed after the plan", digest, p.ConfigDigest))})
	return out, nil
}

func detail(ok bool, good, bad string) string {
	if ok {
		return good
	}
	return bad
}

func topicNames(t kafkaadmin.Topics) []string {
	var names []string
	for n := range t {
		names = append(names, n)
	}
	return names
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
