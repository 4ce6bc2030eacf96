// Package changereport writes the record of a cutover to attach to the
// change: a self-contained HTML page (inline style and SVG, no script,
// nothing loaded from anywhere) and Markdown for tickets. Both say, in the
// order of the cutover, what the plan decided, what the precheck found,
// what the apply wrote and read back, the boundary of every partition,
// the lag converging after resume, the acceptance checks and the timeline
// of the steps, under a verdict at the top.
//
// It is pure: [New] takes the decoded plan and the audit file's entries
// ([ReadAudit]) and reads no cluster and no clock, so the same files give
// the same bytes. Every string taken from the files is escaped for its
// output (html/template for HTML), and control and bidirectional
// formatting characters are shown as escapes. A connector configuration
// is shown only through redact.Config; of the audit's details it takes only
// the fields it knows (counts, offsets, states, check results, the tool's
// own messages), never a configuration.
package changereport

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/mm2cutover/mm2cutover/cutover"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/redact"
	"github.com/mm2cutover/mm2cutover/verify"
)

// Outcome is the verdict of a cutover as its record shows it.
type Outcome string

// The outcomes, from the last entries of the audit.
const (
	// Passed: the verification after resume passed.
	Passed Outcome = "passed"
	// Failed: the verification after resume failed, or the last step was
	// refused or a write failed.
	Failed Outcome = "failed"
	// RolledBack: a rollback ended the cutover.
	RolledBack Outcome = "rolled back"
	// Incomplete: no verification after resume yet, and nothing failed.
	Incomplete Outcome = "not complete"
)

// Verdict is what the record says at its top: the outcome and why.
type Verdict struct {
	Outcome Outcome  `json:"outcome"`
	Reasons []string `json:"reasons"`
}

// Report is the record of one cutover: the plan and its entries in the
// audit, digested for the page. Make it with [New]; write it with
// [Report.WriteHTML] and [Report.WriteMarkdown].
type Report struct {
	v *view
}

// Verdict returns the record's verdict.
func (r *Report) Verdict() Verdict { return r.v.Verdict }

// view is what the page and the Markdown show: every string in it is
// taken through visible.
type view struct {
	Title       string
	Connector   string
	Fingerprint string
	Verdict     Verdict
	Plan        planView
	Precheck    *checksView
	Apply       applyView
	Resume      resumeView
	Verify      *verifyView
	Partitions  []partitionRow
	Timeline    []timelineRow
	// From and To are the times of the first and the last entry of the
	// cutover, Took the time between them; "" without entries.
	From, To, Took string
	// Others counts the audit entries of other plans, left out.
	Others int
}

type planView struct {
	CreatedAt, ToolVersion       string
	SourceCluster, TargetCluster string
	SourceAlias, Group, Policy   string
	OffsetsFrom, Savepoint       string
	ConfigDigest                 string
	Partitions, Topics           int
	Set, Clear, Blocked          int
	Accepted                     []string
	Config                       []keyValue
	Applicable                   bool
}

type keyValue struct{ Key, Value string }

type checksView struct {
	At                   string
	Checks               []checkRow
	OK, Warned, Failures int
}

type checkRow struct{ Name, Status, Detail, Class string }

type applyView struct {
	Ran               bool
	Created           string // when created, "" when adopted or not run
	Backup            int    // offsets held before the PATCH; -1 when not recorded
	Patched           string // when the PATCH was answered
	PatchedPartitions int
	ReadBack          string // the last read-back, in words
	ReadBackAt        string
	ReadBackOK        bool
	ReadBackRan       bool
}

type resumeView struct {
	CapturedAt     string
	Captured, Idle int
	ResumedAt      string
}

type verifyView struct {
	At, State               string
	OK, CaughtUp            bool
	Duplicates              int64
	Acceptance              []checkRow
	Lag                     []lagPoint
	LagTimed                bool
	LagFirst, LagLast       int64
	LagSpan                 string // first to last sample, "" without times
	Chart                   chart
	BoundaryKnown, Captured bool
}

type lagPoint struct {
	Seconds float64 // since the first sample, or the sample's index
	Total   int64
	At      string // "" without times
}

type partitionRow struct {
	Partition, Action, C, M, TargetEnd string
	Captured, Target, Result, Class    string
	Reason                             string
}

type timelineRow struct {
	At, Since, Step, What, Class string
}

// New makes the record of the cutover of p from the audit's entries (all
// of them: [Select] picks p's). Its error matches [ErrAudit] when an entry
// of p has a detail that is not its step's shape.
func New(p *plan.Plan, all []Entry) (*Report, error) {
	mine, others := Select(p, all)
	r := &view{
		Title:       "Cutover of " + visible(p.ConnectorName) + " to MirrorMaker 2",
		Connector:   visible(p.ConnectorName),
		Fingerprint: visible(p.Fingerprint),
		Others:      others,
		Plan:        newPlanView(p),
		Apply:       applyView{Backup: -1},
	}
	boundary := map[offsets.SourcePartition]verify.BoundaryRecord{}
	var checked map[offsets.SourcePartition]verify.Boundary
	var start time.Time
	if len(mine) > 0 {
		start = mine[0].At
	}
	var lastProblem string
	var rollback string
	for _, e := range mine {
		what, class := "", ""
		switch e.Step {
		case "precheck":
			var d struct {
				OK     bool          `json:"ok"`
				Checks verify.Checks `json:"checks"`
			}
			if err := decode(e, &d); err != nil {
				return nil, err
			}
			r.Precheck = newChecks(e.At, d.Checks)
			what = fmt.Sprintf("%d checks: %d ok, %d warnings, %d failed", len(d.Checks), r.Precheck.OK, r.Precheck.Warned, r.Precheck.Failures)
			if r.Precheck.Failures > 0 {
				class = "fail"
			}
		case "plan":
			var d struct {
				Partitions int  `json:"partitions"`
				Applicable bool `json:"applicable"`
			}
			if err := decode(e, &d); err != nil {
				return nil, err
			}
			what = fmt.Sprintf("plan of %d partitions written", d.Partitions)
			if !d.Applicable {
				what, class = what+"; blocked", "fail"
			}
		case "intent":
			var d struct {
				Write string `json:"write"`
			}
			if err := decode(e, &d); err != nil {
				return nil, err
			}
			what = "about to " + intentWords(visible(d.Write))
		case "create":
			r.Apply.Ran, r.Apply.Created = true, stamp(e.At)
			what = "created the connector STOPPED with the plan's configuration"
		case "backup":
			var d struct {
				Offsets []json.RawMessage `json:"offsets"`
			}
			if err := decode(e, &d); err != nil {
				return nil, err
			}
			r.Apply.Ran, r.Apply.Backup = true, len(d.Offsets)
			what = fmt.Sprintf("backed up the %d offsets the connector held", len(d.Offsets))
		case "patch":
			var d struct {
				Partitions int `json:"partitions"`
			}
			if err := decode(e, &d); err != nil {
				return nil, err
			}
			r.Apply.Patched, r.Apply.PatchedPartitions = stamp(e.At), d.Partitions
			what = fmt.Sprintf("PATCH answered: the offsets of %d partitions written", d.Partitions)
		case "read-back":
			var d struct {
				OK      bool   `json:"ok"`
				Summary string `json:"summary"`
			}
			if err := decode(e, &d); err != nil {
				return nil, err
			}
			r.Apply.setReadBack(e.At, d.OK, visible(d.Summary))
			what, class = "read-back: "+visible(d.Summary), okClass(d.OK)
		case cutover.BoundaryCaptureStep:
			var recs []verify.BoundaryRecord
			if err := decode(e, &recs); err != nil {
				return nil, err
			}
			r.Resume = resumeView{CapturedAt: stamp(e.At), Captured: len(recs), ResumedAt: r.Resume.ResumedAt}
			clear(boundary)
			for _, b := range recs {
				boundary[b.Partition] = b
				if b.Idle {
					r.Resume.Idle++
				}
			}
			what = fmt.Sprintf("captured the first record at C of %d partitions (%d idle)", len(recs), r.Resume.Idle)
		case "resume":
			r.Resume.ResumedAt = stamp(e.At)
			what = "resumed the connector"
		case "verify":
			v, b, err := decodeVerify(e)
			if err != nil {
				return nil, err
			}
			if v.State == "STOPPED" {
				r.Apply.setReadBack(e.At, v.OK, v.readBack)
				what, class = "read-back before resume: "+v.readBack, okClass(v.OK)
				break
			}
			r.Verify, checked = &v.verifyView, b
			what, class = fmt.Sprintf("verification after resume: connector %s, %s", v.State, passWord(v.OK)), okClass(v.OK)
		case "status":
			var d struct {
				Exists   bool   `json:"exists"`
				State    string `json:"state"`
				TotalLag int64  `json:"total_lag"`
			}
			if err := decode(e, &d); err != nil {
				return nil, err
			}
			what = "status: the connector does not exist"
			if d.Exists {
				what = fmt.Sprintf("status: connector %s, total lag %d", visible(d.State), d.TotalLag)
			}
		case "refuse":
			var d struct {
				Step   string `json:"step"`
				Reason string `json:"reason"`
			}
			if err := decode(e, &d); err != nil {
				return nil, err
			}
			what, class = visible(d.Step)+" refused: "+visible(d.Reason), "fail"
			lastProblem = what
		case "failed":
			var d struct {
				Write string `json:"write"`
				Error string `json:"error"`
			}
			if err := decode(e, &d); err != nil {
				return nil, err
			}
			what, class = "the "+visible(d.Write)+" failed: "+visible(d.Error), "fail"
			lastProblem = what
		case "rollback-backup":
			var d struct {
				Offsets []json.RawMessage `json:"offsets"`
			}
			if err := decode(e, &d); err != nil {
				return nil, err
			}
			what = fmt.Sprintf("rollback: read the %d offsets the connector held", len(d.Offsets))
		case "rollback-plan":
			var d struct {
				Group      string `json:"group"`
				Partitions int    `json:"partitions"`
			}
			if err := decode(e, &d); err != nil {
				return nil, err
			}
			what = fmt.Sprintf("rollback: reverse plan %s for group %s, %d partitions", visible(e.Fingerprint), visible(d.Group), d.Partitions)
		case "delete", "stop", "commit":
			what = writeWords(e.Step)
		case "rollback":
			var d struct {
				Phase     string `json:"phase"`
				Group     string `json:"group"`
				Committed int    `json:"committed"`
			}
			if err := decode(e, &d); err != nil {
				return nil, err
			}
			rollback = "rolled back " + visible(d.Phase) + " at " + stamp(e.At)
			if d.Group != "" {
				rollback += fmt.Sprintf(": group %s committed at C' = M'+1 on %d partitions", visible(d.Group), d.Committed)
			}
			what, class = rollback, "warn"
		}
		if progress[e.Step] && class != "fail" {
			// The cutover went on: the problem before was dealt with.
			lastProblem = ""
		}
		r.Timeline = append(r.Timeline, timelineRow{At: stamp(e.At), Since: since(e.At.Sub(start)), Step: visible(e.Step), What: what, Class: class})
	}
	if n := len(mine); n > 0 {
		r.From, r.To, r.Took = stamp(mine[0].At), stamp(mine[n-1].At), duration(mine[n-1].At.Sub(mine[0].At))
	}
	r.Partitions = partitionRows(p, boundary, checked)
	r.Verdict = verdict(p, r, rollback, lastProblem, len(mine) > 0)
	return &Report{v: r}, nil
}

// progress are the steps that, done, mean the cutover went on past a
// refusal or a failed write before them.
var progress = map[string]bool{"create": true, "backup": true, "patch": true, "read-back": true,
	cutover.BoundaryCaptureStep: true, "resume": true, "verify": true, "rollback": true}

// decode decodes e's detail into v; an error matches ErrAudit.
func decode(e Entry, v any) error {
	if len(e.Detail) == 0 {
		return nil
	}
	if err := json.Unmarshal(e.Detail, v); err != nil {
		return fmt.Errorf("%w: line %d: the %s entry: %v", ErrAudit, e.Line, visible(e.Step), err)
	}
	return nil
}

type verifyEntry struct {
	verifyView
	readBack string
}

// decodeVerify decodes a verify entry: before resume, the read-back; after,
// the verification's state, boundary, lag and acceptance checks. Older
// entries have lag totals without times and no boundary.
func decodeVerify(e Entry) (verifyEntry, map[offsets.SourcePartition]verify.Boundary, error) {
	var d struct {
		State      string             `json:"state"`
		OK         bool               `json:"ok"`
		Read       *bool              `json:"read"`
		ReadBack   string             `json:"read_back"`
		Duplicates int64              `json:"expected_duplicates"`
		Samples    []int64            `json:"lag_samples"`
		Lag        []verify.LagSample `json:"lag"`
		CaughtUp   *bool              `json:"caught_up"`
		Acceptance verify.Checks      `json:"acceptance"`
		Boundary   []verify.Boundary  `json:"boundary"`
		Captured   bool               `json:"boundary_captured"`
	}
	if err := decode(e, &d); err != nil {
		return verifyEntry{}, nil, err
	}
	v := verifyEntry{readBack: visible(d.ReadBack)}
	v.At, v.State, v.OK, v.Duplicates = stamp(e.At), visible(d.State), d.OK, d.Duplicates
	v.BoundaryKnown, v.Captured = d.Boundary != nil, d.Captured
	for _, c := range d.Acceptance {
		v.Acceptance = append(v.Acceptance, newCheck(c))
	}
	switch {
	case len(d.Lag) > 0:
		v.LagTimed = true
		for _, s := range d.Lag {
			v.Lag = append(v.Lag, lagPoint{Seconds: s.At.Sub(d.Lag[0].At).Seconds(), Total: s.Total, At: stamp(s.At)})
		}
		v.LagSpan = duration(d.Lag[len(d.Lag)-1].At.Sub(d.Lag[0].At))
	default:
		for i, t := range d.Samples {
			v.Lag = append(v.Lag, lagPoint{Seconds: float64(i), Total: t})
		}
	}
	if n := len(v.Lag); n > 0 {
		v.LagFirst, v.LagLast = v.Lag[0].Total, v.Lag[n-1].Total
	}
	// An entry from before caught_up was recorded: ok implies it.
	v.CaughtUp = d.OK
	if d.CaughtUp != nil {
		v.CaughtUp = *d.CaughtUp
	}
	v.Chart = newChart(v.Lag, v.LagTimed)
	var b map[offsets.SourcePartition]verify.Boundary
	if d.Boundary != nil {
		b = make(map[offsets.SourcePartition]verify.Boundary, len(d.Boundary))
		for _, x := range d.Boundary {
			b[x.Partition] = x
		}
	}
	return v, b, nil
}

func (a *applyView) setReadBack(at time.Time, ok bool, summary string) {
	a.ReadBackRan, a.ReadBackAt, a.ReadBackOK, a.ReadBack = true, stamp(at), ok, summary
}

func newPlanView(p *plan.Plan) planView {
	v := planView{
		CreatedAt:     stamp(p.CreatedAt),
		ToolVersion:   visible(p.ToolVersion),
		SourceCluster: visible(p.SourceClusterID),
		TargetCluster: visible(p.TargetClusterID),
		SourceAlias:   visible(p.SourceAlias),
		Group:         visible(p.GroupID),
		OffsetsFrom:   visible(p.OffsetsFrom.String()),
		Savepoint:     visible(p.Savepoint),
		ConfigDigest:  visible(p.ConfigDigest),
		Partitions:    len(p.Entries),
		Applicable:    p.Applicable(),
		Policy:        visible(string(cmp.Or(p.ReplicationPolicy.Kind, offsets.IdentityPolicy))),
	}
	if p.ReplicationPolicy.Kind == offsets.DefaultPolicy {
		v.Policy += " (target topics " + visible(p.ReplicationPolicy.SourceAlias) + visible(cmp.Or(p.ReplicationPolicy.Separator, ".")) + "<topic>)"
	}
	topics := map[string]bool{}
	for _, e := range p.Entries {
		topics[e.Partition.Topic] = true
		switch e.Action {
		case offsets.ActionSet:
			v.Set++
		case offsets.ActionClear:
			v.Clear++
		default:
			v.Blocked++
		}
	}
	v.Topics = len(topics)
	for _, a := range p.Accepted {
		s := visible(a.Partition.String()) + ": accepted by " + visible(a.By)
		if a.Note != "" {
			s += " (" + visible(a.Note) + ")"
		}
		v.Accepted = append(v.Accepted, s)
	}
	// The plan records its configuration redacted already; redact.Config
	// again, so that a value no plan should hold is never shown either.
	cfg := redact.Config(p.ConnectorConfig)
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		v.Config = append(v.Config, keyValue{visible(k), visible(cfg[k])})
	}
	return v
}

func newChecks(at time.Time, cs verify.Checks) *checksView {
	v := &checksView{At: stamp(at)}
	for _, c := range cs {
		row := newCheck(c)
		switch c.Verdict {
		case verify.Pass:
			v.OK++
		case verify.Warn:
			v.Warned++
		default:
			v.Failures++
		}
		v.Checks = append(v.Checks, row)
	}
	return v
}

func newCheck(c verify.Check) checkRow {
	class := "fail"
	switch c.Verdict {
	case verify.Pass:
		class = "ok"
	case verify.Warn:
		class = "warn"
	}
	return checkRow{Name: visible(c.Name), Status: visible(string(c.Verdict)), Detail: visible(c.Detail), Class: class}
}

// partitionRows is the table of the plan's partitions: the plan's decision,
// the record captured at resume, and the verification's boundary check.
func partitionRows(p *plan.Plan, captured map[offsets.SourcePartition]verify.BoundaryRecord, checked map[offsets.SourcePartition]verify.Boundary) []partitionRow {
	rows := make([]partitionRow, 0, len(p.Entries))
	for _, e := range p.Entries {
		row := partitionRow{Partition: visible(e.Partition.String()), Action: e.Action.String(),
			M: e.Offset.String(), TargetEnd: strconv.FormatInt(e.TargetEnd, 10), Reason: visible(e.Reason), Captured: "-", Target: "-"}
		row.C = "none"
		if c, ok := e.GroupOffset.Get(); ok {
			row.C = strconv.FormatInt(c, 10)
		}
		if b, ok := captured[e.Partition]; ok {
			row.Captured = "idle: no record yet"
			if !b.Idle {
				row.Captured = "record at " + strconv.FormatInt(b.Offset, 10)
			}
		}
		switch b, ok := checked[e.Partition]; {
		case e.Action == offsets.ActionBlock:
			row.Result, row.Class = "blocked: "+visible(e.Reason), "fail"
		case !ok && checked == nil:
			row.Result, row.Class = "not verified after resume", ""
		case !ok:
			row.Result, row.Class = "not in the verification", "warn"
		default:
			row.Target = visible(b.TargetTopic) + "-" + strconv.Itoa(int(b.Partition.Partition)) + "@" + strconv.FormatInt(b.TargetOffset, 10)
			row.Result, row.Class = boundaryWords(b)
		}
		rows = append(rows, row)
	}
	return rows
}

// boundaryWords says what the boundary check of one partition found, as
// the verify step prints it.
func boundaryWords(b verify.Boundary) (string, string) {
	s, class := "equals the source record at C", "ok"
	switch {
	case b.Idle:
		s, class = "idle: no source record at C yet, nothing to compare", "idle"
	case b.Pending:
		s, class = "pending: no record on the target yet", "warn"
	case len(b.Differences) > 0:
		ds := make([]string, len(b.Differences))
		for i, d := range b.Differences {
			ds[i] = visible(d)
		}
		s, class = "DIFFERS: "+strings.Join(ds, "; "), "fail"
	case b.Placed:
		s = fmt.Sprintf("compaction removed the record compared; MM2's first %d copies are gone from the source too, the next is the record at %d, none is from before C", b.CopiesGone, b.RecordOffset)
	case b.RemovedFromSource:
		s = "equals the record captured at resume (compaction has since removed it from the source)"
	case b.Captured:
		s = "equals the source record captured at resume"
	}
	if b.Duplicates > 0 {
		s += fmt.Sprintf("; %d duplicates expected: the old job wrote them past its last commit", b.Duplicates)
	}
	return s, class
}

// verdict decides the record's verdict: a rollback ends the cutover; else
// the last verification after resume decides; else a refusal or a failed
// write that nothing went on from; else it is not complete.
func verdict(p *plan.Plan, r *view, rollback, lastProblem string, any bool) Verdict {
	switch {
	case !any:
		return Verdict{Incomplete, []string{"the audit holds no entry of this plan"}}
	case rollback != "":
		return Verdict{RolledBack, []string{rollback}}
	case r.Verify != nil:
		v := r.Verify
		var why []string
		if v.OK {
			why = append(why, "connector "+v.State+"; MM2 caught up with what the source held when verification began"+lagWords(v))
			why = append(why, boundarySummary(r.Partitions, v))
			n := len(v.Acceptance)
			why = append(why, fmt.Sprintf("%d of %d acceptance checks ok", countClass(v.Acceptance, "ok"), n))
			if v.Duplicates > 0 {
				why = append(why, fmt.Sprintf("%d records expected twice on the target: the old job wrote them past its last commit", v.Duplicates))
			}
			if lastProblem != "" {
				why = append(why, "after the verification: "+lastProblem)
			}
			return Verdict{Passed, why}
		}
		if v.State != "RUNNING" {
			why = append(why, "the connector is "+cmp.Or(v.State, "in no known state")+", not RUNNING")
		}
		if !v.CaughtUp {
			why = append(why, fmt.Sprintf("MM2 did not catch up: lag %d at the last sample", v.LagLast))
		}
		for _, row := range r.Partitions {
			if row.Class == "fail" || row.Class == "warn" {
				why = append(why, row.Partition+": "+row.Result)
			}
		}
		for _, c := range v.Acceptance {
			if c.Class == "fail" {
				why = append(why, "acceptance check "+c.Name+" failed: "+c.Detail)
			}
		}
		if len(why) == 0 {
			why = append(why, "the verification after resume did not pass; see the timeline")
		}
		return Verdict{Failed, why}
	case lastProblem != "":
		return Verdict{Failed, []string{lastProblem}}
	case !p.Applicable():
		return Verdict{Incomplete, []string{fmt.Sprintf("the plan is blocked on %d partitions; it cannot be applied", r.Plan.Blocked)}}
	default:
		last := r.Timeline[len(r.Timeline)-1]
		return Verdict{Incomplete, []string{"not verified after resume: the record ends with " + last.Step + " at " + last.At}}
	}
}

func lagWords(v *verifyView) string {
	if len(v.Lag) < 2 {
		return ""
	}
	s := fmt.Sprintf(" (total lag %d at the first sample, %d at the last", v.LagFirst, v.LagLast)
	if v.LagSpan != "" {
		s += ", " + v.LagSpan + " later"
	}
	return s + ")"
}

func boundarySummary(rows []partitionRow, v *verifyView) string {
	if !v.BoundaryKnown {
		return "the boundary check passed on every partition (this audit entry does not list them)"
	}
	same, idle := countClass2(rows, "ok"), countClass2(rows, "idle")
	s := fmt.Sprintf("on %d partitions the first record MM2 wrote is the source record at C", same)
	if v.Captured {
		s = fmt.Sprintf("on %d partitions the first record MM2 wrote is the source record at C captured at resume", same)
	}
	if idle > 0 {
		s += fmt.Sprintf("; %d had no record to copy yet (idle)", idle)
	}
	return s
}

func countClass(cs []checkRow, class string) int {
	n := 0
	for _, c := range cs {
		if c.Class == class {
			n++
		}
	}
	return n
}

func countClass2(rows []partitionRow, class string) int {
	n := 0
	for _, r := range rows {
		if r.Class == class {
			n++
		}
	}
	return n
}

func intentWords(write string) string {
	switch write {
	case "create":
		return "create the connector STOPPED"
	case "patch":
		return "PATCH the connector's offsets"
	case "resume":
		return "resume the connector"
	case "delete":
		return "delete the connector and its offsets"
	case "stop":
		return "stop the connector"
	case "commit":
		return "commit C' = M'+1 to the group"
	}
	return write
}

func writeWords(step string) string {
	switch step {
	case "delete":
		return "deleted the connector and its offsets"
	case "stop":
		return "stopped the connector"
	}
	return "committed C' = M'+1 to the group"
}

func okClass(ok bool) string {
	if ok {
		return "ok"
	}
	return "fail"
}

func passWord(ok bool) string {
	if ok {
		return "passed"
	}
	return "FAILED"
}

// stamp writes a time as the record shows it: UTC, to the millisecond.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05.000") + " UTC"
}

// since writes the time since the record's first entry.
func since(d time.Duration) string {
	if d < 0 { // the clock went back between two steps
		return "-" + duration(-d)
	}
	return "+" + duration(d)
}

// duration writes d for a person: 0.35 s, 12.4 s, 3 min 05 s, 2 h 04 min.
func duration(d time.Duration) string {
	switch {
	case d < 10*time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + " s"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
	case d < time.Hour:
		return fmt.Sprintf("%d min %02d s", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%d h %02d min", int(d.Hours()), int(d.Minutes())%60)
}

// visible returns s with control characters and bidirectional formatting
// characters written as Go escapes, so that a name from a file cannot
// reorder or hide text on the page.
func visible(s string) string {
	if !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if hidden(r) {
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == unicode.ReplacementChar
}
