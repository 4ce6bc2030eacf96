package verify_test

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/verify"
)

// onWindow is a slog.Handler that runs do once, when Precheck logs that its
// stability window begins: after it read the target's end offsets the first
// time, before it reads them again. A test plays a writer of the target
// there, without sleeping.
type onWindow struct {
	once sync.Once
	do   func()
}

func (h *onWindow) Enabled(context.Context, slog.Level) bool { return true }
func (h *onWindow) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, "reading the group's offsets twice") {
		h.once.Do(h.do)
	}
	return nil
}
func (h *onWindow) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *onWindow) WithGroup(string) slog.Handler      { return h }

// quietSetup makes a topic of one partition on both clusters, one record
// on the source and the old job's group committed at its end.
func quietSetup(ctx context.Context, t *testing.T, sb *sandbox.Sandbox, source *kafkaadmin.Client, what string) (topic, group string) {
	t.Helper()
	topic, group = unique(what), unique(what+"-flink")
	for _, b := range []string{sb.Source().Bootstrap(), sb.Target().Bootstrap()} {
		if err := sandbox.CreateTopic(ctx, b, topic, 1); err != nil {
			t.Fatal(err)
		}
	}
	produce(ctx, t, sb.Source().Bootstrap(), topic, "r0")
	if err := source.CommitOffsets(ctx, group, map[kafkaadmin.TopicPartition]int64{{Topic: topic, Partition: 0}: 1}); err != nil {
		t.Fatal(err)
	}
	return topic, group
}

// TestPrecheckTargetQuietAbortMarker: a transaction left open on a target
// topic is aborted during the stability window — as its coordinator does
// once it times out — and its abort marker moves the target's end offset
// without a data record. target-quiet passes and says why (before, it
// failed: it compared end offsets only).
func TestPrecheckTargetQuietAbortMarker(t *testing.T) {
	sb := sandboxtest.Shared(t)
	source, target := clients(t, sb)
	c, err := connect.New(sb.ConnectURL())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic, group := quietSetup(ctx, t, sb, source, "marker")

	conf := sandbox.NewSaramaConfig()
	conf.Producer.Idempotent = true
	conf.Producer.Transaction.ID = unique("left-open")
	conf.Producer.Partitioner = sarama.NewManualPartitioner
	conf.Net.MaxOpenRequests = 1
	p, err := sarama.NewSyncProducer([]string{sb.Target().Bootstrap()}, conf)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.BeginTxn(); err != nil {
		t.Fatal(err)
	}
	if err := p.SendMessages([]*sarama.ProducerMessage{{Topic: topic, Value: sarama.StringEncoder("left open")}}); err != nil {
		t.Fatal(err)
	}
	abort := &onWindow{do: func() {
		if err := p.AbortTxn(); err != nil {
			t.Error(err)
		}
	}}
	name := unique("marker")
	r, err := verify.Precheck(ctx, c, source, target, verify.PrecheckSpec{
		Group: group, Topics: []string{topic}, StabilityWindow: 2 * time.Second, Config: mirrorConfig(sb, name, topic), Connector: name,
		Logger: slog.New(abort),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := wantChecks(t, "abort marker", r, "target-quiet", verify.Pass); len(got) == 1 {
		mustContain(t, "abort marker", got[0].Detail, "the end offset of 1 moved by transaction markers only")
	}
}

// TestPrecheckTargetQuietMissingSourceTopic: one source topic in scope does
// not exist, and the target topic of another is written during the window.
// source-topics fails, and target-quiet still checks the topics that exist
// (before, it was silently absent).
func TestPrecheckTargetQuietMissingSourceTopic(t *testing.T) {
	sb := sandboxtest.Shared(t)
	source, target := clients(t, sb)
	c, err := connect.New(sb.ConnectURL())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic, group := quietSetup(ctx, t, sb, source, "missing")
	missing := unique("never-created")
	write := &onWindow{do: func() { produce(ctx, t, sb.Target().Bootstrap(), topic, "stray") }}
	name := unique("missing")
	cfg, err := connect.MirrorSource{Name: name, SourceBootstrap: sb.Source().Bootstrap(), TargetBootstrap: sb.Target().Bootstrap(),
		Topics: []string{topic, missing}}.Config()
	if err != nil {
		t.Fatal(err)
	}
	r, err := verify.Precheck(ctx, c, source, target, verify.PrecheckSpec{
		Group: group, Topics: []string{topic, missing}, StabilityWindow: 2 * time.Second, Config: cfg, Connector: name,
		Logger: slog.New(write),
	})
	if err != nil {
		t.Fatal(err)
	}
	wantChecks(t, "missing source topic", r, "source-topics", verify.Fail)
	if got := wantChecks(t, "missing source topic", r, "target-quiet", verify.Fail); len(got) == 1 {
		mustContain(t, "missing source topic", got[0].Detail, "1 target topic written during the 2s window: "+topic)
	}
}

// TestPrecheckWhereMM2Writes runs the precheck with the connector
// configurations of a real estate that point MM2 elsewhere than the
// clusters the tool reads — the producer overridden to the source, the
// target addresses those of the source, Connect workers whose own cluster
// is not the target — and each fails by name; Connect's internal topics,
// named as the worker image names them, pass, and a topic that is not one
// fails. The observation of the re-checks reads the same clusters.
func TestPrecheckWhereMM2Writes(t *testing.T) {
	sb := sandboxtest.Shared(t)
	source, target := clients(t, sb)
	c, err := connect.New(sb.ConnectURL())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	topic, group := quietSetup(ctx, t, sb, source, "writes")
	storage := verify.WorkerStorage{}
	for _, kv := range sb.WorkerEnv("127.0.0.1", 0) {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "CONNECT_CONFIG_STORAGE_TOPIC":
			storage.ConfigTopic = v
		case "CONNECT_OFFSET_STORAGE_TOPIC":
			storage.OffsetTopic = v
		case "CONNECT_STATUS_STORAGE_TOPIC":
			storage.StatusTopic = v
		case "CONNECT_REPLICATION_FACTOR":
			storage.ReplicationFactor, _ = strconv.Atoi(v)
		}
	}
	srcID, err := source.ClusterID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tgtID, err := target.ClusterID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	name := unique("writes")
	precheck := func(what string, src, tgt *kafkaadmin.Client, edit func(map[string]string), storage verify.WorkerStorage) *verify.PrecheckReport {
		t.Helper()
		cfg := mirrorConfig(sb, name, topic)
		if edit != nil {
			edit(cfg)
		}
		r, err := verify.Precheck(ctx, c, src, tgt, verify.PrecheckSpec{
			Group: group, Topics: []string{topic}, StabilityWindow: time.Second, Config: cfg, Connector: name, WorkerStorage: &storage,
		})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for _, ch := range r.Checks {
			switch ch.Name {
			case "worker-cluster", "connector-clusters", "connect-internal-topics":
				t.Logf("%s: %s %s: %s", what, ch.Verdict, ch.Name, ch.Detail)
			}
		}
		return r
	}

	r := precheck("as configured", source, target, nil, storage)
	wantChecks(t, "as configured", r, "worker-cluster", verify.Pass)
	wantChecks(t, "as configured", r, "connector-clusters", verify.Pass)
	wantChecks(t, "as configured", r, "connect-internal-topics", verify.Pass)
	w, err := verify.ObserveWriters(ctx, c, target, mirrorConfig(sb, name, topic))
	if err != nil || w.WorkerClusterID != tgtID || w.ProducerClusterID != tgtID || w.ProducerOverride != "" || w.Strimzi != nil {
		t.Errorf("ObserveWriters = %+v, %v; want the target %s twice", w, err, tgtID)
	}

	toSource := func(c map[string]string) { c["producer.override.bootstrap.servers"] = sb.Source().Bootstrap() }
	r = precheck("producer to the source", source, target, toSource, storage)
	if got := wantChecks(t, "producer to the source", r, "worker-cluster", verify.Fail); len(got) == 1 {
		mustContain(t, "producer to the source", got[0].Detail, "reaches cluster "+srcID+", not the target "+tgtID)
	}
	cfg := mirrorConfig(sb, name, topic)
	toSource(cfg)
	if w, err := verify.ObserveWriters(ctx, c, target, cfg); err != nil || w.ProducerClusterID != srcID {
		t.Errorf("ObserveWriters with the producer on the source = %+v, %v; want producer cluster %s", w, err, srcID)
	}

	r = precheck("target addresses of the source", source, target, func(c map[string]string) {
		c["target.cluster.bootstrap.servers"] = sb.Source().Bootstrap()
	}, storage)
	if got := wantChecks(t, "target addresses of the source", r, "connector-clusters", verify.Fail); len(got) == 1 {
		mustContain(t, "target addresses of the source", got[0].Detail, "target.cluster.bootstrap.servers "+sb.Source().Bootstrap()+" reaches cluster "+srcID)
	}

	bad := storage
	bad.StatusTopic = topic // a plain topic, not the workers'
	r = precheck("a status topic that is not Connect's", source, target, nil, bad)
	if got := wantChecks(t, "a status topic that is not Connect's", r, "connect-internal-topics", verify.Fail); len(got) == 1 {
		mustContain(t, "a status topic that is not Connect's", got[0].Detail, `status.storage.topic `+topic+` has cleanup.policy "delete", not compact`)
	}

	// The clusters swapped: the workers' own cluster is not the "target".
	r = precheck("workers on another cluster", target, source, func(c map[string]string) {
		c["source.cluster.bootstrap.servers"], c["target.cluster.bootstrap.servers"] = sb.Target().Bootstrap(), sb.Source().Bootstrap()
	}, storage)
	if got := wantChecks(t, "workers on another cluster", r, "worker-cluster", verify.Fail); len(got) == 1 {
		mustContain(t, "workers on another cluster", got[0].Detail, "the Connect workers' own Kafka cluster is "+tgtID, "not the target "+srcID)
	}
	wantChecks(t, "workers on another cluster", r, "connect-internal-topics", verify.Warn)
}
