package verify

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/offsets"
)

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
