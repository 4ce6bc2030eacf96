package redact_test

import (
	"fmt"

	"github.com/mm2cutover/mm2cutover/redact"
)

func ExampleConfig() {
	cfg := map[string]string{
		"source.cluster.sasl.jaas.config":      `org.apache.kafka.common.security.plain.PlainLoginModule required username="mm2" password="s3cret";`,
		"target.cluster.ssl.keystore.password": "${file:/etc/kafka/secrets.properties:keystore}",
		"topics":                               "orders",
	}
	r := redact.Config(cfg)
	fmt.Println(r["source.cluster.sasl.jaas.config"])
	fmt.Println(r["target.cluster.ssl.keystore.password"])
	fmt.Println(r["topics"])
	fmt.Println(redact.IsSecretKey("schema.registry.basic.auth.user.info"))
	// Output:
	// [redacted]
	// ${file:/etc/kafka/secrets.properties:keystore}
	// orders
	// true
}

func ExampleSecret() {
	password := redact.Secret("hunter2")
	fmt.Printf("%v %s %#v\n", password, password, password)
	// Output:
	// [redacted] [redacted] "[redacted]"
}
