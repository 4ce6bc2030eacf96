package flinksavepoint

// A writer of savepoints in Flink's format, for tests: what
// MetadataV3Serializer to V6 and the operator state backend write, for the
// shapes the tests need (sources inline or in files, other operators with
// keyed state, finished subtasks). The checkpoint properties are copied from
// a savepoint Flink wrote (testdata), not made here.

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

type enc struct{ bytes.Buffer }

func (e *enc) u8(v byte)   { e.WriteByte(v) }
func (e *enc) i32(v int32) { e.Write(binary.BigEndian.AppendUint32(nil, uint32(v))) }
func (e *enc) i64(v int64) { e.Write(binary.BigEndian.AppendUint64(nil, uint64(v))) }
func (e *enc) utf(s string) {
	e.Write(binary.BigEndian.AppendUint16(nil, uint16(len(s))))
	e.WriteString(s)
}

// splitBytes is one element of a SourceReaderState: the byte[] of
// BytePrimitiveArraySerializer holding a SimpleVersionedSerialization frame
// of a KafkaPartitionSplit.
func splitBytes(version int32, s Split) []byte {
	var payload enc
	payload.utf(s.Partition.Topic)
	payload.i32(s.Partition.Partition)
	payload.i64(s.StartingOffset)
	payload.i64(s.StoppingOffset)
	var e enc
	e.i32(int32(8 + payload.Len()))
	e.i32(version)
	e.i32(int32(payload.Len()))
	e.Write(payload.Bytes())
	return e.Bytes()
}

// stateStream is an operator state stream holding one SourceReaderState:
// the serialization proxy's header, then the elements; it returns the
// elements' offsets.
func stateStream(splits []Split) ([]byte, []int64) {
	var e enc
	e.i32(6)                    // OperatorBackendSerializationProxy version
	e.u8(0)                     // not compressed
	e.Write([]byte{0, 0, 0, 0}) // the state meta infos (not read by the package): two empty lists
	var offs []int64
	for _, s := range splits {
		offs = append(offs, int64(e.Len()))
		e.Write(splitBytes(0, s))
	}
	return e.Bytes(), offs
}

type testOp struct {
	id       OperatorID
	uid      string
	par      int
	finished bool // fully finished
	subtasks []testSub
}

type testSub struct {
	idx      int
	finished bool
	splits   []Split // SourceReaderState; nil with otherState for a non-source
	mode     byte
	file     string // the state's file, relative to the savepoint directory ("" inline)
	keyed    bool   // also a keyed state handle in a file, to skip
	other    bool   // another operator list state beside SourceReaderState
	noSource bool   // no SourceReaderState at all
}

// testSavepoint writes a savepoint of metadata version v into a MapFS:
// _metadata and the state files.
func testSavepoint(t testing.TB, v int32, ops []testOp) fstest.MapFS {
	t.Helper()
	files := fstest.MapFS{}
	var e enc
	e.i32(metadataMagic)
	e.i32(v)
	e.i64(42) // checkpoint id
	e.i32(1)  // one master state
	var ms enc
	ms.i32(1)
	ms.utf("master")
	ms.i32(3)
	ms.Write([]byte{1, 2, 3})
	e.i32(masterStateMagic)
	e.i32(int32(ms.Len()))
	e.Write(ms.Bytes())
	e.i32(int32(len(ops)))
	for _, op := range ops {
		if v >= 5 {
			e.utf("Source: " + op.uid)
			e.utf(op.uid)
		}
		e.Write(op.id[:])
		e.i32(int32(op.par))
		e.i32(128)
		if op.finished {
			e.u8(handleNull)
			e.i32(-1)
			continue
		}
		e.u8(handleByteStream) // coordinator state
		e.utf("coordinator")
		e.i32(2)
		e.Write([]byte{7, 7})
		e.i32(int32(len(op.subtasks)))
		for _, st := range op.subtasks {
			if st.finished {
				e.i32(int32(-(st.idx + 1)))
				continue
			}
			e.i32(int32(st.idx))
			data, offs := stateStream(st.splits)
			e.i32(1) // managed operator state
			e.u8(handleOperatorState)
			names := 1
			if st.other {
				names = 2
			}
			e.i32(int32(names))
			if st.other {
				e.utf("other-state")
				e.u8(modeUnion)
				e.i32(1)
				e.i64(5)
			}
			name := SourceReaderState
			if st.noSource {
				name = "not-a-source"
			}
			e.utf(name)
			e.u8(st.mode)
			e.i32(int32(len(offs)))
			for _, o := range offs {
				e.i64(o)
			}
			if st.file != "" {
				e.u8(handleRelativeFile)
				e.utf(st.file)
				e.i64(int64(len(data)))
				files[st.file] = &fstest.MapFile{Data: data}
			} else {
				e.u8(handleByteStream)
				e.utf("inline")
				e.i32(int32(len(data)))
				e.Write(data)
			}
			e.i32(0) // no raw operator state
			if st.keyed {
				e.u8(handleKeyGroupsV2)
				e.i32(0)
				e.i32(2)
				e.i64(0)
				e.i64(10)
				e.u8(handleRelativeFile)
				e.utf("keyed-" + st.file)
				e.i64(99)
				e.utf("handle-id")
			} else {
				e.u8(handleNull)
			}
			e.u8(handleNull) // raw keyed
			e.i32(0)         // input channels
			e.i32(0)         // output channels
		}
	}
	if v >= 4 {
		e.Write(recordedProperties(t))
	}
	files[MetadataFile] = &fstest.MapFile{Data: e.Bytes()}
	return files
}

// recordedProperties are the checkpoint properties of a savepoint Flink
// 1.20 wrote (stop-with-savepoint): the tail of its _metadata.
func recordedProperties(t testing.TB) []byte {
	t.Helper()
	dir := filepath.Join("testdata", "flink-1.20")
	sp, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, MetadataFile))
	if err != nil {
		t.Fatal(err)
	}
	return b[sp.propertiesAt:]
}
