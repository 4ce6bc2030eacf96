package kafkaadmin

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"syscall"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/internal/kafkaretry"
)

// Sentinel errors. Match them with errors.Is; the typed errors below wrap
// them and carry the details. Every text of this package, a sentinel's or a
// typed error's, starts with "kafkaadmin: ", once: a typed error writes the
// words of its sentinel after its own prefix, and an error of another
// package that it wraps keeps that package's prefix.
var (
	// ErrInvalidConfig means a Config was rejected; see [*ConfigError].
	ErrInvalidConfig = errkind.New(errkind.Rejected, "kafkaadmin: invalid config")
	// ErrInvalidArgument means a call's arguments were rejected before any
	// request was sent; see [*ArgumentError].
	ErrInvalidArgument = errkind.New(errkind.Rejected, "kafkaadmin: invalid argument")
	// ErrUnknownTopic means a topic asked for does not exist in the
	// cluster; see [*UnknownTopicsError].
	ErrUnknownTopic = errkind.New(errkind.CheckFailed, "kafkaadmin: unknown topic")
	// ErrGroupActive means a group has members, so its offsets belong to
	// them and were not written; see [*GroupActiveError].
	ErrGroupActive = errkind.New(errkind.Refused, "kafkaadmin: group is active")
	// ErrTopicsChanged means a topic's partition count changed between the
	// two readings of a commit window; see [*TopicsChangedError].
	ErrTopicsChanged = errkind.New(errkind.Retry, "kafkaadmin: topics changed during the window")
	// ErrPartial means some partitions of a call failed; see
	// [*PartitionErrors].
	ErrPartial = errkind.New(errkind.Retry, "kafkaadmin: some partitions failed")
	// ErrAuthentication means a broker rejected the SASL credentials: a
	// wrong password, an unknown user, a user without credentials for the
	// mechanism, or a mechanism the listener does not enable; see
	// [*SecurityError].
	ErrAuthentication = errkind.New(errkind.Rejected, "kafkaadmin: authentication failed")
	// ErrTLS means the TLS handshake with a broker failed, most often
	// because its certificate does not verify against the configured CA;
	// see [*SecurityError].
	ErrTLS = errkind.New(errkind.Rejected, "kafkaadmin: tls handshake failed")
	// ErrSecurityProtocol means the client and the broker's listener speak
	// different protocols: TLS to a PLAINTEXT or SASL_PLAINTEXT port, or
	// plain Kafka to an SSL or SASL_SSL port; see [*SecurityError].
	ErrSecurityProtocol = errkind.New(errkind.Rejected, "kafkaadmin: security protocol does not match the listener")
)

// SecurityError reports a connection to a broker that failed for a reason
// no retry fixes: credentials the broker rejected, a certificate that does
// not verify, or a security protocol the listener does not speak. Calls
// return it at once instead of retrying. It matches Kind, one of
// [ErrAuthentication], [ErrTLS] and [ErrSecurityProtocol]. It never
// contains a password.
type SecurityError struct {
	Addr   string // the broker address
	Kind   error  // ErrAuthentication, ErrTLS or ErrSecurityProtocol
	Reason string // what was seen, in words
	Err    error  // the underlying error
}

func (e *SecurityError) Error() string {
	s := "kafkaadmin: " + e.Addr + ": " + e.Reason
	if e.Err != nil {
		s += ": " + words(e.Err)
	}
	return s
}

// Is reports whether target is e.Kind.
func (e *SecurityError) Is(target error) bool { return target == e.Kind }

// ErrorKind is errkind.Rejected: no retry fixes it.
func (e *SecurityError) ErrorKind() errkind.Kind { return errkind.Rejected }

// Unwrap returns the underlying error.
func (e *SecurityError) Unwrap() error { return e.Err }

// handshakeError classifies a failed TLS handshake with the broker at addr.
func handshakeError(addr string, err error) error {
	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		record   tls.RecordHeaderError
	)
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid):
		return &SecurityError{Addr: addr, Kind: ErrTLS, Err: err,
			Reason: "the broker's certificate does not verify (check TLS.CAFile and TLS.ServerName)"}
	case errors.As(err, &record), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return &SecurityError{Addr: addr, Kind: ErrSecurityProtocol, Err: err,
			Reason: "no TLS handshake: the listener is not an SSL or SASL_SSL listener (a PLAINTEXT or SASL_PLAINTEXT port?)"}
	}
	return &SecurityError{Addr: addr, Kind: ErrTLS, Reason: "TLS handshake failed", Err: err}
}

// tlsAlertError classifies a TLS alert the broker sent after the handshake
// looked complete to the client, or returns nil. With TLS 1.3 a listener
// that requires a client certificate (ssl.client.auth=required) rejects a
// missing or untrusted one only after the client's handshake finished: the
// first read then fails with "remote error: tls: certificate required" or
// "bad certificate", which no retry fixes.
func tlsAlertError(addr string, err error) error {
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "remote error" {
		return nil
	}
	return &SecurityError{Addr: addr, Kind: ErrTLS, Err: err,
		Reason: "the broker refused the TLS session (a listener that requires a client certificate: check TLS.CertFile or the ssl.keystore settings, and that the broker trusts their CA)"}
}

// errTLSAnswer is what a plain connection reads when the broker answers
// with TLS.
var errTLSAnswer = errkind.New(errkind.Rejected, "kafkaadmin: the broker answered with a TLS record")

// saslError classifies a failed SASL exchange with the broker at addr,
// or returns nil when err is not one.
func saslError(addr, user, mechanism string, err error) error {
	var te *TokenEndpointError
	switch {
	case errors.As(err, &te):
		return &SecurityError{Addr: addr, Kind: ErrAuthentication, Err: err,
			Reason: fmt.Sprintf("no OAUTHBEARER token for client %q", user)}
	case errors.Is(err, sarama.ErrSASLAuthenticationFailed) && mechanism == string(GSSAPI):
		return &SecurityError{Addr: addr, Kind: ErrAuthentication, Err: err,
			Reason: fmt.Sprintf("the broker rejected the Kerberos ticket of principal %q (the broker's keytab does not match the KDC's keys for its principal, or the ticket names another service)", user)}
	case errors.Is(err, sarama.ErrSASLAuthenticationFailed) && mechanism == string(OAuthBearer):
		return &SecurityError{Addr: addr, Kind: ErrAuthentication, Err: err,
			Reason: fmt.Sprintf("the broker rejected the OAUTHBEARER token of %q (expired, a scope or audience it requires, or an issuer its validator does not trust)", user)}
	case errors.Is(err, sarama.ErrSASLAuthenticationFailed):
		return &SecurityError{Addr: addr, Kind: ErrAuthentication, Err: err,
			Reason: fmt.Sprintf("the broker rejected user %q with %s (wrong password, unknown user, or no %s credentials for the user)", user, mechanism, mechanism)}
	case errors.Is(err, sarama.ErrUnsupportedSASLMechanism):
		return &SecurityError{Addr: addr, Kind: ErrAuthentication, Err: err,
			Reason: fmt.Sprintf("the listener does not enable %s", mechanism)}
	case errors.Is(err, sarama.ErrIllegalSASLState):
		return &SecurityError{Addr: addr, Kind: ErrAuthentication, Err: err,
			Reason: "the listener does not expect SASL (a PLAINTEXT or SSL port?)"}
	}
	return nil
}

// ConfigError reports a Config field that is missing or invalid. It
// matches [ErrInvalidConfig]. It never contains a secret.
type ConfigError struct {
	Field  string // the Config field, e.g. "SASLMechanism" or "TLS.CertFile"
	Reason string
	Err    error // an underlying error, such as a TLS file that failed to load
}

func (e *ConfigError) Error() string {
	s := "kafkaadmin: invalid config: " + e.Field + ": " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is reports whether target is [ErrInvalidConfig].
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// ErrorKind is errkind.Rejected.
func (e *ConfigError) ErrorKind() errkind.Kind { return errkind.Rejected }

// Unwrap returns the underlying error, if any.
func (e *ConfigError) Unwrap() error { return e.Err }

// ArgumentError reports a call argument rejected before any request was
// sent: an empty group ID, a negative offset, an empty partition list. It
// matches [ErrInvalidArgument].
type ArgumentError struct {
	Op     string // the Client method, e.g. "CommitOffsets"
	Reason string
}

func (e *ArgumentError) Error() string {
	return "kafkaadmin: " + e.Op + ": invalid argument: " + e.Reason
}

// Is reports whether target is [ErrInvalidArgument].
func (e *ArgumentError) Is(target error) bool { return target == ErrInvalidArgument }

// ErrorKind is errkind.Rejected.
func (e *ArgumentError) ErrorKind() errkind.Kind { return errkind.Rejected }

// UnknownTopicsError lists topics that do not exist in the cluster (or
// that this principal may not describe). It matches [ErrUnknownTopic].
type UnknownTopicsError struct {
	Topics []string // sorted
}

func (e *UnknownTopicsError) Error() string {
	return "kafkaadmin: unknown topics: " + strings.Join(e.Topics, ", ")
}

// Is reports whether target is [ErrUnknownTopic].
func (e *UnknownTopicsError) Is(target error) bool { return target == ErrUnknownTopic }

// ErrorKind is errkind.CheckFailed: the topics asked for are not there.
func (e *UnknownTopicsError) ErrorKind() errkind.Kind { return errkind.CheckFailed }

// GroupActiveError reports that a group has members, so its offsets were
// not written. Stop the group's consumers first. It matches
// [ErrGroupActive].
type GroupActiveError struct {
	Group   string
	State   GroupState
	Members int
	Err     error // the broker's error, when the broker refused the commit
}

func (e *GroupActiveError) Error() string {
	s := fmt.Sprintf("kafkaadmin: group %q is active (state %s, %d members): stop its consumers before writing its offsets", e.Group, e.State, e.Members)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is reports whether target is [ErrGroupActive].
func (e *GroupActiveError) Is(target error) bool { return target == ErrGroupActive }

// ErrorKind is errkind.Refused: the group's offsets belong to its members.
func (e *GroupActiveError) ErrorKind() errkind.Kind { return errkind.Refused }

// Unwrap returns the broker's error, if any.
func (e *GroupActiveError) Unwrap() error { return e.Err }

// TopicsChangedError reports topics whose partition count changed between
// the two readings of a commit window. It matches [ErrTopicsChanged].
type TopicsChangedError struct {
	Before, After Topics
}

func (e *TopicsChangedError) Error() string {
	var changed []string
	for _, name := range e.Before.Names() {
		if a, ok := e.After[name]; !ok || a != e.Before[name] {
			changed = append(changed, fmt.Sprintf("%s %d->%d", name, e.Before[name], a))
		}
	}
	return "kafkaadmin: partition counts changed during the window: " + strings.Join(changed, ", ")
}

// Is reports whether target is [ErrTopicsChanged].
func (e *TopicsChangedError) Is(target error) bool { return target == ErrTopicsChanged }

// ErrorKind is errkind.Retry: the next window may see no change.
func (e *TopicsChangedError) ErrorKind() errkind.Kind { return errkind.Retry }

// PartitionErrors is returned, with the result of the partitions that
// were read, when some partitions of a call failed: Errs holds each failed
// partition's error, and the result leaves the partition out. It matches
// [ErrPartial], and errors.Is matches the partitions' own errors too (for
// example sarama.ErrNotLeaderForPartition).
type PartitionErrors struct {
	Op    string // the Client method
	Total int    // partitions asked for
	Errs  map[TopicPartition]error
}

func (e *PartitionErrors) Error() string {
	tps := make([]TopicPartition, 0, len(e.Errs))
	for tp := range e.Errs {
		tps = append(tps, tp)
	}
	SortPartitions(tps)
	const show = 3
	var b strings.Builder
	fmt.Fprintf(&b, "kafkaadmin: %s: %d of %d partitions failed", e.Op, len(tps), e.Total)
	for i, tp := range tps {
		if i == show {
			fmt.Fprintf(&b, "; and %d more", len(tps)-show)
			break
		}
		fmt.Fprintf(&b, "; %s: %v", tp, e.Errs[tp])
	}
	return b.String()
}

// Is reports whether target is [ErrPartial].
func (e *PartitionErrors) Is(target error) bool { return target == ErrPartial }

// ErrorKind is the strongest kind of the partitions' errors (see
// errkind.Of), each a Kafka error classified as the client's own calls
// are.
func (e *PartitionErrors) ErrorKind() errkind.Kind {
	k := errkind.None
	for _, err := range e.Errs {
		k = max(k, kafkaKind(err))
	}
	return k
}

// Unwrap returns the distinct partition errors, so that errors.Is and
// errors.As see them.
func (e *PartitionErrors) Unwrap() []error {
	seen := make(map[string]bool)
	var out []error
	for _, err := range e.Errs {
		if k := err.Error(); !seen[k] {
			seen[k] = true
			out = append(out, err)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Error() < out[j].Error() })
	return out
}

func partitionErrors(op string, total int, errs map[TopicPartition]error) error {
	if len(errs) == 0 {
		return nil
	}
	return &PartitionErrors{Op: op, Total: total, Errs: errs}
}

// kerr turns a sarama KError into an error, with ErrNoError as nil: sarama
// stores "no error" as a non-nil value, which this package never exposes.
func kerr(k sarama.KError) error {
	if k == sarama.ErrNoError {
		return nil
	}
	return k
}

// retriable reports whether an error is transient: retrying the same
// request, after refreshing metadata or the coordinator, may succeed. The
// Kafka errors are the project's one list (kafkaretry.Retriable); a
// SecurityError never is.
func retriable(err error) bool {
	var se *SecurityError
	if errors.As(err, &se) {
		return false
	}
	// A token endpoint or KDC that did not answer (not one that refused
	// the client: that is a SecurityError) is as transient as a broker.
	return errors.Is(err, errTokenEndpoint) || errors.Is(err, errKDCUnreachable) || kafkaretry.Retriable(err)
}

// words is the text of err without this package's prefix, for an error
// that writes it after its own "kafkaadmin: ".
func words(err error) string { return strings.TrimPrefix(err.Error(), "kafkaadmin: ") }

// kafkaKind classifies an error of a Kafka call for errkind.Of: the kind
// an error of this package states; Retry for what retriable accepts (the
// errors Kafka marks retriable, lost connections, timeouts); Rejected for
// any other error a broker answered (an authorization refused, an
// unsupported request, an invalid group or offset: no retry changes the
// answer) and for a sarama configuration the client refused.
func kafkaKind(err error) errkind.Kind {
	if err == nil {
		return errkind.None
	}
	if k := errkind.Of(err); k != errkind.Unclassified {
		return k
	}
	if retriable(err) {
		return errkind.Retry
	}
	var (
		k  sarama.KError
		ce sarama.ConfigurationError
	)
	if errors.As(err, &k) || errors.As(err, &ce) {
		return errkind.Rejected
	}
	return errkind.Unclassified
}

// kafkaError gives an error of a Kafka call the kind kafkaKind found, for
// errkind.Of; its text and what it wraps are the error's own.
type kafkaError struct {
	err  error
	kind errkind.Kind
}

func (e *kafkaError) Error() string           { return e.err.Error() }
func (e *kafkaError) Unwrap() error           { return e.err }
func (e *kafkaError) ErrorKind() errkind.Kind { return e.kind }

// markKafka returns err with the kind kafkaKind finds, where errkind.Of
// would find another.
func markKafka(err error) error {
	if err == nil {
		return nil
	}
	if k := kafkaKind(err); k != errkind.Of(err) {
		return &kafkaError{err: err, kind: k}
	}
	return err
}
