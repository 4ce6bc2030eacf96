package kafkaadmin

import (
	"encoding/binary"
	"slices"
	"testing"
)

// frame is a request of API key key with n bytes after the key.
func frame(key int16, n int) []byte {
	b := make([]byte, 6+n)
	binary.BigEndian.PutUint32(b, uint32(2+n))
	binary.BigEndian.PutUint16(b[4:], uint16(key))
	return b
}

func TestFrameCounter(t *testing.T) {
	var stream []byte
	keys := []int16{3, 18, 2, 36}
	for i, n := range []int{10, 0, 3, 300} {
		stream = append(stream, frame(keys[i], n)...)
	}
	tests := []struct {
		name   string
		chunks []int // sizes of the writes; the rest goes in a last write
	}{
		{"one write", nil},
		{"byte by byte", repeat(1, len(stream)-1)},
		{"split headers", []int{2, 2, 1, 10, 3, 1, 5}},
		{"frame per write", []int{16, 6, 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f frameCounter
			var seen []int16
			add := func(k int16) { seen = append(seen, k) }
			got, rest := 0, stream
			for _, n := range tt.chunks {
				got += f.scan(rest[:n], add)
				rest = rest[n:]
			}
			got += f.scan(rest, add)
			if got != 4 {
				t.Errorf("counted %d frames, want 4", got)
			}
			if !slices.Equal(seen, keys) {
				t.Errorf("API keys %v, want %v", seen, keys)
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
