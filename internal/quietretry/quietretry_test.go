package quietretry

import (
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// TestUntilAnswered: without an answer a pause never ends past the budget;
// with one, the pauses are the wrapped schedule's.
func TestUntilAnswered(t *testing.T) {
	answered := false
	b := &UntilAnswered{BackOff: backoff.NewConstantBackOff(time.Hour), Answered: &answered, Start: time.Now(), Budget: time.Minute}
	if d := b.NextBackOff(); d > time.Minute || d < 59*time.Second {
		t.Errorf("pause without an answer = %v, want about a minute (the budget left)", d)
	}
	b.Start = time.Now().Add(-2 * time.Minute)
	if d := b.NextBackOff(); d != 0 {
		t.Errorf("pause past the budget = %v, want 0", d)
	}
	answered = true
	if d := b.NextBackOff(); d != time.Hour {
		t.Errorf("pause once answered = %v, want the schedule's hour", d)
	}
	stop := &UntilAnswered{BackOff: &backoff.StopBackOff{}, Answered: new(bool), Start: time.Now(), Budget: time.Minute}
	if d := stop.NextBackOff(); d != backoff.Stop {
		t.Errorf("a schedule that stopped = %v, want Stop", d)
	}
}
