package kafkaadmin_test

import (
	"fmt"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// A Flink group looks Empty even while the job runs; what shows it stopped
// is that its commits stay put between two readings.
func ExampleDiffCommitted() {
	tp := kafkaadmin.TopicPartition{Topic: "orders", Partition: 0}
	topics := kafkaadmin.Topics{"orders": 1}
	before := kafkaadmin.Reading{Topics: topics, Committed: offsets.GroupOffsets{tp: 1200}}
	after := kafkaadmin.Reading{Topics: topics, Committed: offsets.GroupOffsets{tp: 1250}}
	for _, c := range kafkaadmin.DiffCommitted(before, after) {
		fmt.Printf("%s: the job still commits\n", c)
	}
	fmt.Println(len(kafkaadmin.DiffCommitted(after, after)), "changes: stable")
	// Output:
	// orders-0 1200->1250: the job still commits
	// 0 changes: stable
}

// MirrorMaker 2's DefaultReplicationPolicy prefixes the source alias; the
// target topic must exist with the source's partition count.
func ExampleCheckTargets() {
	policy := offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: "src"}
	checks, err := kafkaadmin.CheckTargets(
		kafkaadmin.Topics{"orders": 12, "payments": 4},
		kafkaadmin.Topics{"src.orders": 12, "src.payments": 3},
		policy)
	if err != nil {
		panic(err)
	}
	for _, c := range checks {
		fmt.Println(c.Target, c.OK())
	}
	// Output:
	// src.orders true
	// src.payments false
}

// tokenSource stands for the caller's OAuth client: it fetches and
// refreshes access tokens.
type tokenSource struct{}

func (tokenSource) Token() (*sarama.AccessToken, error) {
	return &sarama.AccessToken{Token: "an access token from the identity provider"}, nil
}

// A mechanism this package does not know (here OAUTHBEARER; GSSAPI or a
// cloud provider's IAM signer work the same way) is set on the sarama
// configuration by Config.Sarama; TLS stays the package's own settings.
func ExampleConfig_sarama() {
	r, err := kafkaadmin.NewClient(kafkaadmin.Config{
		BootstrapServers: []string{"kafka-1.example:9093"},
		SecurityProtocol: kafkaadmin.SSL, // TLS here, SASL in the function
		TLS:              kafkaadmin.TLSConfig{CAFile: ""},
		Sarama: func(c *sarama.Config) error {
			c.Net.SASL.Enable = true
			c.Net.SASL.Mechanism = sarama.SASLTypeOAuth
			c.Net.SASL.TokenProvider = tokenSource{}
			return nil
		},
	})
	fmt.Println(r != nil, err)
	// Output: true <nil>
}
