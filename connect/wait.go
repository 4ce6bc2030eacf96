package connect

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/progress"
)

// poll calls check until it reports done or an error, or ctx ends. Pauses
// grow from 100ms to the client's poll interval. On ctx end it returns
// onDone(ctx error).
func (c *Client) poll(ctx context.Context, check func() (bool, error), onDone func(error) error) error {
	wait := 100 * time.Millisecond
	if wait > c.pollMax {
		wait = c.pollMax
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for {
		done, err := check()
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return onDone(cerr)
			}
			return err
		}
		if done {
			return nil
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return onDone(ctx.Err())
		case <-timer.C:
		}
		wait = min(wait*2, c.pollMax)
	}
}

// WaitStopped polls GET /connectors/{name}/status until the connector is
// STOPPED and lists no tasks, which is when its offsets may be altered, and
// returns that status. A connector just created has no status for a moment
// (the worker answers 404 "No status found"); that counts as not yet. It
// returns an *APIError matching ErrNotFound if the connector does not exist
// 15 s after the call (a worker that forwarded the create to the leader
// answers 404 until it has read the new configuration, so until then a
// connector not found counts as not yet too), or an error wrapping ctx's
// error (with the last state seen) when ctx ends first.
func (c *Client) WaitStopped(ctx context.Context, name string) (*ConnectorStatus, error) {
	var last *ConnectorStatus
	since := time.Now()
	rep := progress.Start(c.logger, fmt.Sprintf("connector %s to be STOPPED with no tasks", name))
	err := c.poll(ctx, func() (bool, error) {
		rep.Report(ctx, "last_seen", describe(last))
		st, err := c.pollNewStatus(ctx, name, since)
		if err != nil || st == nil {
			return false, err
		}
		last = st
		return st.Connector.State == StateStopped && len(st.Tasks) == 0, nil
	}, func(cerr error) error {
		return fmt.Errorf("connect: waiting for connector %q to be STOPPED with no tasks, last seen %s: %w", name, describe(last), cerr)
	})
	if err != nil {
		return nil, err
	}
	return last, nil
}

// WaitRunning polls GET /connectors/{name}/status until the connector and at
// least one task are RUNNING and every task is RUNNING, and returns that
// status. A FAILED connector or task ends the wait with a *FailedError
// carrying the worker's trace (ErrFailed). It returns an *APIError matching
// ErrNotFound if the connector does not exist 15 s after the call (as
// WaitStopped), or an error wrapping ctx's error when ctx ends first.
func (c *Client) WaitRunning(ctx context.Context, name string) (*ConnectorStatus, error) {
	var last *ConnectorStatus
	since := time.Now()
	rep := progress.Start(c.logger, fmt.Sprintf("connector %s and its tasks to be RUNNING", name))
	err := c.poll(ctx, func() (bool, error) {
		rep.Report(ctx, "last_seen", describe(last))
		st, err := c.pollNewStatus(ctx, name, since)
		if err != nil || st == nil {
			return false, err
		}
		last = st
		if st.Connector.State == StateFailed {
			return false, &FailedError{Connector: name, WorkerID: st.Connector.WorkerID, Trace: st.Connector.Trace}
		}
		for _, t := range st.Tasks {
			if t.State.State == StateFailed {
				id := t.ID
				return false, &FailedError{Connector: name, Task: &id, WorkerID: t.WorkerID, Trace: t.Trace}
			}
		}
		if st.Connector.State != StateRunning || len(st.Tasks) == 0 {
			return false, nil
		}
		for _, t := range st.Tasks {
			if t.State.State != StateRunning {
				return false, nil
			}
		}
		return true, nil
	}, func(cerr error) error {
		return fmt.Errorf("connect: waiting for connector %q and its tasks to be RUNNING, last seen %s: %w", name, describe(last), cerr)
	})
	if err != nil {
		return nil, err
	}
	return last, nil
}

// WaitKnown polls GET /connectors/{name}/config on the worker asked until
// it answers, and returns the configuration. A worker that forwarded a
// create to the leader has already answered 201, and answers 404 until its
// own configuration store has read the new connector; every read of the
// connector through it (its configuration, a resume) fails until then. The
// create was answered, so a 404 is "not yet" for as long as the client
// retries a rebalance (Retry.Elapsed, 2 minutes by default; never less
// than newConnectorGrace): on a loaded machine a worker may read the create
// back only with the rebalance it causes. It returns an *APIError matching
// ErrNotFound if the connector is still unknown then, or an error wrapping
// ctx's error when ctx ends first.
func (c *Client) WaitKnown(ctx context.Context, name string) (map[string]string, error) {
	since := time.Now()
	grace := c.rebalanceWait(newConnectorGrace)
	var config map[string]string
	err := c.poll(ctx, func() (bool, error) {
		var err error
		config, err = c.Config(ctx, name)
		if errors.Is(err, ErrNotFound) && time.Since(since) < grace {
			return false, nil
		}
		return err == nil, err
	}, func(cerr error) error {
		return fmt.Errorf("connect: waiting for the worker to know connector %q: %w", name, cerr)
	})
	if err != nil {
		return nil, err
	}
	return config, nil
}

// pollStatus reads the status for the Wait helpers. Right after a create the
// worker answers 404 "No status found for connector X" until the connector's
// first state is written to the status topic: when GET /connectors/{name}
// finds the connector, that 404 means "not yet" and st is nil.
func (c *Client) pollStatus(ctx context.Context, name string) (*ConnectorStatus, error) {
	st, err := c.Status(ctx, name)
	if err == nil || !errors.Is(err, ErrNotFound) {
		return st, err
	}
	if _, cerr := c.Connector(ctx, name); cerr != nil {
		return nil, cerr
	}
	return nil, nil
}

// newConnectorGrace is how long a wait treats "not found" as "not yet": a
// worker that forwarded a create to the leader answers 404 until it has
// read the new configuration from the config topic (seen on a loaded
// 4.3.1 worker).
const newConnectorGrace = 15 * time.Second

// pollNewStatus is pollStatus for a wait that may follow a create: within
// newConnectorGrace of since, a connector not found yet is no error.
func (c *Client) pollNewStatus(ctx context.Context, name string, since time.Time) (*ConnectorStatus, error) {
	st, err := c.pollStatus(ctx, name)
	if errors.Is(err, ErrNotFound) && time.Since(since) < newConnectorGrace {
		return nil, nil
	}
	return st, err
}

func describe(st *ConnectorStatus) string {
	if st == nil {
		return "no status yet"
	}
	return fmt.Sprintf("%s with %d task(s)", st.Connector.State, len(st.Tasks))
}
