// Package progress paces the lines a long wait logs: what it awaits and how
// far it is, at most once per interval, so that an operator watching stderr
// sees a wait is alive without a line per poll.
package progress

import (
	"context"
	"log/slog"
	"time"
)

// Interval is how often a wait reports.
const Interval = 5 * time.Second

// Reporter logs the progress of one wait. The zero value and a Reporter with
// a nil logger log nothing.
type Reporter struct {
	log   *slog.Logger
	what  string
	every time.Duration
	now   func() time.Time
	start time.Time
	last  time.Time
}

// Start begins reporting a wait for what ("the stability window", "the
// read-back of 10000 offsets") on log at Info level. log may be nil.
func Start(log *slog.Logger, what string) *Reporter {
	return start(log, what, Interval, time.Now)
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
	attrs := append([]any{"waited", r.last.Sub(r.start).Round(time.Second).String()}, args...)
	r.log.InfoContext(ctx, "waiting for "+r.what, attrs...)
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
		r.Report(ctx, "left", left.Round(time.Second).String())
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
