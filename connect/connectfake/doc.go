// Package connectfake is a fake Kafka Connect worker for tests of programs
// that move replication onto MirrorMaker 2: an httptest server that answers
// the REST endpoints of the cutover as a Kafka Connect 4.3.1 worker with the
// MirrorMaker 2 connectors does, without a JVM.
//
//	fake := connectfake.New()
//	defer fake.Close()
//	// point the program under test at fake.URL()
//
// # Answers pinned to the real worker
//
// Every answer is the real worker's: status code, Content-Type and body,
// error messages worded per endpoint as Kafka Connect words them. The
// package's conformance test sends one script of requests to a real
// Kafka Connect 4.3.1 worker (started by the repository's sandbox) and to
// the fake and compares each answer, byte for byte where the fake
// reproduces the worker's key order, after replacing worker and cluster IDs.
// It runs in CI. The endpoints:
//
//	GET    /                                            version, commit, kafka_cluster_id
//	GET    /connector-plugins                           the three MirrorMaker 2 connectors
//	PUT    /connector-plugins/{class}/config/validate   each key's definition and value (see below)
//	GET    /connectors[?expand=status&expand=info]
//	POST   /connectors                                  201; initial_state RUNNING, PAUSED or STOPPED; 409 "Connector NAME already exists"
//	GET    /connectors/{name}
//	GET    /connectors/{name}/config
//	PUT    /connectors/{name}/config                    201 for a new (RUNNING) connector, 200 for an update
//	GET    /connectors/{name}/status
//	PUT    /connectors/{name}/stop                      204; the task list is emptied before the answer
//	PUT    /connectors/{name}/pause, /resume            202
//	DELETE /connectors/{name}                           204; the offsets stay
//	GET    /connectors/{name}/offsets
//	PATCH  /connectors/{name}/offsets                   only while STOPPED with no tasks, else 400
//	DELETE /connectors/{name}/offsets                   the same
//
// Unknown paths and methods get the worker's own 404 and 405. The other
// endpoints of the real REST API (restart, tasks, topics, PATCH config,
// loggers) answer 501 with a message that says the fake lacks them.
//
// Behaviour a test can rely on, each pinned: offsets are kept by connector
// name and survive the connector's deletion, so a new connector of the same
// name inherits them. A PAUSED connector is not STOPPED: PATCH and DELETE
// of its offsets answer the worker's 400, and a STOPPED connector that is
// paused stays without tasks. MirrorSourceConnector checks only the format
// of offsets: a negative offset, a partition that is not an integer or a
// missing key give the worker's 500 with its message (maps printed as Java
// prints them), while a wrong cluster alias is accepted. A failed class
// lookup is worded differently the second time, as the worker caches it.
//
// # Time
//
// A real worker acts on a change asynchronously: its configuration and
// task list change before it answers, its status afterwards. The fake keeps
// that order with a lag counted in reads (WithStatusLag, default 1): after a
// create, the first status read answers 404 "No status found for connector
// NAME" (and GET /connectors?expand=status leaves the connector out); after
// a pause or resume, which a worker only accepts (202), the first read still
// shows the status from before. A stop (204) shows STOPPED with no tasks at
// once in the fake. A real worker shows more on the way, for up to seconds,
// depending on timing; seen on Kafka Connect 4.3.1: PAUSED with its tasks
// still RUNNING, RUNNING or PAUSED with no tasks, a PAUSED connector's task
// RUNNING again during its stop, tasks UNASSIGNED in any connector state.
// Code that waits for a state must check the connector's state and every
// task's, and that a STOPPED connector lists no tasks.
//
// GET /connectors/{name}/offsets is current at once unless
// SetStaleOffsetReads makes it answer the previous offsets for some reads
// after each write, as a worker that has not read back its own write does.
//
// # Seeding
//
// A test starts from the world it needs without sending requests:
// WithConnectors creates connectors with a configuration in a target
// state (RUNNING, PAUSED or STOPPED), as a settled create with that
// initial_state leaves them, their status shown at once; WithOffsets
// stores a MirrorSourceConnector's offsets under a name, whether or not a
// connector of that name exists (offsets outlive connectors, so one
// created later inherits them), as controller-runtime's fake client
// builder's WithObjects does for objects:
//
//	fake := connectfake.New(
//		connectfake.WithConnectors(connectfake.Connector{Name: "mm2", Config: cfg, State: connectfake.StateStopped}),
//		connectfake.WithOffsets("mm2", stored...),
//	)
//
// SeedConnector and SeedOffsets do the same on a running Server, between
// a test's steps. A configuration the worker would refuse is refused as
// ErrInvalidSeed (New panics: the test's own mistake).
//
// # Faults, interception and progress
//
// FailNext makes the next requests of a method and path answer a Fault: the
// 409s of a rebalance (Rebalance, NoLeader, ConflictingOperation), or a 500
// (RequestTimeout, after which the request has still taken effect;
// ForwardingFailed; OffsetsReadFailed). Their texts are Kafka Connect's; a
// real worker cannot be made to give them on demand, so they are not
// compared with one.
//
// Intercept installs an Interceptor that sees every request first — its
// method, path, query and body — and decides: let the worker answer
// (next), answer a Fault for that one request (Fault.Answer), let the
// worker carry it out and lose the answer, hold it (to test a client's
// deadline), or only watch.
//
// No task runs: Advance stores the offset a running MirrorSourceTask would
// commit, so that a test can simulate MirrorMaker 2 copying.
//
// # Inspection
//
// Connector returns a connector's configuration, target state and task
// count as the configuration topic holds them now (its status may lag);
// Offsets the offsets stored under a name, current (GET may answer older
// ones after SetStaleOffsetReads); ConnectorNames the connectors.
// Requests lists the requests received, in order, with the status each
// was answered: a test asserts that its tool sent no write
// (Request.Writes), or which requests it sent.
//
// # Where the fake is simpler
//
// A RUNNING connector has tasks.max tasks (MirrorSourceConnector has at most
// one per source partition). Validation parses each key by its type, requires
// required keys and checks tasks.max >= 1; a real plugin's other validators
// (allowed values, class loading, non-empty topic lists) are not run, and
// definitions carry no documentation text. Of several malformed offsets in
// one PATCH the fake names the first; the worker may name another. A body
// Jackson cannot map (not JSON, or JSON of another shape) gets a 500 in the
// fake's words, not Jackson's; unknown fields get Jackson's. The fake
// is a single worker: nothing is forwarded, and GET /connector-plugins lists
// only the connectors whatever connectorsOnly says.
package connectfake
