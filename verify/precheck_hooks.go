package verify

import (
	"context"
	"errors"
	"sync"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// The steps of Precheck added for the record-size, permission, other-writer
// and REST checks: each reads what it needs and reports failures to read as
// warnings of its check, so that Precheck goes on.

// targetNames maps each source topic in scope to its target topic; topics
// the policy cannot name are left out (the target-topics check reports
// the policy's error).
func targetNames(spec PrecheckSpec) map[string]string {
	out := make(map[string]string, len(spec.Topics))
	for _, s := range spec.Topics {
		if t, err := spec.Policy.TargetTopic(s); err == nil {
			out[s] = t
		}
	}
	return out
}

// precheckAccess asks both clusters what the tool's principal may do and
// checks it against what the cutover needs. It returns false when the
// principal may not DESCRIBE what Precheck reads next.
func precheckAccess(ctx context.Context, cs *Checks, source, target *kafkaadmin.Client, spec PrecheckSpec, workerVersion string) bool {
	targets := targetNames(spec)
	var syncsOn, syncsTopic string
	if workerVersion != "" {
		if p, err := connect.OffsetSyncs(spec.Config, workerVersion); err == nil && p.Emitted {
			syncsOn, syncsTopic = p.Location, p.Topic
		}
	}
	srcTopics := append([]string(nil), spec.Topics...)
	tgtTopics := make([]string, 0, len(targets)+1)
	for _, s := range sortedKeys(targets) {
		tgtTopics = append(tgtTopics, targets[s])
	}
	switch syncsOn {
	case "source":
		srcTopics = append(srcTopics, syncsTopic)
	case "target":
		tgtTopics = append(tgtTopics, syncsTopic)
	}
	var (
		srcAccess, tgtAccess kafkaadmin.Access
		srcErr, err          error
		wg                   sync.WaitGroup
	)
	wg.Go(func() { srcAccess, srcErr = source.Access(ctx, srcTopics, []string{spec.Group}) })
	wg.Go(func() { tgtAccess, err = target.Access(ctx, tgtTopics, nil) })
	wg.Wait()
	if srcErr != nil {
		cs.add("permissions", Warn, "cannot ask the source brokers what the tool's principal may do: %v", srcErr)
		return true
	}
	if err != nil {
		cs.add("permissions", Warn, "cannot ask the target brokers what the tool's principal may do: %v", err)
		return true
	}
	syncsAccess := srcAccess
	if syncsOn == "target" {
		syncsAccess = tgtAccess
	}
	return checkAccess(cs, srcAccess, tgtAccess, accessNeeds(spec, targets, tgtAccess, syncsOn, syncsTopic, syncsAccess), spec.Config)
}

// targetEndsNow reads the target topics' end offsets, before the
// stability window; nil when they cannot be read (the target-topics check
// then says why).
func targetEndsNow(ctx context.Context, source, target *kafkaadmin.Client, spec PrecheckSpec) map[offsets.SourcePartition]int64 {
	topics, err := existingTopics(ctx, source, spec.Topics) // a missing source topic fails source-topics; the others are checked on
	if err != nil || len(topics) == 0 {
		return nil
	}
	ends, err := TargetEnds(ctx, target, topics, spec.Policy)
	if err != nil {
		return nil
	}
	return ends
}

// precheckTargetQuiet reads, for every target partition whose end offset
// moved during the window, whether the offsets it moved by hold a data
// record — read_uncommitted, so that records a live transactional writer
// wrote (and may still abort) count too — and judges (checkTargetQuiet). An
// end moved by control records only is no writer: the abort marker a
// transaction coordinator writes for a transaction left open on the target
// before the window, once it times out.
func precheckTargetQuiet(ctx context.Context, cs *Checks, target *kafkaadmin.Client, spec PrecheckSpec, before, after map[offsets.SourcePartition]int64, ownState string) {
	targets := targetNames(spec)
	from := map[kafkaadmin.TopicPartition]int64{}
	back := map[kafkaadmin.TopicPartition]offsets.SourcePartition{}
	for sp, b := range before {
		if a, ok := after[sp]; ok && a != b && targets[sp.Topic] != "" {
			tp := kafkaadmin.TopicPartition{Topic: targets[sp.Topic], Partition: sp.Partition}
			from[tp], back[tp] = b, sp
		}
	}
	markersOnly := map[offsets.SourcePartition]bool{}
	if len(from) > 0 {
		first, err := target.FirstRecords(ctx, from, kafkaadmin.ReadUncommitted)
		var perr *kafkaadmin.PartitionErrors
		if err == nil || errors.As(err, &perr) {
			for tp := range from {
				sp := back[tp]
				if perr != nil && perr.Errs[tp] != nil {
					continue // unread: counted as written
				}
				if rec, ok := first[tp]; !ok || rec.Offset >= after[sp] {
					markersOnly[sp] = true // no data record in [before, after)
				}
			}
		}
	}
	checkTargetQuiet(cs, spec.StabilityWindow, targets, before, after, markersOnly, spec.Connector, ownState)
}

// precheckRecordSizes reads the size limits of both clusters and checks
// them (checkRecordSizes).
func precheckRecordSizes(ctx context.Context, cs *Checks, source, target *kafkaadmin.Client, spec PrecheckSpec) {
	f, err := readSizeFacts(ctx, source, target, targetNames(spec))
	if err != nil {
		cs.add("record-size", Warn, "cannot read the size limits: %v; record sizes are not checked", err)
		return
	}
	f.config, f.worker = spec.Config, spec.WorkerProducer
	checkRecordSizes(cs, f)
}

// precheckConnectors lists the Connect cluster's connectors and looks for
// other writers of the cutover's topics (checkOtherConnectors).
func precheckConnectors(ctx context.Context, cs *Checks, c *connect.Client, source, target *kafkaadmin.Client, spec PrecheckSpec, workerVersion string) {
	infos, err := c.ConnectorInfos(ctx)
	if err != nil {
		cs.add("other-mirror-connectors", Warn, "cannot list the Connect cluster's connectors: %v", err)
		return
	}
	states := make(map[string]string, len(infos))
	if all, err := c.Connectors(ctx); err == nil {
		for n, st := range all {
			states[n] = st.Connector.State
		}
	} // without states every other writer counts as running
	ends := newCutoverEnds(spec.Config, source.BootstrapServers(), target.BootstrapServers())
	checkOtherConnectors(cs, infos, states, spec.Connector, ends, targetNames(spec), workerVersion)
}

// connectorState is the state of the named connector, or "" when there is
// no name, no such connector, or Connect cannot say.
func connectorState(ctx context.Context, c *connect.Client, name string) string {
	if name == "" {
		return ""
	}
	st, err := c.Status(ctx, name)
	if err != nil {
		return ""
	}
	return st.Connector.State
}
