// Package quietretry holds what the retry loops of connect and kafkaadmin
// share about an endpoint that does not answer: a pause schedule that ends
// at the budget for no answer instead of a whole pause past it.
package quietretry

import (
	"time"

	"github.com/cenkalti/backoff/v4"
)

// UntilAnswered wraps a backoff schedule: while no answer has come to the
// call (*Answered false), each pause is cut so that it ends by Start +
// Budget at the latest. Once an answer came, the schedule is the wrapped
// one.
type UntilAnswered struct {
	backoff.BackOff
	Answered *bool
	Start    time.Time
	Budget   time.Duration
}

// NextBackOff returns the wrapped schedule's next pause, cut as above.
func (b *UntilAnswered) NextBackOff() time.Duration {
	next := b.BackOff.NextBackOff()
	if next == backoff.Stop || *b.Answered {
		return next
	}
	if left := b.Budget - time.Since(b.Start); left < next {
		return max(left, 0)
	}
	return next
}
