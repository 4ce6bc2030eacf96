package connect_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// Kafka Connect 4.3.1 answers the first GET of offsets after a large PATCH
// with this 500 (a ConcurrentModificationException while it loads what it
// just wrote); a real worker cannot be made to do it on demand, so these
// tests serve its shape from httptest. The sandbox test
// TestSandboxReadBack10k meets the real one.
const offsetsUnavailable = `{"error_code":500,"message":"Failed to retrieve offsets for source connector mm2"}`

// fakeOffsets serves GET / and, for GET /connectors/mm2/offsets, the
// answers in turn (a status and a body each), repeating the last.
func fakeOffsetsServer(t *testing.T, answers ...func(w http.ResponseWriter)) (*connect.Client, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"version":"4.3.1","commit":"c","kafka_cluster_id":"k"}`)
	})
	mux.HandleFunc("GET /connectors/mm2/offsets", func(w http.ResponseWriter, r *http.Request) {
		n := int(calls.Add(1))
		answers[min(n, len(answers))-1](w)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	// No retries in the client: WaitMirrorOffsets itself must read again.
	c, err := connect.New(srv.URL, connect.WithRetry(connect.Retry{Attempts: 1}))
	if err != nil {
		t.Fatal(err)
	}
	return c, &calls
}

func answerWith(status int, body string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

const (
	stale   = `{"offsets":[{"partition":{"cluster":"source","topic":"orders","partition":0},"offset":{"offset":7}}]}`
	applied = `{"offsets":[{"partition":{"cluster":"source","topic":"orders","partition":0},"offset":{"offset":41}}]}`
)

var wantOrders0 = []offsets.ConnectOffset{{
	Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: 0},
	Offset:    offsets.NewMirrorOffset(41),
}}

// A stale read, then two 500s, then the plan's offsets: the wait succeeds.
func TestWaitMirrorOffsetsReadsThroughUnavailableOffsets(t *testing.T) {
	c, calls := fakeOffsetsServer(t, answerWith(200, stale), answerWith(500, offsetsUnavailable), answerWith(500, offsetsUnavailable), answerWith(200, applied))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rb, err := c.WaitMirrorOffsets(ctx, "mm2", wantOrders0)
	if err != nil || !rb.OK() || rb.Count(offsets.Match) != 1 {
		t.Fatalf("WaitMirrorOffsets = %s, %v; want 1 match", rb, err)
	}
	if n := calls.Load(); n != 4 {
		t.Errorf("%d reads, want 4", n)
	}
}

// A worker that keeps failing: the wait ends at the deadline with a
// *ReadBackError that says both why it ended and what the reads said.
func TestWaitMirrorOffsetsDeadlineKeepsLastReadError(t *testing.T) {
	// The deadline must come after the wait has taken in a 500: a third
	// read proves it (the reads are one after another). On a starved
	// machine the first 300 ms may hold only the stale read (loaded run
	// AC), so the wait is tried again with twice the time.
	var (
		rb  offsets.ReadBack
		err error
	)
	for timeout := 300 * time.Millisecond; ; timeout *= 2 {
		c, calls := fakeOffsetsServer(t, answerWith(200, stale), answerWith(500, offsetsUnavailable))
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		rb, err = c.WaitMirrorOffsets(ctx, "mm2", wantOrders0)
		cancel()
		if n := calls.Load(); n >= 3 {
			break
		} else if timeout > 20*time.Second {
			t.Fatalf("%d reads in %v, want 3 or more", n, timeout)
		}
		t.Logf("%d reads in %v: again with twice the time", calls.Load(), timeout)
	}
	var rbe *connect.ReadBackError
	if !errors.As(err, &rbe) || !errors.Is(err, connect.ErrReadBack) || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, connect.ErrOffsetsUnavailable) {
		t.Fatalf("err = %v; want a *ReadBackError matching ErrReadBack, DeadlineExceeded and ErrOffsetsUnavailable", err)
	}
	if rb.Count(offsets.WrongValue) != 1 || rbe.ReadBack.Diff() == "" {
		t.Errorf("last comparison %s with diff %q; want the stale read, 1 wrong value", rb, rbe.ReadBack.Diff())
	}
}

// The read the deadline cuts off does not hide the error of the one
// before it: the wait's error still says the worker answered 500. (A CI
// run on a loaded machine met this order by chance; before the fix the
// error said only "context deadline exceeded".)
func TestWaitMirrorOffsetsDeadlineDuringARead(t *testing.T) {
	// The third read stalls until the test ends; the first two must be
	// done before the deadline, which a starved machine may not manage in
	// the first 1.5 s: then again with twice the time.
	var err error
	for timeout := 1500 * time.Millisecond; ; timeout *= 2 {
		release := make(chan struct{})
		stall := func(w http.ResponseWriter) { <-release }
		c, calls := fakeOffsetsServer(t, answerWith(200, stale), answerWith(500, offsetsUnavailable), stall)
		t.Cleanup(func() { close(release) }) // before the server's Close, which waits for the handler
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		_, err = c.WaitMirrorOffsets(ctx, "mm2", wantOrders0)
		cancel()
		if n := calls.Load(); n == 3 {
			break
		} else if n > 3 || timeout > 20*time.Second {
			t.Fatalf("%d reads in %v, want 3 (the third cut off by the deadline)", n, timeout)
		}
		t.Logf("%d reads in %v: again with twice the time", calls.Load(), timeout)
	}
	if !errors.Is(err, connect.ErrReadBack) || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, connect.ErrOffsetsUnavailable) {
		t.Errorf("err = %v; want one matching ErrReadBack, DeadlineExceeded and ErrOffsetsUnavailable", err)
	}
}

// Errors that are not transient end the wait at once: a missing connector,
// any other 500, an offset not shaped like MirrorSourceConnector's.
func TestWaitMirrorOffsetsStopsOnPermanentError(t *testing.T) {
	for name, a := range map[string]func(http.ResponseWriter){
		"404":            answerWith(404, `{"error_code":404,"message":"Connector mm2 not found"}`),
		"500 other":      answerWith(500, `{"error_code":500,"message":"Request timed out"}`),
		"not mm2 offset": answerWith(200, `{"offsets":[{"partition":{"filename":"x"},"offset":{"position":1}}]}`),
	} {
		t.Run(name, func(t *testing.T) {
			c, calls := fakeOffsetsServer(t, a)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := c.WaitMirrorOffsets(ctx, "mm2", wantOrders0)
			if err == nil || errors.Is(err, connect.ErrReadBack) || ctx.Err() != nil {
				t.Fatalf("err = %v (ctx %v); want the read's own error at once", err, ctx.Err())
			}
			if n := calls.Load(); n != 1 {
				t.Errorf("%d reads, want 1", n)
			}
		})
	}
}

// A worker that never answers a read (it died right after the PATCH: every
// connection is refused): the wait ends at the deadline with a
// *ReadBackError matching ErrOffsetsUnread and not ErrReadBack, which says
// that nothing could be read, not that the offsets differ.
func TestWaitMirrorOffsetsNeverRead(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // connection refused from now on
	c, err := connect.New(url, connect.WithRetry(connect.Retry{Attempts: 1}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	rb, err := c.WaitMirrorOffsets(ctx, "mm2", wantOrders0)
	var rbe *connect.ReadBackError
	if !errors.As(err, &rbe) || !errors.Is(err, connect.ErrOffsetsUnread) || errors.Is(err, connect.ErrReadBack) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v; want a *ReadBackError matching ErrOffsetsUnread and DeadlineExceeded, not ErrReadBack", err)
	}
	if rbe.Reads != 0 || rbe.Attempts < 2 || len(rb.Partitions) != 0 {
		t.Errorf("reads %d of %d, comparison %s; want no read of several, no comparison", rbe.Reads, rbe.Attempts, rb)
	}
	for _, want := range []string{"could not be read back", "none of", "connection refused"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
}

// The wait is the retry of its reads: with a client whose own first
// backoff is long (here 30 s), the 500 Connect answers right after a PATCH
// is read again after the wait's pause (50 ms), not after the client's
// backoff: the second read matches well within the deadline, and the
// client retried nothing itself.
func TestWaitMirrorOffsetsRetriesOnItsOwnSchedule(t *testing.T) {
	var calls atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"version":"4.3.1","commit":"c","kafka_cluster_id":"k"}`)
	})
	mux.HandleFunc("GET /connectors/mm2/offsets", func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			answerWith(500, offsetsUnavailable)(w)
			return
		}
		answerWith(200, applied)(w)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c, err := connect.New(srv.URL, connect.WithRetry(connect.Retry{Initial: 30 * time.Second, Max: 30 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rb, err := c.WaitMirrorOffsets(ctx, "mm2", wantOrders0)
	if err != nil || !rb.OK() {
		t.Fatalf("WaitMirrorOffsets = %s, %v; want the offsets read back well before the client's 30 s backoff", rb, err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d reads, want 2", n)
	}
}
