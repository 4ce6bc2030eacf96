package connect_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// TestExactlyOnceOnRealWorkers pins what the exactly-once precheck and
// builder rely on, on two real workers started by the image's entrypoint
// with CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT=enabled:
//
//   - every worker validates the builder's exactly-once configuration
//     without an error; read_uncommitted and a connector boundary are
//     refused under exactly.once.support;
//   - an exactly-once connector is created STOPPED, its offsets PATCHed
//     and read back (Connect fences the task producers first);
//   - a worker restarted with exactly-once disabled says so when asked
//     itself, while the other still validates: validate is answered by the
//     worker asked, not forwarded, so every worker must be asked.
func TestExactlyOnceOnRealWorkers(t *testing.T) {
	sb := sandboxtest.Dedicated(t, sandbox.Config{Workers: 2, ExactlyOnce: true})
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	const topic = "eos-orders"
	for _, b := range []*sandbox.Broker{sb.Source(), sb.Target()} {
		if err := sandbox.CreateTopic(ctx, b.Bootstrap(), topic, 2); err != nil {
			t.Fatal(err)
		}
	}
	m := connect.MirrorSource{Name: "eos-mirror", SourceBootstrap: sb.Source().Bootstrap(), TargetBootstrap: sb.Target().Bootstrap(),
		Topics: []string{topic}, ExactlyOnce: true, Extra: map[string]string{"replication.factor": "1"}}
	cfg, err := m.Config()
	if err != nil {
		t.Fatal(err)
	}
	workers := sb.Workers()
	clients := make([]*connect.Client, len(workers))
	for i, w := range workers {
		clients[i] = newClient(t, w.URL())
	}
	validate := func(c *connect.Client, config map[string]string) *connect.ConfigInfos {
		t.Helper()
		infos, err := c.Validate(ctx, connect.MirrorSourceConnectorClass, config)
		if err != nil {
			t.Fatal(err)
		}
		return infos
	}
	for i, c := range clients {
		if fs := connect.ValidationFindings(validate(c, cfg), cfg); len(fs) > 0 {
			t.Errorf("worker %d refuses the exactly-once configuration: %v", i, fs)
		}
	}
	for key, value := range map[string]string{"source.consumer.isolation.level": "read_uncommitted", "transaction.boundary": "connector"} {
		bad := map[string]string{}
		for k, v := range cfg {
			bad[k] = v
		}
		bad[key] = value
		var on []string
		for _, f := range connect.ValidationFindings(validate(clients[0], bad), bad) {
			on = append(on, f.Key+": "+f.Message)
		}
		if len(on) == 0 {
			t.Errorf("%s=%s validated without an error", key, value)
		}
		t.Logf("%s=%s: %v", key, value, on)
	}

	// Created STOPPED, offsets PATCHed (with fencing) and read back.
	if _, err := clients[1].Create(ctx, m.Name, cfg, connect.InitialStopped); err != nil {
		t.Fatal(err)
	}
	if _, err := clients[0].WaitStopped(ctx, m.Name); err != nil {
		t.Fatal(err)
	}
	want := []offsets.ConnectOffset{
		{Partition: offsets.ConnectPartition{Cluster: "source", Topic: topic, Partition: 0}, Offset: offsets.NewMirrorOffset(41)},
		{Partition: offsets.ConnectPartition{Cluster: "source", Topic: topic, Partition: 1}, Offset: offsets.NewMirrorOffset(6)},
	}
	if _, err := clients[1].AlterMirrorOffsets(ctx, m.Name, want); err != nil {
		t.Fatalf("PATCH the offsets of an exactly-once connector: %v", err)
	}
	if _, err := clients[0].WaitMirrorOffsets(ctx, m.Name, want); err != nil {
		t.Fatalf("read back: %v", err)
	}

	// An exactly-once connector with an offsets topic of its own: Kafka
	// Connect 3.8 to 4.3 never answers a PATCH that deletes an offset
	// (ConnectorOffsetBackingStore writes the null to the workers' topic
	// first and to the connector's in the callback, after Worker committed
	// the transaction: "Cannot add partition ... to transaction while in
	// state READY"); the same PATCH without the null is applied, to the
	// connector's own topic.
	own := m
	own.Name, own.Extra = "eos-own", map[string]string{"replication.factor": "1", "offsets.storage.topic": "eos-own-offsets"}
	ownCfg, err := own.Config()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := clients[0].Create(ctx, own.Name, ownCfg, connect.InitialStopped); err != nil {
		t.Fatal(err)
	}
	if _, err := clients[0].WaitStopped(ctx, own.Name); err != nil {
		t.Fatal(err)
	}
	quick, err := connect.New(workers[0].URL(), connect.WithTimeout(15*time.Second), connect.WithRetry(connect.Retry{Attempts: 1}))
	if err != nil {
		t.Fatal(err)
	}
	withNull := []offsets.ConnectOffset{want[0], {Partition: want[1].Partition}}
	_, err = quick.AlterMirrorOffsets(ctx, own.Name, withNull)
	if chained := !strings.HasPrefix(sb.KafkaVersion(), "3.7"); chained != errors.Is(err, connect.ErrOutcomeUnknown) {
		t.Errorf("Kafka %s: PATCH with a null offset of an exactly-once connector with its own offsets topic: %v", sb.KafkaVersion(), err)
	} else {
		t.Logf("Kafka %s: PATCH with a null offset of an exactly-once connector with its own offsets topic: %v", sb.KafkaVersion(), err)
	}
	if _, err := clients[1].AlterMirrorOffsets(ctx, own.Name, want[:1]); err != nil {
		t.Fatalf("PATCH without the null: %v", err)
	}
	if _, err := clients[0].WaitMirrorOffsets(ctx, own.Name, want[:1]); err != nil {
		t.Fatalf("read back: %v", err)
	}

	// One worker without exactly-once support: only its own answer says so.
	w := workers[1]
	if err := w.Stop(ctx); err != nil && !errors.Is(err, sandbox.ErrStopHung) { // 4.3.1 now and then hangs on SIGTERM: killed, as a Pod is
		t.Fatal(err)
	}
	if err := w.SetEnv("CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT=disabled"); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if infos := validate(clients[1], cfg); !connect.WorkerLacksExactlyOnce(infos) {
		t.Errorf("the disabled worker validated the exactly-once configuration: %v", connect.ValidationFindings(infos, cfg))
	} else {
		t.Logf("the disabled worker: %v", connect.ValidationFindings(infos, cfg))
	}
	if infos := validate(clients[0], cfg); connect.WorkerLacksExactlyOnce(infos) {
		t.Errorf("the enabled worker answered for the disabled one: validate is not per worker")
	}
	other, err := clients[0].At(strings.TrimSuffix(w.URL(), "/") + "/")
	if err != nil {
		t.Fatal(err)
	}
	if !connect.WorkerLacksExactlyOnce(validate(other, cfg)) {
		t.Error("Client.At did not reach the disabled worker")
	}
}
