package kafkaadmin

import (
	"errors"
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
	ts := time.UnixMilli(1_760_000_000_123)
	for _, v := range []string{"a", "b", "c"} {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder("k" + v), Value: sarama.StringEncoder(v),
			Headers: []sarama.RecordHeader{{Key: []byte("h"), Value: []byte("x" + v)}}, Timestamp: ts}); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	r := newTestReader(t, bs)
	ctx := testCtx(t)
	rec, err := r.ReadRecord(ctx, tp(topic, 0), 1)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Offset != 1 || string(rec.Key) != "kb" || string(rec.Value) != "b" || len(rec.Headers) != 1 ||
		rec.Headers[0].Key != "h" || string(rec.Headers[0].Value) != "xb" || !rec.Timestamp.Equal(ts) {
		t.Errorf("record at 1 = %+v", rec)
	}
	if _, err := r.ReadRecord(ctx, tp(topic, 0), 3); !errors.Is(err, ErrNoRecord) {
		t.Errorf("read at the end: %v, want ErrNoRecord", err)
	}
	if _, err := r.ReadRecord(ctx, tp(topic, 0), -1); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("read at -1: %v, want ErrInvalidArgument", err)
	}
	if err := a.DeleteRecords(topic, map[int32]int64{0: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadRecord(ctx, tp(topic, 0), 0); !errors.Is(err, sarama.ErrOffsetOutOfRange) {
		t.Errorf("read below the log start: %v, want OFFSET_OUT_OF_RANGE", err)
	}
}
