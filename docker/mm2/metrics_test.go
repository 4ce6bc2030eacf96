package mm2_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
)

// wantedMetric is one line of metrics.txt: a metric name, its exposition
// type, and labels every one of its series carries.
type wantedMetric struct {
	name, typ string
	labels    []string
}

func readWantedMetrics(t *testing.T) []wantedMetric {
	t.Helper()
	f, err := os.Open("metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []wantedMetric
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			t.Fatalf("metrics.txt:%d: got %q, want: name type labels...", n, line)
		}
		out = append(out, wantedMetric{f[0], f[1], f[2:]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sample is one line of the Prometheus text exposition format.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// exposition is a parsed scrape: samples and the # TYPE of each family.
type exposition struct {
	samples []sample
	types   map[string]string
}

// parseExposition parses the Prometheus text format (version 0.0.4) as the
// JMX exporter writes it. It is strict: a line it cannot read is an error.
func parseExposition(text string) (*exposition, error) {
	e := &exposition{types: map[string]string{}}
	for n, line := range strings.Split(text, "\n") {
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			f := strings.Fields(rest)
			if len(f) != 2 {
				return nil, fmt.Errorf("line %d: %q", n+1, line)
			}
			e.types[f[0]] = f[1]
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		s := sample{labels: map[string]string{}}
		i := strings.IndexAny(line, "{ ")
		if i < 0 {
			return nil, fmt.Errorf("line %d: no value: %q", n+1, line)
		}
		s.name, line = line[:i], line[i:]
		if strings.HasPrefix(line, "{") {
			line = line[1:]
			for !strings.HasPrefix(line, "}") {
				eq := strings.Index(line, `="`)
				if eq < 0 {
					return nil, fmt.Errorf("line %d: bad labels in %q", n+1, line)
				}
				key := line[:eq]
				line = line[eq+2:]
				var val strings.Builder
				for {
					if line == "" {
						return nil, fmt.Errorf("line %d: unterminated label value", n+1)
					}
					c := line[0]
					if c == '"' {
						line = line[1:]
						break
					}
					if c == '\\' && len(line) > 1 {
						switch line[1] {
						case 'n':
							val.WriteByte('\n')
						default:
							val.WriteByte(line[1])
						}
						line = line[2:]
						continue
					}
					val.WriteByte(c)
					line = line[1:]
				}
				s.labels[key] = val.String()
				line = strings.TrimPrefix(line, ",")
			}
			line = line[1:]
		}
		f := strings.Fields(line)
		if len(f) < 1 {
			return nil, fmt.Errorf("line %d: no value", n+1)
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: value %q: %v", n+1, f[0], err)
		}
		s.value = v
		e.samples = append(e.samples, s)
	}
	return e, nil
}

// typeOf returns the # TYPE of the family a sample name belongs to.
func (e *exposition) typeOf(name string) string {
	if t, ok := e.types[name]; ok {
		return t
	}
	for _, suffix := range []string{"_sum", "_count", "_bucket"} {
		if t, ok := e.types[strings.TrimSuffix(name, suffix)]; ok && strings.HasSuffix(name, suffix) {
			return t
		}
	}
	return ""
}

// find returns the samples named name whose labels include match.
func (e *exposition) find(name string, match map[string]string) []sample {
	var out []sample
	for _, s := range e.samples {
		if s.name != name {
			continue
		}
		ok := true
		for k, v := range match {
			if s.labels[k] != v {
				ok = false
			}
		}
		if ok {
			out = append(out, s)
		}
	}
	return out
}

// missing lists what of want the scrape lacks, in words; nil when it has all.
func (e *exposition) missing(want []wantedMetric) []string {
	var out []string
	for _, w := range want {
		got := e.find(w.name, nil)
		if len(got) == 0 {
			out = append(out, w.name+": no series"+e.near(w.name))
			continue
		}
		if typ := e.typeOf(w.name); typ != w.typ {
			out = append(out, fmt.Sprintf("%s: type %q, want %q", w.name, typ, w.typ))
		}
		for _, s := range got {
			for _, l := range w.labels {
				if _, ok := s.labels[l]; !ok {
					out = append(out, fmt.Sprintf("%s: series %v has no label %q", w.name, s.labels, l))
				}
			}
		}
	}
	return out
}

// near lists scraped names sharing the first three words of name, to show
// what the exporter calls a metric that is not where metrics.txt says.
func (e *exposition) near(name string) string {
	parts := strings.SplitN(name, "_", 4)
	prefix := strings.Join(parts[:min(3, len(parts))], "_")
	seen := map[string]bool{}
	for _, s := range e.samples {
		if strings.HasPrefix(s.name, prefix) {
			seen[s.name] = true
		}
	}
	if len(seen) == 0 {
		return ""
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) > 12 {
		names = append(names[:12], "...")
	}
	return " (scraped: " + strings.Join(names, ", ") + ")"
}

func scrape(ctx context.Context, url string) (*exposition, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return parseExposition(string(b))
}

func TestParseExposition(t *testing.T) {
	e, err := parseExposition(`# HELP x_total a counter
# TYPE x_total counter
x_total{client_id="a|b->c",topic="t"} 3.0
# TYPE g gauge
g 1.5E8
y_sum{gc="G1 Young"} 0.25
# TYPE y summary
`)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.find("x_total", map[string]string{"client_id": "a|b->c", "topic": "t"}); len(got) != 1 || got[0].value != 3 {
		t.Errorf("x_total: got %v", got)
	}
	if got := e.find("g", nil); len(got) != 1 || got[0].value != 1.5e8 {
		t.Errorf("g: got %v", got)
	}
	if got := e.typeOf("y_sum"); got != "summary" {
		t.Errorf("type of y_sum: got %q, want summary", got)
	}
	miss := e.missing([]wantedMetric{{"x_total", "counter", []string{"topic"}}, {"g", "gauge", nil}, {"x_total", "counter", []string{"partition"}}, {"absent", "gauge", nil}})
	if len(miss) != 2 || !strings.Contains(miss[0], `no label "partition"`) || !strings.Contains(miss[1], "absent: no series") {
		t.Errorf("missing: got %q, want the partition label and the absent metric", miss)
	}
	for _, bad := range []string{"x{a=\"b} 1", "x{a} 1", "x", "x 1x"} {
		if _, err := parseExposition(bad); err == nil {
			t.Errorf("parseExposition(%q): no error", bad)
		}
	}
}

// TestMetricsOfARealWorker runs a worker with the Prometheus JMX exporter
// agent and the image's jmx-exporter.yaml, replicates a topic with a
// MirrorSourceConnector, and checks that every metric of metrics.txt is
// scraped with its type and labels; then stops the connector and checks
// what a STOPPED connector looks like (status "stopped", no task series), the
// shape the alerts rely on to stay quiet during a cutover.
func TestMetricsOfARealWorker(t *testing.T) {
	want := readWantedMetrics(t)
	sb := sandboxtest.Dedicated(t, sandbox.Config{Workers: 1, JMXExporter: true})
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	metricsURL := sb.Workers()[0].MetricsURL()
	if metricsURL == "" {
		t.Fatal("worker has no metrics URL")
	}

	const topic, records = "orders", 200
	for _, b := range []string{sb.Source().Bootstrap(), sb.Target().Bootstrap()} {
		if err := sandbox.CreateTopic(ctx, b, topic, 2); err != nil {
			t.Fatal(err)
		}
	}
	produce := func() {
		var msgs []*sarama.ProducerMessage
		for i := range records / 2 {
			msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Partition: int32(i % 2), Value: sarama.StringEncoder(strconv.Itoa(i))})
		}
		produceToPartitions(t, sb.Source().Bootstrap(), msgs)
	}
	produce()

	client, err := connect.New(sb.ConnectURL())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := connect.MirrorSource{
		Name: "mirror", SourceBootstrap: sb.Source().Bootstrap(), TargetBootstrap: sb.Target().Bootstrap(),
		Topics: []string{topic}, TasksMax: 2, IsolationLevel: "read_committed",
	}.Config()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Create(ctx, "mirror", cfg, connect.InitialRunning); err != nil {
		t.Fatal(err)
	}
	if _, err := client.WaitRunning(ctx, "mirror"); err != nil {
		t.Fatal(err)
	}
	produce() // records that arrive while the tasks run: rates and latencies

	// Rates, commit percentages and per-partition metrics appear over the
	// first offset commits (every 10 s): scrape until all are there.
	var e *exposition
	var miss []string
	for {
		e, err = scrape(ctx, metricsURL)
		if err == nil {
			miss = e.missing(want)
			var copied float64
			for _, s := range e.find("kafka_connect_mirror_source_connector_record_count", map[string]string{"topic": topic}) {
				copied += s.value
			}
			if len(miss) == 0 && copied == records {
				break
			}
			if copied != records {
				miss = append(miss, fmt.Sprintf("record_count of %s: %v, want %d", topic, copied, records))
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("scrape of %s after %v: error %v; missing or wrong:\n%s", metricsURL, ctx.Err(), err, strings.Join(miss, "\n"))
		case <-time.After(2 * time.Second):
		}
	}
	t.Logf("scraped %d series; all %d metrics of metrics.txt present", len(e.samples), len(want))

	// MirrorMaker 2's per-partition beans carry the source alias from Kafka
	// 4.0 on; 3.x adds it only with add.source.alias.to.metrics=true, and the
	// exporter's second rule then gives series without it.
	latency := map[string]string{"source": "source", "target": "target", "topic": topic, "partition": "0"}
	if strings.HasPrefix(sb.KafkaVersion(), "3.") {
		delete(latency, "source")
		for _, s := range e.find("kafka_connect_mirror_source_connector_replication_latency_ms_max", latency) {
			if _, ok := s.labels["source"]; ok {
				t.Errorf("Kafka %s: %v has a source label, which a 3.x bean does not carry", sb.KafkaVersion(), s.labels)
			}
		}
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
	}{
		{"kafka_connect_connector_status", map[string]string{"connector": "mirror", "status": "running"}},
		{"kafka_connect_connector_task_status", map[string]string{"connector": "mirror", "task": "0", "status": "running"}},
		{"kafka_connect_connector_task_status", map[string]string{"connector": "mirror", "task": "1", "status": "running"}},
		{"kafka_connect_worker_connector_running_task_count", map[string]string{"connector": "mirror"}},
		{"kafka_connect_mirror_consumer_records_lag", map[string]string{"source": "source", "target": "target", "connector": "mirror", "topic": topic, "partition": "1"}},
		{"kafka_connect_mirror_source_connector_replication_latency_ms_max", latency},
		{"kafka_connect_worker_rebalance_leader", map[string]string{"leader": sb.ConnectURL() + "/"}},
		{"kafka_producer_producer_record_send_total", map[string]string{"client_id": "connector-producer-mirror-0"}},
		{"kafka_consumer_consumer_last_poll_seconds_ago", map[string]string{"client_id": "source->target|mirror-1|replication-consumer"}},
	} {
		if got := e.find(c.name, c.labels); len(got) != 1 {
			t.Errorf("%s%v: got %d series, want 1", c.name, c.labels, len(got))
		}
	}
	if got := e.find("kafka_connect_worker_connector_running_task_count", map[string]string{"connector": "mirror"}); len(got) == 1 && got[0].value != 2 {
		t.Errorf("running tasks of mirror: got %v, want 2", got[0].value)
	}
	// A label value never holds another key: the first jmx-exporter.yaml
	// let client_id swallow ", topic=..., partition=..." and kept JMX's quotes.
	for _, s := range e.samples {
		for k, v := range s.labels {
			if strings.Contains(v, "=") || strings.Contains(v, `"`) {
				t.Errorf("%s: label %s=%q holds another key or quotes", s.name, k, v)
			}
		}
	}

	if err := client.Stop(ctx, "mirror"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.WaitStopped(ctx, "mirror"); err != nil {
		t.Fatal(err)
	}
	for {
		e, err = scrape(ctx, metricsURL)
		if err == nil && len(e.find("kafka_connect_connector_status", map[string]string{"connector": "mirror", "status": "stopped"})) == 1 &&
			len(e.find("kafka_connect_connector_task_status", map[string]string{"connector": "mirror"})) == 0 &&
			len(e.find("kafka_connect_worker_connector_running_task_count", map[string]string{"connector": "mirror"})) == 0 &&
			len(e.find("kafka_connect_mirror_consumer_records_lag", map[string]string{"connector": "mirror"})) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			var got []string
			for _, s := range e.samples {
				if s.labels["connector"] == "mirror" || strings.Contains(s.labels["client_id"], "mirror") {
					got = append(got, fmt.Sprintf("%s%v", s.name, s.labels))
				}
			}
			slices.Sort(got)
			t.Fatalf("stopped connector: want status stopped and no task series; got (%v):\n%s", err, strings.Join(got, "\n"))
		case <-time.After(2 * time.Second):
		}
	}
}
