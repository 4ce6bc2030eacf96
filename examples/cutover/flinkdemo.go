//go:build sandbox

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/flinkjob"
	"github.com/mm2cutover/mm2cutover/internal/flinklike"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// startRealFlink is start with the real Flink job (internal/flinkjob) as
// the old job: it replicates under live traffic through two checkpoints and
// is stopped with a savepoint; traffic goes on. The plan takes C from that
// savepoint (-offsets-from flink-savepoint:DIR), or, with sc.fromGroup, from
// the group's commits (the savepoint is then only compared with them).
//
// Every partition gets records before Flink starts: Flink commits nothing
// for a partition it never read a record from, and the precheck would
// block it as missing. Flink commits a savepoint's offsets asynchronously
// while its sources shut down and often does not get to it, so the group
// may lag the savepoint: the records in between are on the target already.
// startRealFlink records how many per partition (savepoint offset minus the
// group's C, sc.groupLag): planned from the group, MM2 copies them again and
// finish expects exactly those; planned from the savepoint, none.
func (sc *scenario) startRealFlink(ctx context.Context) (err error) {
	src, tgt := sc.sb.Source().Bootstrap(), sc.sb.Target().Bootstrap()
	for name, n := range sc.topics {
		if err := sandbox.CreateTopic(ctx, src, name, n); err != nil {
			return err
		}
		if err := sandbox.CreateTopic(ctx, tgt, sc.targetTopic(name), n); err != nil {
			return err
		}
	}
	all := flinklike.All(sc.topics)
	if err := flinklike.Produce(ctx, src, all, 100); err != nil {
		return err
	}
	name := sc.topicNames()[0]
	job, err := flinkjob.Start(ctx, flinkjob.Config{Dir: filepath.Join(sc.dir, "flink"), Source: src, Target: tgt,
		Group: sc.group, Topics: sc.topicNames(), TargetPrefix: strings.TrimSuffix(sc.targetTopic(name), name),
		CheckpointInterval: 2 * time.Second, ExactlyOnce: sc.exactlyOnce, Logger: sc.log})
	if err != nil {
		return err
	}
	defer job.Kill()
	if sc.traffic, err = flinklike.StartTraffic(ctx, src, sc.busy(), trafficBatch, trafficInterval); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			sc.traffic.Stop()
		}
	}()
	sc.log.Info("Flink replicates under live traffic", "flink", job.FlinkVersion(), "job", job.JobID())
	for n, after := 0, int64(0); n < 2; {
		cp, err := job.WaitCheckpoint(ctx, after)
		if err != nil {
			return fmt.Errorf("flink job: %w", err)
		}
		after = cp.ID
		if len(cp.Offsets) == len(all) {
			n++
		}
	}
	if sc.savepoint, err = job.StopWithSavepoint(ctx); err != nil {
		return fmt.Errorf("flink job: %w", err)
	}
	sp, _ := job.LastCheckpoint()
	r, err := kafkaadmin.NewClient(kafkaadmin.Config{BootstrapServers: []string{src}, ClientID: "mm2cutover-demo"})
	if err != nil {
		return err
	}
	g, err := r.GroupOffsets(ctx, sc.group, sc.topicNames())
	if err != nil {
		return err
	}
	sc.groupLag, sc.expectedDup = map[offsets.SourcePartition]int{}, map[offsets.SourcePartition]int{}
	lagging := 0
	for p, s := range sp.Offsets {
		if c, ok := g[p]; ok && s > c {
			sc.groupLag[p] = int(s - c)
			lagging++
		}
	}
	if sc.fromGroup {
		sc.expectedDup = sc.groupLag
	}
	sc.log.Info("Flink stopped with a savepoint; traffic goes on", "savepoint", sc.savepoint,
		"partitions whose commit lags the savepoint", lagging, "plan from", map[bool]string{true: "the group", false: "the savepoint"}[sc.fromGroup])
	return nil
}
