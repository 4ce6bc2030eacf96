// Package progress paces the lines a long wait logs: what it awaits, how
// far it is and, where it can tell, an estimate of the time left, at most
// once per interval, so that an operator watching stderr sees a wait is
// alive without a line per poll. A handler that shows the line in place (a
// terminal's status line, Live) is reported to every second.
package progress

import (
	"context"
	"log/slog"
	"strings"
	"time"
)

// Interval is how often a wait reports.
const Interval = 5 * time.Second

// LiveInterval is how often a wait reports to a Live handler.
const LiveInterval = time.Second

// The keys of a wait's line: the time waited (always first), the time
// left of a wait of known length (Sleep), the estimate of the time left
// (ReportLeft).
const (
	WaitedKey = "waited"
	LeftKey   = "left"
	ETAKey    = "eta"
)

// Live is implemented by a slog.Handler that shows a wait's line in place
// rather than as one more line, such as a terminal's status line: a
// Reporter whose logger's handler says so reports every LiveInterval.
type Live interface {
	ShowsProgressLive() bool
}

// IsProgress reports whether r is a Reporter's line: "waiting for ..."
// with the time waited as its first attribute.
func IsProgress(r slog.Record) bool {
	if !strings.HasPrefix(r.Message, "waiting for ") {
		return false
	}
	first := ""
	r.Attrs(func(a slog.Attr) bool { first = a.Key; return false })
	return first == WaitedKey
}

// Reporter logs the progress of one wait. The zero value and a Reporter with
// a nil logger log nothing.
type Reporter struct {
	log   *slog.Logger
	what  string
	every time.Duration
	now   func() time.Time
	start time.Time
	last  time.Time
	// The first amount ReportLeft was given, and when: the rate of the
	// estimate is measured from there.
	sampled   bool
	firstAt   time.Time
	firstLeft int64
}

// Start begins reporting a wait for what ("the stability window", "the
// read-back of 10000 offsets") on log at Info level, every Interval, or
// every LiveInterval when log's handler is Live. log may be nil.
func Start(log *slog.Logger, what string) *Reporter {
	every := Interval
	if log != nil {
		if l, ok := log.Handler().(Live); ok && l.ShowsProgressLive() {
			every = LiveInterval
		}
	}
	return start(log, what, every, time.Now)
}

func start(log *slog.Logger, what string, every time.Duration, now func() time.Time) *Reporter {
	t := now()
	return &Reporter{log: log, what: what, every: every, now: now, start: t, last: t}
}

// Due reports whether a line is due: an interval has passed since the
// start or the last line. A caller with costly progress figures asks first.
func (r *Reporter) Due() bool {
	return r != nil && r.log != nil && r.now().Sub(r.last) >= r.every
}

// Report logs "waiting for <what>" with the time waited and args (slog
// key-value pairs saying how far the wait is) when a line is due.
func (r *Reporter) Report(ctx context.Context, args ...any) {
	if !r.Due() {
		return
	}
	r.last = r.now()
	attrs := append([]any{WaitedKey, r.last.Sub(r.start).Round(time.Second).String()}, args...)
	r.log.InfoContext(ctx, "waiting for "+r.what, attrs...)
}

// ReportLeft is Report for a wait that ends when left, an amount that
// falls as it goes (offsets not yet read back, records not yet copied),
// reaches 0: it adds ETAKey, the time left at the rate left has fallen
// since the first call, once it has fallen. Call it at every poll; it
// logs when a line is due.
func (r *Reporter) ReportLeft(ctx context.Context, left int64, args ...any) {
	if r == nil || r.log == nil {
		return
	}
	now := r.now()
	if !r.sampled {
		r.sampled, r.firstAt, r.firstLeft = true, now, left
	}
	if !r.Due() {
		return
	}
	if eta, ok := Estimate(r.firstAt, r.firstLeft, now, left); ok {
		args = append(args, ETAKey, eta.Round(time.Second).String())
	}
	r.Report(ctx, args...)
}

// Estimate is the time left until left reaches 0, at the rate it fell from
// left0 at t0 to left at t; ok is false while it has not fallen.
func Estimate(t0 time.Time, left0 int64, t time.Time, left int64) (eta time.Duration, ok bool) {
	done, elapsed := left0-left, t.Sub(t0)
	if done <= 0 || elapsed <= 0 || left < 0 {
		return 0, false
	}
	return time.Duration(float64(elapsed) * float64(left) / float64(done)), true
}

// Sleep waits d or until ctx ends, reporting the time left as it goes. It
// returns ctx's error when ctx ends first.
func (r *Reporter) Sleep(ctx context.Context, d time.Duration) error {
	if r == nil {
		r = start(nil, "", Interval, time.Now)
	}
	end := r.now().Add(d)
	t := time.NewTimer(0)
	defer t.Stop()
	<-t.C
	for {
		left := end.Sub(r.now())
		if left <= 0 {
			return nil
		}
		r.Report(ctx, LeftKey, left.Round(time.Second).String())
		step := left
		if r.log != nil && r.every < step {
			step = r.every
		}
		t.Reset(step)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
