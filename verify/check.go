package verify

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/offsets"
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
