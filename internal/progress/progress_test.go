package progress

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestReportIsPaced(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
	now := time.Unix(0, 0)
	r := start(log, "the read-back", 5*time.Second, func() time.Time { return now })
	for i := 0; i < 12; i++ { // one call per second for 12 s
		r.Report(context.Background(), "matched", i)
		now = now.Add(time.Second)
	}
	want := `level=INFO msg="waiting for the read-back" waited=5s matched=5
level=INFO msg="waiting for the read-back" waited=10s matched=10
`
	if buf.String() != want {
		t.Errorf("lines:\n%s\nwant:\n%s", buf.String(), want)
	}
}

func TestNilLoggerIsQuiet(t *testing.T) {
	var r *Reporter
	if r.Due() {
		t.Error("a nil Reporter is due")
	}
	r.Report(context.Background(), "x", 1)
	q := Start(nil, "x")
	if q.Due() {
		t.Error("a Reporter without a logger is due")
	}
}

func TestSleepReportsAndStops(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	// A clock that moves 10 ms at every reading, so that how many lines a
	// sleep writes does not depend on when a loaded machine runs the
	// sleeper (a real clock gave 1 line of 2 under a CPU burner): the
	// timers still wait, at most an interval each.
	now := time.Unix(0, 0)
	clock := func() time.Time { now = now.Add(10 * time.Millisecond); return now }
	r := start(log, "the stability window", 20*time.Millisecond, clock)
	if err := r.Sleep(context.Background(), 110*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "waiting for the stability window"); n < 2 {
		t.Errorf("%d lines in a 110 ms sleep reported every 20 ms:\n%s", n, buf.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.Sleep(ctx, time.Hour); err != context.Canceled {
		t.Errorf("Sleep after cancel = %v", err)
	}
}
