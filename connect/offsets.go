package connect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"
)

// Offset is one entry of a connector's offsets as Connect's REST API shows
// them: a source partition and its source offset, both free-form maps whose
// keys the connector plugin defines. A nil Offset map is a tombstone: in an
// alter request it deletes the partition's offset (JSON null); Connect never
// returns one.
//
// For MirrorSourceConnector use offsets.ConnectOffset and the Mirror methods
// (MirrorOffsets, AlterMirrorOffsets, WaitMirrorOffsets): one typed form,
// encoded byte for byte as plan.Plan.PatchBody encodes it.
// JSON numbers are decoded as int64 (float64 only when not an integer), so
// values compare exactly and re-encode as plain JSON integers.
type Offset struct {
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

// Keys of MirrorSourceConnector's source partitions and offsets.
const (
	MirrorKeyCluster   = "cluster"
	MirrorKeyTopic     = "topic"
	MirrorKeyPartition = "partition"
	MirrorKeyOffset    = "offset"
)

// UnmarshalJSON decodes Connect's numbers as int64.
func (o *Offset) UnmarshalJSON(data []byte) error {
	var raw struct {
		Partition map[string]any `json:"partition"`
		Offset    map[string]any `json:"offset"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	o.Partition = normalizeMap(raw.Partition)
	o.Offset = normalizeMap(raw.Offset)
	return nil
}

func normalizeMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = normalize(v)
	}
	return out
}

// normalize turns every JSON or Go number into int64 when it is an integer,
// recursively, so that equal offsets compare equal.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return normalizeMap(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	}
	if n, ok := asInt64(v); ok {
		return n
	}
	if n, ok := v.(json.Number); ok {
		if f, err := n.Float64(); err == nil {
			return f
		}
	}
	return v
}

func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	}
	return 0, false
}

// Offsets reads a connector's offsets (GET /connectors/{name}/offsets, Kafka
// 3.5). The worker answers from its own view of the offsets topic without
// forwarding, so right after an alter the answer can be stale (use
// WaitOffsets); the order is arbitrary. Offsets outlive the connector: a
// deleted connector's offsets are inherited by a new one of the same name.
//
// It returns a *VersionError for older workers and an *APIError matching
// ErrNotFound when the connector does not exist.
func (c *Client) Offsets(ctx context.Context, name string) ([]Offset, error) {
	if err := c.requireVersion(ctx, "reading connector offsets", versionOffsetsRead); err != nil {
		return nil, err
	}
	var out offsetList
	if _, err := c.do(ctx, request{method: http.MethodGet, path: connectorPath(name, "/offsets"), repeat: RepeatSafe}, &out); err != nil {
		return nil, err
	}
	return out.Offsets, nil
}

// AlterOffsets writes offsets for the given source partitions (PATCH
// /connectors/{name}/offsets, Kafka 3.6): each entry sets the partition's
// offset, or deletes it when Offset is nil. Partitions not listed keep theirs.
// The request is forwarded to the leader and is safe to repeat with the same
// body, so it is retried on transient errors. It returns the worker's
// message.
//
// The connector must be STOPPED with zero tasks. AlterOffsets checks this
// first (call WaitStopped after Create or Stop: a new connector has no status
// for a moment) and returns a *NotStoppedError naming the state (PAUSED is not
// STOPPED) without writing; a 400 from the worker for the same reason is
// returned as a *NotStoppedError too. Both match ErrNotStopped.
//
// MirrorSourceConnector checks only the format: a negative offset or a
// non-integer partition gives a 500, but a wrong cluster alias or a partition
// that does not exist is accepted and silently never read: validate against
// the plan before calling.
func (c *Client) AlterOffsets(ctx context.Context, name string, offsets []Offset) (string, error) {
	return c.alterOffsets(ctx, name, len(offsets), func() ([]byte, error) { return encodeOffsetList(offsets) })
}

// alterOffsets sends PATCH /connectors/{name}/offsets with body()'s bytes
// for n partitions, after the version check and the STOPPED guard.
func (c *Client) alterOffsets(ctx context.Context, name string, n int, body func() ([]byte, error)) (string, error) {
	if n == 0 {
		return "", errors.New("connect: alter offsets needs at least one partition")
	}
	if err := c.requireVersion(ctx, "altering connector offsets", versionOffsetsWrite); err != nil {
		return "", err
	}
	if err := c.RequireStopped(ctx, name); err != nil {
		return "", err
	}
	b, err := body()
	if err != nil {
		return "", fmt.Errorf("connect: PATCH %s: encode body: %w", connectorPath(name, "/offsets"), err)
	}
	return c.offsetsWrite(ctx, name, http.MethodPatch, b)
}

// ResetOffsets deletes all offsets of a connector (DELETE
// /connectors/{name}/offsets, Kafka 3.6); the next start reads from where
// source.consumer.auto.offset.reset says. Same guard, retries and errors as
// AlterOffsets.
func (c *Client) ResetOffsets(ctx context.Context, name string) (string, error) {
	if err := c.requireVersion(ctx, "resetting connector offsets", versionOffsetsWrite); err != nil {
		return "", err
	}
	if err := c.RequireStopped(ctx, name); err != nil {
		return "", err
	}
	return c.offsetsWrite(ctx, name, http.MethodDelete, nil)
}

func (c *Client) offsetsWrite(ctx context.Context, name, method string, body []byte) (string, error) {
	var msg struct {
		Message string `json:"message"`
	}
	_, err := c.do(ctx, request{method: method, path: connectorPath(name, "/offsets"), rawBody: body, repeat: RepeatSafe}, &msg)
	if err != nil {
		if errors.Is(err, ErrNotStopped) {
			nse := &NotStoppedError{Connector: name, Err: err}
			if st, serr := c.Status(ctx, name); serr == nil {
				nse.State, nse.Tasks = st.Connector.State, len(st.Tasks)
			}
			return "", nse
		}
		return "", err
	}
	return msg.Message, nil
}

// RequireStopped is the STOPPED guard every step that writes a
// connector's offsets, or resumes it, passes first (AlterOffsets and
// ResetOffsets pass it too). It returns nil when the connector is STOPPED
// with no tasks, the only state in which its offsets may change.
//
// A connector that is RUNNING, PAUSED or FAILED is refused at once with a
// *NotStoppedError naming the state: PAUSED is not STOPPED, and a FAILED
// one was resumed. One between states — no status yet (just created), or
// UNASSIGNED, or STOPPED while it still lists tasks, as on its way back to
// STOPPED after a configuration change — is polled for as long as the
// client retries a rebalance (Retry.Elapsed, 2 minutes by default; never
// less than 30 s): a new connector reports STOPPED only once a rebalance
// has assigned it. If it does not settle, the *NotStoppedError has Settling
// set: worth a retry, not a refusal. A connector not found within 15 s of
// the call (a worker that forwarded the create may not know it yet) is an
// *APIError matching ErrNotFound. Both *NotStoppedError cases match
// ErrNotStopped.
func (c *Client) RequireStopped(ctx context.Context, name string) error {
	since := time.Now()
	deadline := since.Add(c.rebalanceWait(transitionWait))
	var st *ConnectorStatus
	err := c.poll(ctx, func() (bool, error) {
		var err error
		if st, err = c.pollNewStatus(ctx, name, since); err != nil {
			return false, err
		}
		switch {
		case st != nil && st.Connector.State == StateStopped && len(st.Tasks) == 0:
			return true, nil
		case st != nil && st.Connector.State != StateUnassigned && st.Connector.State != StateStopped:
			return false, &NotStoppedError{Connector: name, State: st.Connector.State, Tasks: len(st.Tasks)}
		case time.Now().After(deadline):
			nse := &NotStoppedError{Connector: name, State: "without a reported status yet", Settling: true}
			if st != nil {
				nse.State, nse.Tasks = st.Connector.State, len(st.Tasks)
			}
			return false, nse
		}
		return false, nil
	}, func(cerr error) error {
		return fmt.Errorf("connect: waiting for connector %q to be STOPPED with no tasks, last seen %s: %w", name, describe(st), cerr)
	})
	return err
}

// transitionWait is the least an offsets write waits for a connector
// between states to settle in STOPPED.
const transitionWait = 30 * time.Second

// rebalanceWait is how long a wait gives what only a rebalance completes
// (a new connector assigned, or known to the worker asked): as long as the
// client retries a request refused for a rebalance, and at least floor.
// On a loaded CI machine (66bceba) apply failed (its error not kept) in
// the second the worker asked rejoined its group, as a worker does when it
// reads a new connector: it had not known the one created 15 s or more
// before, or had not yet seen it STOPPED.
func (c *Client) rebalanceWait(floor time.Duration) time.Duration {
	return max(floor, cmpOr(c.policy.Elapsed, defaultRetryElapsed))
}
