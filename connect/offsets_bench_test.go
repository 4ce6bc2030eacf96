package connect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// offsetsBody10k is GET /connectors/{n}/offsets of a MirrorSourceConnector
// holding 10,000 partitions (10 topics of 1,000), as Kafka Connect writes it.
func offsetsBody10k() []byte {
	var b bytes.Buffer
	b.WriteString(`{"offsets":[`)
	for t := range 10 {
		for p := range 1000 {
			if t+p > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"partition":{"cluster":"source","partition":%d,"topic":"events.region-%d"},"offset":{"offset":%d}}`, p, t, 1000*p+t)
		}
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// BenchmarkDecodeOffsets10k decodes a GET offsets answer of 10,000
// partitions the way Offsets does.
func BenchmarkDecodeOffsets10k(b *testing.B) {
	body := offsetsBody10k()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var out offsetList
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&out); err != nil || len(out.Offsets) != 10_000 {
			b.Fatal(err, len(out.Offsets))
		}
	}
}

// BenchmarkEncodeAlter10k encodes a PATCH body of 10,000 partitions as
// AlterOffsets does.
func BenchmarkEncodeAlter10k(b *testing.B) {
	offs := make([]Offset, 0, 10_000)
	for t := range 10 {
		for p := range int32(1000) {
			offs = append(offs, mirrorOffset("source", fmt.Sprintf("events.region-%d", t), p, int64(p)))
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		body, err := encodeOffsetList(offs)
		if err != nil || len(body) == 0 {
			b.Fatal(err)
		}
	}
}
