package connect

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// genericOffsetList decodes as Offsets did before offsetList had a decoder
// of its own: encoding/json with numbers kept exact.
func genericOffsetList(data []byte) ([]Offset, error) {
	var out struct {
		Offsets []Offset `json:"offsets"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	err := dec.Decode(&out)
	return out.Offsets, err
}

func decodeOffsetList(data []byte) ([]Offset, error) {
	var out offsetList
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	err := dec.Decode(&out)
	return out.Offsets, err
}

var offsetBodies = []string{
	`{"offsets":[]}`,
	`{"offsets":null}`,
	`{}`,
	`{"offsets":[{"partition":{"cluster":"source","partition":0,"topic":"orders"},"offset":{"offset":41}}]}`,
	"{ \"offsets\" : [ { \"offset\" : { \"offset\" : -7 } ,\n\t\"partition\" : { \"topic\" : \"a.b-c_d\", \"partition\": 2147483647, \"cluster\" : \"x\" } } ] }",
	`{"offsets":[{"partition":{"cluster":"source","partition":1,"topic":"orders"},"offset":null}]}`,
	`{"offsets":[{"partition":{"cluster":"s","partition":0,"topic":"t"},"offset":{"offset":9223372036854775807}}]}`,
	`{"offsets":[{"partition":{"cluster":"s","partition":0,"topic":"t"},"offset":{"offset":9223372036854775808}}]}`,
	`{"offsets":[{"partition":{"cluster":"s","partition":0,"topic":"t"},"offset":{"offset":1.5}}]}`,
	`{"offsets":[{"partition":{"cluster":"s","partition":0,"topic":"t"},"offset":{"offset":1e3}}]}`,
	`{"offsets":[{"partition":{"cluster":"s","partition":"0","topic":"t"},"offset":{"offset":1}}]}`,
	`{"offsets":[{"partition":{"cluster":"s\u00e9","partition":0,"topic":"t\\n"},"offset":{"offset":1}}]}`,
	`{"offsets":[{"partition":{"cluster":"s","partition":0,"topic":"t","extra":true},"offset":{"offset":1}}]}`,
	`{"offsets":[{"partition":{"cluster":"s","partition":0},"offset":{"offset":1}}]}`,
	`{"offsets":[{"partition":{"cluster":"s","cluster":"u","partition":0,"topic":"t"},"offset":{"offset":1}}]}`,
	`{"offsets":[{"partition":{"filename":"/tmp/x"},"offset":{"position":42}}]}`,
	`{"offsets":[{"partition":{"cluster":"s","partition":0,"topic":"t"}}]}`,
	`{"offsets":[{"partition":{"cluster":"s","partition":0,"topic":"t"},"offset":{"offset":1,"x":2}}]}`,
	`{"Offsets":[{"partition":{"cluster":"s","partition":0,"topic":"t"},"offset":{"offset":1}}]}`,
	`{"offsets":[{"partition":{"cluster":"s","partition":0,"topic":"t"},"offset":{"offset":1}}],"offsets":[]}`,
	`{"offsets":[{"partition":{"cluster":"s","partition":0,"topic":"t"},"offset":{"offset":1}},{"partition":{"file":"f"},"offset":null}]}`,
	`{"offsets":[{"partition":{"cluster":"s","partition":0,"topic":"t"},"offset":{"offset":1}}],"more":1}`,
	`{"offsets":[1]}`,
	`{"offsets":{}}`,
	`[]`,
}

// The fast decoder gives exactly what encoding/json gives, on every shape.
func TestOffsetListDecodesAsEncodingJSON(t *testing.T) {
	for _, body := range offsetBodies {
		want, wantErr := genericOffsetList([]byte(body))
		got, err := decodeOffsetList([]byte(body))
		if (err != nil) != (wantErr != nil) {
			t.Errorf("%s: error %v, encoding/json %v", body, err, wantErr)
			continue
		}
		if err != nil {
			continue // Offsets returns no offsets with an error
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: (-encoding/json +fast):\n%s", body, diff)
		}
	}
}

func FuzzOffsetListDecode(f *testing.F) {
	for _, b := range offsetBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := genericOffsetList(data)
		got, err := decodeOffsetList(data)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: error %v, encoding/json %v", data, err, wantErr)
		}
		if err == nil {
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%q: (-encoding/json +fast):\n%s", data, diff)
			}
		}
	})
}

// The PATCH body is byte for byte what json.Marshal writes.
func TestEncodeOffsetListAsJSONMarshal(t *testing.T) {
	for _, list := range [][]Offset{
		nil,
		{},
		{mirrorOffset("source", "orders", 0, 41), mirrorOffset("source", "orders", 1)},
		{mirrorOffset("a<b>&c", "t\"q", 3, -1), mirrorOffset("é", "t", 1, 2)},
		{{Partition: map[string]any{"cluster": "s", "topic": "t", "partition": 7}, Offset: map[string]any{"offset": int32(5)}}},
		{{Partition: map[string]any{"cluster": "s", "topic": "t", "partition": 7.0}, Offset: map[string]any{"offset": 5}}},
		{{Partition: map[string]any{"cluster": "s", "topic": "t", "partition": int64(7), "x": 1}, Offset: map[string]any{"offset": 5}}},
		{{Partition: map[string]any{"cluster": "s", "topic": "t", "partition": int64(7)}, Offset: map[string]any{"offset": 5, "y": "z"}}},
		{{Partition: map[string]any{"filename": "/x"}, Offset: map[string]any{"position": json.Number("12")}}},
		{{Partition: nil, Offset: nil}},
	} {
		want, err := json.Marshal(struct {
			Offsets []Offset `json:"offsets"`
		}{list})
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeOffsetList(list)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("encodeOffsetList = %s, %v\njson.Marshal    = %s", got, err, want)
		}
	}
}

// mirrorOffset is a MirrorSourceConnector offset in the generic form;
// a tombstone when m is nil.
func mirrorOffset(alias, topic string, partition int32, m ...int64) Offset {
	o := Offset{Partition: map[string]any{MirrorKeyCluster: alias, MirrorKeyTopic: topic, MirrorKeyPartition: int64(partition)}}
	if len(m) > 0 {
		o.Offset = map[string]any{MirrorKeyOffset: m[0]}
	}
	return o
}
