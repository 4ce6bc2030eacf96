package kafkaadmin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/offsets"
)

func TestDecodeConnectOffsetKey(t *testing.T) {
	for _, tc := range []struct {
		key       string
		connector string
		partition string
		bad       bool
	}{
		// What Kafka 4.3.1's dedicated MirrorMaker writes (pinned by TestSandboxDedicatedMM2Offsets).
		{key: `["MirrorSourceConnector",{"cluster":"source","partition":0,"topic":"orders"}]`,
			connector: "MirrorSourceConnector", partition: `{"cluster":"source","partition":0,"topic":"orders"}`},
		{key: `["MirrorHeartbeatConnector",{"sourceClusterAlias":"a","targetClusterAlias":"b"}]`,
			connector: "MirrorHeartbeatConnector", partition: `{"sourceClusterAlias":"a","targetClusterAlias":"b"}`},
		{key: ` [ "x" , 7 ] `, connector: "x", partition: `7`},
		{key: ``, bad: true},
		{key: `{"connector":"x"}`, bad: true},
		{key: `["x"]`, bad: true},
		{key: `["x",{},{}]`, bad: true},
		{key: `[1,{}]`, bad: true},
		{key: `["",{}]`, bad: true},
		{key: `["x",{}`, bad: true},
	} {
		c, p, err := DecodeConnectOffsetKey([]byte(tc.key))
		if tc.bad {
			if !errors.Is(err, ErrMalformedOffsetRecord) {
				t.Errorf("%q: got %q %s %v, want ErrMalformedOffsetRecord", tc.key, c, p, err)
			}
			continue
		}
		if err != nil || c != tc.connector || string(p) != tc.partition {
			t.Errorf("%q: got %q %s %v, want %q %s", tc.key, c, p, err, tc.connector, tc.partition)
		}
	}
}

func TestDecodeMirrorOffset(t *testing.T) {
	part := `{"cluster":"source","partition":3,"topic":"orders"}`
	want := func(m int64) offsets.ConnectOffset {
		return offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: 3}, Offset: offsets.NewMirrorOffset(m)}
	}
	null := offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: 3}}
	for _, tc := range []struct {
		partition string
		value     []byte // nil: a tombstone
		want      offsets.ConnectOffset
		bad       bool
	}{
		{partition: part, value: []byte(`{"offset":41}`), want: want(41)},
		{partition: `{"topic":"orders","cluster":"source","partition":3}`, value: []byte(` {"offset": 0} `), want: want(0)},
		{partition: part, value: nil, want: null},
		{partition: part, value: []byte(`null`), want: null},
		{partition: part, value: []byte(`{"offset":9223372036854775807}`), want: want(1<<63 - 1)},

		{partition: part, value: []byte(`{"offset":"41"}`), bad: true},
		{partition: part, value: []byte(`{"offset":41.5}`), bad: true},
		{partition: part, value: []byte(`{"offset":41,"extra":1}`), bad: true},
		{partition: part, value: []byte(`{}`), bad: true},
		{partition: part, value: []byte(``), bad: true},
		{partition: part, value: []byte(`{"offset":1},"partition":{"cluster":"x","topic":"y","partition":0}`), bad: true},
		{partition: `{"cluster":"source","topic":"orders"}`, value: []byte(`{"offset":1}`), bad: true},
		{partition: `{"cluster":"source","topic":"orders","partition":"3"}`, value: []byte(`{"offset":1}`), bad: true},
		{partition: `{"cluster":"source","topic":"orders","partition":3,"kafka_partition":1}`, value: []byte(`{"offset":1}`), bad: true},
		{partition: `[1]`, value: []byte(`{"offset":1}`), bad: true},
	} {
		got, err := DecodeMirrorOffset(json.RawMessage(tc.partition), tc.value)
		if tc.bad {
			if !errors.Is(err, ErrMalformedOffsetRecord) || !errors.Is(err, offsets.ErrMalformed) {
				t.Errorf("%s %q: got %v, %v; want ErrMalformedOffsetRecord and offsets.ErrMalformed", tc.partition, tc.value, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s %q: got %v, %v; want %v", tc.partition, tc.value, got, err, tc.want)
		}
	}
}

func FuzzDecodeConnectOffsetRecord(f *testing.F) {
	f.Add([]byte(`["MirrorSourceConnector",{"cluster":"source","partition":0,"topic":"orders"}]`), []byte(`{"offset":41}`))
	f.Add([]byte(`["MirrorSourceConnector",{"cluster":"source","partition":0,"topic":"orders"}]`), []byte(nil))
	f.Add([]byte(`["x",null]`), []byte(`null`))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		_, raw, err := DecodeConnectOffsetKey(key)
		if err != nil {
			if !errors.Is(err, ErrMalformedOffsetRecord) {
				t.Fatalf("key error %v does not match ErrMalformedOffsetRecord", err)
			}
			return
		}
		o, err := DecodeMirrorOffset(raw, value)
		if err != nil {
			if !errors.Is(err, ErrMalformedOffsetRecord) {
				t.Fatalf("error %v does not match ErrMalformedOffsetRecord", err)
			}
			return
		}
		// What decodes round-trips through the REST API's entry format.
		b, _ := json.Marshal(o)
		var back offsets.ConnectOffset
		if err := json.Unmarshal(b, &back); err != nil || back != o {
			t.Fatalf("%v does not round-trip: %s, %v", o, b, err)
		}
		if o.Offset.Present() && value == nil {
			t.Fatalf("a tombstone gave %v", o.Offset)
		}
	})
}

// TestSandboxDedicatedMM2Offsets runs real MirrorMaker 2 in dedicated mode
// (org.apache.kafka.connect.mirror.MirrorMaker), stops it, and reads its
// source offsets straight from its offsets topic on the target,
// mm2-offsets.<alias>.internal: per replicated partition the offset M of
// the last record it copied, under the connector name
// "MirrorSourceConnector". It pins the record format Kafka writes there,
// and that a tombstone removes an offset.
func TestSandboxDedicatedMM2Offsets(t *testing.T) {
	sb := sandboxtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	topic, alias := uniq(t, "t"), uniq(t, "src")
	for _, b := range []string{sb.Source().Bootstrap(), sb.Target().Bootstrap()} {
		createTopic(t, testAdmin(t, b), b, topic, 3)
	}
	produce(t, sb.Source().Bootstrap(), topic, 0, 30)
	produce(t, sb.Source().Bootstrap(), topic, 1, 12)
	// Partition 2 stays empty: MM2 stores nothing for it.

	mm2, err := sb.StartDedicatedMM2(ctx, sandbox.DedicatedConfig{Topics: []string{topic}, SourceAlias: alias})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mm2.Close() })
	target := newTestClient(t, sb.Target().Bootstrap())
	for {
		b, err := target.LogBounds(ctx, []TopicPartition{tp(topic, 0), tp(topic, 1)})
		if err == nil && b[tp(topic, 0)].End == 30 && b[tp(topic, 1)].End == 12 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("dedicated MM2 did not replicate: %v %v\n%s", b, err, mm2.LogTail(40))
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err := mm2.Stop(ctx); err != nil {
		t.Fatalf("stop dedicated MM2: %v\n%s", err, mm2.LogTail(40))
	}
	if mm2.OffsetsTopic() != DedicatedOffsetsTopic(alias) || mm2.ConnectorName() != MirrorSourceConnectorName {
		t.Fatalf("sandbox says %s / %s", mm2.OffsetsTopic(), mm2.ConnectorName())
	}

	got, err := target.ReadConnectOffsets(ctx, DedicatedOffsetsTopic(alias), MirrorSourceConnectorName)
	if err != nil {
		t.Fatal(err)
	}
	entry := func(p int32, m int64) offsets.ConnectOffset {
		return offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: alias, Topic: topic, Partition: p}, Offset: offsets.NewMirrorOffset(m)}
	}
	if d := cmp.Diff([]offsets.ConnectOffset{entry(0, 29), entry(1, 11)}, got); d != "" {
		t.Fatalf("offsets of the dedicated MM2 (-want +got):\n%s", d)
	}
	c, err := offsets.Reverse(alias, got)
	if err != nil || c[tp(topic, 0)] != 30 || c[tp(topic, 1)] != 12 {
		t.Fatalf("reverse: %v, %v", c, err)
	}

	// The records themselves: the key is the JSON array [name, partition]
	// with the partition's fields in the order Kafka's JsonConverter writes
	// MirrorUtils.wrapPartition's HashMap; the value is {"offset":M}.
	raw := rawRecords(t, sb.Target().Bootstrap(), DedicatedOffsetsTopic(alias))
	wantKey := fmt.Sprintf(`["MirrorSourceConnector",{"cluster":"%s","partition":1,"topic":"%s"}]`, alias, topic)
	i := slices.IndexFunc(raw, func(m *sarama.ConsumerMessage) bool {
		return string(m.Key) == wantKey && string(m.Value) == `{"offset":11}`
	})
	if i < 0 {
		for _, m := range raw {
			t.Logf("%s-%d@%d: %s = %s", m.Topic, m.Partition, m.Offset, m.Key, m.Value)
		}
		t.Fatalf("no record %s = {\"offset\":11}", wantKey)
	}

	// A tombstone for partition 1, where Connect would write it (the key's
	// partition of the offsets topic): the offset is gone.
	p, err := sarama.NewSyncProducer([]string{sb.Target().Bootstrap()}, saramaConf())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: DedicatedOffsetsTopic(alias), Partition: raw[i].Partition,
		Key: sarama.ByteEncoder(raw[i].Key)}); err != nil {
		t.Fatal(err)
	}
	got, err = target.ReadConnectOffsets(ctx, DedicatedOffsetsTopic(alias), MirrorSourceConnectorName)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]offsets.ConnectOffset{entry(0, 29)}, got); d != "" {
		t.Fatalf("after the tombstone (-want +got):\n%s", d)
	}

	// Another connector's name reads nothing; a missing topic is an error.
	if other, err := target.ReadConnectOffsets(ctx, DedicatedOffsetsTopic(alias), "mm2-orders"); err != nil || len(other) != 0 {
		t.Fatalf("other connector: %v, %v", other, err)
	}
	var ue *UnknownTopicsError
	if _, err := target.ReadConnectOffsets(ctx, DedicatedOffsetsTopic(alias+"-none"), MirrorSourceConnectorName); !errors.As(err, &ue) {
		t.Fatalf("missing topic: %v, want *UnknownTopicsError", err)
	}
}

// TestSandboxConnectOffsetsMalformed: a record of the connector that is not
// MirrorSourceConnector's format fails the read and says where it is.
func TestSandboxConnectOffsetsMalformed(t *testing.T) {
	sb := sandboxtest.Shared(t)
	ctx := testCtx(t)
	topic := uniq(t, "offsets")
	createTopic(t, testAdmin(t, sb.Target().Bootstrap()), sb.Target().Bootstrap(), topic, 2)
	p, err := sarama.NewSyncProducer([]string{sb.Target().Bootstrap()}, saramaConf())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	send := func(part int32, key, value string) {
		t.Helper()
		m := &sarama.ProducerMessage{Topic: topic, Partition: part, Key: sarama.StringEncoder(key)}
		if value != "" {
			m.Value = sarama.StringEncoder(value)
		}
		if _, _, err := p.SendMessage(m); err != nil {
			t.Fatal(err)
		}
	}
	send(0, `["MirrorSourceConnector",{"cluster":"source","partition":0,"topic":"t"}]`, `{"offset":4}`)
	send(1, `["MirrorHeartbeatConnector",{"sourceClusterAlias":"source","targetClusterAlias":"target"}]`, `{"offset":1}`)
	r := newTestClient(t, sb.Target().Bootstrap())
	got, err := r.ReadConnectOffsets(ctx, topic, MirrorSourceConnectorName)
	if err != nil || len(got) != 1 {
		t.Fatalf("got %v, %v; want the one MirrorSourceConnector entry", got, err)
	}
	send(1, `["MirrorSourceConnector",{"cluster":"source","partition":1,"topic":"t"}]`, `{"offset":"5"}`)
	_, err = r.ReadConnectOffsets(ctx, topic, MirrorSourceConnectorName)
	if !errors.Is(err, ErrMalformedOffsetRecord) {
		t.Fatalf("got %v, want ErrMalformedOffsetRecord", err)
	}
	t.Logf("error: %v", err)
}

// rawRecords reads every record of every partition of a topic.
func rawRecords(t *testing.T, bootstrap, topic string) []*sarama.ConsumerMessage {
	t.Helper()
	c, err := sarama.NewConsumer([]string{bootstrap}, saramaConf())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	client, err := sarama.NewClient([]string{bootstrap}, saramaConf())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	parts, err := c.Partitions(topic)
	if err != nil {
		t.Fatal(err)
	}
	var out []*sarama.ConsumerMessage
	for _, p := range parts {
		end, err := client.GetOffset(topic, p, sarama.OffsetNewest)
		if err != nil {
			t.Fatal(err)
		}
		if end == 0 {
			continue
		}
		pc, err := c.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			t.Fatal(err)
		}
		for m := range pc.Messages() {
			out = append(out, m)
			if m.Offset >= end-1 {
				break
			}
		}
		pc.Close()
	}
	return out
}
