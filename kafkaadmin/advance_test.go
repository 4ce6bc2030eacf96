package kafkaadmin

import (
	"testing"

	"github.com/IBM/sarama"
)

// A partition answered with no records short of its end: its first batch
// is larger than its limit when the response had room for that limit (a
// broker answers such a partition empty from fetch version 3), and the
// limit grows; otherwise the response ran out first, and it waits.
func TestAdvanceEmptyBlock(t *testing.T) {
	empty := &sarama.FetchResponseBlock{HighWaterMarkOffset: 10, LastStableOffset: 10}
	for _, tc := range []struct {
		name      string
		block     *sarama.FetchResponseBlock
		limit     int32
		room      int64
		moved     bool
		wantLimit int32
		done      bool
	}{
		{"room for the limit: the batch is larger, the limit grows", empty, partitionFetchBytes, responseFetchBytes - 100, true, 4 * partitionFetchBytes, false},
		{"room exactly the limit", empty, partitionFetchBytes, partitionFetchBytes, true, 4 * partitionFetchBytes, false},
		{"the response ran out first: fetched again as it was", empty, partitionFetchBytes, partitionFetchBytes - 1, false, partitionFetchBytes, false},
		{"no room at all", empty, partitionFetchBytes, 0, false, partitionFetchBytes, false},
		{"the limit at its most does not grow", empty, maxFetchBytes, responseFetchBytes, false, maxFetchBytes, false},
		{"a limit past the room does not grow", empty, maxFetchBytes / 2, responseFetchBytes, false, maxFetchBytes / 2, false},
		{"a limit within the room grows past it", empty, 8 << 20, responseFetchBytes, true, 32 << 20, false},
		{"at the end: done whatever the room", &sarama.FetchResponseBlock{HighWaterMarkOffset: 3, LastStableOffset: 3}, partitionFetchBytes, 0, true, partitionFetchBytes, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &scanState{pos: 3, limit: tc.limit, want: 1, until: 1 << 62}
			if moved := st.advance(tc.block, ReadCommitted, tc.room); moved != tc.moved || st.limit != tc.wantLimit || st.done != tc.done {
				t.Errorf("advance(room %d): moved %v, limit %d, done %v; want %v, %d, %v", tc.room, moved, st.limit, st.done, tc.moved, tc.wantLimit, tc.done)
			}
		})
	}
}

// What a response returned is counted at least at its wire size: batch and
// record headers at their most, keys, values and headers.
func TestResponseBytes(t *testing.T) {
	batch := func(values ...int) *sarama.Records {
		b := &sarama.RecordBatch{}
		for _, n := range values {
			b.Records = append(b.Records, &sarama.Record{Key: []byte("k"), Value: make([]byte, n),
				Headers: []*sarama.RecordHeader{{Key: []byte("h"), Value: []byte("v")}}})
		}
		return &sarama.Records{RecordBatch: b}
	}
	resp := &sarama.FetchResponse{Blocks: map[string]map[int32]*sarama.FetchResponseBlock{
		"a": {0: {RecordsSet: []*sarama.Records{batch(100, 200)}}, 1: {}},
		"b": {0: {RecordsSet: []*sarama.Records{batch(1000), nil, {}}}},
	}}
	// Two batches (61 each); three records (40 each, a 1-byte key, a header of 2 bytes and 10 of lengths).
	want := int64(2*61 + 3*(40+1+12) + 100 + 200 + 1000)
	if got := responseBytes(resp); got != want {
		t.Errorf("responseBytes = %d, want %d", got, want)
	}
	if got := responseBytes(&sarama.FetchResponse{}); got != 0 {
		t.Errorf("responseBytes of an empty response = %d, want 0", got)
	}
}
