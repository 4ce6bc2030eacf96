package connect_test

import (
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/connect"
)

// The trace of a MirrorSourceConnector that failed at start on a bad JAAS
// setting, as Kafka Connect 4.3.1 reported it (frames shortened).
const jaasTrace = `org.apache.kafka.common.KafkaException: The constructor of org.apache.kafka.clients.admin.ForwardingAdmin threw an exception
	at org.apache.kafka.connect.mirror.MirrorUtils.newAdmin(MirrorUtils.java:60)
Caused by: org.apache.kafka.common.KafkaException: Failed to create new KafkaAdminClient
	at org.apache.kafka.clients.admin.KafkaAdminClient.createInternal(KafkaAdminClient.java:551)
Caused by: org.apache.kafka.common.KafkaException: Failed to create new NetworkClient
	... 12 more
Caused by: java.lang.IllegalArgumentException: Invalid login module control flag 'bogus' in JAAS config
	at org.apache.kafka.common.security.JaasConfig.loginModuleControlFlag(JaasConfig.java:85)
`

// TestFailedErrorNamesTheRootCause: the error shows the trace's first line
// and its innermost cause, and says what to do.
func TestFailedErrorNamesTheRootCause(t *testing.T) {
	task := 0
	for _, tc := range []struct {
		name  string
		err   *connect.FailedError
		cause string
		shows []string
	}{
		{"nested causes", &connect.FailedError{Connector: "mm2", WorkerID: "w:8083", Trace: jaasTrace},
			"java.lang.IllegalArgumentException: Invalid login module control flag 'bogus' in JAAS config",
			[]string{"ForwardingAdmin threw an exception", "caused by java.lang.IllegalArgumentException: Invalid login module control flag 'bogus'"}},
		{"no cause", &connect.FailedError{Connector: "mm2", Task: &task, WorkerID: "w:8083", Trace: "java.lang.OutOfMemoryError: Java heap space\n\tat x"},
			"java.lang.OutOfMemoryError: Java heap space", []string{"task 0 of connector", "Java heap space"}},
		{"no trace", &connect.FailedError{Connector: "mm2", WorkerID: "w:8083"}, "", []string{`connector "mm2" failed on worker w:8083`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.RootCause(); got != tc.cause {
				t.Errorf("RootCause() = %q, want %q", got, tc.cause)
			}
			for _, want := range tc.shows {
				if !strings.Contains(tc.err.Error(), want) {
					t.Errorf("Error() = %q, does not show %q", tc.err.Error(), want)
				}
			}
			if strings.Count(tc.err.Error(), "Java heap space") > 1 {
				t.Errorf("Error() repeats the cause: %q", tc.err.Error())
			}
			if a := tc.err.Advice(); !strings.Contains(a, "/connectors/mm2/restart?includeTasks=true&onlyFailed=true") {
				t.Errorf("Advice() = %q, names no restart", a)
			}
		})
	}
}
