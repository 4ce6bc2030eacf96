package offsets_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/offsets"
)

func TestConnectOffsetJSON(t *testing.T) {
	for _, tt := range []struct {
		o    offsets.ConnectOffset
		want string
	}{
		{
			offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: 3}, Offset: offsets.NewMirrorOffset(41)},
			`{"partition":{"cluster":"source","topic":"orders","partition":3},"offset":{"offset":41}}`,
		},
		{
			offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "src", Topic: "t", Partition: 0}},
			`{"partition":{"cluster":"src","topic":"t","partition":0},"offset":null}`,
		},
		{
			offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: `a"<é>`, Topic: "t", Partition: math.MaxInt32}, Offset: offsets.NewMirrorOffset(math.MaxInt64)},
			`{"partition":{"cluster":"a\"\u003cé\u003e","topic":"t","partition":2147483647},"offset":{"offset":9223372036854775807}}`,
		},
	} {
		got, err := json.Marshal(tt.o)
		if err != nil || string(got) != tt.want {
			t.Errorf("Marshal(%v) = %s, %v; want %s", tt.o, got, err, tt.want)
		}
		var back offsets.ConnectOffset
		if err := json.Unmarshal(got, &back); err != nil || back != tt.o {
			t.Errorf("Unmarshal(%s) = %v, %v; want %v", got, back, err, tt.o)
		}
	}
}

func TestParseConnectOffsetsErrors(t *testing.T) {
	for _, in := range []string{
		``,
		`null`,
		`{}`,
		`{"offsets":null}`,
		`{"offsets":[],"extra":1}`,
		`{"offsets":[]} {}`,
		`{"offsets":[{"partition":{"cluster":"s","topic":"t","partition":0}}]}`,
		`{"offsets":[{"offset":{"offset":1}}]}`,
		`{"offsets":[{"partition":{"cluster":"s","topic":"t","partition":"0"},"offset":{"offset":1}}]}`,
		`{"offsets":[{"partition":{"cluster":"s","topic":"t","partition":1.5},"offset":{"offset":1}}]}`,
		`{"offsets":[{"partition":{"cluster":"s","topic":"t","partition":4294967296},"offset":{"offset":1}}]}`,
		`{"offsets":[{"partition":{"topic":"t","partition":0},"offset":{"offset":1}}]}`,
		`{"offsets":[{"partition":{"cluster":"s","partition":0},"offset":{"offset":1}}]}`,
		`{"offsets":[{"partition":{"cluster":"s","topic":"t"},"offset":{"offset":1}}]}`,
		`{"offsets":[{"partition":{"cluster":"s","topic":"t","partition":0,"x":1},"offset":{"offset":1}}]}`,
		`{"offsets":[{"partition":{"cluster":"s","topic":"t","partition":0},"offset":{}}]}`,
		`{"offsets":[{"partition":{"cluster":"s","topic":"t","partition":0},"offset":{"offset":1.0}}]}`,
		`{"offsets":[{"partition":{"cluster":"s","topic":"t","partition":0},"offset":{"offset":"1"}}]}`,
		`{"offsets":[{"partition":{"cluster":"s","topic":"t","partition":0},"offset":{"offset":9223372036854775808}}]}`,
		`{"offsets":[{"partition":{"cluster":"s","topic":"t","partition":0},"offset":{"offset":1,"y":2}}]}`,
	} {
		got, err := offsets.ParseConnectOffsets([]byte(in))
		if !errors.Is(err, offsets.ErrMalformed) {
			t.Errorf("ParseConnectOffsets(%s) = %v, %v; want ErrMalformed", in, got, err)
		}
	}
}

func TestReverse(t *testing.T) {
	cp := func(cluster, topic string, p int32) offsets.ConnectPartition {
		return offsets.ConnectPartition{Cluster: cluster, Topic: topic, Partition: p}
	}
	m := offsets.NewMirrorOffset
	got, err := offsets.Reverse("source", []offsets.ConnectOffset{
		{Partition: cp("source", "orders", 0), Offset: m(41)},
		{Partition: cp("source", "orders", 1), Offset: m(0)},
		{Partition: cp("source", "orders", 2)},
	})
	want := offsets.GroupOffsets{{Topic: "orders", Partition: 0}: 42, {Topic: "orders", Partition: 1}: 1}
	if err != nil || !cmp.Equal(got, want) {
		t.Errorf("Reverse = %v, %v; want %v", got, err, want)
	}
	if _, ok := got[offsets.SourcePartition{Topic: "orders", Partition: 2}]; ok {
		t.Errorf("null offset gave a position")
	}

	for _, tt := range []struct {
		list []offsets.ConnectOffset
		want error
	}{
		{[]offsets.ConnectOffset{{Partition: cp("backup", "orders", 0), Offset: m(1)}}, offsets.ErrAliasMismatch},
		{[]offsets.ConnectOffset{{Partition: cp("source", "orders", 0), Offset: m(1)}, {Partition: cp("source", "orders", 0)}}, offsets.ErrDuplicate},
		{[]offsets.ConnectOffset{{Partition: cp("source", "orders", -1), Offset: m(1)}}, offsets.ErrInvalidPartition},
		{[]offsets.ConnectOffset{{Partition: cp("source", "orders", 0), Offset: m(-1)}}, offsets.ErrNegative},
		{[]offsets.ConnectOffset{{Partition: cp("source", "orders", 0), Offset: m(math.MaxInt64)}}, offsets.ErrOverflow},
	} {
		_, err := offsets.Reverse("source", tt.list)
		var pe *offsets.ConnectPartitionError
		if !errors.Is(err, tt.want) || !errors.As(err, &pe) {
			t.Errorf("Reverse(%v) error = %v, want a *ConnectPartitionError matching %v", tt.list, err, tt.want)
		}
	}
}

func TestCompareConnectOffsets(t *testing.T) {
	cp := func(cluster, topic string, p int32) offsets.ConnectPartition {
		return offsets.ConnectPartition{Cluster: cluster, Topic: topic, Partition: p}
	}
	want := []offsets.ConnectOffset{
		{Partition: cp("a", "z", 0), Offset: offsets.NewMirrorOffset(1)},
		{Partition: cp("b", "a", 2)},
		{Partition: cp("b", "a", 2), Offset: offsets.NewMirrorOffset(0)},
		{Partition: cp("b", "a", 10)},
		{Partition: cp("b", "b", 0)},
	}
	got := slices.Clone(want)
	slices.Reverse(got)
	slices.SortFunc(got, offsets.CompareConnectOffsets)
	if !slices.Equal(got, want) {
		t.Errorf("sorted = %v, want %v", got, want)
	}
}

// FuzzParseConnectOffsets checks that decoding never panics and that what
// decodes marshals back to JSON that decodes to the same entries.
func FuzzParseConnectOffsets(f *testing.F) {
	f.Add([]byte(`{"offsets":[{"partition":{"cluster":"source","topic":"orders","partition":3},"offset":{"offset":41}}]}`))
	f.Add([]byte(`{"offsets":[{"partition":{"cluster":"s","topic":"t","partition":0},"offset":null}]}`))
	f.Add([]byte(`{"offsets":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		list, err := offsets.ParseConnectOffsets(data)
		if err != nil {
			if !errors.Is(err, offsets.ErrMalformed) {
				t.Fatalf("error %v does not match ErrMalformed", err)
			}
			return
		}
		enc, err := json.Marshal(offsets.ConnectOffsetList{Offsets: list})
		if err != nil {
			t.Fatal(err)
		}
		back, err := offsets.ParseConnectOffsets(enc)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", enc, err)
		}
		enc2, _ := json.Marshal(offsets.ConnectOffsetList{Offsets: back})
		if string(enc) != string(enc2) {
			t.Fatalf("re-encoding differs:\n%s\n%s", enc, enc2)
		}
	})
}

// TestParseConnectOffsetsForms: Connect's compact form and any other JSON
// spelling of the same entries (spaces, escaped keys, keys in another
// order) decode alike.
func TestParseConnectOffsetsForms(t *testing.T) {
	want := []offsets.ConnectOffset{
		{Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: 3}, Offset: offsets.NewMirrorOffset(41)},
		{Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: 4}},
		{Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: 5}, Offset: offsets.NewMirrorOffset(-1)},
	}
	for _, in := range []string{
		`{"offsets":[{"partition":{"cluster":"source","topic":"orders","partition":3},"offset":{"offset":41}},` +
			`{"partition":{"cluster":"source","topic":"orders","partition":4},"offset":null},` +
			`{"partition":{"cluster":"source","topic":"orders","partition":5},"offset":{"offset":-1}}]}`,
		`{ "offsets" : [ { "offset" : { "offset" : 41 } , "partition" : { "partition" : 3, "topic" : "orders", "cluster" : "source" } },
		  {"partition":{"cluster":"source","topic":"orders","partition":4},"offset" : null},
		  {"partition":{"cluster":"source","topic":"orders","partition":5},"offset":{"\u006fffset":-1}} ] }`,
	} {
		got, err := offsets.ParseConnectOffsets([]byte(in))
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseConnectOffsets(%s) = %v, %v; want %v", in, got, err, want)
		}
	}
}

// BenchmarkParseConnectOffsets10k decodes a GET offsets answer of 10,000
// partitions in Connect's own form, as the read-back does after a PATCH.
func BenchmarkParseConnectOffsets10k(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString(`{"offsets":[`)
	for i := range 10_000 {
		if i > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, `{"partition":{"cluster":"source","partition":%d,"topic":"events.region-%d"},"offset":{"offset":%d}}`, i%1000, i/1000, 1000*i)
	}
	buf.WriteString(`]}`)
	body := buf.Bytes()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		list, err := offsets.ParseConnectOffsets(body)
		if err != nil || len(list) != 10_000 {
			b.Fatal(err, len(list))
		}
	}
}
