//go:build sandbox

package kafkafake_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/kafkaadmin/kafkafake"
	"github.com/mm2cutover/mm2cutover/offsets"
)

func TestMain(m *testing.M) { sandboxtest.Main(m) }

// sentinels are what the conformance test asks errors.Is of each error.
var sentinels = []struct {
	name string
	err  error
}{
	{"ErrInvalidArgument", kafkaadmin.ErrInvalidArgument},
	{"ErrUnknownTopic", kafkaadmin.ErrUnknownTopic},
	{"ErrGroupActive", kafkaadmin.ErrGroupActive},
	{"ErrPartial", kafkaadmin.ErrPartial},
	{"ErrTopicsChanged", kafkaadmin.ErrTopicsChanged},
	{"ErrNoRecord", kafkaadmin.ErrNoRecord},
	{"ErrMalformedOffsetRecord", kafkaadmin.ErrMalformedOffsetRecord},
	{"offsets.ErrMalformed", offsets.ErrMalformed},
	{"offsets.ErrInvalidPolicy", offsets.ErrInvalidPolicy},
	{"sarama.ErrOffsetOutOfRange", sarama.ErrOffsetOutOfRange},
	{"sarama.ErrLeaderNotAvailable", sarama.ErrLeaderNotAvailable},
	{"context.Canceled", context.Canceled},
}

// errShape is an error as the test compares it: its text, the sentinels
// it matches, and the fields of the typed errors callers read.
type errShape struct {
	Text       string
	Is         []string
	Op         string            // *ArgumentError, *PartitionErrors
	Total      int               // *PartitionErrors
	Partitions map[string]string // *PartitionErrors: each partition's error text
	Topics     []string          // *UnknownTopicsError
	Group      string            // *GroupActiveError
	State      kafkaadmin.GroupState
	Members    int
}

func shape(err error) *errShape {
	if err == nil {
		return nil
	}
	s := &errShape{Text: err.Error()}
	for _, st := range sentinels {
		if errors.Is(err, st.err) {
			s.Is = append(s.Is, st.name)
		}
	}
	var (
		ae *kafkaadmin.ArgumentError
		pe *kafkaadmin.PartitionErrors
		ue *kafkaadmin.UnknownTopicsError
		ge *kafkaadmin.GroupActiveError
	)
	if errors.As(err, &ae) {
		s.Op = ae.Op
	}
	if errors.As(err, &pe) {
		s.Op, s.Total, s.Partitions = pe.Op, pe.Total, map[string]string{}
		for tp, e := range pe.Errs {
			s.Partitions[tp.String()] = e.Error()
		}
	}
	if errors.As(err, &ue) {
		s.Topics = ue.Topics
	}
	if errors.As(err, &ge) {
		s.Group, s.State, s.Members = ge.Group, ge.State, ge.Members
	}
	return s
}

// results compares what both sides return: records without their
// timestamps (the broker sets them), readings without their time, members
// by number (the coordinator names them), errors in maps by text.
var results = cmp.Options{
	cmpopts.IgnoreFields(kafkaadmin.Record{}, "Timestamp"),
	cmpopts.IgnoreFields(kafkaadmin.Reading{}, "At"),
	cmp.Transformer("members", func(ms []kafkaadmin.Member) int { return len(ms) }),
	cmp.Comparer(func(a, b error) bool {
		if a == nil || b == nil {
			return a == b
		}
		return a.Error() == b.Error()
	}),
}

// conformanceStep is one call of the script, made on both sides.
type conformanceStep struct {
	what string
	call func(ctx context.Context, c Client) (any, error)
}

// TestConformance runs one script of calls against a real cluster of the
// sandbox through *kafkaadmin.Client and against a Cluster seeded alike,
// and compares every result and every error: its text, the sentinels it
// matches (errors.Is) and the fields of its typed error. It is what the
// fake's claim to answer as the client does rests on.
func TestConformance(t *testing.T) {
	sb := sandboxtest.Dedicated(t, sandbox.Config{}) // two clusters, no Connect worker
	src := sb.Source()
	bs := src.Bootstrap()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	client, err := kafkaadmin.NewClient(kafkaadmin.Config{BootstrapServers: []string{bs}, ClientID: "kafkafake-conformance",
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	id, err := client.ClusterID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fake := kafkafake.New(id)

	p := fmt.Sprintf("kf%d-", time.Now().UnixNano()%1e9)
	topic, txn, offsetsTopic, bad, missing := p+"t", p+"u", p+"offsets", p+"bad", p+"missing"
	flink, busy, nobody, fresh := p+"flink", p+"busy", p+"nobody", p+"new"
	t0, t1, t5, u0, m0 := tp(topic, 0), tp(topic, 1), tp(topic, 5), tp(txn, 0), tp(missing, 0)

	// topic: 2 partitions; 0 holds records 1..4 after the deletion of 0.
	must(t, src.CreateTopic(ctx, topic, 2))
	var msgs []*sarama.ProducerMessage
	for off := range int64(5) {
		msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Partition: 0,
			Key: sarama.ByteEncoder(fmt.Sprintf("k%d", off)), Value: sarama.ByteEncoder(fmt.Sprintf("v%d", off))})
	}
	must(t, sandbox.ProduceToPartitions(ctx, bs, msgs))
	admin, err := sarama.NewClusterAdmin([]string{bs}, sandbox.NewSaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	must(t, admin.DeleteRecords(topic, map[int32]int64{0: 1}))
	fake.SeedTopic(topic, 2)
	fake.Produce(t0, 0, 5, nil)
	fake.Lock()
	fake.Records[t0] = fake.Records[t0][1:]
	fake.Bounds[t0] = offsets.LogBounds{Start: 1, End: 5, StableEnd: 5}
	fake.Unlock()

	// txn: one committed transaction of two records, its marker at 2.
	must(t, src.CreateTopic(ctx, txn, 1))
	tx, err := sandbox.NewTxnProducer(bs, p+"tx")
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	must(t, tx.Send(ctx, true,
		&sarama.ProducerMessage{Topic: txn, Key: sarama.ByteEncoder("k0"), Value: sarama.ByteEncoder("v0")},
		&sarama.ProducerMessage{Topic: txn, Key: sarama.ByteEncoder("k1"), Value: sarama.ByteEncoder("v1")}))
	fake.Produce(u0, 0, 2, nil)
	fake.Lock()
	fake.Bounds[u0] = offsets.LogBounds{End: 3, StableEnd: 3}
	for i := range fake.Records[u0] {
		fake.Records[u0][i].Transactional = true // written in a transaction, as the real ones
	}
	fake.Unlock()

	// The Connect offsets topic: the fake's records, written to the real
	// one byte for byte; and a topic with a malformed record.
	fake.StoreConnectOffsets(offsetsTopic, "mm2", mirror(topic, 0, 3), mirror(topic, 1, 7))
	fake.StoreConnectOffsets(offsetsTopic, "other", mirror(topic, 0, 99))
	fake.StoreConnectOffsets(offsetsTopic, "mm2", offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "source", Topic: topic, Partition: 1}})
	fake.Produce(tp(bad, 0), 0, 1, []kafkaadmin.Record{{Key: []byte(`["mm2",{"cluster":"source","partition":"x","topic":"t"}]`), Value: []byte(`{"offset":1}`)}})
	for _, name := range []string{offsetsTopic, bad} {
		must(t, src.CreateTopic(ctx, name, 1))
		fake.Lock()
		recs := slices.Clone(fake.Records[tp(name, 0)])
		fake.Unlock()
		msgs = msgs[:0]
		for _, r := range recs {
			m := &sarama.ProducerMessage{Topic: name, Key: sarama.ByteEncoder(r.Key)}
			if r.Value != nil {
				m.Value = sarama.ByteEncoder(r.Value)
			}
			msgs = append(msgs, m)
		}
		must(t, sandbox.ProduceToPartitions(ctx, bs, msgs))
	}

	// busy: a consumer of topic is its member.
	joinGroup(t, ctx, client, bs, busy, topic)
	fake.SetMembers(busy, 1)

	canceled, stop := context.WithCancel(ctx)
	stop()
	identity := offsets.ReplicationPolicy{Kind: offsets.IdentityPolicy}
	rc, ru := kafkaadmin.ReadCommitted, kafkaadmin.ReadUncommitted
	type from = map[kafkaadmin.TopicPartition]int64
	type spans = map[kafkaadmin.TopicPartition]kafkaadmin.Span
	script := []conformanceStep{
		{"cluster id", func(ctx context.Context, c Client) (any, error) { return c.ClusterID(ctx) }},

		{"topics", func(ctx context.Context, c Client) (any, error) { return c.Topics(ctx, topic, txn, topic) }},
		{"topics, one unknown", func(ctx context.Context, c Client) (any, error) { return c.Topics(ctx, missing, topic) }},
		{"no topics", func(ctx context.Context, c Client) (any, error) { return c.Topics(ctx) }},
		{"an empty topic name", func(ctx context.Context, c Client) (any, error) { return c.Topics(ctx, topic, "") }},
		{"topics matching", func(ctx context.Context, c Client) (any, error) { return c.TopicsMatching(ctx, p+"[tu]") }},
		{"topics matching nothing", func(ctx context.Context, c Client) (any, error) { return c.TopicsMatching(ctx, p+"zzz") }},
		{"topics matching a bad pattern", func(ctx context.Context, c Client) (any, error) { return c.TopicsMatching(ctx, "(") }},
		{"check targets", func(ctx context.Context, c Client) (any, error) {
			return c.CheckTargets(ctx, kafkaadmin.Topics{topic: 2, txn: 3, missing: 1}, identity)
		}},
		{"check no targets", func(ctx context.Context, c Client) (any, error) {
			return c.CheckTargets(ctx, kafkaadmin.Topics{}, identity)
		}},
		{"check targets with an invalid policy", func(ctx context.Context, c Client) (any, error) {
			return c.CheckTargets(ctx, kafkaadmin.Topics{topic: 2}, offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy})
		}},

		{"log bounds", func(ctx context.Context, c Client) (any, error) {
			return c.LogBounds(ctx, []kafkaadmin.TopicPartition{t0, t1, u0})
		}},
		{"log bounds of partitions that do not exist", func(ctx context.Context, c Client) (any, error) {
			return c.LogBounds(ctx, []kafkaadmin.TopicPartition{t0, t5, m0})
		}},
		{"log bounds of nothing", func(ctx context.Context, c Client) (any, error) { return c.LogBounds(ctx, nil) }},
		{"end offsets", func(ctx context.Context, c Client) (any, error) {
			return c.EndOffsets(ctx, []kafkaadmin.TopicPartition{t0, u0, t5})
		}},
		{"end offsets of nothing", func(ctx context.Context, c Client) (any, error) { return c.EndOffsets(ctx, nil) }},

		{"first records", func(ctx context.Context, c Client) (any, error) {
			return c.FirstRecords(ctx, from{t0: 2, t1: 0, u0: 1}, rc)
		}},
		{"first records read uncommitted", func(ctx context.Context, c Client) (any, error) { return c.FirstRecords(ctx, from{t0: 1, u0: 0}, ru) }},
		{"first record at a commit marker", func(ctx context.Context, c Client) (any, error) { return c.FirstRecords(ctx, from{u0: 2}, rc) }},
		{"first record at the end", func(ctx context.Context, c Client) (any, error) { return c.FirstRecords(ctx, from{t0: 5, t1: 0}, rc) }},
		{"first record below the log start", func(ctx context.Context, c Client) (any, error) { return c.FirstRecords(ctx, from{t0: 0, u0: 0}, rc) }},
		{"first record beyond the end", func(ctx context.Context, c Client) (any, error) { return c.FirstRecords(ctx, from{t0: 6, t1: 1}, rc) }},
		{"first record of partitions that do not exist", func(ctx context.Context, c Client) (any, error) {
			return c.FirstRecords(ctx, from{t5: 0, m0: 0, t0: 3}, rc)
		}},
		{"first record at a negative offset", func(ctx context.Context, c Client) (any, error) { return c.FirstRecords(ctx, from{t0: -1}, rc) }},
		{"read record", func(ctx context.Context, c Client) (any, error) { return c.ReadRecord(ctx, t0, 2, rc) }},
		{"read record at the end", func(ctx context.Context, c Client) (any, error) { return c.ReadRecord(ctx, t0, 5, rc) }},
		{"read record at a commit marker", func(ctx context.Context, c Client) (any, error) { return c.ReadRecord(ctx, u0, 2, rc) }},
		{"read record below the log start", func(ctx context.Context, c Client) (any, error) { return c.ReadRecord(ctx, t0, 0, rc) }},
		{"read record of a partition that does not exist", func(ctx context.Context, c Client) (any, error) { return c.ReadRecord(ctx, t5, 0, rc) }},
		{"read spans", func(ctx context.Context, c Client) (any, error) {
			return c.ReadSpans(ctx, spans{t0: {From: 1, Until: 3}, t1: {From: 0, Until: 10}, u0: {From: 0, Until: 100}}, rc)
		}},
		{"read spans to the end", func(ctx context.Context, c Client) (any, error) {
			return c.ReadSpans(ctx, spans{t0: {From: 4, Until: 100}, u0: {From: 1, Until: 3}}, ru)
		}},
		{"read spans beyond the end", func(ctx context.Context, c Client) (any, error) {
			return c.ReadSpans(ctx, spans{t0: {From: 6, Until: 7}, t1: {From: 0, Until: 1}}, rc)
		}},
		{"read empty spans", func(ctx context.Context, c Client) (any, error) {
			return c.ReadSpans(ctx, spans{t0: {From: 2, Until: 2}}, rc)
		}},
		{"read spans from a negative offset", func(ctx context.Context, c Client) (any, error) {
			return c.ReadSpans(ctx, spans{t0: {From: -1, Until: 3}}, rc)
		}},

		{"describe a group that does not exist", func(ctx context.Context, c Client) (any, error) { return c.DescribeGroup(ctx, flink) }},
		{"describe a group with a member", func(ctx context.Context, c Client) (any, error) { return c.DescribeGroup(ctx, busy) }},
		{"describe no group", func(ctx context.Context, c Client) (any, error) { return c.DescribeGroup(ctx, "") }},
		{"offsets of a group without commits", func(ctx context.Context, c Client) (any, error) { return c.GroupOffsets(ctx, nobody, []string{topic}) }},
		{"commit to a group with a member", func(ctx context.Context, c Client) (any, error) {
			return nil, c.CommitOffsets(ctx, busy, from{t0: 2})
		}},
		{"commit beyond the partitions", func(ctx context.Context, c Client) (any, error) {
			return nil, c.CommitOffsets(ctx, flink, from{t0: 2, t5: 1})
		}},
		{"commit to a topic that does not exist", func(ctx context.Context, c Client) (any, error) {
			return nil, c.CommitOffsets(ctx, flink, from{m0: 1, t0: 1})
		}},
		{"commit a negative offset", func(ctx context.Context, c Client) (any, error) {
			return nil, c.CommitOffsets(ctx, flink, from{t0: -1})
		}},
		{"commit nothing", func(ctx context.Context, c Client) (any, error) { return nil, c.CommitOffsets(ctx, flink, nil) }},
		{"commit for no group", func(ctx context.Context, c Client) (any, error) { return nil, c.CommitOffsets(ctx, "", from{t0: 1}) }},
		{"nothing was committed", func(ctx context.Context, c Client) (any, error) { return c.GroupOffsets(ctx, flink, []string{topic}) }},
		{"commit", func(ctx context.Context, c Client) (any, error) { return nil, c.CommitOffsets(ctx, flink, from{t0: 3}) }},
		{"a group that commits is Empty", func(ctx context.Context, c Client) (any, error) { return c.DescribeGroup(ctx, flink) }},
		{"commit again, another partition", func(ctx context.Context, c Client) (any, error) { return nil, c.CommitOffsets(ctx, flink, from{t1: 0}) }},
		{"group offsets", func(ctx context.Context, c Client) (any, error) {
			return c.GroupOffsets(ctx, flink, []string{topic, txn})
		}},
		{"group offsets of a topic that does not exist", func(ctx context.Context, c Client) (any, error) {
			return c.GroupOffsets(ctx, flink, []string{topic, missing})
		}},
		{"group offsets of no group", func(ctx context.Context, c Client) (any, error) { return c.GroupOffsets(ctx, "", []string{topic}) }},
		{"commit to a new group", func(ctx context.Context, c Client) (any, error) { return nil, c.CommitOffsets(ctx, fresh, from{u0: 3}) }},
		{"the new group", func(ctx context.Context, c Client) (any, error) { return c.DescribeGroup(ctx, fresh) }},

		{"read group", func(ctx context.Context, c Client) (any, error) { return c.ReadGroup(ctx, flink, []string{topic, txn}) }},
		{"read group of a topic that does not exist", func(ctx context.Context, c Client) (any, error) {
			return c.ReadGroup(ctx, flink, []string{missing})
		}},
		{"read group of no topics", func(ctx context.Context, c Client) (any, error) { return c.ReadGroup(ctx, flink, nil) }},
		{"commit window", func(ctx context.Context, c Client) (any, error) {
			w, err := c.ReadCommitWindow(ctx, flink, []string{topic}, 200*time.Millisecond)
			return []any{w.Group, w.Window, w.First.Topics, w.First.Committed, w.First.Bounds, w.Second, w.Moved}, err
		}},
		{"commit window that is not positive", func(ctx context.Context, c Client) (any, error) {
			return c.ReadCommitWindow(ctx, flink, []string{topic}, 0)
		}},
		{"commit window of a topic that does not exist", func(ctx context.Context, c Client) (any, error) {
			return c.ReadCommitWindow(ctx, flink, []string{missing}, time.Millisecond)
		}},

		{"connect offsets", func(ctx context.Context, c Client) (any, error) {
			return c.ReadConnectOffsets(ctx, offsetsTopic, "mm2")
		}},
		{"connect offsets of a connector without any", func(ctx context.Context, c Client) (any, error) {
			return c.ReadConnectOffsets(ctx, offsetsTopic, "nobody")
		}},
		{"connect offsets in a topic that does not exist", func(ctx context.Context, c Client) (any, error) {
			return c.ReadConnectOffsets(ctx, missing, "mm2")
		}},
		{"connect offsets of no connector", func(ctx context.Context, c Client) (any, error) { return c.ReadConnectOffsets(ctx, offsetsTopic, "") }},
		{"a malformed connect offset", func(ctx context.Context, c Client) (any, error) { return c.ReadConnectOffsets(ctx, bad, "mm2") }},

		{"topics, context canceled", func(_ context.Context, c Client) (any, error) { return c.Topics(canceled, topic) }},
		{"log bounds, context canceled", func(_ context.Context, c Client) (any, error) {
			return c.LogBounds(canceled, []kafkaadmin.TopicPartition{t0})
		}},
		{"first records, context canceled", func(_ context.Context, c Client) (any, error) { return c.FirstRecords(canceled, from{t0: 1}, rc) }},
		{"empty spans, context canceled", func(_ context.Context, c Client) (any, error) {
			return c.ReadSpans(canceled, spans{t0: {From: 2, Until: 2}}, rc)
		}},
		{"describe group, context canceled", func(_ context.Context, c Client) (any, error) { return c.DescribeGroup(canceled, flink) }},
		{"commit, context canceled", func(_ context.Context, c Client) (any, error) {
			return nil, c.CommitOffsets(canceled, flink, from{t0: 4})
		}},
		{"read group, context canceled", func(_ context.Context, c Client) (any, error) { return c.ReadGroup(canceled, flink, []string{topic}) }},
		{"connect offsets, context canceled", func(_ context.Context, c Client) (any, error) {
			return c.ReadConnectOffsets(canceled, offsetsTopic, "mm2")
		}},
		{"nothing more was committed", func(ctx context.Context, c Client) (any, error) { return c.GroupOffsets(ctx, flink, []string{topic}) }},
	}
	for _, st := range script {
		t.Logf("step: %s", st.what) // places the client's retry notices
		wantV, wantErr := st.call(ctx, client)
		gotV, gotErr := st.call(ctx, fake)
		if d := cmp.Diff(shape(wantErr), shape(gotErr)); d != "" {
			t.Errorf("%s: the fake's error differs from the client's (-real +fake):\n%s", st.what, d)
		}
		if d := cmp.Diff(wantV, gotV, results); d != "" {
			t.Errorf("%s: the fake's result differs from the client's (-real +fake):\n%s", st.what, d)
		}
	}
}

// joinGroup starts a consumer of topic in group on the real cluster until
// the test ends, and waits until the client sees it as a member.
func joinGroup(t *testing.T, ctx context.Context, r *kafkaadmin.Client, bootstrap, group, topic string) {
	t.Helper()
	conf := sandbox.NewSaramaConfig()
	conf.ClientID = "kafkafake-conformance-member"
	cg, err := sarama.NewConsumerGroup([]string{bootstrap}, group, conf)
	if err != nil {
		t.Fatal(err)
	}
	cctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for cctx.Err() == nil {
			_ = cg.Consume(cctx, []string{topic}, member{})
		}
	}()
	t.Cleanup(func() {
		stop()
		<-done
		_ = cg.Close()
	})
	deadline := time.Now().Add(2 * time.Minute)
	for {
		g, err := r.DescribeGroup(ctx, group)
		if err == nil && g.State == kafkaadmin.GroupStable && len(g.Members) == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the consumer never became the group's member: %+v, %v", g, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// member is a consumer group member that reads and commits nothing.
type member struct{}

func (member) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (member) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (member) ConsumeClaim(_ sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for range c.Messages() {
	}
	return nil
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// testWriter sends the client's retry notices to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(string(b))
	return len(b), nil
}
