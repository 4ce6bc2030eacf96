package flinksavepoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/offsets"
)

func tp(topic string, n int32) offsets.SourcePartition {
	return offsets.SourcePartition{Topic: topic, Partition: n}
}

// reference is what TestAgainstFlink recorded beside a savepoint.
type reference struct {
	Flink     string `json:"flink"`
	Version   int32  `json:"metadata_version"`
	Reference []struct {
		UID        string `json:"uid"`
		OperatorID string `json:"operator_id"`
		Splits     []struct {
			Topic          string `json:"topic"`
			Partition      int32  `json:"partition"`
			StartingOffset int64  `json:"starting_offset"`
			StoppingOffset int64  `json:"stopping_offset"`
		} `json:"splits"`
		Error string `json:"error"`
	} `json:"state_processor_api"`
	Job map[string]map[string]int64 `json:"job_positions"`
}

// TestRecordedSavepoints reads the savepoints real Flink jobs wrote (both
// lines, state inline and in files; recorded by TestAgainstFlink -update)
// and compares every split with what Flink's State Processor API read from
// them, and the positions with the job's own.
func TestRecordedSavepoints(t *testing.T) {
	refs, err := filepath.Glob(filepath.Join("testdata", "flink-*.json"))
	if err != nil || len(refs) < 2 {
		t.Fatalf("recorded savepoints: %v %v", refs, err)
	}
	for _, path := range refs {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var r reference
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			sp, err := Open(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			if sp.Version != r.Version || !sp.Properties.Stopped() {
				t.Errorf("version %d, properties %+v; want %d and a stop-with-savepoint", sp.Version, sp.Properties, r.Version)
			}
			job := offsets.GroupOffsets{}
			for topic, ps := range r.Job {
				for p, c := range ps {
					n, _ := strconv.Atoi(p)
					job[tp(topic, int32(n))] = c
				}
			}
			got := offsets.GroupOffsets{}
			for _, ref := range r.Reference {
				src, err := sp.KafkaSource(ref.UID)
				if err != nil {
					t.Fatal(err)
				}
				if src.Operator.ID.String() != ref.OperatorID {
					t.Errorf("uid %s: operator %s, Flink's %s", ref.UID, src.Operator.ID, ref.OperatorID)
				}
				want := map[offsets.SourcePartition][2]int64{}
				for _, s := range ref.Splits {
					want[tp(s.Topic, s.Partition)] = [2]int64{s.StartingOffset, s.StoppingOffset}
				}
				have := map[offsets.SourcePartition][2]int64{}
				for _, s := range src.Splits {
					have[s.Partition] = [2]int64{s.StartingOffset, s.StoppingOffset}
				}
				if d := cmp.Diff(want, have); d != "" {
					t.Errorf("uid %s: (-flink +go)\n%s", ref.UID, d)
				}
				for p, c := range src.Positions() {
					got[p] = c
				}
			}
			if d := cmp.Diff(job, got); d != "" {
				t.Errorf("positions (-job +savepoint)\n%s", d)
			}
		})
	}
}

// TestOperatorIDFromUID pins the hash on Guava's murmur3_128 test vectors
// and on the IDs Flink gave the recorded jobs' uids.
func TestOperatorIDFromUID(t *testing.T) {
	for _, tc := range []struct{ uid, want string }{
		{"", "00000000000000000000000000000000"},
		{"The quick brown fox jumps over the lazy dog", "6c1b07bc7bbc4be347939ac4a93c437a"},
		// From the State Processor API (OperatorIdentifier.forUid), recorded in testdata.
		{"kafka-source", "61252f73469d3ffba207c548d29a0267"},
		{"second-source", "6cccd0d6b98974b7b6c0397806c9a01f"},
		{"positions", "9cd19060a0b23982941465fa134fa812"},
		{"no-such-operator", "de4022fc0fe4b0924f1b46b97304fbb9"},
	} {
		if got := OperatorIDFromUID(tc.uid).String(); got != tc.want {
			t.Errorf("OperatorIDFromUID(%q) = %s, want %s", tc.uid, got, tc.want)
		}
		id, err := ParseOperatorID(strings.ToUpper(tc.want))
		if err != nil || id.String() != tc.want {
			t.Errorf("ParseOperatorID(%s) = %s, %v", tc.want, id, err)
		}
	}
	for _, bad := range []string{"", "61252f73469d3ffba207c548d29a026", "61252f73469d3ffba207c548d29a026g"} {
		if _, err := ParseOperatorID(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseOperatorID(%q): %v, want ErrMalformed", bad, err)
		}
	}
}

func recorded(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name, MetadataFile))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func openBytes(b []byte) (*Savepoint, error) {
	return OpenFS(fstest.MapFS{MetadataFile: &fstest.MapFile{Data: b}}, "")
}

// TestTruncated cuts each recorded _metadata at every length: each prefix is
// refused as truncated, and a byte too many as malformed.
func TestTruncated(t *testing.T) {
	for _, name := range []string{"flink-1.20", "flink-2.2"} {
		b := recorded(t, name)
		for n := range len(b) {
			if _, err := openBytes(b[:n]); !errors.Is(err, ErrTruncated) {
				t.Fatalf("%s cut at %d of %d bytes: %v, want ErrTruncated", name, n, len(b), err)
			}
		}
		if _, err := openBytes(append(bytes.Clone(b), 0)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s with a byte after the end: %v, want ErrMalformed", name, err)
		}
	}
}

func TestBadMetadata(t *testing.T) {
	b := recorded(t, "flink-2.2")
	with := func(at int, v ...byte) []byte {
		c := bytes.Clone(b)
		copy(c[at:], v)
		return c
	}
	for _, tc := range []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"magic", with(0, 0x49, 0x60, 0x67, 0x2e), ErrNotSavepoint},
		{"a json file", []byte(`{"schema_version": 3}`), ErrNotSavepoint},
		{"version 2", with(4, 0, 0, 0, 2), ErrVersion},
		{"version 7", with(4, 0, 0, 0, 7), ErrVersion},
		{"negative checkpoint", with(8, 0x80), ErrMalformed},
		{"negative master count", with(16, 0xff, 0xff, 0xff, 0xff), ErrMalformed},
		{"huge operator count", with(20, 0x7f, 0xff, 0xff, 0xff), ErrTruncated},
	} {
		_, err := openBytes(tc.data)
		if !errors.Is(err, tc.want) || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		var ve *VersionError
		if tc.want == ErrVersion && (!errors.As(err, &ve) || !strings.Contains(err.Error(), "metadata version")) {
			t.Errorf("%s: %v, want a *VersionError", tc.name, err)
		}
	}
}

var (
	a0 = Split{Partition: tp("a", 0), StartingOffset: 10, StoppingOffset: NoStoppingOffset}
	a1 = Split{Partition: tp("a", 1), StartingOffset: 0, StoppingOffset: NoStoppingOffset}
	b0 = Split{Partition: tp("b", 0), StartingOffset: CommittedOffset, StoppingOffset: NoStoppingOffset}
	c0 = Split{Partition: tp("c", 0), StartingOffset: 7, StoppingOffset: NoStoppingOffset}
)

// TestSynthetic reads savepoints of every metadata version with sources in
// files and inline, beside operators with keyed and other states, and a
// second source.
func TestSynthetic(t *testing.T) {
	src, other := OperatorIDFromUID("src"), OperatorIDFromUID("other")
	map1 := OperatorIDFromUID("map")
	ops := []testOp{
		{id: map1, uid: "map", par: 2, subtasks: []testSub{{idx: 0, noSource: true, keyed: true, file: "m0"}, {idx: 1, noSource: true}}},
		{id: src, uid: "src", par: 2, subtasks: []testSub{{idx: 1, splits: []Split{a1, b0}, file: "s1", other: true}, {idx: 0, splits: []Split{a0}}}},
		{id: other, uid: "other", par: 1, subtasks: []testSub{{idx: 0, splits: []Split{c0}, file: "o0"}}},
	}
	for v := int32(MinVersion); v <= MaxVersion; v++ {
		t.Run("v"+strconv.Itoa(int(v)), func(t *testing.T) {
			sp, err := OpenFS(testSavepoint(t, v, ops), "")
			if err != nil {
				t.Fatal(err)
			}
			if sp.CheckpointID != 42 || len(sp.Operators) != 3 || (v >= 4) != sp.Properties.Savepoint {
				t.Errorf("checkpoint %d, %d operators, %+v", sp.CheckpointID, len(sp.Operators), sp.Properties)
			}
			if v >= 5 && sp.Operators[1].UID != "src" {
				t.Errorf("uid %q, want src", sp.Operators[1].UID)
			}
			s, err := sp.KafkaSource("src")
			if err != nil {
				t.Fatal(err)
			}
			a0.Subtask, a1.Subtask, b0.Subtask = 0, 1, 1
			if d := cmp.Diff([]Split{a0, a1, b0}, s.Splits); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
			if d := cmp.Diff(offsets.GroupOffsets{tp("a", 0): 10, tp("a", 1): 0}, s.Positions()); d != "" {
				t.Errorf("positions (-want +got)\n%s", d)
			}
			if u := s.Unread(); len(u) != 1 || u[0].Marker() != "committed" {
				t.Errorf("unread %+v", u)
			}
			if _, err := sp.KafkaSource(""); !errors.Is(err, ErrAmbiguous) {
				t.Errorf("no uid: %v", err)
			}
			if _, err := sp.KafkaSource("map"); !errors.Is(err, ErrNoSource) {
				t.Errorf("map: %v", err)
			}
			if s, err := sp.KafkaSourceByID(other, ""); err != nil || len(s.Splits) != 1 {
				t.Errorf("by id: %+v, %v", s, err)
			}
		})
	}
}

func TestBadState(t *testing.T) {
	src := OperatorIDFromUID("src")
	one := func(subs ...testSub) []testOp { return []testOp{{id: src, uid: "src", par: 4, subtasks: subs}} }
	for _, tc := range []struct {
		name  string
		fsys  func() fstest.MapFS
		open  error // from OpenFS
		read  error // from KafkaSource("src")
		inErr string
	}{
		{name: "missing state file", fsys: func() fstest.MapFS {
			f := testSavepoint(t, 6, one(testSub{idx: 0, splits: []Split{a0}, file: "f"}))
			delete(f, "f")
			return f
		}, read: ErrMissingFile, inErr: "f"},
		{name: "state file cut short", fsys: func() fstest.MapFS {
			f := testSavepoint(t, 6, one(testSub{idx: 0, splits: []Split{a0}, file: "f"}))
			f["f"].Data = f["f"].Data[:len(f["f"].Data)-3]
			return f
		}, read: ErrTruncated},
		{name: "state file outside", fsys: func() fstest.MapFS {
			f := testSavepoint(t, 6, one(testSub{idx: 0, splits: []Split{a0}, file: "f"}))
			f[MetadataFile].Data = bytes.Replace(f[MetadataFile].Data, []byte{0, 1, 'f'}, []byte{0, 1, '/'}, 1)
			return f
		}, read: ErrMissingFile},
		{name: "union state", fsys: func() fstest.MapFS {
			return testSavepoint(t, 6, one(testSub{idx: 0, splits: []Split{a0}, mode: modeUnion}))
		}, read: ErrUnplaceable},
		{name: "partition twice", fsys: func() fstest.MapFS {
			return testSavepoint(t, 6, one(testSub{idx: 0, splits: []Split{a0}}, testSub{idx: 1, splits: []Split{a0}}))
		}, read: ErrUnplaceable, inErr: "a-0 is held by subtasks 0 and 1"},
		{name: "finished subtask", fsys: func() fstest.MapFS {
			return testSavepoint(t, 6, one(testSub{idx: 0, splits: []Split{a0}}, testSub{idx: 1, finished: true}))
		}, read: ErrUnplaceable, inErr: "finished"},
		{name: "fully finished", fsys: func() fstest.MapFS {
			return testSavepoint(t, 6, []testOp{{id: src, par: 1, finished: true}})
		}, read: ErrUnplaceable},
		{name: "subtask twice", fsys: func() fstest.MapFS {
			return testSavepoint(t, 6, one(testSub{idx: 1, splits: []Split{a0}}, testSub{idx: 1, splits: []Split{a1}}))
		}, open: ErrMalformed},
		{name: "subtask beyond parallelism", fsys: func() fstest.MapFS {
			return testSavepoint(t, 6, one(testSub{idx: 4, splits: []Split{a0}}))
		}, open: ErrMalformed},
		{name: "not a kafka split", fsys: func() fstest.MapFS {
			f := testSavepoint(t, 6, one(testSub{idx: 0, splits: []Split{a0}, file: "f"}))
			f["f"].Data = bytes.Replace(f["f"].Data, splitBytes(0, a0), splitBytes(1, a0), 1)
			return f
		}, read: ErrUnplaceable, inErr: "serializer version 1"},
		{name: "bad topic", fsys: func() fstest.MapFS {
			return testSavepoint(t, 6, one(testSub{idx: 0, splits: []Split{{Partition: tp("a b", 0), StoppingOffset: NoStoppingOffset}}}))
		}, read: ErrMalformed},
		{name: "bad starting offset", fsys: func() fstest.MapFS {
			return testSavepoint(t, 6, one(testSub{idx: 0, splits: []Split{{Partition: tp("a", 0), StartingOffset: -5, StoppingOffset: NoStoppingOffset}}}))
		}, read: ErrMalformed},
		{name: "bad stopping offset", fsys: func() fstest.MapFS {
			return testSavepoint(t, 6, one(testSub{idx: 0, splits: []Split{{Partition: tp("a", 0), StoppingOffset: -7}}}))
		}, read: ErrMalformed},
		{name: "compressed", fsys: func() fstest.MapFS {
			f := testSavepoint(t, 6, one(testSub{idx: 0, splits: []Split{a0}, file: "f"}))
			f["f"].Data[4] = 1
			return f
		}, read: ErrUnsupported},
		{name: "no sources", fsys: func() fstest.MapFS {
			return testSavepoint(t, 6, one(testSub{idx: 0, noSource: true}))
		}, read: ErrNoSource},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp, err := OpenFS(tc.fsys(), "")
			if tc.open != nil || err != nil {
				if !errors.Is(err, tc.open) || tc.open == nil {
					t.Fatalf("open: %v, want %v", err, tc.open)
				}
				return
			}
			uid := "src"
			if tc.read == ErrNoSource {
				uid = ""
			}
			_, err = sp.KafkaSource(uid)
			if !errors.Is(err, tc.read) || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.inErr) {
				t.Errorf("read: %v, want %v naming %q", err, tc.read, tc.inErr)
			}
			var fe *FormatError
			var se *SourceError
			if !errors.As(err, &fe) && !errors.As(err, &se) {
				t.Errorf("read: %T, want a *FormatError or *SourceError", err)
			}
		})
	}
}

// TestOpen opens a savepoint by its directory, its _metadata and its file:
// URI, and reads a state file named by an absolute path inside it.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	files := testSavepoint(t, 4, []testOp{{id: OperatorIDFromUID("src"), par: 1, subtasks: []testSub{{idx: 0, splits: []Split{a0}, file: "state-1"}}}})
	abs := filepath.Join(dir, "state-1")
	files[MetadataFile].Data = absolutize(t, files[MetadataFile].Data, "state-1", "file:"+abs)
	if err := os.CopyFS(dir, files); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, filepath.Join(dir, MetadataFile), "file:" + dir, "file://" + dir} {
		sp, err := Open(p)
		if err != nil {
			t.Errorf("Open(%s): %v", p, err)
			continue
		}
		if s, err := sp.KafkaSource(""); err != nil || len(s.Splits) != 1 {
			t.Errorf("Open(%s): %+v, %v", p, s, err)
		}
	}
	for _, p := range []string{filepath.Join(dir, "missing"), "s3://bucket/savepoint-1", filepath.Join(dir, "state-1")} {
		if _, err := Open(p); !errors.Is(err, ErrMissingFile) {
			t.Errorf("Open(%s): %v, want ErrMissingFile", p, err)
		}
	}
	moved := t.TempDir()
	if err := os.CopyFS(moved, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	sp, err := Open(moved)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sp.KafkaSource(""); !errors.Is(err, ErrMissingFile) || !strings.Contains(err.Error(), "outside the savepoint directory") {
		t.Errorf("a moved savepoint with an absolute state path: %v, want ErrMissingFile", err)
	}
}

// absolutize turns the relative file handle of name into an absolute one.
func absolutize(t *testing.T, meta []byte, name, abs string) []byte {
	t.Helper()
	var rel, file enc
	rel.u8(handleRelativeFile)
	rel.utf(name)
	i := bytes.Index(meta, rel.Bytes())
	if i < 0 {
		t.Fatal("no relative handle")
	}
	size := meta[i+len(rel.Bytes()) : i+len(rel.Bytes())+8]
	file.u8(handleFile)
	file.Write(size)
	file.utf(abs)
	return append(append(append([]byte{}, meta[:i]...), file.Bytes()...), meta[i+len(rel.Bytes())+8:]...)
}

func TestModifiedUTF8(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		want string
		ok   bool
	}{
		{[]byte("kafka-source"), "kafka-source", true},
		{[]byte{0xc0, 0x80}, "\x00", true},
		{[]byte{0xc3, 0xa9}, "é", true},
		{[]byte{0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80}, "😀", true}, // a surrogate pair, CESU-8
		{[]byte{0xed, 0xa0, 0xbd}, "\ufffd", true},              // an unpaired surrogate
		{[]byte{0x80}, "", false},
		{[]byte{0xc3}, "", false},
		{[]byte{0xf0, 0x9f, 0x98, 0x80}, "", false}, // four-byte UTF-8 is not modified UTF-8
	} {
		got, ok := decodeModifiedUTF8(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%x: %q %v, want %q %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzOpen feeds damaged metadata and state to the reader: it never panics,
// and every error is one of the package's.
func FuzzOpen(f *testing.F) {
	for _, name := range []string{"flink-1.20", "flink-2.2"} {
		f.Add(recorded(f, name), []byte(nil))
	}
	s := testSavepoint(f, 6, []testOp{{id: OperatorIDFromUID("src"), par: 2, subtasks: []testSub{{idx: 0, splits: []Split{a0, b0}, file: "f", keyed: true}, {idx: 1, splits: []Split{a1}}}}})
	f.Add(s[MetadataFile].Data, s["f"].Data)
	s = testSavepoint(f, 3, []testOp{{id: OperatorIDFromUID("src"), par: 1, subtasks: []testSub{{idx: 0, splits: []Split{c0}, file: "f", other: true}}}})
	f.Add(s[MetadataFile].Data, s["f"].Data)
	f.Fuzz(func(t *testing.T, meta, state []byte) {
		fsys := fstest.MapFS{MetadataFile: &fstest.MapFile{Data: meta}, "f": &fstest.MapFile{Data: state}}
		sp, err := OpenFS(fsys, "")
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("open: %v is not ErrInvalid", err)
			}
			return
		}
		for _, o := range sp.Sources() {
			src, err := sp.KafkaSourceByID(o.ID, "")
			if err != nil {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("read: %v is not ErrInvalid", err)
				}
				continue
			}
			for p, c := range src.Positions() {
				if p.Validate() != nil || c < 0 {
					t.Fatalf("position %v %d", p, c)
				}
			}
		}
	})
}

// BenchmarkKafkaSource10000 reads a savepoint of one KafkaSource with
// 10,000 splits over 8 subtasks, each subtask's state in a file, from disk:
// go test -run XXX -bench KafkaSource -benchmem ./flinksavepoint
func BenchmarkKafkaSource10000(b *testing.B) {
	const n, subtasks = 10_000, 8
	subs := make([]testSub, subtasks)
	for i := range n {
		s := &subs[i%subtasks]
		s.idx, s.file = i%subtasks, "state-"+strconv.Itoa(i%subtasks)
		s.splits = append(s.splits, Split{Partition: tp("orders-"+strconv.Itoa(i/1000), int32(i%1000)), StartingOffset: int64(i) * 1000, StoppingOffset: NoStoppingOffset})
	}
	dir := b.TempDir()
	if err := os.CopyFS(dir, testSavepoint(b, 6, []testOp{{id: OperatorIDFromUID("src"), uid: "src", par: subtasks, subtasks: subs}})); err != nil {
		b.Fatal(err)
	}
	size := int64(0)
	_ = fs.WalkDir(os.DirFS(dir), ".", func(_ string, d fs.DirEntry, _ error) error {
		if fi, err := d.Info(); err == nil && !d.IsDir() {
			size += fi.Size()
		}
		return nil
	})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		sp, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		src, err := sp.KafkaSource("src")
		if err != nil {
			b.Fatal(err)
		}
		if g := src.Positions(); len(g) != n {
			b.Fatalf("%d positions", len(g))
		}
	}
	b.ReportMetric(float64(size), "savepoint-bytes")
}

// TestJavaStreamReset: a TC_RESET inside an enum constant's name, which
// drops the handle the enum was given, is read without a panic.
func TestJavaStreamReset(t *testing.T) {
	var e enc
	e.Write([]byte{0xac, 0xed, 0x00, 0x05})
	e.u8(tcEnum)
	e.u8(tcClassDesc)
	e.utf("E")
	e.i64(1)
	e.u8(scSerializable | scEnum)
	e.Write([]byte{0, 0}) // no fields
	e.u8(tcEndBlockData)
	e.u8(tcNull) // no superclass
	e.u8(tcReset)
	e.u8(tcString)
	e.utf("A")
	d := newDecoder(bytes.NewReader(e.Bytes()), int64(e.Len()), "x")
	if v, ok := readJavaObject(d).(jenum); !ok || v.name != "A" || d.err != nil {
		t.Errorf("got %#v, %v", v, d.err)
	}
}
