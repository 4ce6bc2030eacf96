package kafkaadmin

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/IBM/sarama"
)

// TestRetriable: kafkaadmin classifies with kafkaretry.Retriable (tested
// there, with the whole list) and adds its own rule: a SecurityError is never
// worth a retry, whatever it wraps.
func TestRetriable(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{sarama.ErrNotCoordinatorForConsumer, true},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{sarama.ErrGroupAuthorizationFailed, false},
		{&SecurityError{Addr: "b:9093", Kind: ErrSecurityProtocol, Err: io.EOF}, false},
		{&GroupActiveError{Group: "g", Err: sarama.ErrIllegalGeneration}, false},
		{&UnknownTopicsError{Topics: []string{"x"}}, false},
		{context.Canceled, false},
	}
	for _, tt := range tests {
		if got := retriable(tt.err); got != tt.want {
			t.Errorf("retriable(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestKerr(t *testing.T) {
	if err := kerr(sarama.ErrNoError); err != nil {
		t.Errorf("kerr(ErrNoError) = %v, want nil", err)
	}
	if err := kerr(sarama.ErrNotLeaderForPartition); !errors.Is(err, sarama.ErrNotLeaderForPartition) {
		t.Errorf("kerr lost the error: %v", err)
	}
}

func TestPartitionErrors(t *testing.T) {
	if err := partitionErrors("Op", 3, nil); err != nil {
		t.Fatalf("partitionErrors(nil) = %v, want nil", err)
	}
	errs := map[TopicPartition]error{
		{Topic: "t", Partition: 0}: sarama.ErrNotLeaderForPartition,
		{Topic: "t", Partition: 1}: sarama.ErrNotLeaderForPartition,
		{Topic: "t", Partition: 2}: sarama.ErrRequestTimedOut,
		{Topic: "u", Partition: 0}: sarama.ErrRequestTimedOut,
	}
	err := partitionErrors("LogBounds", 10, errs)
	if !errors.Is(err, ErrPartial) || !errors.Is(err, sarama.ErrRequestTimedOut) || !errors.Is(err, sarama.ErrNotLeaderForPartition) {
		t.Errorf("%v does not match ErrPartial and its partitions' errors", err)
	}
	msg := err.Error()
	for _, want := range []string{"LogBounds: 4 of 10 partitions failed", "t-0:", "and 1 more"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if opError("x", err) != err {
		t.Error("opError wrapped a typed error")
	}
	if got := opError("read", io.EOF); !errors.Is(got, io.EOF) || got.Error() != "kafkaadmin: read: EOF" {
		t.Errorf("opError = %v", got)
	}
}
