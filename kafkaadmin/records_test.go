package kafkaadmin

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
)

// TestSandboxReadRecord reads single records back with their key, value,
// headers and timestamp; past the end there is no record yet; below the log
// start the broker answers OFFSET_OUT_OF_RANGE.
func TestSandboxReadRecord(t *testing.T) {
	sb := sandboxtest.Shared(t)
	bs := sb.Source().Bootstrap()
	a := testAdmin(t, bs)
	topic := uniq(t, "t")
	createTopic(t, a, bs, topic, 1)
	p, err := sarama.NewSyncProducer([]string{bs}, saramaConf())
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Now().Truncate(time.Millisecond) // older than retention.ms, the segment may be deleted mid-test
	for _, v := range []string{"a", "b", "c"} {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder("k" + v), Value: sarama.StringEncoder(v),
			Headers: []sarama.RecordHeader{{Key: []byte("h"), Value: []byte("x" + v)}}, Timestamp: ts}); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	r := newTestClient(t, bs)
	ctx := testCtx(t)
	rec, err := r.ReadRecord(ctx, tp(topic, 0), 1, ReadCommitted)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Offset != 1 || string(rec.Key) != "kb" || string(rec.Value) != "b" || len(rec.Headers) != 1 ||
		rec.Headers[0].Key != "h" || string(rec.Headers[0].Value) != "xb" || !rec.Timestamp.Equal(ts) {
		t.Errorf("record at 1 = %+v", rec)
	}
	if _, err := r.ReadRecord(ctx, tp(topic, 0), 3, ReadCommitted); !errors.Is(err, ErrNoRecord) {
		t.Errorf("read at the end: %v, want ErrNoRecord", err)
	}
	if _, err := r.ReadRecord(ctx, tp(topic, 0), -1, ReadCommitted); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("read at -1: %v, want ErrInvalidArgument", err)
	}
	if err := a.DeleteRecords(topic, map[int32]int64{0: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadRecord(ctx, tp(topic, 0), 0, ReadCommitted); !errors.Is(err, sarama.ErrOffsetOutOfRange) {
		t.Errorf("read below the log start: %v, want OFFSET_OUT_OF_RANGE", err)
	}
}

// txnProducer is a transactional producer for one test.
func txnProducer(t *testing.T, bootstrap string) sarama.SyncProducer {
	t.Helper()
	c := saramaConf()
	c.Version = sarama.V3_6_0_0
	c.Producer.Idempotent = true
	c.Producer.Transaction.ID = uniq(t, "txn")
	c.Net.MaxOpenRequests = 1
	p, err := sarama.NewSyncProducer([]string{bootstrap}, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// inTxn sends values to partition 0 of topic in one transaction and commits
// or aborts it.
func inTxn(t *testing.T, p sarama.SyncProducer, topic string, commit bool, values ...string) {
	t.Helper()
	if err := p.BeginTxn(); err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder("k" + v), Value: sarama.StringEncoder(v)}); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if commit {
		err = p.CommitTxn()
	} else {
		err = p.AbortTxn()
	}
	if err != nil {
		t.Fatal(err)
	}
}

func values(recs []Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, fmt.Sprintf("%d:%s", r.Offset, r.Value))
	}
	return out
}

// TestSandboxReadTransactional pins what each isolation level sees on a
// partition written by a transactional producer with an aborted
// transaction — the shape on which a read_uncommitted boundary check
// compared MM2's first record with an aborted record MM2 rightly skipped:
//
//	0 p0 (no transaction) | 1 c1, 2 c2, 3 COMMIT | 4 a4, 5 a5, 6 ABORT | 7 c7, 8 COMMIT
func TestSandboxReadTransactional(t *testing.T) {
	sb := sandboxtest.Shared(t)
	bs := sb.Source().Bootstrap()
	a := testAdmin(t, bs)
	topic := uniq(t, "t")
	createTopic(t, a, bs, topic, 1)
	produce(t, bs, topic, 0, 1)
	p := txnProducer(t, bs)
	inTxn(t, p, topic, true, "c1", "c2")
	inTxn(t, p, topic, false, "a4", "a5")
	inTxn(t, p, topic, true, "c7")
	r := newTestClient(t, bs)
	ctx := testCtx(t)
	part := tp(topic, 0)

	// The coordinator writes the markers after the commit returns: until
	// the last COMMIT marker is written the log ends at 8. LogBounds reads
	// the end and the last stable offset in requests of their own, so one
	// reading may see the end before the marker and the stable end after
	// it (once, in CI: end 8, stable end 9).
	for {
		b, err := r.LogBounds(ctx, []TopicPartition{part})
		if err != nil || b[part].End > 9 || b[part].End < 8 {
			t.Fatalf("bounds %+v, %v; want end 8 (before the last marker) or 9", b[part], err)
		}
		if b[part].End == 9 && b[part].StableEnd == 9 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("bounds %+v: the end and the stable end did not reach 9", b[part])
		case <-time.After(50 * time.Millisecond):
		}
	}
	for _, c := range []struct {
		name string
		iso  Isolation
		at   int64
		want string // "" for ErrNoRecord
	}{
		{"committed skips the aborted transaction", ReadCommitted, 4, "7:c7"},
		{"uncommitted sees the aborted record", ReadUncommitted, 4, "4:a4"},
		{"a commit marker holds no record", ReadCommitted, 3, "7:c7"},
		{"an abort marker holds no record", ReadUncommitted, 6, "7:c7"},
		{"the last commit marker ends the partition", ReadCommitted, 8, ""},
		{"committed record inside a transaction", ReadCommitted, 2, "2:c2"},
	} {
		rec, err := r.ReadRecord(ctx, part, c.at, c.iso)
		switch {
		case c.want == "" && !errors.Is(err, ErrNoRecord):
			t.Errorf("%s: got %v, %v; want ErrNoRecord", c.name, values([]Record{rec}), err)
		case c.want != "" && (err != nil || values([]Record{rec})[0] != c.want):
			t.Errorf("%s: got %v, %v; want %s", c.name, values([]Record{rec}), err, c.want)
		}
	}
	committed, err := r.ReadSpans(ctx, map[TopicPartition]Span{part: {0, 9}}, ReadCommitted)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := values(committed[part]), []string{"0:v", "1:c1", "2:c2", "7:c7"}; !slices.Equal(got, want) {
		t.Errorf("committed records %v, want %v", got, want)
	}
	all, err := r.ReadSpans(ctx, map[TopicPartition]Span{part: {1, 100}}, ReadUncommitted)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := values(all[part]), []string{"1:c1", "2:c2", "4:a4", "5:a5", "7:c7"}; !slices.Equal(got, want) {
		t.Errorf("uncommitted records %v, want %v", got, want)
	}
	last, err := r.ReadSpans(ctx, map[TopicPartition]Span{part: {7, 9}}, ReadCommitted)
	if err != nil || len(last[part]) != 1 || last[part][0].Offset != 7 {
		t.Errorf("records in [7, 9): %v, %v; want the record at 7", values(last[part]), err)
	}

	// An open transaction: the last stable offset stays at its first
	// offset, so a committed read sees nothing yet; an uncommitted one does.
	if err := p.BeginTxn(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder("open9")}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadRecord(ctx, part, 9, ReadCommitted); !errors.Is(err, ErrNoRecord) {
		t.Errorf("committed read of an open transaction: %v, want ErrNoRecord", err)
	}
	if rec, err := r.ReadRecord(ctx, part, 9, ReadUncommitted); err != nil || string(rec.Value) != "open9" {
		t.Errorf("uncommitted read of an open transaction: %s, %v", rec.Value, err)
	}
	if err := p.AbortTxn(); err != nil {
		t.Fatal(err)
	}
}

// TestSandboxFirstRecordsBatched reads the first record of many partitions
// of two topics in one call: a partition whose first batch is larger than
// the per-partition fetch size, empty partitions (absent from the result)
// and a partition below its log start (a per-partition error).
func TestSandboxFirstRecordsBatched(t *testing.T) {
	sb := sandboxtest.Shared(t)
	bs := sb.Source().Bootstrap()
	a := testAdmin(t, bs)
	t1, t2 := uniq(t, "a"), uniq(t, "b")
	createTopic(t, a, bs, t1, 6)
	createTopic(t, a, bs, t2, 3)
	for p := range int32(5) {
		produce(t, bs, t1, p, 3)
	}
	produce(t, bs, t2, 0, 2)
	big := strings.Repeat("x", 3*partitionFetchBytes)
	sp, err := sarama.NewSyncProducer([]string{bs}, saramaConf())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sp.SendMessage(&sarama.ProducerMessage{Topic: t2, Partition: 1, Value: sarama.StringEncoder(big)}); err != nil {
		t.Fatal(err)
	}
	sp.Close()
	if err := a.DeleteRecords(t2, map[int32]int64{0: 1}); err != nil {
		t.Fatal(err)
	}
	r := newTestClient(t, bs)
	ctx := testCtx(t)
	from := map[TopicPartition]int64{}
	for p := range int32(5) {
		from[tp(t1, p)] = 1
	}
	from[tp(t1, 5)] = 0 // empty: no record at its end
	for p := range int32(3) {
		from[tp(t2, p)] = 0
	}
	got, err := r.FirstRecords(ctx, from, ReadCommitted)
	var pe *PartitionErrors
	if !errors.As(err, &pe) || len(pe.Errs) != 1 || !errors.Is(pe.Errs[tp(t2, 0)], sarama.ErrOffsetOutOfRange) {
		t.Fatalf("FirstRecords: %v; want one OFFSET_OUT_OF_RANGE for %s", err, tp(t2, 0))
	}
	for p := range int32(5) {
		if rec, ok := got[tp(t1, p)]; !ok || rec.Offset != 1 {
			t.Errorf("%s: %+v, %v; want the record at 1", tp(t1, p), rec.Offset, ok)
		}
	}
	if _, ok := got[tp(t1, 5)]; ok {
		t.Errorf("%s has no record but is in the result", tp(t1, 5))
	}
	if rec := got[tp(t2, 1)]; string(rec.Value) != big {
		t.Errorf("%s: a record of %d bytes, want the %d-byte record", tp(t2, 1), len(rec.Value), len(big))
	}
	if _, ok := got[tp(t2, 2)]; ok {
		t.Errorf("%s is empty but is in the result", tp(t2, 2))
	}
}
