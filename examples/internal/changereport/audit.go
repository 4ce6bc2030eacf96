package changereport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mm2cutover/mm2cutover/plan"
)

// Entry is one line of the audit file the cutover command writes
// (app.Audit.Record): when, which step, the connector, the plan's
// fingerprint, and the step's detail, kept as JSON until a section decodes
// the shape it knows.
type Entry struct {
	At          time.Time       `json:"at"`
	Step        string          `json:"step"`
	Connector   string          `json:"connector"`
	Fingerprint string          `json:"plan_fingerprint,omitempty"`
	Detail      json.RawMessage `json:"detail,omitempty"`
	// Line is the entry's line in the file, from 1; not in the file.
	Line int `json:"-"`
}

// ErrAudit matches an audit file that cannot be read as one: a line that
// is not a JSON object with "at" and "step", or a detail of a known step
// that does not have that step's shape.
var ErrAudit = errors.New("not an audit file")

// maxLine bounds one audit line: a backup of 10,000 partitions' offsets is
// about a megabyte.
const maxLine = 256 << 20

// ReadAudit reads an audit file: one JSON object per line, blank lines
// skipped. An error names the line and matches [ErrAudit], or is r's.
func ReadAudit(r io.Reader) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, maxLine)
	n := 0
	for sc.Scan() {
		n++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(b, &e); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrAudit, n, err)
		}
		if e.Step == "" || e.At.IsZero() {
			return nil, fmt.Errorf("%w: line %d: no step or no time", ErrAudit, n)
		}
		e.Line = n
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Select returns, in file order, the entries of the cutover of p: every
// entry with p's fingerprint; the precheck that made the plan (the last
// "precheck" entry of p's connector, without a fingerprint, just before
// the first entry of p); and the entries of the reverse plan a rollback
// after resume of p wrote (the "rollback-plan" entry after p's
// "rollback-backup" names it). It also returns how many entries it left
// out: those of other plans, or of none.
func Select(p *plan.Plan, all []Entry) (mine []Entry, others int) {
	first := -1
	for i, e := range all {
		if e.Fingerprint == p.Fingerprint {
			first = i
			break
		}
	}
	if first < 0 {
		return nil, len(all)
	}
	keep := make([]bool, len(all))
	for i := first - 1; i >= 0 && all[i].Fingerprint == ""; i-- {
		if all[i].Step == "precheck" && all[i].Connector == p.ConnectorName {
			keep[i] = true
			break
		}
	}
	fps := map[string]bool{p.Fingerprint: true}
	reverseNext := false
	for i := first; i < len(all); i++ {
		e := all[i]
		switch {
		case fps[e.Fingerprint]:
			keep[i] = true
		case reverseNext && e.Step == "rollback-plan" && e.Fingerprint != "" && e.Connector == p.ConnectorName:
			fps[e.Fingerprint], keep[i] = true, true
		default:
			continue
		}
		if e.Step == "rollback-backup" {
			reverseNext = true
		} else if e.Step == "rollback-plan" {
			reverseNext = false
		}
	}
	for i, k := range keep {
		if k {
			mine = append(mine, all[i])
		}
	}
	return mine, len(all) - len(mine)
}
