package kubernetes_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"text/template"

	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/mm2cutover/mm2cutover/internal/sandbox"
)

const (
	metricsListPath = "../../docker/mm2/metrics.txt"
	ruleTestsPath   = "testdata/prometheusrule_test.yaml"
	dashboardPath   = "grafana/mm2-connect.json"
)

// externalMetrics are the metrics the alerts use that the workers do not
// export: Prometheus' own `up` for each scrape target, and kube-state-metrics
// for container readiness, restarts and limits (a worker that crash-loops or
// never gets ready exports nothing itself), and the kubelet's cAdvisor for
// the containers' memory. The dashboard uses only the last two, beside the
// JVM's own memory.
var externalMetrics = map[string]string{
	"up":                              "Prometheus, per scrape target",
	"kube_pod_container_status_ready": "kube-state-metrics",
	"kube_pod_container_status_restarts_total": "kube-state-metrics",
	"kube_pod_container_resource_limits":       "kube-state-metrics",
	"container_memory_working_set_bytes":       "the kubelet's cAdvisor",
}

// scrapedMetrics reads docker/mm2/metrics.txt: the metric names the scrape
// test in docker/mm2 found on a real worker.
func scrapedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open(metricsListPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		names[strings.Fields(line)[0]] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatalf("%s lists no metric", metricsListPath)
	}
	return names
}

var (
	promqlKeywords = map[string]bool{
		"and": true, "or": true, "unless": true, "by": true, "without": true, "on": true, "ignoring": true,
		"group_left": true, "group_right": true, "bool": true, "offset": true, "atan2": true, "inf": true, "nan": true,
	}
	promqlGrouping = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)`)
)

// promqlMetricNames returns the metric names a PromQL expression selects.
// It is a small lexer, not a parser: it drops string literals, label
// matchers, ranges and grouping label lists, then keeps every identifier
// that is neither a keyword nor followed by "(" (a function or aggregation).
// A selector without a metric name ({__name__=~...}) is an error: this check
// could not see what it selects.
func promqlMetricNames(expr string) ([]string, error) {
	// String literals.
	var b strings.Builder
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		if c != '"' && c != '\'' && c != '`' {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for ; j < len(expr) && expr[j] != c; j++ {
			if expr[j] == '\\' && c != '`' {
				j++
			}
		}
		if j >= len(expr) {
			return nil, fmt.Errorf("unterminated string in %q", expr)
		}
		b.WriteString(`""`)
		i = j
	}
	s := b.String()
	// Label matchers and ranges; a matcher must follow a metric name.
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '{' && c != '[' {
			out.WriteByte(c)
			continue
		}
		if c == '{' {
			prev := strings.TrimRight(out.String(), " \t\n")
			if prev == "" || !isIdentByte(prev[len(prev)-1]) {
				return nil, fmt.Errorf("a selector without a metric name in %q", expr)
			}
		}
		end := map[byte]byte{'{': '}', '[': ']'}[c]
		j := strings.IndexByte(s[i:], end)
		if j < 0 {
			return nil, fmt.Errorf("unbalanced %c in %q", c, expr)
		}
		i += j
		out.WriteByte(' ')
	}
	s = promqlGrouping.ReplaceAllString(out.String(), " ")
	var names []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= '0' && c <= '9' || c == '.':
			for i < len(s) && (isIdentByte(s[i]) || s[i] == '.') {
				i++
			}
		case isIdentByte(c):
			j := i
			for j < len(s) && isIdentByte(s[j]) {
				j++
			}
			word := s[i:j]
			rest := strings.TrimLeft(s[j:], " \t\n")
			if !promqlKeywords[strings.ToLower(word)] && !strings.HasPrefix(rest, "(") && !strings.HasPrefix(word, "$") {
				names = append(names, word)
			}
			i = j
		case c == '$':
			// A Grafana variable such as $__rate_interval outside brackets.
			for i++; i < len(s) && isIdentByte(s[i]); i++ {
			}
		default:
			i++
		}
	}
	return names, nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func TestPromQLMetricNames(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
		err  string
	}{
		{`up == 0`, []string{"up"}, ""},
		{`max by (namespace, connector) (kafka_connect_connector_status{status="failed"}) == 1`, []string{"kafka_connect_connector_status"}, ""},
		{`a unless on (namespace, connector) (b > 0)`, []string{"a", "b"}, ""},
		{`sum(rate(x_total{client_id=~".+\\|replication-consumer"}[5m])) > 0.1`, []string{"x_total"}, ""},
		{`min_over_time(mm2:lag:sum[30m]) > 1000 and deriv(mm2:lag:sum[30m]) >= 0`, []string{"mm2:lag:sum", "mm2:lag:sum"}, ""},
		{`x offset 30m / y`, []string{"x", "y"}, ""},
		{`label_replace(a, "ip", "$1", "leader", "https?://([^:/]+):[0-9]+/?")`, []string{"a"}, ""},
		{`a * on (x) group_left (y) b`, []string{"a", "b"}, ""},
		{`sum by (t) (rate(c[$__rate_interval])) * 1e3`, []string{"c"}, ""},
		{`time() - process_start_time_seconds{namespace=~"$namespace"}`, []string{"process_start_time_seconds"}, ""},
		{`{__name__=~"kafka_.*"}`, nil, "without a metric name"},
		{`sum({job="x"})`, nil, "without a metric name"},
		{`x{a="b`, nil, "unterminated string"},
	} {
		got, err := promqlMetricNames(tc.expr)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: got error %v, want one saying %q", tc.expr, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, %v; want %q", tc.expr, got, err, tc.want)
		}
	}
}

// ruleTests is the part of promtool's unit test file format the tests use;
// strictly decoded, so a misspelt key fails instead of testing nothing.
type ruleTests struct {
	RuleFiles          []string   `json:"rule_files,omitempty"`
	EvaluationInterval string     `json:"evaluation_interval"`
	Tests              []ruleTest `json:"tests"`
}

type ruleTest struct {
	Name          string        `json:"name"`
	Interval      string        `json:"interval"`
	InputSeries   []inputSeries `json:"input_series"`
	AlertRuleTest []alertTest   `json:"alert_rule_test"`
}

type inputSeries struct {
	Series string `json:"series"`
	Values string `json:"values"`
}

type alertTest struct {
	EvalTime  string     `json:"eval_time"`
	Alertname string     `json:"alertname"`
	ExpAlerts []expAlert `json:"exp_alerts"`
}

type expAlert struct {
	ExpLabels      map[string]string `json:"exp_labels"`
	ExpAnnotations map[string]string `json:"exp_annotations,omitempty"`
}

func readRuleTests(t *testing.T) *ruleTests {
	t.Helper()
	data, err := os.ReadFile(ruleTestsPath)
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		t.Fatalf("%s: %v", ruleTestsPath, err)
	}
	var rt ruleTests
	strict, err := sigsjson.UnmarshalStrict(js, &rt, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err == nil && len(strict) > 0 {
		err = strict[0]
	}
	if err != nil {
		t.Fatalf("%s: %v", ruleTestsPath, err)
	}
	return &rt
}

// alerts returns the PrometheusRule's alerting rules by name, and its
// recording rules' names.
func alerts(t *testing.T, pr *PrometheusRule) (map[string]Rule, map[string]bool) {
	t.Helper()
	byName, records := map[string]Rule{}, map[string]bool{}
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			switch {
			case r.Alert != "" && r.Record == "":
				if _, dup := byName[r.Alert]; dup {
					t.Errorf("alert %s is defined twice", r.Alert)
				}
				byName[r.Alert] = r
			case r.Record != "" && r.Alert == "":
				records[r.Record] = true
			default:
				t.Errorf("group %s: a rule must have either alert or record: %+v", g.Name, r)
			}
		}
	}
	return byName, records
}

// expandAnnotation renders an annotation template as Prometheus does for an
// alert with these labels ($labels; no $value: the annotations do not use it).
func expandAnnotation(text string, labels map[string]string) (string, error) {
	tmpl, err := template.New("").Option("missingkey=zero").Parse(`{{$labels := .Labels}}` + text)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, struct{ Labels map[string]string }{labels}); err != nil {
		return "", err
	}
	return b.String(), nil
}

// promtools returns the promtool binaries the rule tests run on, by
// version: Prometheus 3.x's, built from the Go module proxy into the
// sandbox's cache (sandbox.PrometheusBinaries; 3.0 made range selectors
// left-open, which moves what a window holds), and a promtool on PATH
// (Debian's prometheus package: 2.42 on bookworm), when there is one. It
// skips the test when neither can be had, except with CI=true.
func promtools(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	if testing.Short() {
		if p, err := exec.LookPath("promtool"); err == nil {
			out[promtoolVersion(t, p)] = p
			return out
		}
		if os.Getenv("CI") == "true" {
			t.Fatal("rule tests skipped by -short, which CI=true does not allow")
		}
		t.Skip("no promtool on PATH, and -short does not build Prometheus 3.x")
	}
	_, built, err := sandbox.PrometheusBinaries(context.Background(), sandbox.ConfigFromEnv().CacheDir, nil)
	switch {
	case err == nil:
		out[promtoolVersion(t, built)] = built
	case os.Getenv("CI") == "true":
		t.Fatalf("promtool %s: %v", sandbox.PrometheusModuleVersion, err)
	default:
		t.Logf("no promtool %s: %v", sandbox.PrometheusModuleVersion, err)
	}
	if p, err := exec.LookPath("promtool"); err == nil {
		out[promtoolVersion(t, p)] = p
	}
	if len(out) == 0 {
		t.Skip("no promtool: install Debian's prometheus, or let the test build Prometheus 3.x (needs Go)")
	}
	return out
}

// promtoolVersion returns the version promtool reports ("3.16.0").
func promtoolVersion(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", bin, err, out)
	}
	f := strings.Fields(string(out))
	if len(f) < 3 {
		t.Fatalf("%s --version: %q", bin, out)
	}
	return strings.TrimSuffix(f[2], "+ds")
}

// fillAnnotations gives every expected alert of rt the annotations of its
// rule, expanded with the expected labels, and counts per alert the cases
// where it fires and where it stays silent.
func fillAnnotations(t *testing.T, rt *ruleTests, byName map[string]Rule) (fires, silent map[string]int) {
	t.Helper()
	fires, silent = map[string]int{}, map[string]int{}
	for ti := range rt.Tests {
		for ai := range rt.Tests[ti].AlertRuleTest {
			at := &rt.Tests[ti].AlertRuleTest[ai]
			rule, ok := byName[at.Alertname]
			if !ok {
				t.Errorf("test %q: no alert named %q", rt.Tests[ti].Name, at.Alertname)
				continue
			}
			if len(at.ExpAlerts) == 0 {
				silent[at.Alertname]++
			} else {
				fires[at.Alertname]++
			}
			for ei := range at.ExpAlerts {
				ea := &at.ExpAlerts[ei]
				if ea.ExpAnnotations != nil {
					t.Errorf("test %q: leave exp_annotations out; the test fills them from the rule", rt.Tests[ti].Name)
				}
				ea.ExpAnnotations = map[string]string{}
				for k, text := range rule.Annotations {
					v, err := expandAnnotation(text, ea.ExpLabels)
					if err != nil {
						t.Fatalf("alert %s annotation %s: %v", at.Alertname, k, err)
					}
					ea.ExpAnnotations[k] = v
				}
			}
		}
	}
	return fires, silent
}

// TestAlertRules runs `promtool check rules` on the PrometheusRule's groups
// and `promtool test rules` on testdata/prometheusrule_test.yaml, whose
// expected alerts get the rule's annotations expanded with their labels. It
// first checks that every alert has a case where it fires and one where it
// stays silent, a severity and a runbook.
func TestAlertRules(t *testing.T) {
	m := load(t)
	pr := m.rules[0]
	byName, _ := alerts(t, pr)
	rt := readRuleTests(t)

	fires, silent := fillAnnotations(t, rt, byName)
	for _, name := range sortedKeys(byName) {
		r := byName[name]
		if fires[name] == 0 || silent[name] == 0 {
			t.Errorf("alert %s: %d test cases where it fires and %d where it stays silent, want at least one of each in %s", name, fires[name], silent[name], ruleTestsPath)
		}
		if s := r.Labels["severity"]; s != "warning" && s != "critical" {
			t.Errorf("alert %s: severity %q, want warning or critical", name, s)
		}
		for _, k := range []string{"summary", "description", "runbook"} {
			if strings.TrimSpace(r.Annotations[k]) == "" {
				t.Errorf("alert %s: no %s annotation (what it means, what to do)", name, k)
			}
		}
		if len(r.Annotations) != 3 {
			t.Errorf("alert %s: annotations %v, want exactly summary, description and runbook", name, sortedKeys(r.Annotations))
		}
		if r.For == "" {
			t.Errorf("alert %s: no for: a single bad sample should not page", name)
		}
	}
	if t.Failed() {
		return
	}

	dir := t.TempDir()
	rulesYAML, err := yaml.Marshal(map[string]any{"groups": pr.Spec.Groups})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), rulesYAML, 0o644); err != nil {
		t.Fatal(err)
	}
	rt.RuleFiles = []string{"rules.yaml"}
	testsYAML, err := yaml.Marshal(rt)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tests.yaml"), testsYAML, 0o644); err != nil {
		t.Fatal(err)
	}
	for version, bin := range promtools(t) {
		t.Run("promtool "+version, func(t *testing.T) {
			if out, err := exec.Command(bin, "check", "rules", filepath.Join(dir, "rules.yaml")).CombinedOutput(); err != nil {
				t.Fatalf("promtool check rules: %v\n%s", err, out)
			}
			out, err := exec.Command(bin, "test", "rules", filepath.Join(dir, "tests.yaml")).CombinedOutput()
			if err != nil {
				t.Fatalf("promtool test rules: %v\n%s", err, out)
			}
			t.Logf("promtool %s: %d alerts, %d test groups passed", version, len(byName), len(rt.Tests))
		})
	}
}

// TestPromtoolCatchesAWrongRule shows that the promtool run above can fail
// for the right reason: the firing test of MM2FrequentRebalances, with its
// annotations filled as above, against the rule with a threshold it cannot
// reach finds no alert.
func TestPromtoolCatchesAWrongRule(t *testing.T) {
	tools := promtools(t)
	pr := load(t).rules[0]
	for gi := range pr.Spec.Groups {
		for ri := range pr.Spec.Groups[gi].Rules {
			if r := &pr.Spec.Groups[gi].Rules[ri]; r.Alert == "MM2FrequentRebalances" {
				r.Expr = strings.Replace(r.Expr, "> 10", "> 100", 1)
			}
		}
	}
	byName, _ := alerts(t, pr)
	rt := readRuleTests(t)
	var kept []ruleTest
	for _, tc := range rt.Tests {
		if len(tc.AlertRuleTest) == 1 && tc.AlertRuleTest[0].Alertname == "MM2FrequentRebalances" && len(tc.AlertRuleTest[0].ExpAlerts) > 0 {
			kept = append(kept, tc)
		}
	}
	if len(kept) != 1 {
		t.Fatalf("found %d firing tests of MM2FrequentRebalances, want 1", len(kept))
	}
	rt.Tests = kept
	fillAnnotations(t, rt, byName)
	dir := t.TempDir()
	rulesYAML, err := yaml.Marshal(map[string]any{"groups": pr.Spec.Groups})
	if err != nil {
		t.Fatal(err)
	}
	rt.RuleFiles = []string{"rules.yaml"}
	testsYAML, err := yaml.Marshal(rt)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"rules.yaml": rulesYAML, "tests.yaml": testsYAML} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for version, bin := range tools {
		out, err := exec.Command(bin, "test", "rules", filepath.Join(dir, "tests.yaml")).CombinedOutput()
		if err == nil || !regexp.MustCompile(`alertname: MM2FrequentRebalances[\s\S]*got:\[\]`).Match(out) {
			t.Errorf("promtool %s: %v, want a failure finding no MM2FrequentRebalances alert:\n%s", version, err, out)
		}
	}
}

// TestAlertsUseScrapedMetrics: every metric an alert or recording rule
// selects is one the scrape test saw (docker/mm2/metrics.txt), a recording
// rule of the same PrometheusRule, or one of externalMetrics.
func TestAlertsUseScrapedMetrics(t *testing.T) {
	scraped := scrapedMetrics(t)
	pr := load(t).rules[0]
	_, records := alerts(t, pr)
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			names, err := promqlMetricNames(r.Expr)
			if err != nil {
				t.Errorf("%s%s: %v", r.Alert, r.Record, err)
				continue
			}
			if len(names) == 0 {
				t.Errorf("%s%s: selects no metric", r.Alert, r.Record)
			}
			for _, n := range names {
				if !scraped[n] && !records[n] && externalMetrics[n] == "" {
					t.Errorf("%s%s uses %s, which is not in %s (what the scrape test saw), a recording rule or an external metric", r.Alert, r.Record, n, metricsListPath)
				}
			}
		}
	}
}

// dashboardQueries walks a Grafana dashboard's panels (rows included) and
// template variables and returns every PromQL query, keyed by where it is.
func dashboardQueries(t *testing.T, d map[string]any) map[string]string {
	t.Helper()
	queries := map[string]string{}
	ids := map[float64]bool{}
	var walk func(panels []any)
	walk = func(panels []any) {
		for _, p := range panels {
			panel, _ := p.(map[string]any)
			title, _ := panel["title"].(string)
			id, _ := panel["id"].(float64)
			if ids[id] || id == 0 {
				t.Errorf("panel %q: id %v is missing or not unique", title, panel["id"])
			}
			ids[id] = true
			if _, ok := panel["gridPos"].(map[string]any); !ok {
				t.Errorf("panel %q has no gridPos", title)
			}
			if panel["type"] == "row" {
				sub, _ := panel["panels"].([]any)
				walk(sub)
				continue
			}
			ds, _ := panel["datasource"].(map[string]any)
			if ds["uid"] != "${datasource}" {
				t.Errorf("panel %q: datasource %v, want the ${datasource} variable", title, panel["datasource"])
			}
			targets, _ := panel["targets"].([]any)
			if len(targets) == 0 {
				t.Errorf("panel %q has no query", title)
			}
			for i, tg := range targets {
				target, _ := tg.(map[string]any)
				expr, _ := target["expr"].(string)
				if expr == "" {
					t.Errorf("panel %q target %d has no expr", title, i)
				}
				queries[fmt.Sprintf("panel %q target %d", title, i)] = expr
			}
		}
	}
	panels, _ := d["panels"].([]any)
	if len(panels) == 0 {
		t.Fatal("the dashboard has no panels")
	}
	walk(panels)
	templating, _ := d["templating"].(map[string]any)
	vars, _ := templating["list"].([]any)
	labelValues := regexp.MustCompile(`^label_values\((.+),\s*\w+\)$`)
	for _, v := range vars {
		variable, _ := v.(map[string]any)
		if variable["type"] != "query" {
			continue
		}
		q, _ := variable["query"].(map[string]any)
		query, _ := q["query"].(string)
		m := labelValues.FindStringSubmatch(query)
		if m == nil {
			t.Errorf("variable %v: query %q, want label_values(selector, label)", variable["name"], query)
			continue
		}
		queries[fmt.Sprintf("variable %v", variable["name"])] = m[1]
	}
	return queries
}

// TestDashboardUsesScrapedMetrics: every query of the Grafana dashboard
// selects only metrics the scrape test saw on a real worker, or the
// container memory metrics of externalMetrics.
func TestDashboardUsesScrapedMetrics(t *testing.T) {
	data, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	for _, k := range []string{"uid", "title", "schemaVersion", "templating", "panels"} {
		if _, ok := d[k]; !ok {
			t.Errorf("%s has no %s", dashboardPath, k)
		}
	}
	scraped := scrapedMetrics(t)
	queries := dashboardQueries(t, d)
	used := map[string]bool{}
	for _, where := range sortedKeys(queries) {
		names, err := promqlMetricNames(queries[where])
		if err != nil {
			t.Errorf("%s: %v", where, err)
			continue
		}
		if len(names) == 0 {
			t.Errorf("%s selects no metric: %s", where, queries[where])
		}
		for _, n := range names {
			used[n] = true
			if !scraped[n] && externalMetrics[n] == "" {
				t.Errorf("%s uses %s, which the scrape test did not see (%s)", where, n, metricsListPath)
			}
		}
	}
	for _, want := range []string{
		"kafka_connect_connector_status", "kafka_connect_connector_task_status", // status
		"kafka_connect_mirror_consumer_records_lag",                 // lag per topic
		"kafka_connect_mirror_source_connector_record_count",        // throughput
		"kafka_connect_worker_rebalance_completed_rebalances_total", // rebalances
		"jvm_memory_used_bytes", "jvm_gc_collection_seconds_sum",    // JVM
		"kafka_producer_producer_bufferpool_wait_ratio",              // backpressure
		"kafka_connect_source_task_source_record_active_count",       // records in flight
		"process_cpu_seconds_total", "process_resident_memory_bytes", // CPU and memory
		"container_memory_working_set_bytes", "kube_pod_container_resource_limits",
	} {
		if !used[want] {
			t.Errorf("the dashboard does not show %s", want)
		}
	}
	names := make([]string, 0, len(used))
	for n := range used {
		names = append(names, n)
	}
	sort.Strings(names)
	t.Logf("%d queries over %d metrics", len(queries), len(names))
}

// TestMetricNameCheckFailsOnAnUnscrapedName shows the check above is not
// vacuous: a query with a misspelt metric is caught.
func TestMetricNameCheckFailsOnAnUnscrapedName(t *testing.T) {
	scraped := scrapedMetrics(t)
	names, err := promqlMetricNames(`sum by (topic) (rate(kafka_connect_mirror_source_connector_record_count_total[5m]))`)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || scraped[names[0]] {
		t.Fatalf("got %q (scraped: %v), want one name that metrics.txt does not list", names, scraped[names[0]])
	}
}
