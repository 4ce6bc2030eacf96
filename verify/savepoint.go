package verify

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mm2cutover/mm2cutover/flinksavepoint"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// FlinkSavepoint is a Flink job's final savepoint as an OffsetsInput: the
// positions of its KafkaSource (package flinksavepoint), each the next
// offset to read, exact where the group's commits may lag them by Flink's
// last commit. It is also what Precheck compares a group with
// (PrecheckSpec.Savepoint). Make one with OpenFlinkSavepoint or
// FlinkSavepointOfPlan; it reads the savepoint again on every Read.
type FlinkSavepoint struct {
	dir, uid string
	sp       *flinksavepoint.Savepoint
	src      *flinksavepoint.Source
}

// OpenFlinkSavepoint reads the savepoint in dir (a local directory, its
// _metadata, or a file: URI) and the splits of the KafkaSource with operator
// uid ("" for the savepoint's only source). Errors are those of
// flinksavepoint.Open and Savepoint.KafkaSource, all matching
// flinksavepoint.ErrInvalid.
func OpenFlinkSavepoint(dir, uid string) (*FlinkSavepoint, error) {
	f := &FlinkSavepoint{dir: dir, uid: uid}
	if err := f.read(); err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(f.sp.Location); err == nil {
		f.dir = abs
	}
	return f, nil
}

func (f *FlinkSavepoint) read() error {
	sp, err := flinksavepoint.Open(f.dir)
	if err != nil {
		return err
	}
	src, err := sp.KafkaSource(f.uid)
	if err != nil {
		return err
	}
	f.sp, f.src = sp, src
	return nil
}

// Savepoint returns the savepoint as last read.
func (f *FlinkSavepoint) Savepoint() *flinksavepoint.Savepoint { return f.sp }

// KafkaSource returns the source's splits as last read.
func (f *FlinkSavepoint) KafkaSource() *flinksavepoint.Source { return f.src }

// Source records the savepoint in the plan: its directory, the source's uid
// and operator ID, the checkpoint and the SHA-256 of its _metadata, as last
// read, e.g. dir="/sp/savepoint-1a2b" uid="kafka-source" operator=61252f…
// checkpoint=12 metadata=sha256:…
func (f *FlinkSavepoint) Source() plan.OffsetsSource {
	ref := fmt.Sprintf("dir=%s uid=%s operator=%s checkpoint=%d metadata=sha256:%s",
		strconv.Quote(f.dir), strconv.Quote(f.uid), f.src.Operator.ID, f.sp.CheckpointID, f.sp.MetadataSHA256)
	return plan.OffsetsSource{Kind: plan.FromFlinkSavepoint, Ref: ref}
}

// Read reads the savepoint again and returns the source's positions
// (flinksavepoint.Source.Positions): splits that have not read a record are
// absent.
func (f *FlinkSavepoint) Read(context.Context) (offsets.GroupOffsets, error) {
	if err := f.read(); err != nil {
		return nil, err
	}
	return f.src.Positions(), nil
}

// FlinkSavepointOfPlan opens the savepoint a plan from a Flink savepoint
// (plan.FromFlinkSavepoint) records in its offsets source, for the re-checks
// before each later step. Errors: a plan of another kind, or a reference it
// cannot parse, match plan.ErrInvalidField; otherwise those of
// OpenFlinkSavepoint.
func FlinkSavepointOfPlan(p *plan.Plan) (*FlinkSavepoint, error) {
	from := p.OffsetsFrom
	bad := func(detail string) error {
		return &plan.FieldError{Field: "offsets_from", Err: plan.ErrInvalidField, Detail: detail}
	}
	if from.Kind != plan.FromFlinkSavepoint {
		return nil, bad("the plan's offsets are from " + from.String() + ", not a flink savepoint")
	}
	dir, rest, ok := unquotedField(from.Ref, "dir=")
	if !ok {
		return nil, bad("no dir in the savepoint reference " + strconv.Quote(from.Ref))
	}
	uid, _, ok := unquotedField(strings.TrimLeft(rest, " "), "uid=")
	if !ok {
		return nil, bad("no uid in the savepoint reference " + strconv.Quote(from.Ref))
	}
	return OpenFlinkSavepoint(dir, uid)
}

// unquotedField reads name followed by a Go-quoted string at the start of s.
func unquotedField(s, name string) (value, rest string, ok bool) {
	s, ok = strings.CutPrefix(s, name)
	if !ok {
		return "", "", false
	}
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", "", false
	}
	v, err := strconv.Unquote(q)
	return v, s[len(q):], err == nil
}

// checkSavepoint compares the group's commits with the savepoint's
// positions on the partitions in scope (flinksavepoint.Compare), as the
// design asks: a group ahead of the savepoint, or with commits the savepoint
// cannot vouch for, fails; behind it costs duplicates. asInput says the plan
// is built from the savepoint: a group behind it or without commits is then
// expected (Flink loses its last commit), and the records it lags by are not
// copied again.
func checkSavepoint(cs *Checks, f *FlinkSavepoint, group string, committed offsets.GroupOffsets, scope []offsets.SourcePartition, asInput bool) {
	const name = "group-vs-savepoint"
	c := flinksavepoint.Compare(committed, f.src, scope)
	where := fmt.Sprintf("savepoint %s (checkpoint %d, source %s)", f.dir, f.sp.CheckpointID, f.src.Operator.ID)
	if !f.sp.Properties.Stopped() {
		cs.add(name, Warn, "%s is not the savepoint of a stop-with-savepoint (%s): the job may have run on after it; use the savepoint `flink stop` wrote", where, orKind(f.sp.Properties))
	}
	if len(c.Ahead) > 0 {
		cs.add(name, Fail, "group %s is ahead of %s on %d partitions (%s): the job ran on after this savepoint, or it is not its last one; give the final savepoint",
			group, where, len(c.Ahead), gapList(c.Ahead, "group %[1]s > savepoint %[2]d"))
	}
	if len(c.Unknown) > 0 {
		cs.add(name, Fail, "group %s has commits %s cannot vouch for on %d partitions (%s): they are not this source's",
			group, where, len(c.Unknown), gapList(c.Unknown, "group %[1]s: %[3]s"))
	}
	switch {
	case len(c.Missing) > 0 && asInput:
		cs.add(name, Pass, "group %s has no commit on %d partitions the savepoint has positions for (%s): the plan takes them from the savepoint",
			group, len(c.Missing), gapList(c.Missing, "savepoint %[2]d"))
	case len(c.Missing) > 0:
		cs.add(name, Fail, "group %s has no commit on %d partitions %s has positions for (%s): plan from the savepoint (its positions as the offsets input: OpenFlinkSavepoint)",
			group, len(c.Missing), where, gapList(c.Missing, "savepoint %[2]d"))
	}
	switch {
	case len(c.Behind) > 0 && asInput:
		cs.add(name, Pass, "group %s lags %s by %d records on %d partitions (%s): Flink lost its last commit; planned from the savepoint, MM2 copies none of them again",
			group, where, c.Duplicates(), len(c.Behind), gapList(c.Behind, "group %[1]s, savepoint %[2]d"))
	case len(c.Behind) > 0:
		cs.add(name, Warn, "group %s lags %s by %d records on %d partitions (%s): MM2 will copy those %d records again; planning from the savepoint (OpenFlinkSavepoint) avoids them",
			group, where, c.Duplicates(), len(c.Behind), gapList(c.Behind, "group %[1]s, savepoint %[2]d"), c.Duplicates())
	}
	if c.Consistent() && len(c.Behind) == 0 && len(c.Missing) == 0 {
		cs.add(name, Pass, "group %s equals %s on all %d partitions", group, where, len(scope))
	}
	if unread := unreadIn(f.src, scope); len(unread) > 0 {
		cs.add("savepoint-unread", Warn, "%d partitions in scope have no position in %s (%s): the source never read a record from them; their plan entries block until it has",
			len(unread), where, listSome(unread, 5))
	}
}

func orKind(p flinksavepoint.Properties) string {
	if p.Type == "" {
		return "metadata version 3 does not say"
	}
	return p.Type
}

// gapList lists gaps as "orders-3 (group 10, savepoint 12: 2 records)";
// format takes the group offset, the savepoint's position and the detail.
func gapList(gaps []flinksavepoint.Gap, format string) string {
	items := make([]string, 0, len(gaps))
	for _, g := range gaps {
		item := g.Partition.String() + " (" + fmt.Sprintf(format, g.Group, g.Savepoint, g.Detail)
		if n := g.Records(); n > 0 {
			item += fmt.Sprintf(": %d records", n)
		}
		items = append(items, item+")")
	}
	return listSome(items, 5)
}

// unreadIn lists the partitions of scope without a position in src.
func unreadIn(src *flinksavepoint.Source, scope []offsets.SourcePartition) []string {
	var out []string
	for _, p := range scope {
		s, ok := src.Split(p)
		switch {
		case !ok:
			out = append(out, p.String()+" (no split)")
		case s.StartingOffset < 0:
			out = append(out, p.String()+" (starts at the "+s.Marker()+" offset)")
		}
	}
	slices.Sort(out)
	return out
}
