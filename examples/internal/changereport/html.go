package changereport

import (
	"bufio"
	"html/template"
	"io"
	"strings"
)

// WriteHTML writes the record as one HTML page that needs nothing else:
// its style and the lag chart (SVG) are inline, it has no script, and its
// Content-Security-Policy forbids loading anything, so it opens the same
// offline, attached to a ticket or from a mail. Every string from the plan
// and the audit is escaped (html/template). It returns w's error.
func (r *Report) WriteHTML(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := pageHTML.Execute(bw, r.v); err != nil {
		return err
	}
	return bw.Flush()
}

var pageHTML = template.Must(template.New("page").Funcs(template.FuncMap{
	"verdictClass": func(o Outcome) string {
		switch o {
		case Passed:
			return "passed"
		case Failed:
			return "failed"
		}
		return "other"
	},
	"upper": func(o Outcome) string { return strings.ToUpper(string(o)) },
}).Parse(strings.NewReplacer("CHART_STROKE", chartStroke, "PARTITIONS_HEADER", partitionsHeader).Replace(pageSource)))

const pageSource = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}: change record</title>
<style>
body { margin: 0; background: #f1f3f5; color: #212529; font: 15px/1.45 system-ui, "Segoe UI", "Noto Sans", "DejaVu Sans", sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 36px 40px; background: #fff; }
h1 { font-size: 26px; margin: 0 0 6px; }
h2 { font-size: 19px; margin: 24px 0 8px; padding-bottom: 4px; border-bottom: 2px solid #dee2e6; }
h3 { font-size: 16px; margin: 18px 0 8px; }
.sub { color: #495057; margin: 0; }
code, .mono { font-family: ui-monospace, "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 13px; overflow-wrap: anywhere; }
.verdict { margin: 20px 0 8px; padding: 12px 20px; border-left: 8px solid; border-radius: 4px; }
.verdict h2 { margin: 0 0 4px; padding: 0; border: 0; font-size: 22px; }
.verdict ul { margin: 4px 0 0; padding-left: 20px; }
.verdict.passed { background: #ebfbee; border-color: #2f9e44; }
.verdict.passed h2 { color: #2b8a3e; }
.verdict.failed { background: #fff5f5; border-color: #e03131; }
.verdict.failed h2 { color: #c92a2a; }
.verdict.other { background: #fff9db; border-color: #f08c00; }
.verdict.other h2 { color: #e67700; }
dl.facts { display: grid; grid-template-columns: 230px 1fr; gap: 3px 18px; margin: 0; }
dl.facts dt { color: #495057; }
dl.facts dd { margin: 0; }
table { width: 100%; border-collapse: collapse; font-size: 14px; margin: 4px 0; }
th, td { padding: 5px 8px; text-align: left; vertical-align: top; border-bottom: 1px solid #dee2e6; }
th { background: #e9ecef; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.nowrap { white-space: nowrap; }
table.partitions th { background: PARTITIONS_HEADER; color: #fff; }
tr.fail td { background: #fff5f5; }
tr.warn td { background: #fff9db; }
.st { display: inline-block; min-width: 36px; padding: 0 6px; border-radius: 8px; font-size: 12px; font-weight: 600; text-align: center; }
.st.ok { background: #d3f9d8; color: #2b8a3e; }
.st.warn { background: #ffec99; color: #e67700; }
.st.fail { background: #ffe3e3; color: #c92a2a; }
.st.idle { background: #e9ecef; color: #495057; }
b.ok, td.result.ok { color: #2b8a3e; }
b.fail, td.result.fail { color: #c92a2a; font-weight: 600; }
td.result.idle { color: #495057; }
figure { margin: 8px 0 4px; }
figure svg { display: block; width: 100%; height: auto; }
figcaption, .note { color: #495057; font-size: 13px; }
details { margin: 8px 0; }
summary { cursor: pointer; color: #1864ab; }
footer { margin-top: 32px; color: #868e96; font-size: 13px; }
@media print { body { background: #fff; } main { padding: 0; } details { display: block; } }
</style>
</head>
<body>
<main>
<header>
<h1>{{.Title}}</h1>
<p class="sub">Change record of plan <code>{{.Fingerprint}}</code></p>
<p class="sub">Connector <b>{{.Connector}}</b>, group <b>{{.Plan.Group}}</b>, {{.Plan.Partitions}} partitions of {{.Plan.Topics}} topics{{if .From}}; recorded from {{.From}} to {{.To}} ({{.Took}}){{end}}</p>
</header>

<section class="verdict {{verdictClass .Verdict.Outcome}}" id="verdict">
<h2>{{upper .Verdict.Outcome}}</h2>
<ul>{{range .Verdict.Reasons}}
<li>{{.}}</li>{{end}}
</ul>
</section>

<section id="plan">
<h2>1. The plan</h2>
<dl class="facts">
<dt>Source cluster</dt><dd><code>{{.Plan.SourceCluster}}</code> (alias <code>{{.Plan.SourceAlias}}</code>)</dd>
<dt>Target cluster</dt><dd><code>{{.Plan.TargetCluster}}</code></dd>
<dt>Old job's group</dt><dd><code>{{.Plan.Group}}</code></dd>
<dt>Committed offsets C from</dt><dd><span class="mono">{{.Plan.OffsetsFrom}}</span></dd>
{{- if .Plan.Savepoint}}
<dt>Rollback savepoint</dt><dd><span class="mono">{{.Plan.Savepoint}}</span></dd>{{end}}
<dt>Replication policy</dt><dd>{{.Plan.Policy}}</dd>
<dt>Partitions</dt><dd>{{.Plan.Partitions}} on {{.Plan.Topics}} topics: {{.Plan.Set}} set (MM2 resumes at C), {{.Plan.Clear}} cleared (from the log start), {{.Plan.Blocked}} blocked{{if not .Plan.Applicable}}: <b class="fail">the plan cannot be applied</b>{{end}}</dd>
{{- if .Plan.Accepted}}
<dt>Expired data accepted</dt><dd>{{range .Plan.Accepted}}{{.}}<br>{{end}}</dd>{{end}}
<dt>Configuration digest</dt><dd><code>{{.Plan.ConfigDigest}}</code></dd>
<dt>Made by</dt><dd>{{.Plan.ToolVersion}}, {{.Plan.CreatedAt}}</dd>
</dl>
<details>
<summary>The connector's configuration ({{len .Plan.Config}} keys, secrets redacted)</summary>
<table>
<tr><th>Key</th><th>Value</th></tr>{{range .Plan.Config}}
<tr><td class="mono">{{.Key}}</td><td class="mono">{{.Value}}</td></tr>{{end}}
</table>
</details>
</section>

<section id="precheck">
<h2>2. Precheck</h2>
{{- with .Precheck}}
<p>{{.At}}: {{len .Checks}} checks, {{.OK}} ok, {{.Warned}} warnings, {{.Failures}} failed.</p>
{{- if or .Warned .Failures}}
<table>
<tr><th>Check</th><th>Status</th><th>Detail</th></tr>{{range .Checks}}{{if ne .Class "ok"}}
<tr><td class="nowrap">{{.Name}}</td><td><span class="st {{.Class}}">{{.Status}}</span></td><td>{{.Detail}}</td></tr>{{end}}{{end}}
</table>{{end}}
<details>
<summary>Every check</summary>
<table>
<tr><th>Check</th><th>Status</th><th>Detail</th></tr>{{range .Checks}}
<tr><td class="nowrap">{{.Name}}</td><td><span class="st {{.Class}}">{{.Status}}</span></td><td>{{.Detail}}</td></tr>{{end}}
</table>
</details>
{{- else}}
<p class="note">The audit holds no precheck of this plan.</p>
{{- end}}
</section>

<section id="apply">
<h2>3. Apply: the connector STOPPED, its offsets written and read back</h2>
{{- with .Apply}}
<dl class="facts">
<dt>Connector</dt><dd>{{if .Created}}created STOPPED {{.Created}}{{else if .Ran}}found STOPPED with the plan's configuration{{else}}not applied{{end}}</dd>
{{- if ge .Backup 0}}
<dt>Offsets before</dt><dd>{{.Backup}} (backed up in the audit)</dd>{{end}}
<dt>PATCH</dt><dd>{{if .Patched}}the offsets of {{.PatchedPartitions}} partitions, {{.Patched}}{{else if .Ran}}none: the connector held the plan's offsets already{{else}}not sent{{end}}</dd>
<dt>Read-back</dt><dd>{{if .ReadBackRan}}<span class="st {{if .ReadBackOK}}ok{{else}}fail{{end}}">{{if .ReadBackOK}}ok{{else}}fail{{end}}</span> {{.ReadBack}}, {{.ReadBackAt}}{{else}}not run{{end}}</dd>
</dl>
{{- end}}
</section>

<section id="resume">
<h2>4. Resume</h2>
{{- with .Resume}}
<dl class="facts">
<dt>Boundary records</dt><dd>{{if .CapturedAt}}the first record at C of {{.Captured}} partitions captured ({{.Idle}} idle), {{.CapturedAt}}{{else}}not captured{{end}}</dd>
<dt>Connector resumed</dt><dd>{{or .ResumedAt "not resumed"}}</dd>
</dl>
{{- end}}
</section>

<section id="verify">
<h2>5. Verification after resume</h2>
{{- with .Verify}}
<p>{{.At}}: connector <b>{{.State}}</b>; MM2 {{if .CaughtUp}}caught up{{else}}<b class="fail">did not catch up</b>{{end}}; verification <b class="{{if .OK}}ok{{else}}fail{{end}}">{{if .OK}}passed{{else}}FAILED{{end}}</b>.{{if .Duplicates}} {{.Duplicates}} records are expected twice on the target: the old job wrote them past its last commit.{{end}}</p>
<h3>The lag converging</h3>
{{- with .Chart}}{{if .Empty}}
<p class="note">No lag sample recorded.</p>{{else}}
<figure id="lag-chart">
<svg viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="Total lag of MirrorMaker 2 behind the source, per sample">
<rect x="{{.L}}" y="{{.T}}" width="{{.PlotW}}" height="{{.PlotH}}" fill="#f8f9fa"/>
{{- range .YTicks}}
<line x1="{{$.Verify.Chart.L}}" x2="{{$.Verify.Chart.R}}" y1="{{.At}}" y2="{{.At}}" stroke="#dee2e6" stroke-width="1"/>
<text x="{{$.Verify.Chart.LabelX}}" y="{{.At}}" dy="4" text-anchor="end" font-size="12" fill="#495057">{{.Label}}</text>{{end}}
{{- range .XTicks}}
<line x1="{{.At}}" x2="{{.At}}" y1="{{$.Verify.Chart.B}}" y2="{{$.Verify.Chart.TickY}}" stroke="#868e96" stroke-width="1"/>
<text x="{{.At}}" y="{{$.Verify.Chart.LabelY}}" text-anchor="middle" font-size="12" fill="#495057">{{.Label}}</text>{{end}}
<line x1="{{.L}}" x2="{{.R}}" y1="{{.B}}" y2="{{.B}}" stroke="#868e96" stroke-width="1"/>
<line x1="{{.L}}" x2="{{.L}}" y1="{{.T}}" y2="{{.B}}" stroke="#868e96" stroke-width="1"/>
<text x="{{.MidX}}" y="{{.H}}" dy="-4" text-anchor="middle" font-size="12" fill="#495057">{{.XTitle}}</text>
<text transform="translate(14 {{.MidY}}) rotate(-90)" text-anchor="middle" font-size="12" fill="#495057">records behind</text>
<polyline points="{{.Points}}" fill="none" stroke="CHART_STROKE" stroke-width="3" stroke-linejoin="round" shape-rendering="crispEdges"/>
{{- range .Dots}}
<circle cx="{{.X}}" cy="{{.Y}}" r="4" fill="CHART_STROKE"><title>{{.Title}}</title></circle>{{end}}
</svg>
<figcaption>Records the source holds that MirrorMaker 2 has not copied, by Connect's stored offsets: {{$.Verify.LagFirst}} at the first sample, {{$.Verify.LagLast}} at the last{{if $.Verify.LagSpan}}, {{$.Verify.LagSpan}} later{{end}}. Connect stores MM2's position every offset.flush.interval.ms, so the lag may grow until the first store; under live traffic the last sample counts only records produced since verification began.</figcaption>
</figure>{{end}}{{end}}
{{- else}}
<p class="note">The audit holds no verification after resume of this plan.</p>
{{- end}}
<h3>The boundary on every partition</h3>
<p class="note">C: where the old job stopped and MM2 resumes; M = C-1: the Connect offset written. At resume: the first source record at or after C, captured. MM2's first record: where it landed on the target, compared with the source's.</p>
<table class="partitions" id="partitions">
<tr><th>Partition</th><th>Action</th><th class="num">C</th><th class="num">M</th><th class="num">Target end</th><th>At resume</th><th>MM2's first record</th><th>Boundary check</th></tr>
{{- range .Partitions}}
<tr class="{{.Class}}"><td class="mono nowrap">{{.Partition}}</td><td>{{.Action}}</td><td class="num">{{.C}}</td><td class="num">{{.M}}</td><td class="num">{{.TargetEnd}}</td><td class="nowrap">{{.Captured}}</td><td class="mono nowrap">{{.Target}}</td><td class="result {{.Class}}">{{.Result}}</td></tr>{{end}}
</table>
{{- with .Verify}}
<h3>Acceptance checks</h3>
{{- if .Acceptance}}
<table>
<tr><th>Check</th><th>Status</th><th>Detail</th></tr>{{range .Acceptance}}
<tr><td class="nowrap">{{.Name}}</td><td><span class="st {{.Class}}">{{.Status}}</span></td><td>{{.Detail}}</td></tr>{{end}}
</table>
{{- else}}
<p class="note">None recorded.</p>{{end}}
{{- end}}
</section>

<section id="timeline">
<h2>6. Timeline</h2>
<table>
<tr><th>Time</th><th class="num">Since start</th><th>Step</th><th>What</th></tr>{{range .Timeline}}
<tr class="{{if eq .Class "fail"}}fail{{end}}"><td class="mono nowrap">{{.At}}</td><td class="num">{{.Since}}</td><td class="nowrap">{{.Step}}</td><td>{{.What}}</td></tr>{{end}}
</table>
{{- if .Others}}
<p class="note">The audit file holds {{.Others}} more entries, of other plans; they are not part of this record.</p>{{end}}
</section>

<footer>
Written by <code>cutover report</code> from the plan and the audit file. The page loads nothing: its style and chart are inline. Connector configurations are shown with their secrets redacted; the audit holds no secret.
</footer>
</main>
</body>
</html>
`
