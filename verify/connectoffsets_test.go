package verify_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/kafkaadmin/kafkafake"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/verify"
)

// TestConnectorOffsetsOwnTopic: an old connector with an offsets topic of
// its own (offsets.storage.topic, KIP-618) is read as Connect reads it: its
// own topic's entries win over the workers' topic's, a partition only in
// the workers' topic keeps that value, and a tombstone in its own topic
// leaves the workers' value standing (ConnectorOffsetBackingStore.get).
func TestConnectorOffsetsOwnTopic(t *testing.T) {
	m := func(p int32, o int64) offsets.ConnectOffset {
		return offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: p}, Offset: offsets.NewMirrorOffset(o)}
	}
	tomb := func(p int32) offsets.ConnectOffset {
		return offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: p}}
	}
	target := kafkafake.New("")
	target.StoreConnectOffsets("mm2-connect-offsets", "old", m(0, 10), m(1, 20), m(2, 30))
	target.StoreConnectOffsets("old-offsets", "old", m(0, 15), tomb(2), m(3, 40))
	in := verify.ConnectorOffsets{Reader: target, Topic: "mm2-connect-offsets", ConnectorTopic: "old-offsets", Connector: "old", Alias: "source", Topics: []string{"orders"}}
	got, err := in.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := offsets.GroupOffsets{{Topic: "orders", Partition: 0}: 16, {Topic: "orders", Partition: 1}: 21, {Topic: "orders", Partition: 2}: 31, {Topic: "orders", Partition: 3}: 41}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("C (-want +got):\n%s", d)
	}
	if ref := in.Source().Ref; ref != "mm2:mm2-connect-offsets+old-offsets connector=old alias=source" {
		t.Errorf("Source().Ref = %q", ref)
	}
	in.ConnectorTopic = ""
	got, err = in.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got[offsets.SourcePartition{Topic: "orders", Partition: 0}] != 11 {
		t.Errorf("without the connector's topic: %v", got)
	}
}
