package plan_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

func ExampleBuild() {
	orders0 := offsets.SourcePartition{Topic: "orders", Partition: 0}
	orders1 := offsets.SourcePartition{Topic: "orders", Partition: 1}
	p, err := plan.Build(plan.Spec{
		CreatedAt:       time.Date(2025, 6, 1, 8, 0, 0, 0, time.UTC),
		SourceClusterID: "src-cluster",
		TargetClusterID: "tgt-cluster",
		ConnectorName:   "orders-mirror",
		SourceAlias:     "source",
		ConnectorConfig: map[string]string{
			"connector.class":      "org.apache.kafka.connect.mirror.MirrorSourceConnector",
			"source.cluster.alias": "source",
		},
		GroupID: "flink-orders",
	}, plan.Snapshot{
		Group:     offsets.GroupOffsets{orders0: 42}, // orders-1 has no committed offset
		Source:    map[offsets.SourcePartition]offsets.LogBounds{orders0: {End: 100}, orders1: {End: 100}},
		TargetEnd: map[offsets.SourcePartition]int64{orders0: 40, orders1: 0},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range p.Entries {
		fmt.Println(e.Partition, e.Action, e.Offset)
	}
	_, err = p.PatchBody()
	fmt.Println(p.Applicable(), errors.Is(err, plan.ErrBlocked))
	// Output:
	// orders-0 set 41
	// orders-1 block null
	// false true
}

func ExamplePlan_PatchBody() {
	p, err := plan.Decode(strings.NewReader(examplePlan))
	if err != nil {
		fmt.Println(err)
		return
	}
	body, err := p.PatchBody()
	fmt.Println(string(body), err)
	// Output:
	// {"offsets":[{"partition":{"cluster":"source","topic":"orders","partition":0},"offset":{"offset":41}},{"partition":{"cluster":"source","topic":"orders","partition":1},"offset":null}]} <nil>
}

func ExamplePlan_WriteSummary() {
	p, err := plan.Decode(strings.NewReader(examplePlan))
	if err != nil {
		fmt.Println(err)
		return
	}
	p.WriteSummary(os.Stdout)
	// Output:
	// plan          sha256:00e939d1e1b4028312fa0fd3a8c9a3c49680c5b53ac031051cb4f24aafeeedc6 (schema 2, created 2025-06-01T08:00:00Z, tool none)
	// connector     orders-mirror (source.cluster.alias source, config sha256:54aa9088dc41bf0cc0d7ac51edd3c8a0fe4469fcdebe33a9c2959b1eb295b127)
	// group         flink-orders
	// offsets from  group
	// clusters      source src-cluster -> target tgt-cluster
	// savepoint     none
	// partitions    2: 1 set, 1 clear, 0 blocked
	// applicable    yes
}

func ExamplePlan_WriteTable() {
	p, err := plan.Decode(strings.NewReader(examplePlan))
	if err != nil {
		fmt.Println(err)
		return
	}
	p.WriteTable(os.Stdout)
	// Output:
	// TOPIC   PARTITION  GROUP OFFSET  LOG START  LOG END  TARGET END  ACTION  CONNECT OFFSET  LOST  REASON
	// orders  0          42            0          100      40          set     41              0     MM2 resumes at committed offset 42
	// orders  1          0             0          100      0           clear   null            0     committed offset 0: no connect offset; auto.offset.reset=earliest reads from 0
}

func ExampleDecode() {
	p, err := plan.Decode(strings.NewReader(examplePlan))
	fmt.Println(p.ConnectorName, len(p.Entries), err)

	edited := strings.Replace(examplePlan, `"group_offset":42`, `"group_offset":43`, 1)
	_, err = plan.Decode(strings.NewReader(edited))
	fmt.Println(errors.Is(err, plan.ErrInconsistent))

	newer := strings.Replace(examplePlan, `"schema_version": 2`, `"schema_version": 5`, 1)
	_, err = plan.Decode(strings.NewReader(newer))
	fmt.Println(err)
	fmt.Println(errors.Is(err, plan.ErrInvalid))
	// Output:
	// orders-mirror 2 <nil>
	// true
	// plan: unsupported schema version 5: this version reads schema versions 1 to 4
	// true
}

func ExampleParseResetOffsetsCSV() {
	// Written by: kafka-consumer-groups.sh --bootstrap-server ... --group flink-orders
	//   --reset-offsets --to-current --all-topics --dry-run --export
	csv := "orders,0,42\norders,1,0\n"
	group, err := plan.ParseResetOffsetsCSV(strings.NewReader(csv), "flink-orders")
	fmt.Println(group, err)
	// Output:
	// map[orders-0:42 orders-1:0] <nil>
}

func ExampleGroupOffsetsFromConnector() {
	// GET /connectors/old-mirror/offsets of a connector with source.cluster.alias "dc1".
	body := `{"offsets":[{"partition":{"cluster":"dc1","topic":"orders","partition":0},"offset":{"offset":41}}]}`
	group, err := plan.GroupOffsetsFromConnector(strings.NewReader(body), "dc1")
	fmt.Println(group, err)
	// Output:
	// map[orders-0:42] <nil>
}

func ExamplePlan_Encode() {
	p, err := plan.Decode(strings.NewReader(examplePlan))
	if err != nil {
		fmt.Println(err)
		return
	}
	var b bytes.Buffer
	if err := p.Encode(&b); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(b.String() == examplePlan)
	// Output:
	// true
}

// examplePlan is what ExampleBuild's inputs give with a committed offset of
// 0 for orders-1.
const examplePlan = `{
  "schema_version": 2,
  "created_at": "2025-06-01T08:00:00Z",
  "tool_version": "",
  "source_cluster_id": "src-cluster",
  "target_cluster_id": "tgt-cluster",
  "connector_name": "orders-mirror",
  "source_alias": "source",
  "config_digest": "sha256:54aa9088dc41bf0cc0d7ac51edd3c8a0fe4469fcdebe33a9c2959b1eb295b127",
  "group_id": "flink-orders",
  "offsets_from": {"kind":"group","ref":"","overrides_group":false},
  "savepoint": "",
  "expired_data_accepted": [],
  "partitions": [
    {"topic":"orders","partition":0,"group_offset":42,"log_start":0,"log_end":100,"target_end":40,"action":"set","connect_offset":41,"lost":0,"reason":"MM2 resumes at committed offset 42"},
    {"topic":"orders","partition":1,"group_offset":0,"log_start":0,"log_end":100,"target_end":0,"action":"clear","connect_offset":null,"lost":0,"reason":"committed offset 0: no connect offset; auto.offset.reset=earliest reads from 0"}
  ],
  "fingerprint": "sha256:00e939d1e1b4028312fa0fd3a8c9a3c49680c5b53ac031051cb4f24aafeeedc6"
}
`
