package connect

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/redact"
)

func TestIsTransient(t *testing.T) {
	api := func(status int, msg string) error {
		return &APIError{Method: "GET", Path: "/connectors", StatusCode: status, ErrorCode: status, Message: msg}
	}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	noLeader := "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
	stale := "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"
	conflicting := "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
	exists := "Connector flink-to-mm2 already exists"
	// Kafka Connect 4.3.1, GET offsets right after a PATCH of 10,000 partitions.
	offsetsRead := "Failed to retrieve offsets for source connector mm2-orders"
	patch := func(status int, msg string) error {
		return &APIError{Method: "PATCH", Path: "/connectors/x/offsets", StatusCode: status, ErrorCode: status, Message: msg}
	}

	tests := []struct {
		name   string
		repeat Repeat
		err    error
		want   bool
	}{
		{"nil", RepeatSafe, nil, false},
		{"409 no leader, safe", RepeatSafe, api(409, noLeader), true},
		{"409 stale config, safe", RepeatSafe, api(409, stale), true},
		{"409 conflicting operation, safe", RepeatSafe, api(409, conflicting), true},
		{"409 no leader, create", RepeatOnRebalance, api(409, noLeader), true},
		{"409 conflicting operation, create", RepeatOnRebalance, api(409, conflicting), true},
		{"409 no leader, never", NeverRepeat, api(409, noLeader), false},
		{"409 already exists, create", RepeatOnRebalance, api(409, exists), false},
		{"409 already exists, safe", RepeatSafe, api(409, exists), false},
		{"409 other", RepeatSafe, api(409, "something else"), false},
		{"500 rebalance, safe", RepeatSafe, api(500, "Request cannot be completed because a rebalance is expected"), true},
		{"500 rebalance, create", RepeatOnRebalance, api(500, "Worker is rebalancing"), true},
		{"500 other", RepeatSafe, api(500, "Request timed out"), false},
		{"500 forwarding", RepeatSafe, api(500, "IO Error trying to forward REST request: java.net.ConnectException: Connection refused"), false},
		{"500 offsets unavailable, GET", RepeatSafe, api(500, offsetsRead), true},
		{"500 offsets unavailable, wrapped", RepeatSafe, fmt.Errorf("read back: %w", api(500, offsetsRead)), true},
		{"500 offsets unavailable, never", NeverRepeat, api(500, offsetsRead), false},
		{"500 offsets unavailable, create", RepeatOnRebalance, api(500, offsetsRead), false},
		{"500 same message on a PATCH", RepeatSafe, patch(500, offsetsRead), false},
		{"500 sink offsets", RepeatSafe, api(500, "Failed to retrieve consumer group offsets for sink connector x"), false},
		{"400 offsets message", RepeatSafe, api(400, offsetsRead), false},
		{"503, safe", RepeatSafe, api(503, ""), true},
		{"503, create", RepeatOnRebalance, api(503, ""), false},
		{"400", RepeatSafe, api(400, "Connectors must be in the STOPPED state before their offsets can be modified."), false},
		{"401", RepeatSafe, api(401, ""), false},
		{"403", RepeatSafe, api(403, ""), false},
		{"404", RepeatSafe, api(404, "Connector x not found"), false},
		{"wrapped 409 rebalance", RepeatSafe, fmt.Errorf("outer: %w", api(409, noLeader)), true},
		{"connection refused, safe", RepeatSafe, fmt.Errorf("connect: GET /: %w", refused), true},
		{"connection refused, create", RepeatOnRebalance, refused, false},
		{"connection reset, safe", RepeatSafe, reset, true},
		{"connection reset, never", NeverRepeat, reset, false},
		{"context canceled", RepeatSafe, context.Canceled, false},
		{"deadline", RepeatSafe, context.DeadlineExceeded, false},
		{"other", RepeatSafe, errors.New("boom"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsTransient(tt.repeat, tt.err); got != tt.want {
				t.Errorf("IsTransient(%v, %v) = %v, want %v", tt.repeat, tt.err, got, tt.want)
			}
		})
	}
}

func TestAPIErrorIs(t *testing.T) {
	tests := []struct {
		status int
		msg    string
		want   error
	}{
		{404, "Connector x not found", ErrNotFound},
		{409, "Connector x already exists", ErrAlreadyExists},
		{400, "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/x/stop' endpoint", ErrNotStopped},
		{409, "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway.", ErrRebalance},
		{500, "rebalance in progress", ErrRebalance},
		{401, "", ErrUnauthorized},
		{403, "", ErrForbidden},
		{500, "IO Error trying to forward REST request: java.net.ConnectException: Connection refused", ErrForwarding},
		{500, "Failed to retrieve offsets for source connector x", ErrOffsetsUnavailable},
	}
	all := []error{ErrNotFound, ErrAlreadyExists, ErrNotStopped, ErrRebalance, ErrUnauthorized, ErrForbidden, ErrForwarding, ErrOffsetsUnavailable}
	for _, tt := range tests {
		err := error(&APIError{Method: "GET", Path: "/x", StatusCode: tt.status, Message: tt.msg})
		for _, s := range all {
			if got, want := errors.Is(err, s), s == tt.want; got != want {
				t.Errorf("errors.Is(%d %q, %v) = %v, want %v", tt.status, tt.msg, s, got, want)
			}
		}
	}
}

func TestParseKafkaVersion(t *testing.T) {
	tests := []struct {
		in      string
		want    kafkaVersion
		wantErr bool
	}{
		{"4.3.1", kafkaVersion{4, 3}, false},
		{"3.7.0-SNAPSHOT", kafkaVersion{3, 7}, false},
		{"3.10.0", kafkaVersion{3, 10}, false},
		{"7.6.0-ccs", kafkaVersion{3, 6}, false},
		{"8.0.0-ce", kafkaVersion{4, 0}, false},
		{"", kafkaVersion{}, true},
		{"4", kafkaVersion{}, true},
		{"x.y", kafkaVersion{}, true},
		{"-1.2", kafkaVersion{}, true},
	}
	for _, tt := range tests {
		got, err := parseKafkaVersion(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseKafkaVersion(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
	if !(kafkaVersion{3, 10}).atLeast(versionEmitSyncs) || (kafkaVersion{3, 8}).atLeast(versionEmitSyncs) || !(kafkaVersion{4, 0}).atLeast(versionEmitSyncs) {
		t.Error("atLeast ordering is wrong")
	}
}

func TestRedact(t *testing.T) {
	cfg := map[string]string{
		"source.cluster.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="s3cr3t-pw";`,
		"ssl.truststore.password":         "trust-pw",
		"topics":                          "orders",
	}
	secrets := redact.SecretValues(cfg, nil)
	msg := `Invalid value password="s3cr3t-pw" and trust-pw for orders`
	got := redact.Text(msg, secrets...)
	want := `Invalid value password="[redacted]" and [redacted] for orders`
	if got != want {
		t.Errorf("redact = %q, want %q", got, want)
	}
}

// What only a rebalance completes (a created connector known to the worker
// asked, a new connector assigned and STOPPED) is waited for as long as a
// request refused for a rebalance is retried, never less than the floor.
func TestRebalanceWait(t *testing.T) {
	for _, tc := range []struct {
		name  string
		retry Retry
		floor time.Duration
		want  time.Duration
	}{
		{"the default retry budget", Retry{}, 15 * time.Second, 2 * time.Minute},
		{"attempts alone keep the default budget", Retry{Attempts: 1}, 30 * time.Second, 2 * time.Minute},
		{"a longer budget", Retry{Elapsed: 10 * time.Minute}, 30 * time.Second, 10 * time.Minute},
		{"a short budget keeps the floor", Retry{Elapsed: time.Second}, 15 * time.Second, 15 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Client{policy: tc.retry}
			if got := c.rebalanceWait(tc.floor); got != tc.want {
				t.Errorf("rebalanceWait(%v) with %+v = %v, want %v", tc.floor, tc.retry, got, tc.want)
			}
		})
	}
}
