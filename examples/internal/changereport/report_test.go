package changereport

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mm2cutover/mm2cutover/plan"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// The demo's files: the plan and the audit file that
// `go run -tags sandbox ./examples/cutover -sandbox` wrote (real Kafka,
// Connect and Flink), with its temporary directory's paths replaced by
// /srv/... and the plan rebuilt from the same inputs (plan.Build) for the
// fingerprint that goes with them; see testdata/README.
const (
	demoPlan  = "testdata/demo.plan.json"
	demoAudit = "testdata/demo.audit.jsonl"
)

func readDemo(t testing.TB) (*plan.Plan, []Entry) {
	t.Helper()
	f, err := os.Open(demoPlan)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := plan.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	a, err := os.Open(demoAudit)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	entries, err := ReadAudit(a)
	if err != nil {
		t.Fatal(err)
	}
	return p, entries
}

// golden compares got with the file, or rewrites it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, d)
	}
}

// TestGolden writes the record of the demo's cutover as HTML and Markdown
// and compares both with the files under testdata.
func TestGolden(t *testing.T) {
	p, entries := readDemo(t)
	r, err := New(p, entries)
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict().Outcome != Passed {
		t.Errorf("verdict %+v, want passed", r.Verdict())
	}
	var h, m bytes.Buffer
	if err := r.WriteHTML(&h); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteMarkdown(&m); err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/demo.html", h.Bytes())
	golden(t, "testdata/demo.md", m.Bytes())
	checkSelfContained(t, h.String())
}

// The parts of a page that could make a browser load something: its tags,
// an attribute that fetches or navigates (src, href, srcset, action,
// poster, data, xlink:href) to a URL with a scheme or protocol-relative,
// and in style (elements and attributes) url() and @import.
var (
	tagRE      = regexp.MustCompile(`<[a-zA-Z][^>]*>`)
	fetchRE    = regexp.MustCompile(`(?i)\s(src|href|srcset|action|poster|data|xlink:href)\s*=\s*["']?\s*([a-z][a-z0-9+.-]*:|//)`)
	styleRE    = regexp.MustCompile(`(?is)<style[^>]*>(.*?)</style>|\sstyle\s*=\s*"([^"]*)"`)
	styleURLRE = regexp.MustCompile(`(?i)url\s*\(|@import`)
)

// loads lists what in page could make a browser load anything: a
// resource reference, a script, a stylesheet link, an embedded document,
// image or media, a base URL, or a missing Content-Security-Policy that
// forbids loading. Text is not looked at: a URL in a sentence loads
// nothing.
func loads(page string) []string {
	var found []string
	for _, tag := range tagRE.FindAllString(page, -1) {
		if fetchRE.MatchString(tag) {
			found = append(found, tag)
			continue
		}
		for _, name := range []string{"<script", "<link", "<iframe", "<object", "<embed", "<img", "<base", "<frame", "<video", "<audio", "<source"} {
			if strings.HasPrefix(strings.ToLower(tag), name) {
				found = append(found, tag)
			}
		}
	}
	for _, m := range styleRE.FindAllStringSubmatch(page, -1) {
		if styleURLRE.MatchString(m[1] + m[2]) {
			found = append(found, "url() or @import in a style")
		}
	}
	if !strings.Contains(page, `content="default-src 'none'; style-src 'unsafe-inline'"`) {
		found = append(found, "no Content-Security-Policy")
	}
	return found
}

func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	if l := loads(page); l != nil {
		t.Errorf("the page could load something: %q", l)
	}
}

// TestLoads: the check finds what would load, and passes a page with
// fragment links and URLs in its text.
func TestLoads(t *testing.T) {
	const csp = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`
	for _, bad := range []string{`<img src="https://example.com/x.png">`, `<a href="http://x">`, `<use xlink:href="//cdn/x.svg">`,
		`<style>body{background:url(x.png)}</style>`, `<style>@import "x.css";</style>`, `<script>1</script>`,
		`<link rel=stylesheet href=x.css>`, `<iframe srcdoc="x">`, `<p style="background: URL(x.png)">`, ``} {
		page := csp + bad
		if bad == "" {
			page = "<p>no policy</p>"
		}
		if loads(page) == nil {
			t.Errorf("%s: not found", bad)
		}
	}
	if l := loads(csp + `<a href="#verdict">x</a> <p>see http://example.com</p>`); l != nil {
		t.Errorf("a fragment link or a URL in text counted: %q", l)
	}
}

// entry makes an audit entry of plan fp at second s of the test's clock.
func entry(s int, step, fp string, detail any) Entry {
	b, _ := json.Marshal(detail)
	if detail == nil {
		b = nil
	}
	return Entry{At: time.Date(2026, 12, 5, 10, 0, s, 0, time.UTC), Step: step, Connector: "mm2-orders", Fingerprint: fp, Detail: b}
}

// TestVerdict: the verdict at the top of the record, from the entries of
// the demo's plan with what other cutovers end with.
func TestVerdict(t *testing.T) {
	p, demo := readDemo(t)
	fp := p.Fingerprint
	var verifyAt int
	for i, e := range demo {
		if e.Step == "verify" {
			verifyAt = i
		}
	}
	beforeVerify := demo[:verifyAt]
	failedVerify := entry(60, "verify", fp, map[string]any{"state": "RUNNING", "ok": false, "caught_up": true,
		"acceptance": []map[string]string{{"name": "no-offset-syncs-topic-on-target", "status": "fail", "detail": "mm2-offset-syncs.target.internal exists"}},
		"boundary":   []map[string]any{{"partition": "orders-0", "target_topic": "orders", "source_offset": 206, "target_offset": 206, "differences": []string{"value"}}}})
	for _, tc := range []struct {
		name    string
		entries []Entry
		want    Outcome
		says    string
	}{
		{"the demo", demo, Passed, "on 12 partitions the first record MM2 wrote is the source record at C captured at resume"},
		{"resumed, not verified", beforeVerify, Incomplete, "not verified after resume: the record ends with resume"},
		{"verification failed", append(clone(beforeVerify), failedVerify), Failed, "orders-0: DIFFERS: value"},
		{"a failed acceptance check", append(clone(beforeVerify), failedVerify), Failed, "acceptance check no-offset-syncs-topic-on-target failed"},
		{"not caught up", append(clone(beforeVerify), entry(60, "verify", fp, map[string]any{"state": "RUNNING", "ok": false, "caught_up": false,
			"lag": []map[string]any{{"at": "2026-12-05T10:00:50Z", "total": 900}, {"at": "2026-12-05T10:00:59Z", "total": 800}}})), Failed, "MM2 did not catch up: lag 800"},
		{"connector failed", append(clone(beforeVerify), entry(60, "verify", fp, map[string]any{"state": "FAILED", "ok": false})), Failed, "the connector is FAILED, not RUNNING"},
		{"resume refused", append(clone(demo[:5]), entry(30, "refuse", fp, map[string]string{"step": "resume", "reason": "plan is stale: the group committed"})), Failed, "resume refused: plan is stale"},
		{"a write failed", append(clone(demo[:6]), entry(30, "failed", fp, map[string]string{"write": "patch", "error": "connect: 500"})), Failed, "the patch failed: connect: 500"},
		{"refused, then applied", append(append(clone(demo[:2]), entry(3, "refuse", fp, map[string]string{"step": "apply", "reason": "x"})), demo[2:verifyAt]...), Incomplete, "not verified after resume"},
		{"rolled back after resume", append(clone(demo), entry(90, "rollback-backup", fp, map[string]any{"offsets": []any{}}),
			entry(91, "rollback-plan", "sha256:reverse", map[string]any{"group": "flink-orders-replicator", "partitions": 12}),
			entry(92, "rollback", "sha256:reverse", map[string]any{"phase": "after-resume", "group": "flink-orders-replicator", "committed": 12})),
			RolledBack, "rolled back after-resume at 2026-12-05 10:01:32.000 UTC: group flink-orders-replicator committed at C' = M'+1 on 12 partitions"},
		{"no entry of the plan", []Entry{entry(1, "plan", "sha256:other", nil)}, Incomplete, "the audit holds no entry of this plan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := New(p, tc.entries)
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict().Outcome != tc.want {
				t.Errorf("outcome %q, want %q: %q", r.Verdict().Outcome, tc.want, r.Verdict().Reasons)
			}
			if !strings.Contains(strings.Join(r.Verdict().Reasons, "\n"), tc.says) {
				t.Errorf("reasons %q do not say %q", r.Verdict().Reasons, tc.says)
			}
		})
	}
}

func clone(es []Entry) []Entry { return append([]Entry(nil), es...) }

// TestSelect: the record of a plan holds its entries, the precheck that
// made it and its rollback's reverse plan, not the entries of other plans.
func TestSelect(t *testing.T) {
	p, _ := readDemo(t)
	fp := p.Fingerprint
	all := []Entry{
		entry(0, "precheck", "", nil),                // 0: an earlier attempt's precheck
		entry(1, "plan", "sha256:earlier", nil),      // 1: an earlier plan
		entry(2, "precheck", "", nil),                // 2: this plan's precheck
		entry(3, "plan", fp, nil),                    // 3
		entry(4, "create", fp, nil),                  // 4
		entry(5, "status", "", nil),                  // 5: a status without a plan
		entry(6, "rollback-backup", fp, nil),         // 6
		entry(7, "rollback-plan", "sha256:rev", nil), // 7: the reverse plan
		entry(8, "commit", "sha256:rev", nil),        // 8
		entry(9, "plan", "sha256:later", nil),        // 9: a later plan
		entry(10, "rollback-plan", "sha256:x", nil),  // 10: not after a rollback-backup of this plan
	}
	got, others := Select(p, all)
	var steps []int
	for _, e := range got {
		steps = append(steps, e.At.Second())
	}
	if want := []int{2, 3, 4, 6, 7, 8}; !cmp.Equal(steps, want) || others != len(all)-len(want) {
		t.Errorf("selected the entries at %v (%d others), want %v", steps, others, want)
	}
}

// TestEscaping: names from the files reach neither page raw: HTML is
// escaped, Markdown's punctuation escaped, control and bidirectional
// characters shown as escapes.
func TestEscaping(t *testing.T) {
	p, demo := readDemo(t)
	hostile := "<img src=https://x/y.png>|**[a](http://x)**\u202e\x1b[2J"
	entries := append(clone(demo), entry(99, "refuse", p.Fingerprint, map[string]string{"step": "status", "reason": hostile}))
	r, err := New(p, entries)
	if err != nil {
		t.Fatal(err)
	}
	var h, m bytes.Buffer
	if err := r.WriteHTML(&h); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteMarkdown(&m); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(h.String(), "<img") || !strings.Contains(h.String(), "&lt;img src=https://x/y.png&gt;") {
		t.Errorf("HTML: the tag is not escaped")
	}
	checkSelfContained(t, h.String())
	if !strings.Contains(m.String(), `\<img src=https://x/y.png\>\|\*\*\[a\](http://x)\*\*\\u202e\\x1b\[2J`) {
		t.Errorf("Markdown: the reason is not escaped:\n%s", m.String())
	}
	for _, out := range []string{h.String(), m.String()} {
		if strings.ContainsAny(out, "\u202e\x1b") {
			t.Errorf("a bidirectional override or an escape character reached the output")
		}
	}
}

// TestRedactsConfig: the configuration shown is the plan's through
// redact.Config: a secret a plan should never hold is not shown either.
func TestRedactsConfig(t *testing.T) {
	p, demo := readDemo(t)
	q := *p
	q.ConnectorConfig = map[string]string{"source.cluster.sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="mm2" password="hunter2-in-a-plan";`,
		"source.cluster.ssl.truststore.password": "hunter3-in-a-plan"}
	r, err := New(&q, demo)
	if err != nil {
		t.Fatal(err)
	}
	var h, m bytes.Buffer
	if err := r.WriteHTML(&h); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteMarkdown(&m); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{h.String(), m.String()} {
		if strings.Contains(out, "hunter") {
			t.Errorf("a secret of the configuration is shown")
		}
		if !strings.Contains(out, "source.cluster.ssl.truststore.password") {
			t.Errorf("the key is not shown")
		}
	}
}

// TestReadAudit: the decoder refuses what is not an audit file, naming the
// line, and reads blank lines and every entry of the demo.
func TestReadAudit(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"{\"at\":\"2026-12-05T10:00:00Z\",\"step\":\"plan\"}\nnot json\n", "line 2"},
		{"{\"at\":\"2026-12-05T10:00:00Z\"}\n", "line 1: no step"},
		{"{\"step\":\"plan\"}\n", "line 1: no step or no time"},
		{"[1]\n", "line 1"},
	} {
		_, err := ReadAudit(strings.NewReader(tc.in))
		if !errors.Is(err, ErrAudit) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want ErrAudit naming %q", tc.in, err, tc.want)
		}
	}
	es, err := ReadAudit(strings.NewReader("\n{\"at\":\"2026-12-05T10:00:00Z\",\"step\":\"plan\"}\n\n"))
	if err != nil || len(es) != 1 || es[0].Line != 2 {
		t.Errorf("got %+v, %v", es, err)
	}
	p, demo := readDemo(t)
	if len(demo) != 12 {
		t.Errorf("%d entries in the demo's audit, want 12", len(demo))
	}
	bad := append(clone(demo), entry(99, "verify", p.Fingerprint, map[string]any{"boundary": "orders-0"}))
	if _, err := New(p, bad); !errors.Is(err, ErrAudit) || !strings.Contains(err.Error(), "the verify entry") {
		t.Errorf("a verify entry of another shape: %v", err)
	}
}

// FuzzReadAudit: any input gives entries or an error, and the entries
// give a record or an error, never a panic.
func FuzzReadAudit(f *testing.F) {
	b, err := os.ReadFile(demoAudit)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"at":"2026-12-05T10:00:00Z","step":"verify","plan_fingerprint":"x","detail":{"lag":[{"at":"2026-12-05T10:00:00Z","total":-5}]}}`))
	f.Add([]byte(`{"at":"2026-12-05T10:00:00Z","step":"verify","plan_fingerprint":"x","detail":{"lag_samples":[9223372036854775807,-9223372036854775808,3]}}`))
	p, _ := readDemo(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		es, err := ReadAudit(bytes.NewReader(in))
		if err != nil {
			return
		}
		for i := range es {
			es[i].Fingerprint = p.Fingerprint
		}
		r, err := New(p, es)
		if err != nil {
			return
		}
		if err := r.WriteHTML(&bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteMarkdown(&bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
	})
}
