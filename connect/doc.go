// Package connect is a typed client for the Kafka Connect REST API, shaped
// for moving a replication job onto MirrorMaker 2's MirrorSourceConnector.
//
// # The flow it serves
//
// The cutover creates the connector STOPPED (Create with InitialStopped,
// Kafka 3.7), writes the source read position of every partition
// (AlterMirrorOffsets, Kafka 3.6), reads it back until it matches
// (WaitMirrorOffsets: GET /connectors/{n}/offsets is answered from the
// receiving worker's view of the offsets topic and is eventually consistent
// and unordered), and only then resumes it (Resume, WaitRunning). Offsets
// are keyed by connector name and outlive the connector.
//
// For MirrorSourceConnector the client speaks the typed values of package
// offsets (MirrorOffsets, AlterMirrorOffsets, WaitMirrorOffsets, whose
// comparison is offsets.CompareReadBack); Offsets and AlterOffsets keep the
// generic form of other plugins' offsets (Offset, maps). A read-back that
// gives up is a *ReadBackError: ErrReadBack when offsets were read and
// differ (a failed check), ErrOffsetsUnread when no read succeeded (nothing
// is known; read again once the worker answers).
//
// # Guards
//
// Offsets can only change while the connector is STOPPED with no tasks.
// AlterOffsets and ResetOffsets check the status first (RequireStopped, the
// one STOPPED guard, which a step also calls before it resumes or patches)
// and return a *NotStoppedError naming the state (PAUSED is not STOPPED)
// and the way out; the worker stays the authority and its own 400 is
// mapped to the same error.
// Features are gated on the version GET / reports: offsets read 3.5,
// alter/reset 3.6, initial_state 3.7 (*VersionError).
//
// # Errors and retries
//
// Every error answer is an *APIError carrying Connect's error_code and
// message; errors.Is matches it against ErrNotFound, ErrAlreadyExists,
// ErrNotStopped, ErrRebalance, ErrUnauthorized, ErrForbidden,
// ErrForwarding, ErrOffsetsUnavailable and ErrOutcomeUnknown (a write
// answered 500 "Request timed out", or not answered in time: it may have
// happened). A TLS failure with the endpoint (a certificate that does not
// verify, no TLS, a TLS alert) is a *SecurityError matching ErrTLS, never
// retried. No redirect is followed, for any method: a 3xx answer is a
// *RedirectError matching ErrRedirect, naming the base URL to configure.
// errkind.Of sorts all of them into kinds. IsTransient, a pure
// function, decides what is retried: a rebalance refusal (409, or a 500
// that mentions a rebalance), a 503, a refused or reset connection, and
// only for requests safe to repeat (Repeat). Create is retried only on a
// rebalance; a retried create that meets "already exists" succeeds only if
// the existing configuration is the one requested. Retries use exponential
// backoff bound to the call's context; when the context ends its error
// wins. Every call takes a context first and nothing keeps one.
//
// # Configuration
//
// MirrorSource renders a MirrorSourceConnector configuration with the
// design's defaults; Lint checks any configuration against the cutover's
// rules (the keys that drop or divert records among them) and LintConfig
// merges those findings with the plugin's own validation.
// offsets.PolicyOf and NewTopicFilter read what a configuration makes
// MM2 do — the target topic names, the topics it replicates — so that the
// checks follow the configuration that will run, never settings restated
// beside it. Secret values (sasl.jaas.config, *.password, basic-auth
// credentials) never appear in an error, a log record or a String.
//
// The client never prints: it logs through the *slog.Logger given with
// WithLogger, and discards by default.
package connect
