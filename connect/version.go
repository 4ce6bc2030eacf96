package connect

import (
	"fmt"
	"strconv"
	"strings"
)

// Minimum Kafka Connect versions of the REST features the cutover uses.
var (
	versionOffsetsRead  = kafkaVersion{3, 5} // KIP-875: GET /connectors/{n}/offsets
	versionOffsetsWrite = kafkaVersion{3, 6} // KIP-875: PATCH and DELETE offsets
	versionInitialState = kafkaVersion{3, 7} // KIP-980: initial_state on create
	versionEmitSyncs    = kafkaVersion{3, 9} // KIP-1031: emit.offset-syncs.enabled
)

// kafkaVersion is the major.minor part of a Kafka release; patch levels do not
// change the REST API.
type kafkaVersion struct{ major, minor int }

func (v kafkaVersion) String() string { return fmt.Sprintf("%d.%d", v.major, v.minor) }

func (v kafkaVersion) atLeast(w kafkaVersion) bool {
	return v.major > w.major || (v.major == w.major && v.minor >= w.minor)
}

// parseKafkaVersion reads the version string of GET / ("4.3.1",
// "3.7.0-SNAPSHOT"). Confluent Platform builds report their own release
// ("7.6.0-ccs", "7.6.0-ce"), whose major version is the Apache Kafka one plus
// four (CP 7.x ships Kafka 3.x, CP 8.x Kafka 4.x); they are mapped back. It
// never panics.
func parseKafkaVersion(s string) (kafkaVersion, error) {
	parts := strings.SplitN(strings.TrimSpace(s), ".", 3)
	if len(parts) < 2 {
		return kafkaVersion{}, fmt.Errorf("connect: worker version %q is not major.minor[.patch]", s)
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(strings.SplitN(parts[1], "-", 2)[0])
	if err1 != nil || err2 != nil || major < 0 || minor < 0 {
		return kafkaVersion{}, fmt.Errorf("connect: worker version %q is not major.minor[.patch]", s)
	}
	if rest := parts[len(parts)-1]; strings.HasSuffix(rest, "-ccs") || strings.HasSuffix(rest, "-ce") {
		if major >= 5 {
			major -= 4
		}
	}
	return kafkaVersion{major, minor}, nil
}
