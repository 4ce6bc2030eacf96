package kafkaretry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

func TestRetriable(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{sarama.ErrNotLeaderForPartition, true},
		{fmt.Errorf("wrapped: %w", sarama.ErrLeaderNotAvailable), true},
		{sarama.ErrUnknownTopicOrPartition, true},
		{sarama.ErrOffsetsLoadInProgress, true},
		{sarama.ErrNotCoordinatorForConsumer, true},
		{sarama.ErrConsumerCoordinatorNotAvailable, true},
		{sarama.ErrRequestTimedOut, true},
		{sarama.ErrNotEnoughReplicas, true},
		{sarama.ErrOffsetNotAvailable, true},
		{sarama.ErrOutOfBrokers, true},
		{io.EOF, true},
		{syscall.ECONNREFUSED, true},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{net.ErrClosed, true},
		{sarama.ErrGroupAuthorizationFailed, false},
		{sarama.ErrTopicAuthorizationFailed, false},
		{sarama.ErrSASLAuthenticationFailed, false},
		{sarama.ErrUnknownMemberId, false},
		{sarama.ErrMessageSizeTooLarge, false},
		{sarama.ErrTopicAlreadyExists, false},
		{context.Canceled, false},
		{context.DeadlineExceeded, false},
		{errors.New("something else"), false},
	} {
		if got := Retriable(tt.err); got != tt.want {
			t.Errorf("Retriable(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestCoordinatorMoved(t *testing.T) {
	for _, err := range []error{sarama.ErrNotCoordinatorForConsumer, sarama.ErrConsumerCoordinatorNotAvailable, fmt.Errorf("commit: %w", sarama.ErrOffsetsLoadInProgress)} {
		if !CoordinatorMoved(err) {
			t.Errorf("CoordinatorMoved(%v) = false", err)
		}
	}
	if CoordinatorMoved(sarama.ErrNotLeaderForPartition) {
		t.Error("CoordinatorMoved(NOT_LEADER_OR_FOLLOWER) = true")
	}
}

// TestDoRetriesWhatKafkaRetries: the error the flink-like job gave up on
// (NOT_COORDINATOR while the coordinator loads) is retried until it
// passes; an error no retry fixes is returned at once.
func TestDoRetriesWhatKafkaRetries(t *testing.T) {
	ctx := context.Background()
	calls := 0
	err := Do(ctx, func() error {
		calls++
		if calls < 4 {
			return fmt.Errorf("commit payments-2: %w", sarama.ErrNotCoordinatorForConsumer)
		}
		return nil
	})
	if err != nil || calls != 4 {
		t.Errorf("Do: %v after %d calls, want success after 4", err, calls)
	}

	calls = 0
	err = Do(ctx, func() error { calls++; return sarama.ErrGroupAuthorizationFailed })
	if !errors.Is(err, sarama.ErrGroupAuthorizationFailed) || calls != 1 {
		t.Errorf("Do: %v after %d calls, want GROUP_AUTHORIZATION_FAILED after 1", err, calls)
	}

	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	err = Do(cctx, func() error { return sarama.ErrLeaderNotAvailable })
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "leader") {
		t.Errorf("Do after the context ended: %v, want the deadline and the last error", err)
	}
}

// flakyProducer fails the first records of the first sends with an error.
type flakyProducer struct {
	sarama.SyncProducer // nil: only SendMessages is called
	fail                int
	err                 error
	sent                []string
}

func (f *flakyProducer) SendMessages(msgs []*sarama.ProducerMessage) error {
	var perrs sarama.ProducerErrors
	for _, m := range msgs {
		v, _ := m.Value.Encode()
		if f.fail > 0 {
			f.fail--
			perrs = append(perrs, &sarama.ProducerError{Msg: m, Err: f.err})
			continue
		}
		f.sent = append(f.sent, string(v))
	}
	if len(perrs) > 0 {
		return perrs
	}
	return nil
}

func TestSendMessagesResendsOnlyTheFailed(t *testing.T) {
	var msgs []*sarama.ProducerMessage
	for _, v := range []string{"a", "b", "c"} {
		msgs = append(msgs, &sarama.ProducerMessage{Topic: "t", Value: sarama.StringEncoder(v)})
	}
	p := &flakyProducer{fail: 2, err: sarama.ErrNotLeaderForPartition}
	if err := SendMessages(context.Background(), p, msgs); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.sent, ","); got != "c,a,b" {
		t.Errorf("sent %s, want c then the two failed records again", got)
	}

	p = &flakyProducer{fail: 1, err: sarama.ErrMessageSizeTooLarge}
	if err := SendMessages(context.Background(), p, msgs); !errors.Is(err, sarama.ErrMessageSizeTooLarge) || len(p.sent) != 2 {
		t.Errorf("SendMessages with a record too large: %v, sent %v; want MESSAGE_TOO_LARGE and no retry", err, p.sent)
	}
}
