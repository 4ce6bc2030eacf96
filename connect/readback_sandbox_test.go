package connect_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// countingHandler counts the client's retry warnings caused by Connect's
// "Failed to retrieve offsets" 500.
type countingHandler struct {
	slog.Handler
	unavailable *atomic.Int32
}

func (h countingHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "error" && strings.Contains(a.Value.String(), "Failed to retrieve offsets") {
			h.unavailable.Add(1)
		}
		return true
	})
	return nil
}

func (h countingHandler) Enabled(context.Context, slog.Level) bool { return true }

// TestSandboxReadBack10k applies offsets for 10,000 source partitions (10
// topics of 1,000 partitions) to a STOPPED MirrorSourceConnector on the
// real worker and reads them back, five times with new values, as Apply
// does. Kafka Connect 4.3.1 often answers the first GET after such a PATCH
// with a 500 "Failed to retrieve offsets for source connector" while it
// loads what it just wrote; every apply must still end with a matching
// read-back, never an error. A correctness test: nothing is timed. The
// Connect offsets need no topics on the broker (MM2 validates only their
// shape while STOPPED), so the shared broker gets no 10,000 partitions.
func TestSandboxReadBack10k(t *testing.T) {
	sb := sandboxtest.Shared(t)
	var unavailable atomic.Int32
	logger := slog.New(countingHandler{Handler: slog.DiscardHandler, unavailable: &unavailable})
	c, err := connect.New(sb.ConnectURL(), connect.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	name := fmt.Sprintf("readback-10k-%d", time.Now().UnixNano()%1_000_000)
	var topics []string
	for i := range 10 {
		topics = append(topics, fmt.Sprintf("%s-t%d", name, i))
	}
	cfg, err := connect.MirrorSource{Name: name, SourceBootstrap: sb.Source().Bootstrap(), TargetBootstrap: sb.Target().Bootstrap(),
		Topics: topics}.Config()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, name, cfg, connect.InitialStopped); err != nil {
		t.Fatal(err)
	}
	defer c.Delete(context.WithoutCancel(ctx), name)
	if _, err := c.WaitStopped(ctx, name); err != nil {
		t.Fatal(err)
	}

	for round := range int64(5) {
		start, before := time.Now(), unavailable.Load()
		want := make([]offsets.ConnectOffset, 0, 10_000)
		for _, topic := range topics {
			for p := range int32(1000) {
				want = append(want, offsets.ConnectOffset{
					Partition: offsets.ConnectPartition{Cluster: "source", Topic: topic, Partition: p},
					Offset:    offsets.NewMirrorOffset(1000*round + int64(p)),
				})
			}
		}
		if _, err := c.AlterMirrorOffsets(ctx, name, want); err != nil {
			t.Fatalf("round %d: PATCH of 10,000 offsets: %v", round, err)
		}
		rbCtx, cancelRB := context.WithTimeout(ctx, 3*time.Minute)
		rb, err := c.WaitMirrorOffsets(rbCtx, name, want)
		cancelRB()
		if err != nil {
			t.Fatalf("round %d: the PATCH succeeded but the read-back failed: %v", round, err)
		}
		if rb.Count(offsets.Match) != 10_000 || !rb.OK() {
			t.Fatalf("round %d: read-back %d matches, want 10000", round, rb.Count(offsets.Match))
		}
		t.Logf("round %d: PATCH and read-back of 10,000 offsets in %v, %d GET(s) answered 500", round,
			time.Since(start).Round(time.Millisecond), unavailable.Load()-before)
	}
	t.Logf("GETs answered 500 \"Failed to retrieve offsets\" and read again: %d", unavailable.Load())
}
