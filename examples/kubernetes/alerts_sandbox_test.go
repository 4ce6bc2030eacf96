package kubernetes_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"sigs.k8s.io/yaml"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/internal/flinklike"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// timeScale is how much faster than real time the tests against a real
// Prometheus run the shipped rules: every `for`, every range selector and
// every threshold that is a duration (timeValued) is divided by it, so that
// a 5-minute `for` lasts 30 s. The shipped rules keep their durations; only
// the copy a test loads is scaled. The test's Prometheus scrapes every
// 10 s, so the shortest window (5m, 30 s here) still holds three samples.
const timeScale = 10

// timeValued lists, per alert, the thresholds in its expression that are
// durations in the metric's unit (milliseconds, seconds), and what the test
// copy uses instead. Each must occur exactly once in the expression. Kafka's
// own time is not compressed: a -max metric remembers its peak for up to
// 60 s (two 30 s samples), and the catch-up right after a resume on a loaded
// machine peaked at 35 s of replication latency, so the latency threshold
// is divided by about 3, not by timeScale.
var timeValued = map[string]map[string]string{
	"MM2ReplicationLatencyHigh": {"> 300000": "> 90000"},
	"MM2TaskNotPolling":         {"> 300": "> 30"},
}

var (
	promDurationPart = regexp.MustCompile(`([0-9]+)(ms|s|m|h|d|w|y)`)
	promDuration     = regexp.MustCompile(`^(?:[0-9]+(?:ms|s|m|h|d|w|y))+$`)
	rangeSelector    = regexp.MustCompile(`\[((?:[0-9]+(?:ms|s|m|h|d|w|y))+)\]`)
)

// scaleDuration divides a Prometheus duration ("5m", "1h30m") by
// timeScale and writes it in milliseconds.
func scaleDuration(d string) (string, error) {
	if !promDuration.MatchString(d) {
		return "", fmt.Errorf("%q is not a Prometheus duration", d)
	}
	units := map[string]time.Duration{"ms": time.Millisecond, "s": time.Second, "m": time.Minute, "h": time.Hour,
		"d": 24 * time.Hour, "w": 7 * 24 * time.Hour, "y": 365 * 24 * time.Hour}
	var total time.Duration
	for _, m := range promDurationPart.FindAllStringSubmatch(d, -1) {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return "", err
		}
		total += time.Duration(n) * units[m[2]]
	}
	return fmt.Sprintf("%dms", (total / timeScale).Milliseconds()), nil
}

// scaledGroups returns the PrometheusRule's groups with time compressed by
// timeScale (see timeScale and timeValued).
func scaledGroups(pr *PrometheusRule) ([]RuleGroup, error) {
	groups := slices.Clone(pr.Spec.Groups)
	for gi := range groups {
		groups[gi].Rules = slices.Clone(groups[gi].Rules)
		for ri := range groups[gi].Rules {
			r := &groups[gi].Rules[ri]
			var err error
			if r.For != "" {
				if r.For, err = scaleDuration(r.For); err != nil {
					return nil, fmt.Errorf("%s: for: %w", r.Alert, err)
				}
			}
			r.Expr = rangeSelector.ReplaceAllStringFunc(r.Expr, func(sel string) string {
				d, serr := scaleDuration(sel[1 : len(sel)-1])
				if serr != nil {
					err = serr
				}
				return "[" + d + "]"
			})
			if err != nil {
				return nil, fmt.Errorf("%s%s: %w", r.Alert, r.Record, err)
			}
			for th, test := range timeValued[r.Alert] {
				if n := strings.Count(r.Expr, th); n != 1 {
					return nil, fmt.Errorf("%s: threshold %q occurs %d times in %q, want once (update timeValued)", r.Alert, th, n, r.Expr)
				}
				r.Expr = strings.Replace(r.Expr, th, test, 1)
			}
		}
	}
	for name := range timeValued {
		found := false
		for _, g := range groups {
			for _, r := range g.Rules {
				found = found || r.Alert == name
			}
		}
		if !found {
			return nil, fmt.Errorf("timeValued names %s, which is no alert of the PrometheusRule", name)
		}
	}
	return groups, nil
}

func TestScaledGroups(t *testing.T) {
	for in, want := range map[string]string{"5m": "30000ms", "1h": "360000ms", "6h": "2160000ms", "1m30s": "9000ms", "10s": "1000ms"} {
		if got, err := scaleDuration(in); err != nil || got != want {
			t.Errorf("scaleDuration(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "5", "5 m", "m"} {
		if _, err := scaleDuration(bad); err == nil {
			t.Errorf("scaleDuration(%q): no error", bad)
		}
	}
	pr := &PrometheusRule{Spec: PrometheusRuleSpec{Groups: []RuleGroup{{Name: "g", Rules: []Rule{
		{Alert: "MM2ReplicationLatencyHigh", Expr: `max(x) > 300000`, For: "10m"},
		{Alert: "MM2TaskNotPolling", Expr: `max(y{client_id=~".+\\|replication-consumer"}) > 300`, For: "5m"},
		{Record: "r", Expr: `min_over_time(a[30m]) > 1000 and deriv(a[30m]) >= 0 and label_replace(b, "ip", "$1", "l", "https?://\\[?([^/\\]]+?)\\]?:[0-9]+/?")`},
	}}}}}
	got, err := scaledGroups(pr)
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{
		{Alert: "MM2ReplicationLatencyHigh", Expr: `max(x) > 90000`, For: "60000ms"},
		{Alert: "MM2TaskNotPolling", Expr: `max(y{client_id=~".+\\|replication-consumer"}) > 30`, For: "30000ms"},
		{Record: "r", Expr: `min_over_time(a[180000ms]) > 1000 and deriv(a[180000ms]) >= 0 and label_replace(b, "ip", "$1", "l", "https?://\\[?([^/\\]]+?)\\]?:[0-9]+/?")`},
	}
	if !slices.EqualFunc(got[0].Rules, want, func(a, b Rule) bool {
		return a.Alert == b.Alert && a.Record == b.Record && a.Expr == b.Expr && a.For == b.For
	}) {
		t.Errorf("scaledGroups:\ngot  %+v\nwant %+v", got[0].Rules, want)
	}
	if pr.Spec.Groups[0].Rules[0].For != "10m" {
		t.Error("scaledGroups changed the PrometheusRule it was given")
	}
	pr.Spec.Groups[0].Rules[0].Expr = `max(x) > 600000`
	if _, err := scaledGroups(pr); err == nil || !strings.Contains(err.Error(), "timeValued") {
		t.Errorf("a time threshold that changed: %v, want an error naming timeValued", err)
	}
}

// TestAlertsOnRealFaults runs the shipped alerts (examples/kubernetes
// prometheusrule.yaml, time compressed by timeScale) on a real Prometheus
// that scrapes the JMX exporters of two real Connect workers (the image's
// jmx-exporter.yaml), on Kafka 4.3.1 and on a Kafka 3.9.1 worker, whose
// MirrorMaker 2 beans have no source tag. Through Prometheus' HTTP API it
// checks that nothing goes pending during a healthy cutover under traffic,
// that the dashboard's queries return data, and that each fault of the
// design's section 5.8 makes its alert go pending and then fire: a task
// that fails (a record the target refuses), a running connector with no
// task, a client whose credentials the source refuses, replication that
// falls behind behind a throttled target, a stopped worker, every worker
// gone.
func TestAlertsOnRealFaults(t *testing.T) {
	if testing.Short() {
		if os.Getenv("CI") == "true" {
			t.Fatal("integration test skipped by -short, which CI=true does not allow")
		}
		t.Skip("integration test: runs without -short")
	}
	versions := []string{sandbox.DefaultKafkaVersion, "3.9.1"}
	if v := os.Getenv("MM2CUTOVER_ALERT_KAFKA_VERSIONS"); v != "" {
		versions = strings.Split(v, ",")
	}
	for _, version := range versions {
		t.Run("kafka "+version, func(t *testing.T) {
			t.Parallel()
			alertsOnRealFaults(t, version)
		})
	}
}

// alertCase is one cutover's sandbox with its Prometheus.
type alertCase struct {
	t       *testing.T
	sb      *sandbox.Sandbox
	prom    *sandbox.Prometheus
	connect *connect.Client
	log     *slog.Logger
}

func alertsOnRealFaults(t *testing.T, version string) {
	ctx, cancel := context.WithTimeout(context.Background(), 35*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(testLogWriter{t}, nil))
	groups, err := scaledGroups(load(t).rules[0])
	if err != nil {
		t.Fatal(err)
	}
	rulesYAML, err := yaml.Marshal(map[string]any{"groups": groups})
	if err != nil {
		t.Fatal(err)
	}
	rulesFile := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rulesFile, rulesYAML, 0o644); err != nil {
		t.Fatal(err)
	}
	sb := sandboxtest.Dedicated(t, sandbox.Config{KafkaVersion: version, Workers: 2, Secure: true, JMXExporter: true, Logger: log})
	// Scrapes every 10 s, with as long a timeout: a scrape that times out
	// marks the series stale and resets every pending alert on them, and
	// at load average 100 a worker's exporter can take several seconds.
	prom, err := sb.StartPrometheus(ctx, sandbox.PrometheusConfig{RuleFiles: []string{rulesFile}, ScrapeInterval: 10 * time.Second,
		Labels: map[string]string{"namespace": "mm2"}})
	if err != nil {
		t.Fatal(err)
	}
	u := sb.ConnectUser()
	client, err := connect.New(sb.ConnectURL(), connect.WithHTTPClient(sb.HTTPClient()), connect.WithBasicAuth(u.Name, u.Password))
	if err != nil {
		t.Fatal(err)
	}
	ac := &alertCase{t: t, sb: sb, prom: prom, connect: client, log: log}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		ac.scrapeReport(ctx)
		if t.Failed() {
			if alerts, err := prom.Alerts(ctx); err == nil {
				for _, a := range alerts {
					t.Logf("alert %s %s %v", a.State, a.Name(), a.Labels)
				}
			}
		}
	})
	ac.checkRulesLoaded(ctx, groups)
	ac.waitScraped(ctx)

	start := time.Now()
	ac.healthyCutover(ctx)
	// Fifteen test minutes of a healthy cutover: nothing firing.
	ac.healthyWindows(ctx, start)
	ac.dashboardHasData(ctx)

	// The faults that concern single connectors, all at once. On an idle
	// machine the last (MM2ReplicationLatencyHigh: the latency must pass
	// 90 s, then hold for a minute) fires within 3 minutes; loaded CI
	// machines start the connectors' tasks and scrape slower (CI once took
	// 746 s for the test that takes 402 s here), so the limit leaves
	// three times that.
	faults := time.Now()
	exps := ac.connectorFaults(ctx)
	ac.waitAlerts(ctx, faults, 10*time.Minute, exps...)

	// A worker stops: its target stays in discovery, `up` is 0.
	w := sb.Workers()[1]
	instance := targetOf(t, w)
	down := expect("MM2ConnectWorkerDown", func(l map[string]string) bool { return l["instance"] == instance })
	ac.waitInactive(ctx, 3*time.Minute, down)
	faults = time.Now()
	if err := w.Stop(ctx); err != nil && !isStopHung(err) {
		t.Fatal(err)
	}
	ac.waitAlerts(ctx, faults, 5*time.Minute, down)

	// Every worker gone: the Deployment scaled to 0 (the targets leave
	// discovery) and the last worker stopped.
	absent := expect("MM2ConnectWorkersAbsent", nil)
	ac.waitInactive(ctx, 3*time.Minute, absent)
	faults = time.Now()
	if err := prom.SetTargets(nil); err != nil {
		t.Fatal(err)
	}
	if err := sb.Workers()[0].Stop(ctx); err != nil && !isStopHung(err) {
		t.Fatal(err)
	}
	ac.waitAlerts(ctx, faults, 5*time.Minute, absent)
}

func isStopHung(err error) bool { return strings.Contains(err.Error(), sandbox.ErrStopHung.Error()) }

// targetOf is the worker's scrape target as Prometheus labels it (instance).
func targetOf(t *testing.T, w *sandbox.Worker) string {
	t.Helper()
	host := strings.TrimPrefix(strings.TrimPrefix(w.URL(), "https://"), "http://")
	host = host[:strings.LastIndex(host, ":")]
	m := w.MetricsURL()
	port := m[strings.LastIndex(m, ":")+1 : strings.LastIndex(m, "/")]
	return host + ":" + port
}

// checkRulesLoaded: Prometheus loaded every alert of the PrometheusRule,
// with its scaled `for`.
func (ac *alertCase) checkRulesLoaded(ctx context.Context, groups []RuleGroup) {
	ac.t.Helper()
	loaded, err := ac.prom.Rules(ctx)
	if err != nil {
		ac.t.Fatal(err)
	}
	got := map[string]time.Duration{}
	for _, r := range loaded {
		if r.Type == "alerting" {
			got[r.Name] = r.Duration
		}
	}
	n := 0
	for _, g := range groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			n++
			want, _ := time.ParseDuration(r.For)
			if d, ok := got[r.Alert]; !ok || d != want {
				ac.t.Errorf("prometheus loaded %s with for %v (present %v), want %v", r.Alert, d, ok, want)
			}
		}
	}
	ac.t.Logf("prometheus %s loaded %d alerts, time compressed %dx", sandbox.PrometheusVersion, n, timeScale)
}

// mirrorConfig is a MirrorSourceConnector of the sandbox's clusters:
// identity policy, bytes as they are, SASL_SSL clients, no offset syncs.
func (ac *alertCase) mirrorConfig(topics string, extra map[string]string) map[string]string {
	cfg := map[string]string{
		"connector.class":                  "org.apache.kafka.connect.mirror.MirrorSourceConnector",
		"source.cluster.alias":             "source",
		"target.cluster.alias":             "target",
		"source.cluster.bootstrap.servers": strings.Join(ac.sb.Source().Addrs(), ","),
		"target.cluster.bootstrap.servers": ac.sb.Target().Bootstrap(),
		"topics":                           topics,
		"tasks.max":                        "1",
		"replication.policy.class":         "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
		"key.converter":                    "org.apache.kafka.connect.converters.ByteArrayConverter",
		"value.converter":                  "org.apache.kafka.connect.converters.ByteArrayConverter",
		"header.converter":                 "org.apache.kafka.connect.converters.ByteArrayConverter",
		"sync.topic.configs.enabled":       "false",
		"sync.topic.acls.enabled":          "false",
		"emit.offset-syncs.enabled":        "false",
		"replication.factor":               "1",
		"refresh.topics.interval.seconds":  "5",
	}
	maps.Copy(cfg, ac.sb.MirrorClientConfig())
	maps.Copy(cfg, extra)
	return cfg
}

// topic creates a topic on both clusters (with config on the target).
func (ac *alertCase) topic(ctx context.Context, name string, partitions int32, targetConfig map[string]string) {
	ac.t.Helper()
	if err := ac.sb.Source().CreateTopic(ctx, name, partitions); err != nil {
		ac.t.Fatal(err)
	}
	if err := ac.sb.Target().CreateTopicWithConfig(ctx, name, partitions, targetConfig); err != nil {
		ac.t.Fatal(err)
	}
}

// plain returns the PLAINTEXT inter-broker address of a cluster's first
// node, where the old job's imitation and the traffic connect (they speak
// no SASL).
func plain(b *sandbox.Broker) string { return b.Nodes()[0].InternalAddr() }

// healthyCutover plays the cutover of the design under traffic: the old job
// replicates "orders" and stops, the connector is created STOPPED, its
// offsets are set to the old job's commits (M = C-1), and it resumes.
func (ac *alertCase) healthyCutover(ctx context.Context) {
	t := ac.t
	t.Helper()
	const topic = "orders"
	ac.topic(ctx, topic, 4, nil)
	parts := flinklike.All(map[string]int32{topic: 4})
	traffic, err := flinklike.StartTraffic(ctx, plain(ac.sb.Source()), parts, 5, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { traffic.Stop() })
	job, err := flinklike.Start(ctx, flinklike.Config{Source: plain(ac.sb.Source()), Target: plain(ac.sb.Target()),
		Group: "orders-replicator", Topics: []string{topic}, Checkpoint: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for job.Stats().Records < 100 {
		waitAtLeast(ctx, t, 200*time.Millisecond)
	}
	st, err := job.Stop()
	if err != nil {
		t.Fatalf("old job: %v", err)
	}
	if _, err := ac.connect.Create(ctx, "mm2-orders", ac.mirrorConfig(topic, map[string]string{"tasks.max": "2"}), connect.InitialStopped); err != nil {
		t.Fatal(err)
	}
	if _, err := ac.connect.WaitStopped(ctx, "mm2-orders"); err != nil {
		t.Fatal(err)
	}
	var offs []offsets.ConnectOffset
	for _, p := range parts {
		o := offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "source", Topic: p.Topic, Partition: p.Partition}}
		if c := st.Committed[p.Topic][p.Partition]; c > 0 {
			o.Offset = offsets.NewMirrorOffset(c - 1)
		}
		offs = append(offs, o)
	}
	if _, err := ac.connect.AlterMirrorOffsets(ctx, "mm2-orders", offs); err != nil {
		t.Fatal(err)
	}
	// STOPPED with its offsets set for a while, as between apply and resume.
	waitAtLeast(ctx, t, 20*time.Second)
	if err := ac.connect.Resume(ctx, "mm2-orders"); err != nil {
		t.Fatal(err)
	}
	for {
		st, err := ac.connect.WaitRunning(ctx, "mm2-orders")
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Tasks) == 2 {
			break
		}
		waitAtLeast(ctx, t, time.Second)
	}
	ac.log.Info("healthy cutover: mm2-orders runs under traffic", "committed by the old job", st.Committed[topic])
}

// healthyWindows judges the healthy cutover begun at start, 90 s after it
// ran: no alert may have fired (noAlertSince). On a starved machine a
// worker's exporter can outlast the 10 s scrape timeout; a failed scrape
// is a worker down to `up` and leaves its metrics stale, which is what the
// alerts are for. So a window in which an alert fired and a scrape failed
// is not judged: another 90 s of the cutover under traffic is, once no
// alert is active. The third window is judged whatever its scrapes did.
func (ac *alertCase) healthyWindows(ctx context.Context, start time.Time) {
	t := ac.t
	t.Helper()
	const window = 90 * time.Second
	waitAtLeast(ctx, t, window)
	for attempt := 1; ; attempt++ {
		fired := ac.noAlertSince(ctx, start)
		failed := ac.failedScrapes(ctx, start)
		if len(fired) == 0 {
			t.Logf("healthy cutover under traffic: no alert fired over %v (%v test time; %d scrapes failed)",
				time.Since(start).Round(time.Second), time.Since(start).Round(time.Second)*timeScale, failed)
			return
		}
		if failed == 0 || attempt == 3 {
			for _, f := range fired {
				t.Errorf("healthy cutover under traffic (window %d, %d scrapes failed): alert fired: %s", attempt, failed, f)
			}
			return
		}
		t.Logf("healthy cutover under traffic: %d scrapes failed in window %d (from %v), and %s fired: not judged; a new window once no alert is active",
			failed, attempt, start.Format(time.TimeOnly), strings.Join(fired, ", "))
		ac.waitInactive(ctx, 3*time.Minute)
		start = time.Now()
		waitAtLeast(ctx, t, window)
	}
}

// failedScrapes counts the workers' scrapes since start that failed (up 0).
func (ac *alertCase) failedScrapes(ctx context.Context, since time.Time) int {
	ac.t.Helper()
	sel := `up{job="` + sandbox.PrometheusJob + `"}[` + model(time.Since(since).Round(time.Second)) + `]`
	got, err := ac.prom.Query(ctx, `sum(count_over_time(`+sel+`) - sum_over_time(`+sel+`))`)
	if err != nil {
		ac.t.Fatal(err)
	}
	if len(got) == 0 {
		return 0
	}
	return int(got[0].Value)
}

// waitInactive waits, up to limit, until no active alert (pending or
// firing) matches any of exps, or until no alert is active at all when
// exps is empty: the precondition for proving that a fault raises an
// alert, or for judging a quiet window. It returns at limit all the same;
// what then follows reports the alert.
func (ac *alertCase) waitInactive(ctx context.Context, limit time.Duration, exps ...*expectation) {
	t := ac.t
	t.Helper()
	start := time.Now()
	for {
		alerts, err := ac.prom.Alerts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var active []string
		for _, a := range alerts {
			matched := len(exps) == 0
			for _, e := range exps {
				matched = matched || (a.Name() == e.name && e.match(a.Labels))
			}
			if matched {
				active = append(active, a.State+" "+a.Name())
			}
		}
		switch {
		case len(active) == 0:
			if d := time.Since(start); d > time.Second {
				t.Logf("no alert active after %v", d.Round(100*time.Millisecond))
			}
			return
		case time.Since(start) > limit:
			t.Logf("still active after %v: %s", limit, strings.Join(active, ", "))
			return
		}
		waitAtLeast(ctx, t, time.Second)
	}
}

// noAlertSince returns every alert that fired at any evaluation since
// start (Prometheus' ALERTS series), and logs those that only went pending
// (a connector whose tasks take a while to start is one, for less than its
// `for`).
func (ac *alertCase) noAlertSince(ctx context.Context, start time.Time) (fired []string) {
	ac.t.Helper()
	window := time.Since(start).Round(time.Second)
	got, err := ac.prom.Query(ctx, fmt.Sprintf("max_over_time(ALERTS[%s])", model(window)))
	if err != nil {
		ac.t.Fatal(err)
	}
	for _, s := range got {
		if s.Metric["alertstate"] == "firing" {
			fired = append(fired, fmt.Sprintf("%s %v", s.Metric["alertname"], s.Metric))
		} else {
			ac.t.Logf("healthy cutover under traffic: alert %s went pending, not firing (%v)", s.Metric["alertname"], s.Metric)
		}
	}
	return fired
}

// waitScraped waits until every worker is scraped (up == 1): before that,
// absent() and up == 0 tell of Prometheus' start, not of the workers.
func (ac *alertCase) waitScraped(ctx context.Context) {
	ac.t.Helper()
	want := len(ac.sb.Workers())
	for {
		got, err := ac.prom.Query(ctx, `count(up{job="`+sandbox.PrometheusJob+`"} == 1)`)
		if err != nil {
			ac.t.Fatal(err)
		}
		if len(got) == 1 && int(got[0].Value) == want {
			return
		}
		waitAtLeast(ctx, ac.t, time.Second)
	}
}

// scrapeReport logs, per worker, how its scrapes went over the test: how
// many failed, the longest, and the last error. An alert on `up` that fires
// where no worker stopped is read here first: a scrape that outlasts its
// timeout counts as a worker down.
func (ac *alertCase) scrapeReport(ctx context.Context) {
	t := ac.t
	sel := `{job="` + sandbox.PrometheusJob + `"}`
	queries := []struct{ what, q string }{
		{"scrapes", `count_over_time(up` + sel + `[1h])`},
		{"failed", `count_over_time(up` + sel + `[1h]) - sum_over_time(up` + sel + `[1h])`},
		{"longest", `max_over_time(scrape_duration_seconds` + sel + `[1h])`},
		{"median", `quantile_over_time(0.5, scrape_duration_seconds` + sel + `[1h])`},
	}
	report := map[string][]string{}
	for _, q := range queries {
		got, err := ac.prom.Query(ctx, q.q)
		if err != nil {
			t.Logf("scrape report: %s: %v", q.what, err)
			return
		}
		for _, s := range got {
			report[s.Metric["instance"]] = append(report[s.Metric["instance"]], fmt.Sprintf("%s %.4g", q.what, s.Value))
		}
	}
	for _, instance := range sortedKeys(report) {
		t.Logf("scrapes of %s: %s (seconds)", instance, strings.Join(report[instance], ", "))
	}
	if targets, err := ac.prom.Targets(ctx); err == nil {
		for _, tg := range targets {
			if tg.LastError != "" {
				t.Logf("target %s: %s, last scrape %v took %v: %s", tg.Labels["instance"], tg.Health, tg.LastScrape.Format(time.TimeOnly), tg.LastDuration, tg.LastError)
			}
		}
	}
}

// model writes d as a Prometheus duration in seconds.
func model(d time.Duration) string { return strconv.Itoa(int(d.Seconds())) + "s" }

// dashboardHasData evaluates every query of the Grafana dashboard (the
// variables set to match everything) and fails for each panel none of whose
// queries returns a number. Queries on metrics only Kubernetes has
// (externalMetrics) may be empty here.
func (ac *alertCase) dashboardHasData(ctx context.Context) {
	t := ac.t
	t.Helper()
	data, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := yamlOrJSON(data, &d); err != nil {
		t.Fatal(err)
	}
	queries := dashboardQueries(t, d)
	repl := strings.NewReplacer("$namespace", ".+", "${namespace}", ".+", "$connector", ".+", "${connector}", ".+", "$__rate_interval", "1m")
	panels := map[string]bool{}    // whether the panel shows data
	panelOf := map[string]string{} // query -> its panel
	for _, where := range sortedKeys(queries) {
		panel := where
		if i := strings.Index(where, " target "); i > 0 {
			panel = where[:i]
		}
		panels[panel], panelOf[where] = false, panel
	}
	// Panels without data are asked again for up to 2 minutes: a rate()
	// over 1 minute is empty while a starved worker's scrapes fail.
	deadline := time.Now().Add(2 * time.Minute)
	broken := map[string]bool{}
	for round := 1; ; round++ {
		last := round > 1 && time.Now().After(deadline)
		for _, where := range sortedKeys(queries) {
			panel := panelOf[where]
			if panels[panel] || broken[where] {
				continue
			}
			q := repl.Replace(queries[where])
			got, err := ac.prom.Query(ctx, q)
			if err != nil {
				broken[where] = true
				t.Errorf("%s: %v", where, err)
				continue
			}
			if slices.ContainsFunc(got, func(s sandbox.Sample) bool { return !math.IsNaN(s.Value) }) {
				panels[panel] = true
			} else if names, _ := promqlMetricNames(q); last && !usesExternal(names) {
				t.Logf("%s: no data: %s", where, q)
			}
		}
		if last || !slices.Contains(slices.Collect(maps.Values(panels)), false) {
			break
		}
		waitAtLeast(ctx, t, 5*time.Second)
	}
	empty := 0
	for _, p := range sortedKeys(panels) {
		if !panels[p] {
			empty++
			t.Errorf("dashboard %s shows no data", p)
		}
	}
	t.Logf("dashboard: %d of %d panels and variables show data", len(panels)-empty, len(panels))
}

func usesExternal(names []string) bool {
	for _, n := range names {
		if externalMetrics[n] != "" {
			return true
		}
	}
	return false
}

func yamlOrJSON(data []byte, v any) error { return yaml.Unmarshal(data, v) }

// connectorFaults starts the faults that concern one connector each, side
// by side with the healthy one, and returns the alerts they must raise.
func (ac *alertCase) connectorFaults(ctx context.Context) []*expectation {
	t := ac.t
	t.Helper()
	// A task fails: the target topic refuses records over 1 KB, and the
	// source holds one of 4 KB (RecordTooLargeException is not retried).
	ac.topic(ctx, "big", 1, map[string]string{"max.message.bytes": "1024"})
	if err := ac.sb.Source().Produce(ctx, []*sarama.ProducerMessage{{Topic: "big", Value: sarama.ByteEncoder(make([]byte, 4096))}}); err != nil {
		t.Fatal(err)
	}
	ac.create(ctx, "mm2-failing", ac.mirrorConfig("big", nil))

	// A connector runs without a task: its topics match nothing.
	ac.create(ctx, "mm2-notasks", ac.mirrorConfig("no-such-topic-.*", nil))

	// The source refuses the replication consumer's credentials: the task
	// keeps running (MirrorSourceTask logs a failed poll and polls again),
	// its consumer counts failed authentications.
	ac.topic(ctx, "auth", 1, nil)
	src := ac.sb.Source().MM2()
	ac.create(ctx, "mm2-badauth", ac.mirrorConfig("auth", map[string]string{
		"source.consumer.sasl.jaas.config": fmt.Sprintf(`org.apache.kafka.common.security.scram.ScramLoginModule required username=%q password="not-%s";`, src.Name, src.Name),
	}))

	// Replication falls behind: the target throttles the task's producer to
	// 4 KB/s while the source receives about 80 KB/s.
	ac.topic(ctx, "slow", 1, nil)
	admin, err := sarama.NewClusterAdmin(ac.sb.Target().Addrs(), ac.sb.Target().SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := admin.AlterClientQuotas([]sarama.QuotaEntityComponent{{EntityType: sarama.QuotaEntityClientID, MatchType: sarama.QuotaMatchExact, Name: "connector-producer-mm2-slow-0"}},
		sarama.ClientQuotasOp{Key: "producer_byte_rate", Value: 4096}, false); err != nil {
		t.Fatal(err)
	}
	ac.slowTraffic(ctx, "slow")
	ac.create(ctx, "mm2-slow", ac.mirrorConfig("slow", map[string]string{
		"producer.override.buffer.memory": "65536",
		"producer.override.batch.size":    "16384",
	}))

	connector := func(name string) func(map[string]string) bool {
		return func(l map[string]string) bool { return l["connector"] == name }
	}
	return []*expectation{
		expect("MM2TaskFailed", func(l map[string]string) bool { return l["connector"] == "mm2-failing" && l["task"] == "0" }),
		expect("MM2ConnectorWithoutTasks", connector("mm2-notasks")),
		expect("MM2AuthenticationFailures", func(l map[string]string) bool { return strings.Contains(l["client_id"], "|mm2-badauth-0|") }),
		expect("MM2ReplicationLatencyHigh", func(l map[string]string) bool { return l["topic"] == "slow" }),
		expect("MM2ProducerBufferExhausted", func(l map[string]string) bool { return l["client_id"] == "connector-producer-mm2-slow-0" }),
	}
}

func (ac *alertCase) create(ctx context.Context, name string, cfg map[string]string) {
	ac.t.Helper()
	if _, err := ac.connect.Create(ctx, name, cfg, connect.InitialRunning); err != nil {
		ac.t.Fatalf("create %s: %v", name, err)
	}
}

// slowTraffic writes 2 KB records to topic's partition 0 at about 80 KB/s
// until the test ends.
func (ac *alertCase) slowTraffic(ctx context.Context, topic string) {
	cfg := sandbox.NewSaramaConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	p, err := sarama.NewSyncProducer([]string{plain(ac.sb.Source())}, cfg)
	if err != nil {
		ac.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	ac.t.Cleanup(func() { cancel(); <-done; p.Close() })
	go func() {
		defer close(done)
		value := make([]byte, 2048)
		for {
			var msgs []*sarama.ProducerMessage
			for range 10 {
				msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.ByteEncoder(value)})
			}
			if err := p.SendMessages(msgs); err != nil {
				ac.log.Warn("slow traffic", "error", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()
}

// expectation is an alert a fault must raise: pending first, then firing.
// activeAt is when Prometheus says the alert went pending: a poll can miss
// a short pending phase (a 1-minute `for` lasts 6 s here) when the test is
// starved on a loaded machine, and the alert's activeAt still proves it.
type expectation struct {
	name              string
	match             func(map[string]string) bool
	pending, firing   time.Time
	activeAt          time.Time
	pendingLabels     map[string]string
	firingDescription string
}

func expect(name string, match func(map[string]string) bool) *expectation {
	if match == nil {
		match = func(map[string]string) bool { return true }
	}
	return &expectation{name: name, match: match}
}

// waitAlerts polls Prometheus' alerts every 500 ms until each expectation
// has been seen pending and then firing, and fails for those that were not
// within limit, or that were active before the faults began at since.
func (ac *alertCase) waitAlerts(ctx context.Context, since time.Time, limit time.Duration, exps ...*expectation) {
	t := ac.t
	t.Helper()
	start := time.Now()
	deadline := start.Add(limit)
	for {
		alerts, err := ac.prom.Alerts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		left := 0
		for _, e := range exps {
			for _, a := range alerts {
				if a.Name() != e.name || !e.match(a.Labels) {
					continue
				}
				switch {
				case a.State == "pending" && e.pending.IsZero():
					e.pending, e.pendingLabels = now, a.Labels
				case a.State == "firing" && e.firing.IsZero():
					e.firing, e.activeAt = now, a.ActiveAt
					e.firingDescription = a.Annotations["summary"]
				}
			}
			if e.firing.IsZero() {
				left++
			}
		}
		if left == 0 || now.After(deadline) || ctx.Err() != nil {
			break
		}
		waitAtLeast(ctx, t, 500*time.Millisecond)
	}
	for _, e := range exps {
		switch {
		case e.firing.IsZero():
			t.Errorf("%s: not firing within %v (pending seen: %v)", e.name, limit, !e.pending.IsZero())
		case e.pending.IsZero() && e.activeAt.Before(since.Add(-time.Second)):
			t.Errorf("%s: firing, active since %v, before the fault (%v), and never seen pending", e.name, e.activeAt, since)
		case e.pending.IsZero():
			t.Logf("%s: firing after %v; its pending phase, from %v, fell between two polls", e.name,
				e.firing.Sub(start).Round(100*time.Millisecond), e.activeAt.Sub(start).Round(100*time.Millisecond))
		default:
			t.Logf("%s: pending after %v, firing after %v: %s", e.name, e.pending.Sub(start).Round(100*time.Millisecond),
				e.firing.Sub(start).Round(100*time.Millisecond), e.firingDescription)
		}
	}
}

// waitAtLeast waits d, or fails the test when ctx ends first: the test's
// own pace between polls, never a wait for the system to be done.
func waitAtLeast(ctx context.Context, t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-ctx.Done():
		t.Fatalf("test deadline: %v", ctx.Err())
	case <-time.After(d):
	}
}

// testLogWriter sends a logger's lines to t.Log.
type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
