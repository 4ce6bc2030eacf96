package connect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/internal/progress"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// ErrNotMirrorOffset means Connect listed an offset that is not shaped like
// MirrorSourceConnector's: it was not written by MM2 or by a plan.
var ErrNotMirrorOffset = errkind.New(errkind.CheckFailed, "connect: not a MirrorSourceConnector offset")

// MirrorOffsets reads a MirrorSourceConnector's offsets (GET
// /connectors/{name}/offsets) as typed values, decoded by
// offsets.ParseConnectOffsets, the one strict decoder of that body. The
// answer is eventually consistent and unordered, as for Offsets. Errors:
// those of Offsets, or an error matching ErrNotMirrorOffset (and
// offsets.ErrMalformed) naming an entry of another shape.
func (c *Client) MirrorOffsets(ctx context.Context, name string) ([]offsets.ConnectOffset, error) {
	return c.mirrorOffsets(ctx, name, false)
}

// mirrorOffsets is MirrorOffsets; once makes one attempt of the GET, for a
// caller that retries on its own schedule.
func (c *Client) mirrorOffsets(ctx context.Context, name string, once bool) ([]offsets.ConnectOffset, error) {
	if err := c.requireVersion(ctx, "reading connector offsets", versionOffsetsRead); err != nil {
		return nil, err
	}
	path := connectorPath(name, "/offsets")
	var body json.RawMessage
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path, repeat: RepeatSafe, once: once}, &body); err != nil {
		return nil, err
	}
	list, err := offsets.ParseConnectOffsets(body)
	if err != nil {
		return nil, fmt.Errorf("%w: GET %s: %w", ErrNotMirrorOffset, path, err)
	}
	return list, nil
}

// AlterMirrorOffsets writes a MirrorSourceConnector's offsets (PATCH
// /connectors/{name}/offsets): {"offset": M} for a present offset, null for
// an absent one, which deletes the partition's stored offset. The body is
// offsets.PatchBody(list), byte for byte what plan.Plan.PatchBody renders
// for the same entries. Same guard, retries and errors as AlterOffsets.
func (c *Client) AlterMirrorOffsets(ctx context.Context, name string, list []offsets.ConnectOffset) (string, error) {
	return c.alterOffsets(ctx, name, len(list), func() ([]byte, error) { return offsets.PatchBody(list), nil })
}

// ErrReadBack matches a *ReadBackError whose reads succeeded and never
// equalled the expected offsets: a check that ran and failed.
var ErrReadBack = errkind.New(errkind.CheckFailed, "connect: offsets read back do not equal the expected ones")

// ErrOffsetsUnread matches a *ReadBackError whose reads all failed: the
// offsets were never read, so nothing is known about them. The worker was
// unreachable or kept failing; a later read may succeed (worth a retry).
var ErrOffsetsUnread = errkind.New(errkind.Retry, "connect: the offsets could not be read back")

// ReadBackError is WaitMirrorOffsets giving up. With Reads > 0 it matches
// ErrReadBack and ReadBack is the last comparison; with Reads == 0 no read
// succeeded, it matches ErrOffsetsUnread and ReadBack is empty. Err is the
// context's error, with the last failed read's.
type ReadBackError struct {
	Connector string
	ReadBack  offsets.ReadBack
	// Reads is the number of reads that succeeded, Attempts of all reads.
	Reads, Attempts int
	Err             error
}

func (e *ReadBackError) Error() string {
	if e.Reads == 0 {
		return fmt.Sprintf("%v for connector %s: none of %d reads succeeded (%v), so nothing is known about them; read them again once the worker answers",
			ErrOffsetsUnread, e.Connector, e.Attempts, e.Err)
	}
	return fmt.Sprintf("%v for connector %s (%v): %s\n%s", ErrReadBack, e.Connector, e.Err, e.ReadBack, e.ReadBack.Diff())
}

// Is makes errors.Is(err, ErrReadBack) true when a read succeeded, and
// errors.Is(err, ErrOffsetsUnread) when none did.
func (e *ReadBackError) Is(target error) bool {
	return target == ErrReadBack && e.Reads > 0 || target == ErrOffsetsUnread && e.Reads == 0
}

// Unwrap returns the context's error (and the last read's).
func (e *ReadBackError) Unwrap() error { return e.Err }

// ErrorKind is errkind.CheckFailed when a read succeeded and read other
// offsets, errkind.Retry when none did.
func (e *ReadBackError) ErrorKind() errkind.Kind {
	if e.Reads > 0 {
		return errkind.CheckFailed
	}
	return errkind.Retry
}

// Pauses between the reads of WaitMirrorOffsets: Connect usually shows a
// PATCH within a few hundred milliseconds, so the first reads come quickly;
// the pause then doubles up to a second, bounding the load a long wait puts
// on the worker.
const (
	readBackFirstPause = 50 * time.Millisecond
	readBackMaxPause   = time.Second
)

// WaitMirrorOffsets reads a MirrorSourceConnector's offsets until they equal
// want as a set (offsets.CompareReadBack), or ctx ends, and returns the
// comparison. GET offsets is eventually consistent, so a first read may
// lag a PATCH; reads start 50 ms apart and back off to a second, and each
// is compared cheaply (offsets.OffsetSet); the full comparison is built
// once, for the result.
//
// A read that fails with an error that is transient for a read
// (IsTransient with RepeatSafe: a rebalance, a 503, a refused or reset
// connection, or ErrOffsetsUnavailable, which Connect answers while it
// loads offsets just written) does not end the wait, so a PATCH that
// succeeded is never reported as failed when a later read matches. When
// ctx ends first the error is a *ReadBackError: matching ErrReadBack
// when a read succeeded, ErrOffsetsUnread when none did (a worker that
// died after the PATCH is not a failed comparison). Any other read error
// ends the wait at once and is returned as is.
func (c *Client) WaitMirrorOffsets(ctx context.Context, name string, want []offsets.ConnectOffset) (offsets.ReadBack, error) {
	set := offsets.NewOffsetSet(want)
	pause := readBackFirstPause
	rep := progress.Start(c.logger, fmt.Sprintf("connector %s's offsets to read back as the %d written", name, len(want)))
	var (
		last            []offsets.ConnectOffset
		reads, attempts int   // successful and all reads; last holds a read when reads > 0
		readErr         error // the last read's error, when it failed
	)
	t := time.NewTimer(0)
	defer t.Stop()
	<-t.C
	for {
		// One attempt a read: this loop is the retry. A transient error
		// (the worker's 500 while its offset store catches up with the
		// PATCH, as it answers at 10,000 partitions and more) is read again
		// after the loop's pause, not after the client's first backoff.
		got, err := c.mirrorOffsets(ctx, name, true)
		attempts++
		switch {
		case err == nil:
			if set.Equal(got) {
				return offsets.CompareReadBack(want, got), nil
			}
			last, readErr = got, nil
			reads++
			if rep.Due() {
				rb := offsets.CompareReadBack(want, got)
				rep.ReportLeft(ctx, int64(len(want)-rb.Count(offsets.Match)), "match", rb.Count(offsets.Match), "wrong_value", rb.Count(offsets.WrongValue),
					"missing", rb.Count(offsets.Missing), "unexpected", rb.Count(offsets.Unexpected))
			}
		case ctx.Err() != nil:
			// The wait's end cut this read off: it says nothing the reads
			// before it did not, and the wait's error keeps theirs.
		case IsTransient(RepeatSafe, err):
			readErr = err
			rep.Report(ctx, "last_error", err.Error())
		default:
			return offsets.ReadBack{}, err
		}
		t.Reset(pause)
		select {
		case <-ctx.Done():
			var rb offsets.ReadBack
			if reads > 0 {
				rb = offsets.CompareReadBack(want, last)
			}
			werr := ctx.Err()
			if readErr != nil && !errors.Is(readErr, werr) {
				werr = fmt.Errorf("%w (last read: %w)", werr, readErr)
			}
			return rb, &ReadBackError{Connector: name, ReadBack: rb, Reads: reads, Attempts: attempts, Err: werr}
		case <-t.C:
		}
		pause = min(2*pause, readBackMaxPause)
	}
}

// SettledMirrorOffsets reads a stopped MirrorSourceConnector's offsets
// until two reads a second apart agree, and returns the last. A connector
// just stopped had its tasks commit their last offsets, and GET
// .../offsets is eventually consistent: one read may miss the last commit,
// which a rollback must not. It gives up after 30 reads with an error
// matching ErrOffsetsUnsettled. Read errors are those of MirrorOffsets.
func (c *Client) SettledMirrorOffsets(ctx context.Context, name string) ([]offsets.ConnectOffset, error) {
	prev, err := c.MirrorOffsets(ctx, name)
	if err != nil {
		return nil, err
	}
	t := time.NewTimer(0)
	defer t.Stop()
	<-t.C
	for range 30 {
		t.Reset(settlePause)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("connect: offsets of connector %q to settle: %w", name, ctx.Err())
		case <-t.C:
		}
		cur, err := c.MirrorOffsets(ctx, name)
		if err != nil {
			return nil, err
		}
		if offsets.CompareReadBack(prev, cur).OK() {
			return cur, nil
		}
		prev = cur
	}
	return nil, fmt.Errorf("%w: connector %q", ErrOffsetsUnsettled, name)
}

// settlePause is the pause between two reads of SettledMirrorOffsets.
const settlePause = time.Second

// ErrOffsetsUnsettled matches SettledMirrorOffsets giving up: the offsets
// of a connector kept changing after it stopped (is it really STOPPED, or
// did something else write them?).
var ErrOffsetsUnsettled = errkind.New(errkind.Retry, "connect: the connector's offsets kept changing")
