//go:build sandbox

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/internal/flinklike"
	"github.com/mm2cutover/mm2cutover/internal/kafkaretry"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/verify"
)

// The topology of TestRealisticCutover: three topics, 40 partitions.
const (
	plainTopic   = "ledger-plain"   // plain producer
	txnTopic     = "ledger-txn"     // transactional producer, every third transaction aborted
	compactTopic = "ledger-compact" // compacted, repeated keys and tombstones
)

// ledger produces the test's traffic and remembers every record it wrote,
// by the unique "id" header each record carries.
type ledger struct {
	mu        sync.Mutex
	seq       int
	committed map[string]bool // ids written outside transactions or in committed ones
	aborted   map[string]bool // ids written in aborted transactions
	// inFlight are ids being written: a copy may reach the target before
	// wrote marks them committed.
	inFlight map[string]bool
}

func newLedger() *ledger {
	return &ledger{committed: map[string]bool{}, aborted: map[string]bool{}, inFlight: map[string]bool{}}
}

// record returns the next record for a partition: compacted partitions use
// six keys and every seventh record is a tombstone.
func (l *ledger) record(tp flinklike.Partition) *sarama.ProducerMessage {
	l.mu.Lock()
	l.seq++
	n := l.seq
	l.mu.Unlock()
	id := fmt.Sprintf("%s/%d/%d", tp.Topic, tp.Partition, n)
	l.mu.Lock()
	l.inFlight[id] = true
	l.mu.Unlock()
	m := &sarama.ProducerMessage{Topic: tp.Topic, Partition: tp.Partition, Key: sarama.StringEncoder("k" + strconv.Itoa(n)),
		Value: sarama.StringEncoder("v-" + id), Headers: []sarama.RecordHeader{{Key: []byte("id"), Value: []byte(id)}}, Timestamp: time.Now()}
	if tp.Topic == compactTopic {
		m.Key = sarama.StringEncoder("k" + strconv.Itoa(n%6))
		if n%7 == 0 {
			m.Value = nil
		}
	}
	return m
}

func (l *ledger) wrote(msgs []*sarama.ProducerMessage, committed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range msgs {
		delete(l.inFlight, string(m.Headers[0].Value))
		if committed {
			l.committed[string(m.Headers[0].Value)] = true
		} else {
			l.aborted[string(m.Headers[0].Value)] = true
		}
	}
}

// produce writes one record to each partition: plain and compacted ones
// directly, transactional ones in one transaction, aborted when abort.
func (l *ledger) produce(ctx context.Context, plain sarama.SyncProducer, txn *sandbox.TxnProducer, parts []flinklike.Partition, abort bool) error {
	var direct, inTxn []*sarama.ProducerMessage
	for _, tp := range parts {
		if tp.Topic == txnTopic {
			inTxn = append(inTxn, l.record(tp))
		} else {
			direct = append(direct, l.record(tp))
		}
	}
	if len(direct) > 0 {
		if err := kafkaretry.SendMessages(ctx, plain, direct); err != nil {
			return err
		}
		l.wrote(direct, true)
	}
	if len(inTxn) > 0 {
		if err := txn.Send(ctx, !abort, inTxn...); err != nil {
			return err
		}
		l.wrote(inTxn, !abort)
	}
	return nil
}

// TestRealisticCutover runs the cutover through the CLI, step by step, on
// the shapes real estates have, and proves every source record reached the
// target exactly once:
//
//   - a plain topic, a topic written by a transactional producer with aborted
//     transactions, and a compacted topic with repeated keys and tombstones,
//     compacted while the cutover runs — the record at C of a compacted
//     partition is removed by compaction after MM2 copied it;
//   - C = 0 (partitions that got their first records after resume), C = log
//     end (partitions idle since the old job stopped), log start = C
//     (DeleteRecords up to C) and log start > C (expired records, accepted
//     with -accept-expired);
//   - the old job's committed offsets exported with the real
//     kafka-consumer-groups tool and given to the CLI as a CSV file;
//   - extra connector properties from a -connector-properties file;
//   - every REST call sent to the Connect worker that is not the leader.
//
// verify exits 0; once traffic stops, status reports lag 0 on every
// partition; the target holds no aborted record, no record twice, and every
// record the source still holds.
func TestRealisticCutover(t *testing.T) { realisticCutover(t, "", nil) }

// oldestAdmitted is the oldest Kafka release the cutover admits (Connect
// 3.7 creates connectors STOPPED), and the one TestRealisticCutover37 runs.
const oldestAdmitted = "3.7.2"

// TestRealisticCutover37 runs TestRealisticCutover on Kafka 3.7.2, the
// oldest release admitted, in every test run. Below 3.9 MM2 always writes
// offset syncs: the precheck fails without a decision, naming the version
// and the topic; with the topic on the one-broker target but the default
// replication factor 3 it fails naming offset-syncs.topic.replication.factor
// (before, it only warned, and MM2 stalled after copying a few records);
// with the factor the target holds, the cutover passes as on 4.3.
func TestRealisticCutover37(t *testing.T) {
	realisticCutover(t, oldestAdmitted, func(cli func(args ...string) (int, string), decide func(args ...string)) {
		decide()
		if code, out := cli("precheck"); code != app.ExitCheckFailed || !strings.Contains(out, "Kafka "+oldestAdmitted) || !strings.Contains(out, "mm2-offset-syncs.target.internal on the source cluster") {
			t.Errorf("precheck without an offset-syncs decision: exit %d, want %d naming the version and the topic", code, app.ExitCheckFailed)
		}
		decide("-offset-syncs-location", "target")
		if code, out := cli("precheck"); code != app.ExitCheckFailed || !strings.Contains(out, "offset-syncs.topic.replication.factor is not set (default 3), but the target cluster, which holds the offset-syncs topic mm2-offset-syncs.source.internal MM2 creates, has 1 broker") {
			t.Errorf("precheck with the offset-syncs topic on a one-broker target and factor 3: exit %d, want %d naming the setting", code, app.ExitCheckFailed)
		}
		decide("-offset-syncs-location", "target", "-offset-syncs-replication-factor", "1")
	})
}

// realisticCutover is TestRealisticCutover on Kafka version ("" for the
// sandbox's default). before, if set, runs ahead of the plan step with the
// command line and a way to replace the offset-syncs flags (below 3.9
// they are the location target and replication factor 1).
func realisticCutover(t *testing.T, version string, before func(cli func(args ...string) (int, string), decide func(args ...string))) {
	sb := sandboxtest.Dedicated(t, sandbox.Config{Workers: 2, KafkaVersion: version})
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	src, tgt := sb.Source().Bootstrap(), sb.Target().Bootstrap()
	topics := map[string]int32{plainTopic: 16, txnTopic: 12, compactTopic: 12}
	for name, n := range topics {
		cfg := map[string]string(nil)
		if name == compactTopic {
			cfg = map[string]string{"cleanup.policy": "compact", "segment.ms": "500", "min.cleanable.dirty.ratio": "0.01",
				"min.compaction.lag.ms": "0", "delete.retention.ms": "1000"}
		}
		if err := sandbox.CreateTopicWithConfig(ctx, src, name, n, cfg); err != nil {
			t.Fatal(err)
		}
		if err := sandbox.CreateTopic(ctx, tgt, name, n); err != nil {
			t.Fatal(err)
		}
	}
	p := func(topic string, n int32) flinklike.Partition {
		return flinklike.Partition{Topic: topic, Partition: n}
	}
	zero := []flinklike.Partition{p(plainTopic, 15), p(txnTopic, 11), p(compactTopic, 11)} // first records after resume: C = 0
	idle := []flinklike.Partition{p(plainTopic, 14), p(txnTopic, 10), p(compactTopic, 10)} // none after the old job stops: C = log end
	startAtC, expired := p(plainTopic, 12), p(plainTopic, 13)
	var busy, seeded []flinklike.Partition
	for _, tp := range flinklike.All(topics) {
		if !slices.Contains(zero, tp) {
			seeded = append(seeded, tp)
			if !slices.Contains(idle, tp) {
				busy = append(busy, tp)
			}
		}
	}

	led := newLedger()
	cfg := sandbox.NewSaramaConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	plain, err := sarama.NewSyncProducer([]string{src}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	txn, err := sandbox.NewTxnProducer(src, "ledger-txn-producer")
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	for i := range 12 {
		if err := led.produce(ctx, plain, txn, seeded, i%3 == 2); err != nil {
			t.Fatal(err)
		}
	}

	// The old job replicates under live traffic, then stops with a final
	// checkpoint; the traffic goes on.
	group := "ledger-replicator"
	job, err := flinklike.Start(ctx, flinklike.Config{Source: src, Target: tgt, Group: group, Topics: slices.Sorted(maps.Keys(topics)),
		Checkpoint: 500 * time.Millisecond, ReadCommitted: true})
	if err != nil {
		t.Fatal(err)
	}
	trafficCtx, stopTraffic := context.WithCancel(ctx)
	trafficDone := make(chan error, 1)
	var trafficWG sync.WaitGroup
	defer trafficWG.Wait() // before the producers close
	trafficWG.Add(1)
	go func() {
		defer trafficWG.Done()
		var err error
		for i := 0; err == nil; i++ {
			select {
			case <-trafficCtx.Done():
				trafficDone <- nil
				return
			case <-time.After(150 * time.Millisecond):
			}
			err = led.produce(ctx, plain, txn, busy, i%3 == 2)
		}
		trafficDone <- err
	}()
	defer stopTraffic()
	// Five seconds of replication under traffic at least, and until the job
	// has completed checkpoints over it: on a loaded machine a broker just
	// started can answer COORDINATOR_LOAD_IN_PROGRESS for longer than five
	// seconds, and the job, still retrying its first offset fetch, would be
	// stopped before it replicated anything.
	time.Sleep(5 * time.Second)
	if err := job.WaitCheckpoints(ctx, 6); err != nil {
		t.Fatalf("old job: %v", err)
	}
	if _, err := job.Stop(); err != nil {
		t.Fatalf("old job: %v", err)
	}
	t.Log("the old job stopped; traffic goes on")

	// Retention: log start = C on one partition, log start > C (expired) on another.
	reader, err := kafkaadmin.NewClient(kafkaadmin.Config{BootstrapServers: []string{src}})
	if err != nil {
		t.Fatal(err)
	}
	committed, err := reader.GroupOffsets(ctx, group, []string{plainTopic})
	if err != nil {
		t.Fatal(err)
	}
	cStart := committed[kafkaadmin.TopicPartition{Topic: startAtC.Topic, Partition: startAtC.Partition}]
	cExp := committed[kafkaadmin.TopicPartition{Topic: expired.Topic, Partition: expired.Partition}]
	waitEnd(ctx, t, reader, kafkaadmin.TopicPartition{Topic: expired.Topic, Partition: expired.Partition}, cExp+3)
	admin, err := sarama.NewClusterAdmin([]string{src}, sandbox.NewSaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := admin.DeleteRecords(plainTopic, map[int32]int64{startAtC.Partition: cStart, expired.Partition: cExp + 3}); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	csv := exportOffsets(ctx, t, sb, group, filepath.Join(dir, "offsets.csv"))
	props := filepath.Join(dir, "connector.properties")
	if err := os.WriteFile(props, []byte("# the sandbox's clusters have one broker\nreplication.factor=1\nproducer.override.linger.ms=5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	connectURL := nonLeader(t, sb)
	t.Logf("REST calls go to %s, which is not the Connect leader", connectURL)
	common := []string{"-source-bootstrap", src, "-target-bootstrap", tgt, "-connect-url", connectURL,
		"-connector", "ledger-mirror", "-group", group, "-topics", strings.Join(slices.Sorted(maps.Keys(topics)), ","),
		"-offsets-from", "csv:" + csv, "-connector-properties", props,
		"-accept-expired", fmt.Sprintf("%s:%d", expired.Topic, expired.Partition), "-accepted-by", "realistic-test",
		"-stability-window", "3s", "-readback-timeout", "3m", "-catchup-timeout", "5m",
		"-plan", filepath.Join(dir, "plan.json")}
	for _, kv := range sb.WorkerEnv("127.0.0.1", 0) { // Connect's internal topics, as the workers name them
		k, v, _ := strings.Cut(kv, "=")
		if f := map[string]string{"CONNECT_CONFIG_STORAGE_TOPIC": "-worker-config-topic", "CONNECT_OFFSET_STORAGE_TOPIC": "-worker-offset-topic",
			"CONNECT_STATUS_STORAGE_TOPIC": "-worker-status-topic", "CONNECT_REPLICATION_FACTOR": "-worker-storage-replication-factor"}[k]; f != "" {
			common = append(common, f, v)
		}
	}
	var decision []string
	if strings.HasPrefix(sb.KafkaVersion(), "3.7") || strings.HasPrefix(sb.KafkaVersion(), "3.8") {
		// Below 3.9 MM2 always writes offset syncs: decide where.
		decision = []string{"-offset-syncs-location", "target", "-offset-syncs-replication-factor", "1"}
	}
	runCLI := func(step ...string) (int, string, string) {
		var out, errb strings.Builder
		code := run(append(slices.Concat(common, decision), step...), &out, &errb)
		t.Logf("cutover %s: exit %d\n%s\n%s", strings.Join(step, " "), code, out.String(), errb.String())
		return code, out.String(), errb.String()
	}
	cli := func(step ...string) (int, string) {
		code, out, _ := runCLI(step...)
		return code, out
	}
	if before != nil {
		before(func(step ...string) (int, string) {
			code, out, errs := runCLI(step...)
			return code, out + errs
		}, func(args ...string) { decision = args })
	}
	for _, step := range [][]string{{"plan"}, {"apply"}, {"-yes", "resume"}} {
		if code, _ := cli(step...); code != app.ExitOK {
			t.Fatalf("cutover %v: exit %d", step, code)
		}
	}

	// After resume: the C = 0 partitions get their first records, and the
	// keys of the records at C of the compacted partitions get new values,
	// until compaction removed a record MM2 copied first.
	for range 5 {
		if err := led.produce(ctx, plain, txn, zero, false); err != nil {
			t.Fatal(err)
		}
	}
	removedAtC(ctx, t, reader, led, plain, group)

	if code, _ := cli("verify"); code != app.ExitOK {
		t.Fatalf("verify: exit %d, want 0", code)
	}
	// Enough traffic to prove something, however fast the steps were (a
	// fast run on the Docker backend had written 1,438 records here).
	if err := led.waitWritten(ctx, minWritten, trafficDone); err != nil {
		t.Fatal(err)
	}
	stopTraffic()
	if err := <-trafficDone; err != nil {
		t.Fatalf("traffic: %v", err)
	}

	// Lag 0 on every partition once traffic stops (Connect stores offsets
	// every offset.flush.interval.ms). The bounds of this test are for a
	// loaded machine (CI: three test lanes on two cores, the sandbox in
	// containers), not for the time these steps take on an idle one.
	deadline := time.Now().Add(5 * time.Minute)
	for {
		_, out := cli("-json", "status")
		var rep app.StatusReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("status -json: %v", err)
		}
		behind := 0
		for _, l := range rep.Lag {
			if l.Lag != 0 {
				behind++
			}
		}
		if behind == 0 && len(rep.Lag) == 40 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status after traffic stopped: %d of %d partitions lag", behind, len(rep.Lag))
		}
		time.Sleep(3 * time.Second)
	}

	checkLedger(ctx, t, sb, led, topics)
}

// waitEnd waits until a partition's high watermark reaches end.
func waitEnd(ctx context.Context, t *testing.T, r verify.BoundsReader, tp kafkaadmin.TopicPartition, end int64) {
	t.Helper()
	for {
		b, err := r.LogBounds(ctx, []kafkaadmin.TopicPartition{tp})
		if err != nil {
			t.Fatal(err)
		}
		if b[tp].End >= end {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s did not reach %d", tp, end)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// exportOffsets runs the real kafka-consumer-groups tool, as an operator
// would, and writes the group's committed offsets to path.
func exportOffsets(ctx context.Context, t *testing.T, sb *sandbox.Sandbox, group, path string) string {
	t.Helper()
	var csv []string
	for attempt := 1; ; attempt++ {
		// The tool waits 5 s for the group's coordinator by default (--timeout)
		// and its admin client gives up after 30 s; a loaded machine can take
		// that long to find the coordinator: wait longer, and try again.
		cmd := exec.CommandContext(ctx, "java", "-cp", filepath.Join(sb.KafkaLibs(), "*"), groupsTool(sb.KafkaVersion()),
			"--bootstrap-server", sb.Source().Bootstrap(), "--group", group, "--reset-offsets", "--to-current", "--all-topics", "--dry-run", "--export", "--timeout", "60000")
		out, err := cmd.CombinedOutput()
		csv = csv[:0]
		for line := range strings.Lines(string(out)) {
			if strings.Count(line, ",") == 2 { // the tool may print notices before the CSV
				csv = append(csv, strings.TrimSpace(line))
			}
		}
		if err == nil && len(csv) == 40 {
			break
		}
		if attempt == 3 {
			t.Fatalf("kafka-consumer-groups --export: %v; %d lines, want 40:\n%s", err, len(csv), out)
		}
		t.Logf("kafka-consumer-groups --export, attempt %d: %v\n%s", attempt, err, out)
	}
	if err := os.WriteFile(path, []byte(strings.Join(csv, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// groupsTool is the main class of kafka-consumer-groups.sh in a Kafka
// release: Scala's kafka.admin.ConsumerGroupCommand until 3.7, the tools
// module's Java one from 3.8 (KAFKA-14589).
func groupsTool(version string) string {
	if strings.HasPrefix(version, "3.7") {
		return "kafka.admin.ConsumerGroupCommand"
	}
	return "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
}

// nonLeader returns the URL of a worker that is not the Connect group's
// leader, read from the workers' logs ("leaderUrl='http://...'").
func nonLeader(t *testing.T, sb *sandbox.Sandbox) string {
	t.Helper()
	leaderURL := regexp.MustCompile(`leaderUrl='(http://[^']+)/'`)
	leader := ""
	for _, w := range sb.Workers() {
		f, err := os.Open(w.Log())
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if m := leaderURL.FindStringSubmatch(sc.Text()); m != nil {
				leader = m[1]
			}
		}
		f.Close()
	}
	for _, w := range sb.Workers() {
		if leader != "" && w.URL() != leader {
			return w.URL()
		}
	}
	t.Fatalf("no worker other than the leader %q", leader)
	return ""
}

// removedAtC gives the keys of the records at C of the busy compacted
// partitions new values until compaction has removed at least one of those
// records from the source (MM2 copied them first, right after resume).
func removedAtC(ctx context.Context, t *testing.T, r *kafkaadmin.Client, led *ledger, plain sarama.SyncProducer, group string) {
	t.Helper()
	g, err := r.GroupOffsets(ctx, group, []string{compactTopic})
	if err != nil {
		t.Fatal(err)
	}
	from := map[kafkaadmin.TopicPartition]int64{}
	for tp, c := range g {
		from[tp] = c
	}
	atC, err := r.FirstRecords(ctx, from, kafkaadmin.ReadCommitted)
	if err != nil {
		t.Fatal(err)
	}
	for tp, rec := range atC {
		m := led.record(flinklike.Partition{Topic: tp.Topic, Partition: tp.Partition})
		m.Key = sarama.ByteEncoder(rec.Key)
		if err := kafkaretry.SendMessages(ctx, plain, []*sarama.ProducerMessage{m}); err != nil {
			t.Fatal(err)
		}
		led.wrote([]*sarama.ProducerMessage{m}, true)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		now, err := r.FirstRecords(ctx, from, kafkaadmin.ReadCommitted)
		if err != nil {
			t.Fatal(err)
		}
		for tp, rec := range atC {
			if n, ok := now[tp]; !ok || n.Offset != rec.Offset {
				t.Logf("compaction removed the record at C of %s (offset %d) after MM2 copied it", tp, rec.Offset)
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("compaction removed no record at C within 5 minutes")
		}
		time.Sleep(time.Second)
	}
}

// checkLedger reads every partition of both clusters: the target holds no
// record twice, no record of an aborted transaction, nothing the test did
// not write, and every record the source still holds (compaction and the
// accepted retention removed the others).
func checkLedger(ctx context.Context, t *testing.T, sb *sandbox.Sandbox, led *ledger, topics map[string]int32) {
	t.Helper()
	n, err := countLedger(ctx, sb, led, topics, func(s string) string { return s })
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range n.errs {
		t.Error(e)
	}
	t.Logf("%d records on the source, %d lost, %d duplicated, %d aborted on the target, %d foreign; %d written, %d in aborted transactions",
		n.records, n.lost, n.dups, n.aborted, n.foreign, len(led.committed), len(led.aborted))
	// The volume is waitWritten's to ensure (minWritten before the
	// traffic stops); what it cannot ensure is an abort among them.
	if len(led.aborted) == 0 {
		t.Errorf("the traffic proved nothing about aborted transactions: %d records written, none aborted", len(led.committed))
	}
}

// minWritten is how many records the realistic cutover's traffic writes at
// the least (committed; compaction leaves about two thirds of them on the
// source).
const minWritten = 2000

// waitWritten waits until at least n records of the ledger are written
// and committed, while the traffic goes on; it returns the traffic's error
// when the traffic ends first (done is where the traffic reports its end).
func (l *ledger) waitWritten(ctx context.Context, n int, done <-chan error) error {
	for {
		l.mu.Lock()
		got := len(l.committed)
		l.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("traffic: %d of %d records written: %w", got, n, ctx.Err())
		case err := <-done:
			return fmt.Errorf("traffic ended after %d of %d records: %v", got, n, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ledgerCount is what countLedger found; errs name each record amiss.
type ledgerCount struct {
	records, lost, dups, aborted, foreign int
	errs                                  []string
}

// countLedger reads every partition of the source topics and of their
// target topics (target names them), read_committed, and compares them
// with the ledger: records the source still holds that the target lacks
// (lost), target records seen before on their partition (dups), of an
// aborted transaction, or never written (foreign). It reads the source
// first: a record written after that is not counted as lost.
func countLedger(ctx context.Context, sb *sandbox.Sandbox, led *ledger, topics map[string]int32, target func(string) string) (ledgerCount, error) {
	var n ledgerCount
	read := func(bootstrap string, name func(string) string) (map[kafkaadmin.TopicPartition][]kafkaadmin.Record, error) {
		r, err := kafkaadmin.NewClient(kafkaadmin.Config{BootstrapServers: []string{bootstrap}})
		if err != nil {
			return nil, err
		}
		named := kafkaadmin.Topics{}
		for s, p := range topics {
			named[name(s)] = p
		}
		b, err := r.LogBounds(ctx, named.Partitions())
		if err != nil {
			return nil, err
		}
		spans := map[kafkaadmin.TopicPartition]kafkaadmin.Span{}
		for tp, lb := range b {
			spans[tp] = kafkaadmin.Span{From: lb.Start, Until: math.MaxInt64}
		}
		return r.ReadSpans(ctx, spans, kafkaadmin.ReadCommitted)
	}
	source, err := read(sb.Source().Bootstrap(), func(s string) string { return s })
	if err != nil {
		return n, fmt.Errorf("read the source: %w", err)
	}
	tgt, err := read(sb.Target().Bootstrap(), target)
	if err != nil {
		return n, fmt.Errorf("read the target: %w", err)
	}
	id := func(r kafkaadmin.Record) string {
		for _, h := range r.Headers {
			if h.Key == "id" {
				return string(h.Value)
			}
		}
		return ""
	}
	led.mu.Lock()
	defer led.mu.Unlock()
	for _, tp := range kafkaadmin.Topics(topics).Partitions() {
		seen := map[string]int{}
		for _, r := range tgt[kafkaadmin.TopicPartition{Topic: target(tp.Topic), Partition: tp.Partition}] {
			i := id(r)
			seen[i]++
			switch {
			case seen[i] > 1:
				n.dups++
				n.errs = append(n.errs, fmt.Sprintf("%s: %s twice on the target", tp, i))
			case led.aborted[i]:
				n.aborted++
				n.errs = append(n.errs, fmt.Sprintf("%s: %s of an aborted transaction on the target", tp, i))
			case !led.committed[i] && !led.inFlight[i]:
				n.foreign++
				n.errs = append(n.errs, fmt.Sprintf("%s: %q on the target was never written to the source", tp, i))
			}
		}
		for _, r := range source[tp] {
			n.records++
			if seen[id(r)] == 0 {
				n.lost++
				n.errs = append(n.errs, fmt.Sprintf("%s: %s at %d is not on the target", tp, id(r), r.Offset))
			}
		}
	}
	return n, nil
}
