package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
)

// stepCost is what one step of the command line logged it cost
// (app.CostMessage): per cluster, the requests by kind and connections.
type stepCost struct {
	source, target map[string]int64 // by kind, and "connections"
}

// costOf reads the cost line a step logged at debug level.
func costOf(t *testing.T, stderr string) stepCost {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(stderr))
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, "msg=\""+app.CostMessage+"\"") {
			continue
		}
		out := stepCost{source: parseCost(t, line, "source"), target: parseCost(t, line, "target")}
		return out
	}
	t.Fatalf("no %q line in the step's log:\n%s", app.CostMessage, stderr)
	return stepCost{}
}

// parseCost reads key="N requests on M connections: a Kind, b Kind" of a
// log line.
func parseCost(t *testing.T, line, key string) map[string]int64 {
	t.Helper()
	i := strings.Index(line, " "+key+"=\"")
	if i < 0 {
		t.Fatalf("no %s= in %s", key, line)
	}
	q, err := strconv.QuotedPrefix(line[i+len(key)+2:])
	if err != nil {
		t.Fatal(err)
	}
	v, _ := strconv.Unquote(q)
	out := map[string]int64{}
	head, kinds, _ := strings.Cut(v, ": ")
	var req, conns int64
	if _, err := fmt.Sscanf(head, "%d requests on %d connections", &req, &conns); err != nil {
		t.Fatalf("%s: %q: %v", key, v, err)
	}
	out["requests"], out["connections"] = req, conns
	for _, k := range strings.Split(kinds, ", ") {
		if k == "" {
			continue
		}
		var n int64
		var kind string
		if _, err := fmt.Sscanf(k, "%d %s", &n, &kind); err != nil {
			t.Fatalf("%s: %q: %v", key, k, err)
		}
		out[kind] = n
	}
	return out
}

// TestCLIStepCost pins what `plan` and `apply` cost the clusters, as the
// command line logs it: each step reads each cluster's description and
// metadata once and shares them among its checks, over one connection
// per broker; the apply's recheck reads what can change — the group's
// members and commits, the source's bounds (earliest and latest only), the
// target's ends — and costs no more than one raw read of each cluster.
func TestCLIStepCost(t *testing.T) {
	sb := sandboxtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	prefix := "cost-" + strconv.FormatInt(time.Now().UnixNano()%1e6, 36)
	topic, group, connector := prefix+"-t", prefix+"-g", prefix+"-c"
	const parts = 12
	for _, bs := range []string{sb.Source().Bootstrap(), sb.Target().Bootstrap()} {
		if err := sandbox.CreateTopic(ctx, bs, topic, parts); err != nil {
			t.Fatal(err)
		}
	}
	var msgs []*sarama.ProducerMessage
	for p := range int32(parts) {
		msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(strconv.Itoa(int(p))), Value: sarama.StringEncoder("v")})
	}
	if err := sandbox.Produce(ctx, sb.Source().Bootstrap(), msgs); err != nil {
		t.Fatal(err)
	}
	admin, err := kafkaadmin.NewClient(kafkaadmin.Config{BootstrapServers: []string{sb.Source().Bootstrap()}})
	if err != nil {
		t.Fatal(err)
	}
	var tps []kafkaadmin.TopicPartition
	for p := range int32(parts) {
		tps = append(tps, kafkaadmin.TopicPartition{Topic: topic, Partition: p})
	}
	ends, err := admin.EndOffsets(ctx, tps) // the producer's partitioner chose where the records went
	if err != nil {
		t.Fatal(err)
	}
	commits := map[kafkaadmin.TopicPartition]int64{}
	for _, tp := range tps {
		commits[tp] = ends[tp]
	}
	if err := admin.CommitOffsets(ctx, group, commits); err != nil {
		t.Fatal(err)
	}
	// The target's new partitions lead before the steps run: a broker may
	// answer NOT_LEADER for a moment after the topic is created, and the
	// retry would read the metadata again.
	targetAdmin, err := kafkaadmin.NewClient(kafkaadmin.Config{BootstrapServers: []string{sb.Target().Bootstrap()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := targetAdmin.LogBounds(ctx, tps); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.LogBounds(ctx, tps); err != nil {
		t.Fatal(err)
	}
	common := []string{"-log-level", "debug", "-plan", t.TempDir() + "/plan.json",
		"-source-bootstrap", sb.Source().Bootstrap(), "-target-bootstrap", sb.Target().Bootstrap(),
		"-connect-url", sb.ConnectURL(), "-connector", connector, "-group", group, "-topics", topic,
		"-stability-window", "1ms", "-connector-properties", props(t, "replication.factor=1\n")}
	// A step answers its reads of the clusters' metadata and description
	// from what it read for kafkaadmin.StepMetadataAge: on a loaded machine
	// a step that runs longer reads them again, as it should. A retry (a
	// broker that did not answer in time) adds requests too: such a run is
	// not the shape pinned here, and the pair of steps runs again, up to
	// three times.
	costs := map[string]stepCost{}
	took := map[string]time.Duration{}
	for attempt := 1; ; attempt++ {
		retried := false
		for _, step := range []string{"plan", "apply"} {
			var out, errb bytes.Buffer
			start := time.Now()
			if code := run(append([]string{step}, common...), &out, &errb); code != app.ExitOK {
				t.Fatalf("%s: exit %d\n%s", step, code, errb.String())
			}
			took[step] = time.Since(start).Round(time.Millisecond)
			costs[step] = costOf(t, errb.String())
			if step == "plan" && (!strings.Contains(out.String(), "applicable     yes") || strings.Contains(out.String(), "TOPIC")) {
				t.Errorf("plan printed, want the summary and no table:\n%s", out.String())
			}
			for _, l := range strings.Split(errb.String(), "\n") {
				if strings.Contains(l, "kafkaadmin: metadata request") || strings.Contains(l, "kafkaadmin: retrying") {
					t.Logf("%s: %s", step, l) // what a failure below has to explain
				}
				retried = retried || strings.Contains(l, "kafkaadmin: retrying")
			}
			t.Logf("%s (%v): source %v; target %v", step, took[step], costs[step].source, costs[step].target)
		}
		if !retried || attempt == 3 {
			break
		}
		t.Logf("attempt %d retried a request: again", attempt)
	}
	// -table: a row for every partition after the summary.
	var out, errb bytes.Buffer
	if code := run(append([]string{"plan", "-table", "-plan", t.TempDir() + "/table.json"}, common[4:]...), &out, &errb); code != app.ExitOK {
		t.Fatalf("plan -table: exit %d\n%s", code, errb.String())
	}
	if rows := strings.Count(out.String(), "\n"+topic+" "); !strings.Contains(out.String(), "TOPIC") || rows != parts {
		t.Errorf("plan -table printed %d rows, want %d:\n%s", rows, parts, out.String())
	}
	brokers := map[string]int64{"source": int64(len(sb.Source().Nodes())), "target": int64(len(sb.Target().Nodes()))}
	for step, c := range costs {
		for cluster, got := range map[string]map[string]int64{"source": c.source, "target": c.target} {
			// One connection per broker (each one's ApiVersions), the
			// cluster's description and its metadata once (again after
			// each StepMetadataAge the step ran).
			for kind, want := range map[string]int64{"connections": brokers[cluster], "ApiVersions": brokers[cluster]} {
				if got[kind] != want {
					t.Errorf("%s, %s cluster: %d %s, want %d", step, cluster, got[kind], kind, want)
				}
			}
			most := 1 + int64(took[step]/kafkaadmin.StepMetadataAge)
			for _, kind := range []string{"DescribeCluster", "Metadata"} {
				if got[kind] < 1 || got[kind] > most {
					t.Errorf("%s, %s cluster: %d %s, want 1 (at most %d: the step took %v, and reads them again after %v)", step, cluster, got[kind], kind, most, took[step], kafkaadmin.StepMetadataAge)
				}
			}
		}
	}
	// The apply's recheck: on the source the group (its coordinator once,
	// its description, its commits) and the bounds (earliest, latest); on
	// the target the ends. Nothing else.
	wantApply := map[string]map[string]int64{
		"source": {"FindCoordinator": 1, "DescribeGroups": 1, "OffsetFetch": 1, "ListOffsets": 2 * brokers["source"]},
		"target": {"ListOffsets": brokers["target"]},
	}
	for cluster, got := range map[string]map[string]int64{"source": costs["apply"].source, "target": costs["apply"].target} {
		total := brokers[cluster] + got["DescribeCluster"] + got["Metadata"] // with ApiVersions
		for kind, want := range wantApply[cluster] {
			if got[kind] != want {
				t.Errorf("apply, %s cluster: %d %s, want %d", cluster, got[kind], kind, want)
			}
			total += want
		}
		if got["requests"] != total {
			t.Errorf("apply, %s cluster: %d requests, want %d: %v", cluster, got["requests"], total, got)
		}
	}
}
