package cutover

import (
	"context"
	"fmt"
	"slices"

	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// The -offsets-from mm2:TOPIC input: the old job is MirrorMaker 2 in
// dedicated mode (connect-mirror-maker.sh), whose source offsets M are in
// its worker's offsets topic on the target cluster,
// mm2-offsets.<its source alias>.internal, under the connector name
// MirrorSourceConnector. C = M+1 per partition (offsets.Reverse), and the
// plan turns it back into M for the new connector, with the same checks as
// the other inputs (bounds, full partition set).

// readMM2Offsets reads the old MirrorMaker's stored offsets for the topics
// in scope, as committed offsets C.
func readMM2Offsets(ctx context.Context, env *Env, s Settings) (offsets.GroupOffsets, error) {
	list, err := env.Target.ReadConnectOffsets(ctx, s.OffsetsTopic, s.OffsetsConnector)
	if err != nil {
		return nil, fmt.Errorf("-offsets-from mm2:%s: %w", s.OffsetsTopic, err)
	}
	var inScope []offsets.ConnectOffset
	for _, o := range list {
		if slices.Contains(s.Topics, o.Partition.Topic) {
			inScope = append(inScope, o)
		}
	}
	c, err := offsets.Reverse(s.OffsetsAlias, inScope)
	if err != nil { // an alias that is not the old MirrorMaker's, most likely
		return nil, fmt.Errorf("%w: -offsets-from mm2:%s (connector %s, alias %s): %w", ErrSettings, s.OffsetsTopic, s.OffsetsConnector, s.OffsetsAlias, err)
	}
	return c, nil
}

// mm2Source is the plan's record of the input.
func mm2Source(s Settings) plan.OffsetsSource {
	return plan.OffsetsSource{Kind: plan.FromConnectorOffsets,
		Ref: fmt.Sprintf("mm2:%s connector=%s alias=%s", s.OffsetsTopic, s.OffsetsConnector, s.OffsetsAlias)}
}

// checkMM2Stopped compares two readings of the old MirrorMaker's offsets a
// stability window apart: offsets that moved mean it still runs.
func checkMM2Stopped(cs *Checks, s Settings, first, second offsets.GroupOffsets) {
	var moved []string
	for _, tp := range sortedKeys(first, second) {
		a, aok := first[tp]
		b, bok := second[tp]
		if a != b || aok != bok {
			moved = append(moved, fmt.Sprintf("%s: %s -> %s", tp, present(a, aok), present(b, bok)))
		}
	}
	if len(moved) > 0 {
		cs.add("mm2-offsets-stable", Fail, "%d partitions' offsets in %s moved in %v (%s): the old MirrorMaker still runs; stop it",
			len(moved), s.OffsetsTopic, s.StabilityWindow, listSome(moved, 5))
		return
	}
	cs.add("mm2-offsets-stable", OK, "no offset in %s moved in %v", s.OffsetsTopic, s.StabilityWindow)
}

func sortedKeys(gs ...offsets.GroupOffsets) []kafkaadmin.TopicPartition {
	var out []kafkaadmin.TopicPartition
	for _, g := range gs {
		for tp := range g {
			if !slices.Contains(out, tp) {
				out = append(out, tp)
			}
		}
	}
	kafkaadmin.SortPartitions(out)
	return out
}

func present(c int64, ok bool) string {
	if !ok {
		return "none"
	}
	return fmt.Sprint(c)
}
