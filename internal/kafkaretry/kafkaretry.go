// Package kafkaretry is the one classification of the Kafka errors worth a
// retry, and the one bounded retry loop that the project's Kafka helpers
// share: the library's kafkaadmin classifies with Retriable, and the test
// and demo helpers that talk to Kafka directly (internal/flinklike, the
// sandbox's setup, the producers and committers of tests) retry through Do
// and SendMessages.
//
// It is a package of its own, not part of kafkaadmin, because the sandbox
// cannot import kafkaadmin: kafkaadmin's in-package tests import the
// sandbox, and Go refuses the import cycle.
//
// A broker that has just started, a topic just created or a partition whose
// leader just moved answer for a while with errors that every Kafka client
// retries: NOT_COORDINATOR and COORDINATOR_LOAD_IN_PROGRESS while the group
// coordinator loads its partition of __consumer_offsets,
// UNKNOWN_TOPIC_OR_PARTITION and LEADER_NOT_AVAILABLE until the new
// partitions' leaders are known everywhere, NOT_LEADER_OR_FOLLOWER after a
// leader change, REQUEST_TIMED_OUT on a busy broker. On a loaded machine
// these last seconds, not milliseconds: a helper that gives up on the first
// one fails a test that has nothing wrong.
package kafkaretry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/IBM/sarama"
)

// Retriable reports whether err is transient: retrying the same request,
// after refreshing metadata or the group coordinator, may succeed. These
// are the errors Kafka marks retriable (RetriableException) that a client
// of the project can meet, plus broken or refused connections and
// timeouts. A context's own end is never retriable, nor is anything
// authentication, authorization or validation refused.
func Retriable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var k sarama.KError
	if errors.As(err, &k) {
		switch k {
		case sarama.ErrUnknownTopicOrPartition, // a partition being created or moved
			sarama.ErrLeaderNotAvailable,
			sarama.ErrNotLeaderForPartition,
			sarama.ErrRequestTimedOut,
			sarama.ErrBrokerNotAvailable,
			sarama.ErrReplicaNotAvailable,
			sarama.ErrNetworkException,
			sarama.ErrOffsetsLoadInProgress,
			sarama.ErrConsumerCoordinatorNotAvailable,
			sarama.ErrNotCoordinatorForConsumer,
			sarama.ErrKafkaStorageError,
			sarama.ErrFencedLeaderEpoch,
			sarama.ErrUnknownLeaderEpoch,
			sarama.ErrOffsetNotAvailable,
			sarama.ErrUnstableOffsetCommit,
			sarama.ErrNotController,
			sarama.ErrNotEnoughReplicas,
			sarama.ErrNotEnoughReplicasAfterAppend,
			sarama.ErrConcurrentTransactions:
			return true
		}
		return false
	}
	switch {
	case errors.Is(err, sarama.ErrOutOfBrokers),
		errors.Is(err, sarama.ErrNotConnected),
		errors.Is(err, sarama.ErrIncompleteResponse),
		errors.Is(err, sarama.ErrControllerNotAvailable),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE):
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// CoordinatorMoved reports whether err says the group coordinator a
// request went to is not (or not yet) the group's: the caller refreshes it
// (sarama.Client.RefreshCoordinator) before the next attempt.
func CoordinatorMoved(err error) bool {
	return errors.Is(err, sarama.ErrNotCoordinatorForConsumer) ||
		errors.Is(err, sarama.ErrConsumerCoordinatorNotAvailable) ||
		errors.Is(err, sarama.ErrOffsetsLoadInProgress)
}

// Bound is how long Do keeps retrying when the context has no earlier
// deadline: long enough for a broker on a saturated 2-core machine to load
// its coordinator partitions or elect leaders, short enough that a real
// fault still fails the test in minutes.
const Bound = 2 * time.Minute

const (
	firstBackoff = 100 * time.Millisecond
	maxBackoff   = 2 * time.Second
)

// Do calls fn until it returns nil, returns an error that is not
// Retriable, Bound has passed, or ctx ends, waiting between attempts 100 ms
// at first, doubling up to 2 s. fn must be safe to repeat. The error after
// the last attempt says how many were made and wraps fn's last error (or
// is ctx's error when ctx ended).
func Do(ctx context.Context, fn func() error) error {
	start := time.Now()
	backoff := firstBackoff
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil {
			return nil
		}
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("%w (last error: %v)", cerr, err)
		}
		if !Retriable(err) {
			return err
		}
		if time.Since(start)+backoff > Bound {
			return fmt.Errorf("gave up after %d attempts in %v: %w", attempt, time.Since(start).Round(time.Millisecond), err)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-t.C:
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// SendMessages sends msgs with p and, while the only failures are
// Retriable, sends the failed messages again through Do. A record whose
// first attempt timed out may have been written all the same: test data
// that must be exact reads back what it wrote. sarama retries each batch
// first (Producer.Retry); this covers what outlasts those retries, such as
// a partition still without a leader seconds after its creation.
func SendMessages(ctx context.Context, p sarama.SyncProducer, msgs []*sarama.ProducerMessage) error {
	pending := msgs
	return Do(ctx, func() error {
		err := p.SendMessages(pending)
		var perrs sarama.ProducerErrors
		if !errors.As(err, &perrs) {
			return err
		}
		failed := make([]*sarama.ProducerMessage, 0, len(perrs))
		var first error
		for _, pe := range perrs {
			failed = append(failed, pe.Msg)
			if !Retriable(pe.Err) && first == nil {
				first = pe.Err
			}
		}
		if first != nil {
			return fmt.Errorf("%d of %d records failed: %w", len(perrs), len(pending), first)
		}
		err = fmt.Errorf("%d of %d records failed: %w", len(perrs), len(pending), perrs[0].Err)
		pending = failed
		return err
	})
}
