package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// TestRetry: a transient Kafka error is retried until the call succeeds,
// or until RetryTimeout, when the error says it gave up and wraps the last
// answer; any other error ends the call at once; a context that ends
// wins.
func TestRetry(t *testing.T) {
	r := &Client{cfg: Config{RetryTimeout: 2 * time.Second}, log: slog.New(slog.DiscardHandler), answered: new(atomic.Bool)}
	ctx := context.Background()

	n := 0
	if err := r.retry(ctx, "op", func(int) error {
		if n++; n < 3 {
			return sarama.ErrNotLeaderForPartition
		}
		return nil
	}); err != nil || n != 3 {
		t.Errorf("two transient failures, then success: %v after %d attempts, want nil after 3", err, n)
	}

	n = 0
	boom := errors.New("boom")
	if err := r.retry(ctx, "op", func(int) error { n++; return boom }); !errors.Is(err, boom) || n != 1 {
		t.Errorf("a permanent error: %v after %d attempts, want it after 1", err, n)
	}

	n = 0
	start := time.Now()
	err := r.retry(ctx, "op", func(int) error { n++; return sarama.ErrNotCoordinatorForConsumer })
	if !errors.Is(err, sarama.ErrNotCoordinatorForConsumer) || !strings.Contains(err.Error(), "gave up after") || n < 2 {
		t.Errorf("always transient: %v after %d attempts, want a give-up wrapping the last error after several", err, n)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("always transient: gave up after %v, want about RetryTimeout (2 s)", d)
	}

	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	r.cfg.RetryTimeout = time.Minute
	if err := r.retry(cctx, "op", func(int) error { return sarama.ErrNotLeaderForPartition }); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("context ends while retrying: %v, want its error", err)
	}
}

// TestUnanswered: what counts as no broker answering (the fail-fast rule)
// and what does not: an error code a broker sent, or a Kerberos login whose
// KDC did not answer though the broker answered the SASL handshake (sarama
// wraps that in ErrOutOfBrokers).
func TestUnanswered(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", refused, true},
		{"out of brokers", fmt.Errorf("cluster id: %w", sarama.ErrOutOfBrokers), true},
		{"a broker's error code", sarama.ErrClusterAuthorizationFailed, false},
		{"no KDC answered", fmt.Errorf("%w: %w", sarama.ErrOutOfBrokers, fmt.Errorf("%w (broker b:9092): %w", errKDCUnreachable, refused)), false},
	} {
		if got := unanswered(tc.err); got != tc.want {
			t.Errorf("%s: unanswered = %v, want %v", tc.name, got, tc.want)
		}
	}
}
