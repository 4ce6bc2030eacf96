//go:build sandbox

package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
)

// belowEmitSyncs is the Kafka version of TestOffsetSyncsBelow39: the newest
// release without emit.offset-syncs.enabled.
const belowEmitSyncs = "3.8.1"

// TestOffsetSyncsBelow39 runs the cutover on a real Kafka 3.8 worker, which
// always writes offset syncs. Without a decision the precheck fails and
// names the version and the topic (before, it only warned and MM2 then
// stalled 60 s per sync on a missing topic). With the opt-in (the topic on
// the target, replication factor 1) the cutover completes with 0 lost, and
// the acceptance check expects exactly that topic.
func TestOffsetSyncsBelow39(t *testing.T) {
	sb := sandboxtest.Dedicated(t, sandbox.Config{KafkaVersion: belowEmitSyncs, Workers: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var out bytes.Buffer
	log := slog.New(slog.NewTextHandler(testWriter{t}, nil))
	sc, err := newScenario(sb, log, &out, false, "", "identity")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sc.dir)
	if err := sc.start(ctx); err != nil {
		t.Fatal(err)
	}
	defer sc.traffic.Stop()

	if err := sc.newCLI(); err != nil {
		t.Fatal(err)
	}
	err = sc.cli.precheck(ctx)
	if app.ExitStatus(err) != app.ExitCheckFailed {
		t.Fatalf("precheck without a decision: %v (exit %d), want a failed check", err, app.ExitStatus(err))
	}
	for _, want := range []string{"Kafka " + belowEmitSyncs, "mm2-offset-syncs.target.internal on the source cluster"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the failed precheck does not say %q:\n%v", want, err)
		}
	}

	sc.offsetSyncs = &connect.OffsetSyncsTopic{Location: "target", ReplicationFactor: 1}
	out.Reset()
	if err := sc.cutover(ctx); err != nil {
		t.Fatalf("cutover with the offset-syncs opt-in: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "offset-syncs-topic-on-target") || !strings.Contains(out.String(), "exactly mm2-offset-syncs.source.internal") {
		t.Errorf("the acceptance checks do not expect the opted-in topic:\n%s", out.String())
	}
	res, err := sc.finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Kafka %s with offset syncs on the target: %d source records, %d lost, %d duplicated", belowEmitSyncs, res.Records, res.Lost, res.Duplicated)
	if res.Lost != 0 || res.Duplicated != 0 || res.Records == 0 {
		t.Errorf("%d records, %d lost, %d duplicated", res.Records, res.Lost, res.Duplicated)
	}
}
