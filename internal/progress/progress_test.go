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

// liveHandler is a handler that shows progress in place.
type liveHandler struct{ slog.Handler }

func (liveHandler) ShowsProgressLive() bool { return true }

// TestLiveHandlerIsReportedToEverySecond: a wait reports every Interval,
// and every LiveInterval to a handler that shows its line in place.
func TestLiveHandlerIsReportedToEverySecond(t *testing.T) {
	text := slog.NewTextHandler(&bytes.Buffer{}, nil)
	if r := Start(slog.New(text), "x"); r.every != Interval {
		t.Errorf("a text handler: every %v, want %v", r.every, Interval)
	}
	if r := Start(slog.New(liveHandler{text}), "x"); r.every != LiveInterval {
		t.Errorf("a live handler: every %v, want %v", r.every, LiveInterval)
	}
}

func TestEstimate(t *testing.T) {
	t0 := time.Unix(0, 0)
	for _, tc := range []struct {
		name          string
		left0, left   int64
		elapsed, want time.Duration
		ok            bool
	}{
		{"half done in 10 s", 100, 50, 10 * time.Second, 10 * time.Second, true},
		{"a tenth done in 1 s", 1000, 900, time.Second, 9 * time.Second, true},
		{"done", 100, 0, 5 * time.Second, 0, true},
		{"not moved", 100, 100, 5 * time.Second, 0, false},
		{"moved back (new records behind)", 100, 120, 5 * time.Second, 0, false},
		{"no time yet", 100, 50, 0, 0, false},
	} {
		got, ok := Estimate(t0, tc.left0, t0.Add(tc.elapsed), tc.left)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: Estimate = %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// TestReportLeftEstimates: a wait for an amount that falls reports an
// estimate of the time left at the rate it fell, once it fell.
func TestReportLeftEstimates(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	now := time.Unix(0, 0)
	r := start(log, "the catch-up", 5*time.Second, func() time.Time { return now })
	left := int64(1000)
	for i := 0; i < 11; i++ { // a poll a second; 100 copied a second from the 3rd on: at 5 s, 300 in 5 s, 700 left; at 10 s, 800 in 10 s, 200 left
		r.ReportLeft(context.Background(), left, "lag", left)
		now = now.Add(time.Second)
		if i >= 2 {
			left -= 100
		}
	}
	want := `level=INFO msg="waiting for the catch-up" waited=5s lag=700 eta=12s
level=INFO msg="waiting for the catch-up" waited=10s lag=200 eta=3s
`
	if buf.String() != want {
		t.Errorf("lines:\n%s\nwant:\n%s", buf.String(), want)
	}
	var quiet *Reporter
	quiet.ReportLeft(context.Background(), 1)
}

func TestIsProgress(t *testing.T) {
	rec := func(msg string, args ...any) slog.Record {
		r := slog.NewRecord(time.Now(), slog.LevelInfo, msg, 0)
		r.Add(args...)
		return r
	}
	for _, tc := range []struct {
		r    slog.Record
		want bool
	}{
		{rec("waiting for the read-back", WaitedKey, "5s", "match", 3), true},
		{rec("waiting for the read-back"), false},
		{rec("waiting for the read-back", "match", 3, WaitedKey, "5s"), false},
		{rec("plan written", WaitedKey, "5s"), false},
	} {
		if got := IsProgress(tc.r); got != tc.want {
			t.Errorf("IsProgress(%q) = %v, want %v", tc.r.Message, got, tc.want)
		}
	}
}
