package flinksavepoint

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mm2cutover/mm2cutover/errkind"
)

// MetadataFile is the name of the file that describes a savepoint, at the
// root of its directory.
const MetadataFile = "_metadata"

// SourceReaderState is the name of the operator list state in which every
// FLIP-27 source (KafkaSource among them) keeps its readers' splits.
const SourceReaderState = "SourceReaderState"

// The magic numbers of the metadata file and of a master state.
const (
	metadataMagic    = 0x4960672d
	masterStateMagic = int32(-0x3694e96a) // 0xc96b1696
)

// The handle types of MetadataV2V3SerializerBase.
const (
	handleNull                   = 0
	handleByteStream             = 1
	handleFile                   = 2
	handleKeyGroups              = 3
	handleOperatorState          = 4
	handleIncrementalKeyGroups   = 5
	handleRelativeFile           = 6
	handleSavepointKeyGroups     = 7
	handleChangelog              = 8
	handleChangelogBytes         = 9
	handleChangelogFile          = 10
	handleIncrementalKeyGroupsV2 = 11
	handleKeyGroupsV2            = 12
	handleChangelogFileV2        = 13
	handleChangelogV2            = 14
	handleSegmentFile            = 15
	handleEmptySegmentFile       = 16
	handleSegmentOperatorState   = 17
)

// The distribution modes of an operator list state (OperatorStateHandle.Mode).
const (
	modeSplitDistribute = 0
	modeUnion           = 1
	modeBroadcast       = 2
)

// maxHandleDepth bounds the nesting of state handles (changelog handles hold
// keyed handles, key-group handles hold stream handles).
const maxHandleDepth = 8

// Savepoint is the metadata of a Flink savepoint (or retained checkpoint), as
// Flink's MetadataV3 to V6 serializers write it: the checkpoint ID, the
// snapshot's properties and every operator's state handles. It reads the
// state of a KafkaSource on demand ([Savepoint.KafkaSource]). A Savepoint
// holds the inline state of the operators that have a SourceReaderState and
// the place of the others' files, never their contents.
type Savepoint struct {
	// Version is the metadata format version: 3 (Flink 1.11 to 1.16 and
	// later 1.x for checkpoints), 4 (Flink 1.17 to 1.20), 5 (2.0, 2.1) or 6
	// (2.2).
	Version int32
	// CheckpointID is the ID of the savepoint's checkpoint.
	CheckpointID int64
	// Properties say what kind of snapshot it is (from version 4).
	Properties Properties
	// Operators lists every operator state, in the metadata's order.
	Operators []Operator
	// MetadataSHA256 is the hex SHA-256 of the _metadata file.
	MetadataSHA256 string
	// Location is the savepoint directory as given to [Open] (absolute), or
	// the location given to [OpenFS].
	Location string

	fsys         fs.FS
	propertiesAt int64 // where the checkpoint properties start in _metadata
}

// Operator is one operator's entry in the metadata.
type Operator struct {
	// ID is the operator's ID: the hash of its uid when one was set
	// ([OperatorIDFromUID]).
	ID OperatorID
	// UID and Name are the operator's uid and name as recorded from metadata
	// version 5 (Flink 2.0) on; empty before, and for an operator without.
	UID, Name string
	// Parallelism and MaxParallelism are the operator's.
	Parallelism, MaxParallelism int
	// FullyFinished is true when every subtask had finished (a bounded
	// source that read to its end): no state is kept.
	FullyFinished bool
	// Subtasks is the number of subtask states recorded, FinishedSubtasks
	// those of them that had finished.
	Subtasks, FinishedSubtasks int
	// States names the operator's managed operator states (list, union and
	// broadcast states), sorted: a FLIP-27 source has SourceReaderState.
	States []string

	sources []subtaskSource // the SourceReaderState of each subtask that has one
}

func (o Operator) describe() string {
	var b strings.Builder
	b.WriteString(o.ID.String())
	switch {
	case o.UID != "" && o.Name != "":
		fmt.Fprintf(&b, " (uid %q, %q)", o.UID, o.Name)
	case o.UID != "":
		fmt.Fprintf(&b, " (uid %q)", o.UID)
	case o.Name != "":
		fmt.Fprintf(&b, " (%q)", o.Name)
	}
	return b.String()
}

// hasSource reports whether the operator keeps a SourceReaderState.
func (o Operator) hasSource() bool {
	return slices.Contains(o.States, SourceReaderState)
}

// subtaskSource is where one subtask's SourceReaderState lies.
type subtaskSource struct {
	subtask int
	mode    byte
	offsets []int64 // of the list's elements in the state stream
	stream  streamHandle
	in      string
}

// streamHandle is a StreamStateHandle: inline bytes or a file.
type streamHandle struct {
	kind byte
	data []byte // handleByteStream
	path string // handleFile (as written), handleRelativeFile (relative)
	size int64
}

// Open reads the metadata of the savepoint in dir: the savepoint directory
// (holding _metadata and the state files), its _metadata file, or either as
// a file: URI as Flink prints savepoint paths ("file:/tmp/sp/savepoint-1a2b").
// State files are read from the directory when a source's state is asked
// for. Errors are a [*FormatError], a [*VersionError], or an error matching
// [ErrMissingFile] when there is no such savepoint.
func Open(dir string) (*Savepoint, error) {
	local, err := localPath(dir)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(local)
	if err != nil {
		return nil, &FormatError{File: dir, Offset: -1, Detail: err.Error(), Err: ErrMissingFile}
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, &FormatError{File: dir, Offset: -1, Detail: "no such savepoint: " + pathErr(err), Err: ErrMissingFile}
	} else if !fi.IsDir() {
		if filepath.Base(abs) != MetadataFile {
			return nil, &FormatError{File: dir, Offset: -1, Detail: "neither a savepoint directory nor its " + MetadataFile + " file", Err: ErrMissingFile}
		}
		abs = filepath.Dir(abs)
	}
	return OpenFS(os.DirFS(abs), abs)
}

// OpenFS reads the metadata of the savepoint whose directory is the root of
// fsys. location is where that directory is, as an absolute path or file:
// URI: state handles that name a file by its absolute path are read from
// fsys when they lie under it ("" refuses every such handle with
// ErrMissingFile). It reads only _metadata; state files are read when a
// source's state is asked for. Errors as for [Open].
func OpenFS(fsys fs.FS, location string) (*Savepoint, error) {
	f, err := openRegular(fsys, MetadataFile)
	if err != nil {
		return nil, &FormatError{File: MetadataFile, Offset: -1, Detail: "no savepoint here: " + pathErr(err), Err: ErrMissingFile}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, &FormatError{File: MetadataFile, Offset: -1, Detail: pathErr(err), Err: ErrMissingFile}
	}
	h := sha256.New()
	d := newDecoder(io.TeeReader(f, h), fi.Size(), MetadataFile)
	sp := &Savepoint{Location: location, fsys: fsys}
	if err := sp.decode(d); err != nil {
		return nil, err
	}
	sp.MetadataSHA256 = hex.EncodeToString(h.Sum(nil))
	return sp, nil
}

// localPath turns a file: URI into a local path; other schemes are refused.
func localPath(p string) (string, error) {
	if !strings.Contains(p, ":") || filepath.IsAbs(p) {
		return p, nil
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme == "" || len(u.Scheme) == 1 { // "C:" is a drive, not a scheme
		return p, nil
	}
	if u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") {
		return "", &FormatError{File: p, Offset: -1, Detail: "not a local savepoint: copy it to a local directory and name that", Err: ErrMissingFile}
	}
	return filepath.FromSlash(u.Path), nil
}

func pathErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// decode reads the whole metadata file.
func (sp *Savepoint) decode(d *decoder) error {
	at := d.off
	magic := d.i32("magic number")
	if d.err == nil && magic != metadataMagic {
		d.fail(at, ErrNotSavepoint, "magic number %#08x, want %#08x: not a savepoint's %s", uint32(magic), metadataMagic, MetadataFile)
	}
	sp.Version = d.i32("metadata version")
	if d.err != nil {
		return d.err
	}
	if sp.Version < MinVersion || sp.Version > MaxVersion {
		return &VersionError{Version: sp.Version}
	}
	at = d.off
	sp.CheckpointID = d.i64("checkpoint id")
	if d.err == nil && sp.CheckpointID < 0 {
		d.fail(at, ErrMalformed, "negative checkpoint id %d", sp.CheckpointID)
	}
	d.in = "master states"
	masters := d.count("master state count", 8)
	for range masters {
		sp.masterState(d)
	}
	d.in = "operator states"
	n := d.count("operator state count", 16+8+1+4)
	for i := range n {
		if d.err != nil {
			break
		}
		sp.Operators = append(sp.Operators, sp.operator(d, i))
	}
	d.in = ""
	if sp.Version >= 4 {
		d.in = "checkpoint properties"
		sp.propertiesAt = d.off
		sp.Properties = properties(d)
	}
	d.atEnd(MetadataFile)
	return d.err
}

// masterState skips one master state (MASTER_STATE_MAGIC_NUMBER, a length,
// then version, name and bytes inside it).
func (sp *Savepoint) masterState(d *decoder) {
	at := d.off
	if m := d.i32("master state magic"); d.err == nil && m != masterStateMagic {
		d.fail(at, ErrMalformed, "master state magic %#08x, want 0xc96b1696", uint32(m))
		return
	}
	at = d.off
	n := d.i32("master state length")
	if d.err == nil && n <= 0 {
		d.fail(at, ErrMalformed, "master state length %d", n)
		return
	}
	end := d.off + int64(n)
	d.i32("master state version")
	d.utf("master state name")
	at = d.off
	m := d.i32("master state bytes")
	if d.err == nil && (m < 0 || d.off+int64(m) != end) {
		d.fail(at, ErrMalformed, "master state of %d bytes holds %d", n, m)
		return
	}
	d.skip(int64(m), "master state bytes")
}

func (sp *Savepoint) operator(d *decoder, i int) Operator {
	var o Operator
	d.in = fmt.Sprintf("operator %d", i)
	if sp.Version >= 5 {
		o.Name = d.utf("operator name")
		o.UID = d.utf("operator uid")
	}
	if !d.read(o.ID[:], "operator id") {
		return o
	}
	d.in = fmt.Sprintf("operator %d (%s)", i, o.ID)
	at := d.off
	par, maxPar := d.i32("parallelism"), d.i32("max parallelism")
	if d.err == nil && (par < 0 || maxPar < 0) {
		d.fail(at, ErrMalformed, "parallelism %d, max parallelism %d", par, maxPar)
	}
	o.Parallelism, o.MaxParallelism = int(par), int(maxPar)
	at = d.off
	coord := sp.streamHandle(d, 0, false)
	if d.err == nil && coord.kind != handleNull && coord.kind != handleByteStream {
		d.fail(at, ErrMalformed, "coordinator state in a handle of type %d, want inline bytes", coord.kind)
	}
	at = d.off
	subtasks := d.i32("subtask state count")
	if d.err != nil {
		return o
	}
	if subtasks < 0 {
		if coord.kind != handleNull {
			d.fail(at, ErrMalformed, "a fully finished operator with coordinator state")
		}
		o.FullyFinished = true
		return o
	}
	if int64(subtasks) > d.remaining()/4 {
		d.fail(at, ErrTruncated, "%d subtask states, %d bytes left", subtasks, d.remaining())
		return o
	}
	seen := make(map[int]bool, min(int(subtasks), 1024))
	for range subtasks {
		if d.err != nil {
			return o
		}
		at := d.off
		idx := d.i32("subtask index")
		finished := idx < 0
		if finished {
			idx = -idx - 1
		}
		if d.err == nil && (idx < 0 || seen[int(idx)] || (o.Parallelism > 0 && int(idx) >= o.Parallelism)) {
			d.fail(at, ErrMalformed, "subtask index %d (parallelism %d) repeated or out of range", idx, o.Parallelism)
			return o
		}
		seen[int(idx)] = true
		o.Subtasks++
		if finished {
			o.FinishedSubtasks++
			continue
		}
		d.in = fmt.Sprintf("operator %d (%s) subtask %d", i, o.ID, idx)
		sp.subtask(d, &o, int(idx))
	}
	slices.Sort(o.States)
	o.States = slices.Compact(o.States)
	return o
}

// subtask reads one OperatorSubtaskState.
func (sp *Savepoint) subtask(d *decoder, o *Operator, idx int) {
	in := d.in
	for _, raw := range []bool{false, true} {
		d.in = in + " managed operator state"
		if raw {
			d.in = in + " raw operator state"
		}
		at := d.off
		has := d.i32("operator state present")
		if d.err != nil {
			return
		}
		if has == 0 {
			continue
		}
		if has != 1 {
			d.fail(at, ErrMalformed, "operator state count %d, want 0 or 1", has)
			return
		}
		sp.operatorStateHandle(d, o, idx, raw)
	}
	d.in = in + " managed keyed state"
	sp.keyedHandle(d, 0)
	d.in = in + " raw keyed state"
	sp.keyedHandle(d, 0)
	d.in = in + " input channel state"
	sp.channelHandles(d)
	d.in = in + " output channel state"
	sp.channelHandles(d)
	d.in = in
}

// operatorStateHandle reads an OperatorStreamStateHandle (or its file-merging
// form): the state names with their offsets, then the stream holding them.
// The managed state of a source keeps the SourceReaderState's place.
func (sp *Savepoint) operatorStateHandle(d *decoder, o *Operator, idx int, raw bool) {
	at := d.off
	kind := d.u8("operator state handle type")
	if d.err != nil {
		return
	}
	switch kind {
	case handleNull:
		return
	case handleOperatorState, handleSegmentOperatorState:
	default:
		d.fail(at, ErrMalformed, "operator state handle of type %d", kind)
		return
	}
	var src *subtaskSource
	n := d.count("operator state names", 2+1+4)
	for range n {
		if d.err != nil {
			return
		}
		name := d.utf("state name")
		at := d.off
		mode := d.u8("distribution mode")
		if d.err == nil && mode > modeBroadcast {
			d.fail(at, ErrMalformed, "state %q: distribution mode %d", name, mode)
			return
		}
		keep := !raw && name == SourceReaderState
		m := d.count("state offsets", 8)
		var offs []int64
		if keep {
			offs = make([]int64, 0, min(m, 1<<16))
			for range m {
				offs = append(offs, d.i64("state offset"))
			}
			src = &subtaskSource{subtask: idx, mode: mode, offsets: offs, in: d.in}
		} else {
			d.skip(int64(m)*8, "state offsets")
		}
		if !raw {
			o.States = append(o.States, name)
		}
	}
	if kind == handleSegmentOperatorState {
		d.utf("task-owned directory")
		d.utf("shared directory")
		d.boolean("empty")
	}
	stream := sp.streamHandle(d, 0, src != nil)
	if d.err != nil || src == nil {
		return
	}
	src.stream = stream
	o.sources = append(o.sources, *src)
}

// streamHandle reads a StreamStateHandle; keep keeps inline bytes (else they
// are skipped).
func (sp *Savepoint) streamHandle(d *decoder, depth int, keep bool) streamHandle {
	at := d.off
	var h streamHandle
	h.kind = d.u8("stream handle type")
	if d.err != nil {
		return h
	}
	if depth > maxHandleDepth {
		d.fail(at, ErrMalformed, "state handles nested deeper than %d", maxHandleDepth)
		return h
	}
	switch h.kind {
	case handleNull, handleEmptySegmentFile:
	case handleByteStream:
		d.utf("handle name")
		at := d.off
		n := d.i32("inline state length")
		if d.err == nil && n < 0 {
			d.fail(at, ErrMalformed, "inline state length %d", n)
			return h
		}
		h.size = int64(n)
		if keep {
			h.data = d.bytes(int64(n), "inline state")
		} else {
			d.skip(int64(n), "inline state")
		}
	case handleFile:
		h.size = d.i64("state file size")
		h.path = d.utf("state file path")
	case handleRelativeFile:
		h.path = d.utf("state file relative path")
		h.size = d.i64("state file size")
	case handleKeyGroups:
		d.i32("start key group")
		n := d.count("key group offsets", 8)
		d.skip(int64(n)*8, "key group offsets")
		sp.streamHandle(d, depth+1, false)
	case handleSegmentFile:
		d.i64("segment start")
		h.size = d.i64("segment size")
		d.i32("segment scope")
		h.path = d.utf("segment file path")
		d.utf("logical file id")
	default:
		d.fail(at, ErrMalformed, "stream state handle of type %d", h.kind)
	}
	if d.err == nil && h.size < 0 {
		d.fail(at, ErrMalformed, "state size %d", h.size)
	}
	return h
}

// keyedHandle skips a KeyedStateHandle of any kind Flink 1.11 to 2.2 writes.
func (sp *Savepoint) keyedHandle(d *decoder, depth int) {
	at := d.off
	kind := d.u8("keyed state handle type")
	if d.err != nil {
		return
	}
	if depth > maxHandleDepth {
		d.fail(at, ErrMalformed, "keyed state handles nested deeper than %d", maxHandleDepth)
		return
	}
	keyGroups := func() {
		d.i32("start key group")
		d.i32("key group count")
	}
	switch kind {
	case handleNull:
	case handleKeyGroups, handleKeyGroupsV2, handleSavepointKeyGroups:
		d.i32("start key group")
		n := d.count("key group offsets", 8)
		d.skip(int64(n)*8, "key group offsets")
		sp.streamHandle(d, depth+1, false)
		if kind == handleKeyGroupsV2 {
			d.utf("state handle id")
		}
	case handleIncrementalKeyGroups, handleIncrementalKeyGroupsV2:
		d.i64("checkpoint id")
		d.utf("backend id")
		keyGroups()
		if kind == handleIncrementalKeyGroupsV2 {
			d.i64("checkpointed size")
		}
		sp.streamHandle(d, depth+1, false)
		for range 2 { // shared, then private state
			n := d.count("state files", 3)
			for range n {
				if d.err != nil {
					return
				}
				d.utf("local path")
				sp.streamHandle(d, depth+1, false)
			}
		}
		if kind == handleIncrementalKeyGroupsV2 {
			d.utf("state handle id")
		}
	case handleChangelog, handleChangelogV2:
		keyGroups()
		d.i64("checkpointed size")
		for range 2 { // materialized, then non-materialized
			n := d.count("changelog handles", 1)
			for range n {
				if d.err != nil {
					return
				}
				sp.keyedHandle(d, depth+1)
			}
		}
		d.i64("materialization id")
		if kind == handleChangelogV2 {
			d.i64("checkpoint id")
		}
		d.utf("state handle id")
	case handleChangelogBytes:
		keyGroups()
		d.i64("from")
		d.i64("to")
		n := d.count("state changes", 8)
		for range n {
			if d.err != nil {
				return
			}
			d.i32("key group")
			m := d.i32("change length")
			d.skip(int64(m), "change")
		}
		d.utf("state handle id")
	case handleChangelogFile, handleChangelogFileV2:
		keyGroups()
		n := d.count("changelog files", 9)
		for range n {
			if d.err != nil {
				return
			}
			d.i64("offset")
			sp.streamHandle(d, depth+1, false)
		}
		d.i64("size")
		d.i64("checkpointed size")
		d.utf("state handle id")
		if kind == handleChangelogFileV2 {
			d.utf("storage identifier")
		}
	default:
		d.fail(at, ErrMalformed, "keyed state handle of type %d", kind)
	}
}

// channelHandles skips a collection of unaligned-checkpoint channel state
// handles: version 3 to 5 write each as subtask, channel info, offsets, size
// and stream; version 6 first writes a type, and merged handles.
func (sp *Savepoint) channelHandles(d *decoder) {
	n := d.count("channel state handles", 4)
	for range n {
		if d.err != nil {
			return
		}
		at := d.off
		kind := byte(1)
		if sp.Version >= 6 {
			kind = d.u8("channel state handle type")
		}
		switch kind {
		case 1, 2: // input channel, result subpartition
			d.i32("subtask index")
			d.i32("gate or partition index")
			d.i32("channel or subpartition index")
			m := d.count("channel offsets", 8)
			d.skip(int64(m)*8, "channel offsets")
			d.i64("state size")
			sp.streamHandle(d, 1, false)
		case 3, 4: // merged input channels, merged result subpartitions
			d.i32("subtask index")
			d.i64("state size")
			sp.streamHandle(d, 1, false)
			m := d.i32("channel offsets length")
			d.skip(int64(m), "channel offsets")
		default:
			d.fail(at, ErrMalformed, "channel state handle of type %d", kind)
		}
	}
}

// openStateFile opens the file of a state handle in the savepoint directory.
func (sp *Savepoint) openStateFile(h streamHandle, in string) (fs.File, string, error) {
	name := h.path
	missing := func(detail string) error {
		return &FormatError{File: h.path, Offset: -1, In: in, Detail: detail, Err: ErrMissingFile}
	}
	if h.kind == handleFile {
		rel, ok := sp.relative(h.path)
		if !ok {
			return nil, h.path, missing("the state file is outside the savepoint directory " + sp.Location)
		}
		name = rel
	}
	if !fs.ValidPath(name) || name == "." {
		return nil, h.path, missing("not a file in the savepoint directory")
	}
	f, err := openRegular(sp.fsys, name)
	if err != nil {
		return nil, name, missing(pathErr(err))
	}
	return f, name, nil
}

// errNotRegular is the error of openRegular for a file that is not a
// regular file.
var errNotRegular = errkind.New(errkind.Rejected, "flinksavepoint: not a regular file (a named pipe, a device?)")

// openRegular opens name in fsys if it is a regular file. A savepoint's
// files are: a named pipe in their place would block the open until a
// writer came, for ever, and a device such as /dev/zero would never end.
func openRegular(fsys fs.FS, name string) (fs.File, error) {
	fi, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errNotRegular}
	}
	return fsys.Open(name)
}

// relative maps an absolute state file path to one inside the savepoint
// directory.
func (sp *Savepoint) relative(p string) (string, bool) {
	if sp.Location == "" {
		return "", false
	}
	local, err := localPath(p)
	if err != nil {
		return "", false
	}
	root, err := localPath(sp.Location)
	if err != nil {
		return "", false
	}
	local, root = path.Clean(filepath.ToSlash(local)), path.Clean(filepath.ToSlash(root))
	rel, ok := strings.CutPrefix(local, root+"/")
	return rel, ok && fs.ValidPath(rel)
}
