package term

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/progress"
)

func TestStatusLine(t *testing.T) {
	rec := func(msg string, args ...any) slog.Record {
		r := slog.NewRecord(time.Now(), slog.LevelInfo, msg, 0)
		r.Add(args...)
		return r
	}
	for _, tc := range []struct {
		r    slog.Record
		want string
	}{
		{rec("waiting for group g's commits to stay put for 30s", "waited", "12s", "left", "18s"),
			"waiting for group g's commits to stay put for 30s (12s so far, 18s left)"},
		{rec("waiting for connector c's offsets to read back as the 12 written", "waited", "3s", "match", 8, "wrong_value", 0, "missing", 4, "unexpected", 0, "eta", "2s"),
			"waiting for connector c's offsets to read back as the 12 written: match=8 wrong_value=0 missing=4 unexpected=0 (3s so far, about 2s left)"},
		{rec("waiting for connector c to copy what the source held when it resumed", "waited", "40s", "lag", 1234, "partitions_behind", 3, "of", 12, "eta", "1m20s"),
			"waiting for connector c to copy what the source held when it resumed: lag=1234 partitions_behind=3 of 12 (40s so far, about 1m20s left)"},
		{rec("waiting for connector c to be STOPPED with no tasks", "waited", "2s", "last_seen", "RUNNING"),
			"waiting for connector c to be STOPPED with no tasks: last_seen=RUNNING (2s so far)"},
	} {
		if got := StatusLine(tc.r); got != tc.want {
			t.Errorf("StatusLine:\n got %q\nwant %q", got, tc.want)
		}
	}
}

// TestStatus: the status line is rewritten in place, cut to the width and
// escaped; any other write clears it first; Clear clears it once.
func TestStatus(t *testing.T) {
	var b bytes.Buffer
	s := NewStatus(&b, 20)
	s.Show("waiting for the stability window")
	s.Show("group \x1b[2J")
	if _, err := s.Write([]byte("level=INFO msg=done\n")); err != nil {
		t.Fatal(err)
	}
	out := s.Clearing(&b)
	s.Show("waiting")
	if _, err := out.Write([]byte("CHECK STATUS\n")); err != nil {
		t.Fatal(err)
	}
	s.Show("waiting again")
	s.Clear()
	s.Clear()
	var nilStatus *Status
	nilStatus.Clear()
	want := "\r\x1b[Kwaiting for the sta" + // 19 columns: never the last, which would wrap
		"\r\x1b[Kgroup \\u001b[2J" +
		"\r\x1b[Klevel=INFO msg=done\n" +
		"\r\x1b[Kwaiting\r\x1b[KCHECK STATUS\n" +
		"\r\x1b[Kwaiting again\r\x1b[K"
	if got := b.String(); got != want {
		t.Errorf("the terminal received\n%q\nwant\n%q", got, want)
	}
}

// TestLogHandler: without a status line, a wait logs slog's text lines;
// with one, the handler is live (a wait reports every second) and a wait's
// lines go to the status line, the others below it as text.
func TestLogHandler(t *testing.T) {
	var plain bytes.Buffer
	log := slog.New(NewLogHandler(&plain, nil, nil))
	if _, live := log.Handler().(progress.Live); live {
		t.Error("the handler without a status line is live")
	}
	var term bytes.Buffer
	status := NewStatus(&term, 200)
	log = slog.New(NewLogHandler(status, status, &slog.HandlerOptions{Level: slog.LevelInfo})).With("step", "precheck")
	if l, live := log.Handler().(progress.Live); !live || !l.ShowsProgressLive() {
		t.Error("the handler with a status line is not live (under With)")
	}
	log.Info("waiting for the read-back", "waited", "1s", "match", 3, "of", 10)
	log.Debug("not shown")
	log.Info("plan written", "file", "p.json")
	got := term.String()
	if !strings.HasPrefix(got, "\r\x1b[Kwaiting for the read-back: match=3 of 10 (1s so far)\r\x1b[Ktime=") ||
		!strings.HasSuffix(got, ` level=INFO msg="plan written" step=precheck file=p.json`+"\n") || strings.Contains(got, "not shown") {
		t.Errorf("the terminal received %q", got)
	}
}
