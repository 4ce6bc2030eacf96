package offsets_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mm2cutover/mm2cutover/offsets"
)

func TestParseSourcePartition(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want offsets.SourcePartition
		err  bool
	}{
		{"orders-3", offsets.SourcePartition{Topic: "orders", Partition: 3}, false},
		{"orders:3", offsets.SourcePartition{Topic: "orders", Partition: 3}, false},
		{"my-topic-12", offsets.SourcePartition{Topic: "my-topic", Partition: 12}, false},
		{"a.b_c-0", offsets.SourcePartition{Topic: "a.b_c", Partition: 0}, false},
		{"orders", offsets.SourcePartition{}, true},
		{"orders-", offsets.SourcePartition{}, true},
		{"-3", offsets.SourcePartition{}, true},
		{"orders-x", offsets.SourcePartition{}, true},
		{"orders--1", offsets.SourcePartition{Topic: "orders-", Partition: 1}, false},
		{"bad topic-1", offsets.SourcePartition{}, true},
		{"orders-99999999999", offsets.SourcePartition{}, true},
	} {
		got, err := offsets.ParseSourcePartition(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseSourcePartition(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.err)
		}
		if err != nil && !errors.Is(err, offsets.ErrInvalidPartition) {
			t.Errorf("ParseSourcePartition(%q): %v does not match ErrInvalidPartition", tt.in, err)
		}
	}
}

// TestJSONRoundTrips: the value types survive encoding/json, absent offsets
// as null, partitions as strings usable as object keys.
func TestJSONRoundTrips(t *testing.T) {
	type record struct {
		P      offsets.SourcePartition           `json:"p"`
		C      offsets.GroupOffset               `json:"c"`
		None   offsets.GroupOffset               `json:"none"`
		M      offsets.MirrorOffset              `json:"m"`
		Null   offsets.MirrorOffset              `json:"null"`
		Bounds offsets.LogBounds                 `json:"bounds"`
		ByPart map[offsets.SourcePartition]int64 `json:"by_partition"`
	}
	in := record{
		P: offsets.SourcePartition{Topic: "orders", Partition: 3}, C: offsets.NewGroupOffset(42), M: offsets.NewMirrorOffset(41),
		Bounds: offsets.LogBounds{Start: 1, End: 100}, ByPart: map[offsets.SourcePartition]int64{{Topic: "a-b", Partition: 1}: 7},
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"p":"orders-3","c":42,"none":null,"m":41,"null":null,"bounds":{"log_start":1,"log_end":100},"by_partition":{"a-b-1":7}}`
	if string(b) != want {
		t.Errorf("Marshal = %s\nwant      %s", b, want)
	}
	var out record
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in, out); d != "" {
		t.Errorf("round trip (-in +out):\n%s", d)
	}
	for _, bad := range []string{`{"c":4.5}`, `{"c":"4"}`, `{"m":1e3}`, `{"p":"orders"}`} {
		if err := json.Unmarshal([]byte(bad), &out); err == nil {
			t.Errorf("Unmarshal(%s): no error", bad)
		}
	}
	// The last stable offset, when read, is written; a decision ignores it.
	withStable := offsets.LogBounds{Start: 1, End: 100, StableEnd: 90}
	if b, err := json.Marshal(withStable); err != nil || string(b) != `{"log_start":1,"log_end":100,"stable_end":90}` {
		t.Errorf("Marshal(%+v) = %s, %v", withStable, b, err)
	}
	d := offsets.Decide(offsets.SourcePartition{Topic: "orders", Partition: 3}, offsets.GroupOffset{}, offsets.LogBounds{End: 5})
	b, err = json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	const wantD = `{"partition":"orders-3","group_offset":null,"log_start":0,"log_end":5,"action":"block","offset":null,"lost":0,"reason":"group has no committed offset: let the old job commit one, or supply it from its final checkpoint; never start from latest","error":"offsets: orders-3: no committed offset"}`
	if string(b) != wantD {
		t.Errorf("Marshal(Decision) = %s\nwant %s", b, wantD)
	}
}
