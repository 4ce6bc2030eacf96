package kafkaadmin

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/google/go-cmp/cmp"
	"github.com/mm2cutover/mm2cutover/internal/kafkaretry"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/offsets"
)

func TestMain(m *testing.M) { sandboxtest.Main(m) }

// The helpers below set the cluster up with sarama directly: they play the
// other programs (Flink, a consumer group, a transactional producer).

var nameChars = regexp.MustCompile(`[^a-zA-Z0-9]+`)

// uniq returns a topic or group name unique to the test.
func uniq(t testing.TB, what string) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	n := strings.ToLower(nameChars.ReplaceAllString(t.Name(), "-"))
	return strings.Trim(n, "-") + "-" + what + "-" + hex.EncodeToString(b)
}

func saramaConf() *sarama.Config {
	c := sarama.NewConfig()
	c.Version = sarama.V2_8_0_0
	c.ClientID = "kafkaadmin-test"
	c.Producer.Return.Successes = true
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Producer.Partitioner = sarama.NewManualPartitioner
	c.Producer.Retry.Max = 20
	c.Producer.Retry.Backoff = 250 * time.Millisecond
	return c
}

func testAdmin(t testing.TB, bootstrap string) sarama.ClusterAdmin {
	t.Helper()
	a, err := sarama.NewClusterAdmin([]string{bootstrap}, clusterSarama(bootstrap))
	if err != nil {
		t.Fatalf("cluster admin: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func createTopic(t testing.TB, a sarama.ClusterAdmin, bootstrap, topic string, partitions int32) {
	t.Helper()
	if err := a.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}, false); err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	t.Cleanup(func() { _ = a.DeleteTopic(topic) })
	// The broker creates the partitions after it answers CreateTopics: the
	// metadata may not list them at first (LogBounds then fails at once with
	// ErrUnknownTopic, as it should for a topic that does not exist), and
	// then their leaders answer NOT_LEADER for a while (LogBounds retries).
	// Loaded run O (a CPU burner beside the suite): 526 of 2,000 partitions
	// still had no leader after 2 minutes. The wait is for the condition,
	// up to 8 minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	rc := clusterConfig(bootstrap)
	rc.RetryTimeout = 2 * time.Minute
	r, err := NewClient(rc)
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err := r.LogBounds(ctx, Topics{topic: partitions}.Partitions())
		if err == nil {
			return
		}
		var pe *PartitionErrors
		if !(errors.Is(err, ErrUnknownTopic) || errors.As(err, &pe)) || ctx.Err() != nil {
			t.Fatalf("topic %s not ready: %v", topic, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// produce writes n records to one partition and returns the last offset.
func produce(t testing.TB, bootstrap, topic string, partition int32, n int) int64 {
	t.Helper()
	p, err := sarama.NewSyncProducer([]string{bootstrap}, clusterSarama(bootstrap))
	if err != nil {
		t.Fatalf("producer: %v", err)
	}
	defer p.Close()
	var last int64
	for i := 0; i < n; i++ {
		// A partition just created can still refuse records for a moment on
		// a loaded machine; sarama's own retries do not always cover it.
		err := kafkaretry.Do(context.Background(), func() error {
			var err error
			_, last, err = p.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: partition, Value: sarama.StringEncoder("v")})
			return err
		})
		if err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	return last
}

// flinkCommit does what Flink's KafkaSource does on a checkpoint: it reads
// with manual assignment (no group membership) and commits lastRecord+1
// with an OffsetCommit outside any generation (generation -1, no member).
func flinkCommit(t testing.TB, bootstrap, group string, offsets map[TopicPartition]int64) {
	t.Helper()
	client, err := sarama.NewClient([]string{bootstrap}, clusterSarama(bootstrap))
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	defer client.Close()
	req := sarama.NewOffsetCommitRequest(client.Config(), group)
	req.ConsumerGroupGeneration = -1
	req.ConsumerID = ""
	for tp, off := range offsets {
		req.AddBlockWithLeaderEpoch(tp.Topic, tp.Partition, off, -1, 0, "flink")
	}
	// The first commit of a new cluster creates __consumer_offsets; with
	// several brokers its leaders, and so the group's coordinator, can move
	// right after. Flink's client retries then too.
	err = kafkaretry.Do(context.Background(), func() error {
		err := commitOnce(client, group, req)
		if kafkaretry.Retriable(err) {
			_ = client.RefreshCoordinator(group)
		}
		return err
	})
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
}

func commitOnce(client sarama.Client, group string, req *sarama.OffsetCommitRequest) error {
	coord, err := client.Coordinator(group)
	if err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	resp, err := coord.CommitOffset(req)
	if err != nil {
		return err
	}
	for topic, ps := range resp.Errors {
		for p, k := range ps {
			if k != sarama.ErrNoError {
				return fmt.Errorf("%s-%d: %w", topic, p, k)
			}
		}
	}
	return nil
}

// flinkRead consumes a partition by assignment up to its end and returns
// lastRecord+1, the offset Flink would commit.
func flinkRead(t testing.TB, bootstrap, topic string, partition int32, want int) int64 {
	t.Helper()
	c, err := sarama.NewConsumer([]string{bootstrap}, clusterSarama(bootstrap))
	if err != nil {
		t.Fatalf("consumer: %v", err)
	}
	defer c.Close()
	pc, err := c.ConsumePartition(topic, partition, sarama.OffsetOldest)
	if err != nil {
		t.Fatalf("consume: %v", err)
	}
	defer pc.Close()
	var last int64
	for i := 0; i < want; i++ {
		select {
		case m := <-pc.Messages():
			last = m.Offset
		case <-time.After(20 * time.Second):
			t.Fatalf("read %d of %d records", i, want)
		}
	}
	return last + 1
}

func newTestClient(t testing.TB, bootstrap string) *Client {
	t.Helper()
	c := clusterConfig(bootstrap)
	c.ClientID, c.Logger = "kafkaadmin-test", testLogger(t)
	r, err := NewClient(c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// testLogger sends the Client's retry notices to the test log.
// signalHandler closes ch, once, when a record with message msg is
// handled: a test waits on it for a step of the code under test.
type signalHandler struct {
	slog.Handler
	msg  string
	ch   chan struct{}
	once *sync.Once
}

func (h signalHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h signalHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(func() { close(h.ch) })
	}
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tlogWriter{t}, nil))
}

type tlogWriter struct{ t testing.TB }

func (w tlogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// testCtx bounds a whole test, topic creation included: a bound on a hang,
// not a pace. Loaded run R (d045787, a CPU burner beside the suite) ran out
// of 2 minutes in TestSandboxRequestsIndependentOfPartitions while a topic
// of 2,000 partitions got its leaders.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func tp(topic string, p int32) TopicPartition { return TopicPartition{Topic: topic, Partition: p} }

func TestSandboxFlinkGroup(t *testing.T) { onBothSources(t, testSandboxFlinkGroup) }

func testSandboxFlinkGroup(t *testing.T, src *sandbox.Broker) {
	bs := src.Bootstrap()
	ctx := testCtx(t)
	a := testAdmin(t, bs)
	topic, group := uniq(t, "t"), uniq(t, "g")
	createTopic(t, a, bs, topic, 4)
	produce(t, bs, topic, 0, 10)
	produce(t, bs, topic, 1, 5)
	c0 := flinkRead(t, bs, topic, 0, 10)
	flinkCommit(t, bs, group, map[TopicPartition]int64{tp(topic, 0): c0, tp(topic, 1): 3})

	r := newTestClient(t, bs)

	id, err := r.ClusterID(ctx)
	if err != nil || id != src.ClusterID() {
		t.Errorf("ClusterID() = %q, %v; want %q", id, err, src.ClusterID())
	}

	topics, err := r.Topics(ctx, topic)
	if err != nil || topics[topic] != 4 {
		t.Fatalf("Topics() = %v, %v; want %s: 4", topics, err, topic)
	}
	matched, err := r.TopicsMatching(ctx, regexp.QuoteMeta(topic[:len(topic)-7])+".*")
	if err != nil || len(matched) != 1 || matched[topic] != 4 {
		t.Errorf("TopicsMatching() = %v, %v; want only %s", matched, err, topic)
	}
	if _, err := r.Topics(ctx, topic, topic+"-missing"); !errors.Is(err, ErrUnknownTopic) {
		t.Errorf("Topics(missing) = %v, want ErrUnknownTopic", err)
	} else if ue := (*UnknownTopicsError)(nil); !errors.As(err, &ue) || len(ue.Topics) != 1 {
		t.Errorf("Topics(missing) = %v, want one unknown topic", err)
	}

	g, err := r.GroupOffsets(ctx, group, []string{topic})
	if err != nil {
		t.Fatal(err)
	}
	if c0 != 10 {
		t.Fatalf("Flink-like reader would commit %d, want 10", c0)
	}
	if diff := cmp.Diff(offsets.GroupOffsets{tp(topic, 0): 10, tp(topic, 1): 3}, g); diff != "" {
		t.Errorf("GroupOffsets mismatch (-want +got):\n%s", diff)
	}
	rd, err := r.ReadGroup(ctx, group, []string{topic})
	if err != nil {
		t.Fatal(err)
	}
	if m := rd.Missing(); len(m) != 2 || m[0] != tp(topic, 2) || m[1] != tp(topic, 3) {
		t.Errorf("Missing() = %v, want partitions 2 and 3", m)
	}
	if rd.Errors != nil || !maps.Equal(rd.Committed, g) {
		t.Errorf("ReadGroup = %+v, want the commits %v and no errors", rd, g)
	}

	desc, err := r.DescribeGroup(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if desc.State != GroupEmpty || desc.ProtocolType != "" || desc.Active() {
		t.Errorf("DescribeGroup() = %+v; a Flink group is Empty, protocol type \"\", no members", desc)
	}
	if d, err := r.DescribeGroup(ctx, uniq(t, "nogroup")); err != nil || d.State != GroupDead {
		t.Errorf("DescribeGroup(nonexistent) = %+v, %v; want Dead", d, err)
	}

	bounds, err := r.LogBounds(ctx, append(topics.Partitions(), tp(topic, 9)))
	var pe *PartitionErrors
	if _, read := bounds[tp(topic, 9)]; !errors.As(err, &pe) || len(pe.Errs) != 1 || !errors.Is(pe.Errs[tp(topic, 9)], ErrUnknownTopic) || read {
		t.Errorf("LogBounds with a missing partition: %v, want one ErrUnknownTopic", err)
	}
	want := map[TopicPartition]offsets.LogBounds{
		tp(topic, 0): {Start: 0, End: 10, StableEnd: 10},
		tp(topic, 1): {Start: 0, End: 5, StableEnd: 5},
		tp(topic, 2): {}, tp(topic, 3): {},
	}
	if diff := cmp.Diff(want, bounds); diff != "" {
		t.Errorf("LogBounds mismatch (-want +got):\n%s", diff)
	}
	ends, err := r.EndOffsets(ctx, append(topics.Partitions(), tp(topic, 9)))
	if _, read := ends[tp(topic, 9)]; !errors.As(err, &pe) || pe.Op != "EndOffsets" || len(pe.Errs) != 1 || !errors.Is(pe.Errs[tp(topic, 9)], ErrUnknownTopic) || read {
		t.Errorf("EndOffsets with a missing partition: %v, want one ErrUnknownTopic", err)
	}
	if diff := cmp.Diff(map[TopicPartition]int64{tp(topic, 0): 10, tp(topic, 1): 5, tp(topic, 2): 0, tp(topic, 3): 0}, ends); diff != "" {
		t.Errorf("EndOffsets mismatch (-want +got):\n%s", diff)
	}
	if _, err := r.EndOffsets(ctx, nil); !errors.As(err, new(*ArgumentError)) {
		t.Errorf("EndOffsets(nil) = %v, want an *ArgumentError", err)
	}

	// A stable window, then one in which "Flink" commits again.
	snap, err := r.ReadCommitWindow(ctx, group, []string{topic}, 300*time.Millisecond)
	if err != nil || !snap.Stable() {
		t.Errorf("ReadCommitWindow() = moved %v, %v; want stable", snap.Moved, err)
	}
	// "Flink" commits once the first reading is done (the client logs it),
	// not after a fixed delay: on a loaded machine a first reading, or a
	// commit through a KRaft controller electing a new leader, took longer
	// than the 700 ms and 3 s this test once allowed (loaded run V).
	started := make(chan struct{})
	wr := newTestClient(t, bs)
	wr.log = slog.New(signalHandler{Handler: wr.log.Handler(), msg: firstReadingDone, ch: started, once: new(sync.Once)})
	committed := make(chan time.Time, 1)
	go func() {
		select {
		case <-started:
		case <-ctx.Done():
			committed <- time.Time{}
			return
		}
		flinkCommit(t, bs, group, map[TopicPartition]int64{tp(topic, 1): 5, tp(topic, 2): 0})
		committed <- time.Now()
	}()
	snap, err = wr.ReadCommitWindow(ctx, group, []string{topic}, 10*time.Second)
	at := <-committed
	if err != nil {
		t.Fatal(err)
	}
	if at.IsZero() || at.After(snap.Second.At) {
		t.Fatalf("the commit in the window ended at %v, after the second reading at %v: the machine is too slow for this test's 10 s window", at, snap.Second.At)
	}
	wantMoved := []OffsetChange{
		{TopicPartition: tp(topic, 1), Before: offsets.NewGroupOffset(3), After: offsets.NewGroupOffset(5)},
		{TopicPartition: tp(topic, 2), After: offsets.NewGroupOffset(0)},
	}
	if len(snap.Moved) != 2 || snap.Moved[0] != wantMoved[0] || snap.Moved[1] != wantMoved[1] {
		t.Errorf("Moved = %+v, want %+v", snap.Moved, wantMoved)
	}
	if snap.Second.Bounds[tp(topic, 0)].End != 10 {
		t.Errorf("second reading bounds = %+v", snap.Second.Bounds[tp(topic, 0)])
	}

	// A window longer than the progress interval says it is alive.
	var logged bytes.Buffer
	rc := clusterConfig(bs)
	rc.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	lr, err := NewClient(rc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lr.ReadCommitWindow(ctx, group, []string{topic}, 6*time.Second); err != nil {
		t.Fatal(err)
	}
	if want := "waiting for group " + group + "'s commits to stay put for 6s"; !strings.Contains(logged.String(), want) || !strings.Contains(logged.String(), "left=1s") {
		t.Errorf("progress of a 6 s window:\n%s\nwant a line %q with left=1s", logged.String(), want)
	}
}

func TestSandboxLogStartAfterDeleteRecords(t *testing.T) {
	onBothSources(t, testSandboxLogStartAfterDeleteRecords)
}

func testSandboxLogStartAfterDeleteRecords(t *testing.T, src *sandbox.Broker) {
	bs := src.Bootstrap()
	a := testAdmin(t, bs)
	topic := uniq(t, "t")
	createTopic(t, a, bs, topic, 2)
	produce(t, bs, topic, 0, 8)
	if err := a.DeleteRecords(topic, map[int32]int64{0: 6}); err != nil {
		t.Fatalf("DeleteRecords: %v", err)
	}
	r := newTestClient(t, bs)
	b, err := r.LogBounds(testCtx(t), []TopicPartition{tp(topic, 0), tp(topic, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := b[tp(topic, 0)], (offsets.LogBounds{Start: 6, End: 8, StableEnd: 8}); got != want {
		t.Errorf("bounds after DeleteRecords = %+v, want %+v", got, want)
	}
}

func TestSandboxOpenTransaction(t *testing.T) { onBothSources(t, testSandboxOpenTransaction) }

func testSandboxOpenTransaction(t *testing.T, src *sandbox.Broker) {
	bs := src.Bootstrap()
	a := testAdmin(t, bs)
	topic := uniq(t, "t")
	createTopic(t, a, bs, topic, 1)
	produce(t, bs, topic, 0, 3) // offsets 0-2, not transactional

	conf := clusterSarama(bs)
	conf.Producer.Idempotent = true
	conf.Producer.Transaction.ID = uniq(t, "txn")
	conf.Net.MaxOpenRequests = 1
	p, err := sarama.NewSyncProducer([]string{bs}, conf)
	if err != nil {
		t.Fatalf("transactional producer: %v", err)
	}
	defer p.Close()
	if err := p.BeginTxn(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ { // offsets 3-6, in the open transaction
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder("x")}); err != nil {
			t.Fatal(err)
		}
	}
	r := newTestClient(t, bs)
	ctx := testCtx(t)
	b, err := r.LogBounds(ctx, []TopicPartition{tp(topic, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := b[tp(topic, 0)], (offsets.LogBounds{Start: 0, End: 7, StableEnd: 3}); got != want {
		t.Errorf("bounds with an open transaction = %+v, want %+v (LSO at the transaction's first offset)", got, want)
	}
	if ends, err := r.EndOffsets(ctx, []TopicPartition{tp(topic, 0)}); err != nil || ends[tp(topic, 0)] != 7 {
		t.Errorf("EndOffsets with an open transaction = %v, %v; want the high watermark 7, not the LSO", ends, err)
	}
	if err := p.CommitTxn(); err != nil {
		t.Fatal(err)
	}
	// The coordinator writes the commit marker (offset 7) after EndTxn
	// returns: poll until the LSO catches up with the high watermark.
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err = r.LogBounds(ctx, []TopicPartition{tp(topic, 0)})
		if err != nil {
			t.Fatal(err)
		}
		got := b[tp(topic, 0)]
		if got.End == 8 && got.StableEnd == 8 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bounds after commit = %+v, want End = StableEnd = 8", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type nopHandler struct{ joined chan struct{} }

func (h nopHandler) Setup(sarama.ConsumerGroupSession) error {
	select {
	case h.joined <- struct{}{}:
	default:
	}
	return nil
}
func (nopHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (nopHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for range c.Messages() {
	}
	return nil
}

func TestSandboxActiveGroupAndRollbackCommit(t *testing.T) {
	onBothSources(t, testSandboxActiveGroupAndRollbackCommit)
}

func testSandboxActiveGroupAndRollbackCommit(t *testing.T, src *sandbox.Broker) {
	bs := src.Bootstrap()
	a := testAdmin(t, bs)
	topic, group := uniq(t, "t"), uniq(t, "g")
	createTopic(t, a, bs, topic, 2)
	produce(t, bs, topic, 0, 5)
	ctx := testCtx(t)
	r := newTestClient(t, bs)

	// Bad input writes nothing.
	for _, bad := range []map[TopicPartition]int64{
		{tp(topic, 0): -1},
		{tp(topic, 5): 1},
		{tp(topic+"-missing", 0): 1},
	} {
		if err := r.CommitOffsets(ctx, group, bad); !errors.Is(err, ErrInvalidArgument) && !errors.Is(err, ErrUnknownTopic) {
			t.Errorf("CommitOffsets(%v) = %v, want a rejection", bad, err)
		}
	}
	if g, err := r.GroupOffsets(ctx, group, []string{topic}); err != nil || len(g) != 0 {
		t.Fatalf("after rejected commits: %+v, %v; want no commits", g, err)
	}

	conf := clusterSarama(bs)
	conf.Consumer.Offsets.Initial = sarama.OffsetOldest
	cg, err := sarama.NewConsumerGroup([]string{bs}, group, conf)
	if err != nil {
		t.Fatal(err)
	}
	h := nopHandler{joined: make(chan struct{}, 1)}
	cctx, stop := context.WithCancel(ctx)
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		for cctx.Err() == nil {
			_ = cg.Consume(cctx, []string{topic}, h)
		}
	}()
	select {
	case <-h.joined:
	case <-time.After(60 * time.Second):
		t.Fatal("consumer never joined")
	}
	desc, err := r.DescribeGroup(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if desc.State != GroupStable || desc.ProtocolType != "consumer" || len(desc.Members) != 1 || desc.Members[0].ClientID != "kafkaadmin-test" {
		t.Errorf("active group = %+v; want Stable, consumer, one member", desc)
	}
	err = r.CommitOffsets(ctx, group, map[TopicPartition]int64{tp(topic, 0): 2})
	var ge *GroupActiveError
	if !errors.As(err, &ge) || !errors.Is(err, ErrGroupActive) || ge.Members != 1 {
		t.Errorf("CommitOffsets on an active group = %v, want a *GroupActiveError", err)
	}

	stop()
	<-consumed
	if err := cg.Close(); err != nil {
		t.Fatal(err)
	}
	// The member leaves on close; the group becomes Empty.
	deadline := time.Now().Add(30 * time.Second)
	for {
		desc, err = r.DescribeGroup(ctx, group)
		if err == nil && desc.State == GroupEmpty {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("group did not become Empty: %+v, %v", desc, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	rollback := map[TopicPartition]int64{tp(topic, 0): 2, tp(topic, 1): 0}
	if err := r.CommitOffsets(ctx, group, rollback); err != nil {
		t.Fatalf("CommitOffsets on the empty group: %v", err)
	}
	g, err := r.GroupOffsets(ctx, group, []string{topic})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range rollback {
		if got, ok := g[k]; !ok || got != v {
			t.Errorf("after rollback %s = %+v, %v; want %d", k, got, ok, v)
		}
	}
}
