package kafkaadmin

import (
	"encoding/binary"
	"testing"
)

func frame(n int) []byte {
	b := make([]byte, 4+n)
	binary.BigEndian.PutUint32(b, uint32(n))
	return b
}

func TestFrameCounter(t *testing.T) {
	var stream []byte
	for _, n := range []int{10, 0, 3, 300} {
		stream = append(stream, frame(n)...)
	}
	tests := []struct {
		name   string
		chunks []int // sizes of the writes; the rest goes in a last write
	}{
		{"one write", nil},
		{"byte by byte", repeat(1, len(stream)-1)},
		{"split headers", []int{2, 2, 10, 3, 1}},
		{"frame per write", []int{14, 4, 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f frameCounter
			got, rest := 0, stream
			for _, n := range tt.chunks {
				got += f.scan(rest[:n])
				rest = rest[n:]
			}
			got += f.scan(rest)
			if got != 4 {
				t.Errorf("counted %d frames, want 4", got)
			}
			if f.remaining != 0 || f.headerLen != 0 {
				t.Errorf("counter not at a frame boundary: %+v", f)
			}
		})
	}
}

func repeat(v, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}
