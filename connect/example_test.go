package connect_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// The cutover on a Connect cluster: create the connector STOPPED, set where
// it starts reading, read that back until it holds, and only then resume.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	c, err := connect.New("http://connect.mm2.svc:8083")
	if err != nil {
		log.Fatal(err)
	}
	cfg, err := connect.MirrorSource{
		Name:            "flink-to-mm2-source",
		SourceBootstrap: "source-kafka:9092",
		TargetBootstrap: "target-kafka:9092",
		Topics:          []string{"orders", "payments"},
		TasksMax:        4,
		IsolationLevel:  "read_committed",
	}.Config()
	if err != nil {
		log.Fatal(err)
	}

	if _, err := c.Create(ctx, "flink-to-mm2-source", cfg, connect.InitialStopped); err != nil {
		log.Fatal(err)
	}
	if _, err := c.WaitStopped(ctx, "flink-to-mm2-source"); err != nil {
		log.Fatal(err)
	}

	// The Flink group committed C = 1000 on orders-0 and C = 0 on orders-1:
	// M = 999, and no stored offset (auto.offset.reset=earliest reads from 0).
	orders0 := offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: 0}
	orders1 := offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: 1}
	patch := []offsets.ConnectOffset{{Partition: orders0, Offset: offsets.NewMirrorOffset(999)}, {Partition: orders1}}
	_, err = c.AlterMirrorOffsets(ctx, "flink-to-mm2-source", patch)
	if errors.Is(err, connect.ErrNotStopped) {
		log.Fatalf("not applied: %v", err)
	} else if err != nil {
		log.Fatal(err)
	}
	if _, err := c.WaitMirrorOffsets(ctx, "flink-to-mm2-source", patch[:1]); err != nil {
		log.Fatal(err) // a *ReadBackError lists the differing partitions
	}

	if err := c.Resume(ctx, "flink-to-mm2-source"); err != nil {
		log.Fatal(err)
	}
	if _, err := c.WaitRunning(ctx, "flink-to-mm2-source"); err != nil {
		log.Fatal(err) // a *FailedError carries the task's trace
	}
}

func ExampleLint() {
	cfg, err := connect.MirrorSource{
		Name:            "flink-to-mm2-source",
		SourceBootstrap: "source-kafka:9092",
		TargetBootstrap: "target-kafka:9092",
		Topics:          []string{"orders"},
	}.Config()
	if err != nil {
		log.Fatal(err)
	}
	cfg["offset.consistency.enabled"] = "false" // from the design seed
	cfg["source.consumer.auto.offset.reset"] = "latest"

	for _, f := range connect.Lint(cfg, "3.8.1", connect.LintExpectations{SourceAlias: "source", HasClearedPartition: true}) {
		fmt.Printf("%s %s\n", f.Severity, f.Key)
	}
	// Output:
	// error emit.offset-syncs.enabled
	// error source.consumer.auto.offset.reset
	// warning offset.consistency.enabled
	// warning source.consumer.isolation.level
}

// ExampleClient_AlterMirrorOffsets: a MirrorSourceConnector's offsets are
// offsets.ConnectOffset values; the body AlterMirrorOffsets sends is the
// one plan.Plan.PatchBody writes, byte for byte.
func ExampleClient_AlterMirrorOffsets() {
	list := []offsets.ConnectOffset{
		{Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: 0}, Offset: offsets.NewMirrorOffset(999)},
		{Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: 1}}, // C = 0: no offset
	}
	body, err := json.Marshal(offsets.ConnectOffsetList{Offsets: list})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(body))
	// Output:
	// {"offsets":[{"partition":{"cluster":"source","topic":"orders","partition":0},"offset":{"offset":999}},{"partition":{"cluster":"source","topic":"orders","partition":1},"offset":null}]}
}

// MirrorMaker 2's clients of a Kerberized source cluster log in from a
// keytab every worker holds; the configuration shown (and stored in the
// plan and the audit) redacts the JAAS entry, and names no key.
func ExampleGSSAPIClient() {
	source, err := connect.GSSAPIClient("SASL_SSL", "kafka", "mm2@CORP.EXAMPLE.COM", "/etc/security/keytabs/mm2.keytab")
	if err != nil {
		log.Fatal(err)
	}
	source["ssl.truststore.location"] = "/etc/kafka/truststore.jks"
	m := connect.MirrorSource{
		Name:            "flink-to-mm2-source",
		SourceBootstrap: "broker1.corp.example.com:9093",
		TargetBootstrap: "target-kafka:9092",
		SourceClient:    source,
		Topics:          []string{"orders"},
		IsolationLevel:  "read_committed",
	}
	cfg, err := m.Config()
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range connect.Lint(cfg, "4.3.1", connect.LintExpectations{}) {
		fmt.Println(f.Severity, f.Key)
	}
	fmt.Print(connect.ConfigString(map[string]string{
		"source.cluster.sasl.mechanism":             cfg["source.cluster.sasl.mechanism"],
		"source.cluster.sasl.kerberos.service.name": cfg["source.cluster.sasl.kerberos.service.name"],
		"source.cluster.sasl.jaas.config":           cfg["source.cluster.sasl.jaas.config"],
	}))
	// Output:
	// warning source.cluster.sasl.jaas.config
	// source.cluster.sasl.jaas.config=[redacted]
	// source.cluster.sasl.kerberos.service.name=kafka
	// source.cluster.sasl.mechanism=GSSAPI
}
