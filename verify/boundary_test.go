package verify_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/verify"
)

// recordTime is the timestamp of the records the tests write on both
// clusters, so that a copy compares equal. It is recent: a record older than
// retention.ms (7 days by default) lets the broker's retention check delete
// its segment in the middle of a test, and the read then finds the offset
// out of range.
var recordTime = time.Now().Truncate(time.Millisecond)

func msg(topic, key, value string) *sarama.ProducerMessage {
	return &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(key), Value: sarama.StringEncoder(value),
		Headers: []sarama.RecordHeader{{Key: []byte("h"), Value: []byte(value)}}, Timestamp: recordTime}
}

// transactionalTopic writes, on partition 0 of a new topic of the source
// cluster:
//
//	0 p0 | 1 c1, 2 COMMIT | 3 a3, 4 ABORT | 5 c5, 6 COMMIT
//
// and returns the topic.
func transactionalTopic(ctx context.Context, t *testing.T, sb *sandbox.Sandbox) string {
	t.Helper()
	topic := unique("verify-txn")
	for _, b := range []*sandbox.Broker{sb.Source(), sb.Target()} {
		if err := sandbox.CreateTopic(ctx, b.Bootstrap(), topic, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := sandbox.Produce(ctx, sb.Source().Bootstrap(), []*sarama.ProducerMessage{msg(topic, "p0", "p0")}); err != nil {
		t.Fatal(err)
	}
	tp, err := sandbox.NewTxnProducer(sb.Source().Bootstrap(), unique("txn"))
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Close()
	for _, step := range []struct {
		commit bool
		value  string
	}{{true, "c1"}, {false, "a3"}, {true, "c5"}} {
		if err := tp.Send(ctx, step.commit, msg(topic, step.value, step.value)); err != nil {
			t.Fatal(err)
		}
	}
	// The coordinator writes the markers after the commit returns: wait
	// until the last stable offset is past the last one.
	source, _ := clients(t, sb)
	for {
		b, err := source.LogBounds(ctx, []kafkaadmin.TopicPartition{{Topic: topic}})
		if err != nil {
			t.Fatal(err)
		}
		if lb := b[kafkaadmin.TopicPartition{Topic: topic}]; lb.StableEnd == 7 && lb.End == 7 {
			return topic
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the transactions' markers were not written: %v", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestBoundaryTransactional: the source record at C is an aborted record.
// MM2 reads read_committed and copies c5 first. The check reads the source
// read_committed as MM2 does and passes, where a read_uncommitted read (what
// the boundary check did before) compares with the aborted record and
// cries wolf; an offset shifted by one still fails.
func TestBoundaryTransactional(t *testing.T) {
	sb := sandboxtest.Shared(t)
	source, target := clients(t, sb)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := transactionalTopic(ctx, t, sb)
	// The old job copied p0 and c1 and committed C = 3 (on the aborted
	// record); then MM2 copied c5.
	if err := sandbox.Produce(ctx, sb.Target().Bootstrap(), []*sarama.ProducerMessage{msg(topic, "p0", "p0"), msg(topic, "c1", "c1"), msg(topic, "c5", "c5")}); err != nil {
		t.Fatal(err)
	}
	sp := kafkaadmin.TopicPartition{Topic: topic}

	old, err := source.ReadRecord(ctx, sp, 3, kafkaadmin.ReadUncommitted)
	if err != nil || string(old.Value) != "a3" {
		t.Fatalf("read_uncommitted at C: %s, %v; want the aborted a3 the old check compared with", old.Value, err)
	}
	mm2First, err := target.ReadRecord(ctx, sp, 2, kafkaadmin.ReadCommitted)
	if err != nil {
		t.Fatal(err)
	}
	if len(verify.CompareRecords(old, mm2First)) == 0 {
		t.Fatal("the old comparison found no difference; the fixture is wrong")
	}

	for _, c := range []int64{3, 2} { // on the aborted record, on a commit marker
		got, err := verify.CheckBoundary(ctx, source, target, boundaryPlan(t, topic, c, 7, 2), nil, nil)
		if err != nil || len(got) != 1 || !got[0].OK() || got[0].RecordOffset != 5 {
			t.Errorf("C = %d: %+v, %v; want the record at 5 compared and equal", c, got, err)
		}
	}
	got, err := verify.CheckBoundary(ctx, source, target, boundaryPlan(t, topic, 1, 7, 2), nil, nil)
	if err != nil || len(got) != 1 || got[0].OK() {
		t.Errorf("C shifted to 1: %+v, %v; want a difference", got, err)
	}
}

// TestLagTransactional reads the lag of a real connector whose stored
// offset is the last data record before a commit marker: lag 0, where the
// high watermark minus the next offset (the old rule) says 1 forever.
func TestLagTransactional(t *testing.T) {
	sb := sandboxtest.Shared(t)
	source, _ := clients(t, sb)
	c, err := connect.New(sb.ConnectURL())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := transactionalTopic(ctx, t, sb)
	name := unique("verify-lag")
	if _, err := c.Create(ctx, name, mirrorConfig(sb, name, topic), connect.InitialStopped); err != nil {
		t.Fatal(err)
	}
	defer c.Delete(context.WithoutCancel(ctx), name)
	if _, err := c.WaitStopped(ctx, name); err != nil {
		t.Fatal(err)
	}
	p := boundaryPlan(t, topic, 1, 7, 0)
	for _, tc := range []struct {
		m       int64
		wantLag int64
	}{{5, 0}, {1, 2}, {0, 6}} {
		o := []offsets.ConnectOffset{{Partition: offsets.ConnectPartition{Cluster: "source", Topic: topic}, Offset: offsets.NewMirrorOffset(tc.m)}}
		if _, err := c.AlterMirrorOffsets(ctx, name, o); err != nil {
			t.Fatal(err)
		}
		if _, err := c.WaitMirrorOffsets(ctx, name, o); err != nil {
			t.Fatal(err)
		}
		lags, err := verify.ReadLag(ctx, c, source, p, name)
		if err != nil || len(lags) != 1 {
			t.Fatalf("ReadLag: %v, %v", lags, err)
		}
		if l := lags[0]; l.Lag != tc.wantLag || l.End != 7 || l.Next != tc.m+1 {
			t.Errorf("M = %d: %+v, want lag %d", tc.m, l, tc.wantLag)
		} else if tc.m == 5 && l.End-l.Next != 1 {
			t.Errorf("M = 5: the old rule, end - next, gives %d; the fixture should make it 1", l.End-l.Next)
		}
	}
}

// TestBoundaryCompacted: compaction removes the source record at C after
// MM2 copied it (a later record has its key). Compared with the source as it
// is now, MM2's first record differs (the old check cried wolf); compared
// with the record captured before resume, it is equal, and the report says
// the source no longer holds it.
func TestBoundaryCompacted(t *testing.T) {
	sb := sandboxtest.Shared(t)
	source, target := clients(t, sb)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic := unique("verify-compact")
	if err := sandbox.CreateTopicWithConfig(ctx, sb.Source().Bootstrap(), topic, 1, map[string]string{
		"cleanup.policy": "compact", "segment.ms": "100", "min.cleanable.dirty.ratio": "0.001", "min.compaction.lag.ms": "0", "delete.retention.ms": "100",
	}); err != nil {
		t.Fatal(err)
	}
	if err := sandbox.CreateTopic(ctx, sb.Target().Bootstrap(), topic, 1); err != nil {
		t.Fatal(err)
	}
	src, tgt := sb.Source().Bootstrap(), sb.Target().Bootstrap()
	if err := sandbox.Produce(ctx, src, []*sarama.ProducerMessage{msg(topic, "k0", "v0"), msg(topic, "k1", "v1")}); err != nil {
		t.Fatal(err)
	}
	// The old job copied v0 and committed C = 1; MM2 then copies v1.
	if err := sandbox.Produce(ctx, tgt, []*sarama.ProducerMessage{msg(topic, "k0", "v0")}); err != nil {
		t.Fatal(err)
	}
	p := boundaryPlan(t, topic, 1, 2, 1)
	capture, err := verify.CaptureBoundary(ctx, source, p)
	if err != nil || len(capture) != 1 || capture[0].Offset != 1 {
		t.Fatalf("capture: %+v, %v", capture, err)
	}
	if err := sandbox.Produce(ctx, tgt, []*sarama.ProducerMessage{msg(topic, "k1", "v1")}); err != nil {
		t.Fatal(err)
	}
	// k1 gets a new value; two segment rolls make its old record cleanable.
	// A segment rolls by the records' own timestamps, so these carry now.
	for i, m := range []*sarama.ProducerMessage{msg(topic, "k1", "v1-new"), msg(topic, "k2", "v2"), msg(topic, "k3", "v3")} {
		time.Sleep(300 * time.Millisecond)
		m.Timestamp = time.Now()
		if err := sandbox.Produce(ctx, src, []*sarama.ProducerMessage{m}); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	for {
		r, err := source.ReadRecord(ctx, kafkaadmin.TopicPartition{Topic: topic}, 1, kafkaadmin.ReadCommitted)
		if err != nil {
			t.Fatal(err)
		}
		if r.Offset > 1 {
			t.Logf("compaction removed offset 1; the first record at or after it is now %d (%s)", r.Offset, r.Value)
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the log cleaner did not remove offset 1")
		case <-time.After(time.Second):
		}
	}
	now, err := verify.CheckBoundary(ctx, source, target, p, nil, nil)
	if err != nil || len(now) != 1 || now[0].OK() {
		t.Errorf("against the source as it is now: %+v, %v; want the false difference the old check reported", now, err)
	}
	got, err := verify.CheckBoundary(ctx, source, target, p, capture, nil)
	if err != nil || len(got) != 1 || !got[0].OK() || !got[0].Captured || !got[0].RemovedFromSource {
		t.Errorf("against the capture: %+v, %v; want equal, captured, removed from the source", got, err)
	}

	// Compaction can also remove the captured record before MM2 reads it:
	// MM2's first copy is then v1-new, the next record the source holds.
	// Copying v2 first skips v1-new, which the source still holds: a failure.
	for _, tc := range []struct {
		alias string
		first string
		ok    bool
	}{{"race", "v1-new", true}, {"skip", "v2", false}} {
		pa := boundaryPlanAs(t, tc.alias, topic, 1, 2, 1) // p under MM2's default policy
		policy, _ := pa.Policy()
		tt, _ := policy.TargetTopic(topic)
		if err := sandbox.CreateTopic(ctx, tgt, tt, 1); err != nil {
			t.Fatal(err)
		}
		first := msg(tt, "k1", tc.first)
		if tc.first == "v2" {
			first.Key = sarama.StringEncoder("k2")
		}
		rec, err := source.ReadRecord(ctx, kafkaadmin.TopicPartition{Topic: topic}, 2, kafkaadmin.ReadCommitted)
		if err != nil {
			t.Fatal(err)
		}
		if tc.first == "v2" {
			if rec, err = source.ReadRecord(ctx, kafkaadmin.TopicPartition{Topic: topic}, 3, kafkaadmin.ReadCommitted); err != nil {
				t.Fatal(err)
			}
		}
		first.Timestamp = rec.Timestamp // MM2 keeps the source timestamp
		if err := sandbox.Produce(ctx, tgt, []*sarama.ProducerMessage{msg(tt, "k0", "v0"), first}); err != nil {
			t.Fatal(err)
		}
		got, err := verify.CheckBoundary(ctx, source, target, pa, capture, nil)
		if err != nil || len(got) != 1 || got[0].OK() != tc.ok || got[0].Placed != tc.ok {
			t.Errorf("MM2 copied %s first: %+v, %v; want OK = %v", tc.first, got, err, tc.ok)
		} else {
			t.Logf("MM2 copied %s first: %v", tc.first, got[0].Differences)
		}
	}
}

// TestBoundaryDuplicates: the old job wrote r2 and r3 to the target but
// committed only C = 2 (a crash, or a cancel without savepoint). MM2 copies
// r2 again; the report says 2 duplicates are expected, none is lost.
func TestBoundaryDuplicates(t *testing.T) {
	sb := sandboxtest.Shared(t)
	source, target := clients(t, sb)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := unique("verify-dups")
	for _, b := range []*sandbox.Broker{sb.Source(), sb.Target()} {
		if err := sandbox.CreateTopic(ctx, b.Bootstrap(), topic, 1); err != nil {
			t.Fatal(err)
		}
	}
	var src, tgt []string
	for i := range 6 {
		src = append(src, "r"+strconv.Itoa(i))
	}
	tgt = append(tgt, src[:4]...) // the old job's writes
	tgt = append(tgt, "r2")       // MM2's first copy
	produce(ctx, t, sb.Source().Bootstrap(), topic, src...)
	produce(ctx, t, sb.Target().Bootstrap(), topic, tgt...)
	got, err := verify.CheckBoundary(ctx, source, target, boundaryPlan(t, topic, 2, 6, 4), nil, nil)
	if err != nil || len(got) != 1 || !got[0].OK() || got[0].Duplicates != 2 {
		t.Fatalf("%+v, %v; want equal records and 2 duplicates", got, err)
	}
}
