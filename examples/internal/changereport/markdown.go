package changereport

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// WriteMarkdown writes the record as Markdown for a ticket: the same
// sections as the page, the lag as a line of block characters and its
// samples. Every string from the plan and the audit has Markdown's
// punctuation escaped, so that it can start no link, image, HTML tag or
// table cell. It returns w's error.
func (r *Report) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	m := mdWriter{w: bw}
	m.report(r.v)
	return bw.Flush()
}

type mdWriter struct{ w *bufio.Writer }

func (m mdWriter) f(format string, args ...any) { fmt.Fprintf(m.w, format, args...) }

func (m mdWriter) report(r *view) {
	m.f("# %s\n\n", md(r.Title))
	m.f("Change record of plan %s. Connector **%s**, group **%s**, %d partitions of %d topics",
		mono(r.Fingerprint), md(r.Connector), md(r.Plan.Group), r.Plan.Partitions, r.Plan.Topics)
	if r.From != "" {
		m.f("; recorded from %s to %s (%s)", md(r.From), md(r.To), r.Took)
	}
	m.f(".\n\n")
	m.f("## Verdict: %s\n\n", strings.ToUpper(string(r.Verdict.Outcome)))
	for _, why := range r.Verdict.Reasons {
		m.f("- %s\n", md(why))
	}

	p := r.Plan
	m.f("\n## 1. The plan\n\n| | |\n|---|---|\n")
	m.row("Source cluster", mono(p.SourceCluster)+" (alias "+mono(p.SourceAlias)+")")
	m.row("Target cluster", mono(p.TargetCluster))
	m.row("Old job's group", mono(p.Group))
	m.row("Committed offsets C from", md(p.OffsetsFrom))
	if p.Savepoint != "" {
		m.row("Rollback savepoint", md(p.Savepoint))
	}
	m.row("Replication policy", md(p.Policy))
	parts := fmt.Sprintf("%d on %d topics: %d set (MM2 resumes at C), %d cleared (from the log start), %d blocked", p.Partitions, p.Topics, p.Set, p.Clear, p.Blocked)
	if !p.Applicable {
		parts += ": **the plan cannot be applied**"
	}
	m.row("Partitions", parts)
	for _, a := range p.Accepted {
		m.row("Expired data accepted", md(a))
	}
	m.row("Configuration digest", mono(p.ConfigDigest))
	m.row("Made by", md(p.ToolVersion)+", "+md(p.CreatedAt))
	m.f("\nThe connector's configuration (%d keys, secrets redacted):\n\n| Key | Value |\n|---|---|\n", len(p.Config))
	for _, kv := range p.Config {
		m.f("| %s | %s |\n", md(kv.Key), md(kv.Value))
	}

	m.f("\n## 2. Precheck\n\n")
	if c := r.Precheck; c != nil {
		m.f("%s: %d checks, %d ok, %d warnings, %d failed.\n\n", md(c.At), len(c.Checks), c.OK, c.Warned, c.Failures)
		m.checks(c.Checks)
	} else {
		m.f("The audit holds no precheck of this plan.\n")
	}

	a := r.Apply
	m.f("\n## 3. Apply: the connector STOPPED, its offsets written and read back\n\n")
	switch {
	case a.Created != "":
		m.f("- Connector: created STOPPED %s\n", md(a.Created))
	case a.Ran:
		m.f("- Connector: found STOPPED with the plan's configuration\n")
	default:
		m.f("- Connector: not applied\n")
	}
	if a.Backup >= 0 {
		m.f("- Offsets before: %d (backed up in the audit)\n", a.Backup)
	}
	switch {
	case a.Patched != "":
		m.f("- PATCH: the offsets of %d partitions, %s\n", a.PatchedPartitions, md(a.Patched))
	case a.Ran:
		m.f("- PATCH: none: the connector held the plan's offsets already\n")
	default:
		m.f("- PATCH: not sent\n")
	}
	if a.ReadBackRan {
		m.f("- Read-back: **%s** %s, %s\n", statusWord(a.ReadBackOK), md(a.ReadBack), md(a.ReadBackAt))
	} else {
		m.f("- Read-back: not run\n")
	}

	s := r.Resume
	m.f("\n## 4. Resume\n\n")
	if s.CapturedAt != "" {
		m.f("- Boundary records: the first record at C of %d partitions captured (%d idle), %s\n", s.Captured, s.Idle, md(s.CapturedAt))
	} else {
		m.f("- Boundary records: not captured\n")
	}
	m.f("- Connector resumed: %s\n", md(or(s.ResumedAt, "not resumed")))

	m.f("\n## 5. Verification after resume\n\n")
	v := r.Verify
	if v != nil {
		caught := "caught up"
		if !v.CaughtUp {
			caught = "**did not catch up**"
		}
		m.f("%s: connector **%s**; MM2 %s; verification **%s**.", md(v.At), md(v.State), caught, passWord(v.OK))
		if v.Duplicates > 0 {
			m.f(" %d records are expected twice on the target: the old job wrote them past its last commit.", v.Duplicates)
		}
		m.f("\n\n### The lag converging\n\n")
		if len(v.Lag) == 0 {
			m.f("No lag sample recorded.\n")
		} else {
			m.f("Total lag (records behind), first to last sample: `%s` from %d to %d", sparkline(v.Lag), v.LagFirst, v.LagLast)
			if v.LagSpan != "" {
				m.f(" in %s", v.LagSpan)
			}
			m.f(".\n\n")
			samples := make([]string, len(v.Lag))
			for i, l := range v.Lag {
				samples[i] = strconv.FormatInt(l.Total, 10)
				if v.LagTimed {
					samples[i] = strconv.FormatFloat(l.Seconds, 'f', 1, 64) + " s: " + samples[i]
				}
			}
			m.f("Samples: %s.\n", strings.Join(samples, ", "))
		}
	} else {
		m.f("The audit holds no verification after resume of this plan.\n")
	}
	m.f("\n### The boundary on every partition\n\nC: where the old job stopped and MM2 resumes; M = C-1: the Connect offset written. " +
		"At resume: the first source record at or after C, captured. MM2's first record: where it landed on the target, compared with the source's.\n\n| Partition | Action | C | M | Target end | At resume | MM2's first record | Boundary check |\n|---|---|--:|--:|--:|---|---|---|\n")
	for _, row := range r.Partitions {
		m.f("| %s | %s | %s | %s | %s | %s | %s | %s |\n", md(row.Partition), row.Action, row.C, row.M, row.TargetEnd, md(row.Captured), md(row.Target), md(row.Result))
	}
	if v != nil {
		m.f("\n### Acceptance checks\n\n")
		if len(v.Acceptance) > 0 {
			m.checks(v.Acceptance)
		} else {
			m.f("None recorded.\n")
		}
	}

	m.f("\n## 6. Timeline\n\n| Time | Since start | Step | What |\n|---|--:|---|---|\n")
	for _, t := range r.Timeline {
		m.f("| %s | %s | %s | %s |\n", md(t.At), t.Since, md(t.Step), md(t.What))
	}
	if r.Others > 0 {
		m.f("\nThe audit file holds %d more entries, of other plans; they are not part of this record.\n", r.Others)
	}
	m.f("\n---\nWritten by `cutover report` from the plan and the audit file. Connector configurations are shown with their secrets redacted; the audit holds no secret.\n")
}

func (m mdWriter) row(key, value string) { m.f("| %s | %s |\n", key, value) }

func (m mdWriter) checks(cs []checkRow) {
	m.f("| Check | Status | Detail |\n|---|---|---|\n")
	for _, c := range cs {
		m.f("| %s | %s | %s |\n", md(c.Name), md(c.Status), md(c.Detail))
	}
}

func statusWord(ok bool) string {
	if ok {
		return "ok"
	}
	return "fail"
}

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// mdEscaper backslash-escapes the punctuation that could make text from a
// file Markdown: emphasis, code, links and images, HTML tags and entities,
// table cells, strikethrough.
var mdEscaper = strings.NewReplacer(`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `[`, `\[`, `]`, `\]`,
	`<`, `\<`, `>`, `\>`, `|`, `\|`, `~`, `\~`, `&`, `\&`, `#`, `\#`, `!`, `\!`)

// md escapes s for Markdown text or a table cell.
func md(s string) string { return mdEscaper.Replace(s) }

// plainWord matches what may go into a code span as it is: identifiers,
// digests, cluster IDs.
var plainWord = regexp.MustCompile(`^[A-Za-z0-9:._=/+-]+$`)

// mono shows s as code when it is a plain word, else as escaped text.
func mono(s string) string {
	if plainWord.MatchString(s) {
		return "`" + s + "`"
	}
	return md(s)
}

// sparkline draws the lag samples as block characters, lowest to highest.
func sparkline(lag []lagPoint) string {
	const bars = "▁▂▃▄▅▆▇█"
	levels := []rune(bars)
	var peak int64
	for _, l := range lag {
		peak = max(peak, l.Total)
	}
	var b strings.Builder
	for _, l := range lag {
		i := 0
		if peak > 0 && l.Total > 0 {
			i = min(int(float64(l.Total)/float64(peak)*float64(len(levels)-1)), len(levels)-1)
		}
		b.WriteRune(levels[i])
	}
	return b.String()
}
