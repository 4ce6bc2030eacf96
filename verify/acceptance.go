package verify

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/plan"
)

// offsetSyncsTopics matches MM2's offset-syncs topics, whatever the alias.
const offsetSyncsTopics = `mm2-offset-syncs.*internal`

// Acceptance checks the shape the design insists on: no
// MirrorCheckpointConnector or MirrorHeartbeatConnector on the Connect
// cluster; no mm2-offset-syncs topic on either cluster — or, where the
// connector was configured to write offset syncs (the explicit opt-in for a
// worker below Kafka 3.9, which always writes them), exactly the topic that
// configuration names, on the cluster it names; and the running connector's
// configuration still has the plan's digest. It returns the checks, passed
// or failed, and an error only when a check could not run. Like
// [Precheck], it takes the clients themselves (it lists connectors, reads
// their configurations and matches topics on both clusters).
func Acceptance(ctx context.Context, c *connect.Client, source, target TopicMatcher, p *plan.Plan, connector string) (Checks, error) {
	var out Checks
	statuses, err := c.Connectors(ctx)
	if err != nil {
		return nil, err
	}
	var others []string
	for name := range statuses {
		if name == connector {
			continue
		}
		cfg, err := c.Config(ctx, name)
		if err != nil {
			if errors.Is(err, connect.ErrNotFound) {
				continue // deleted meanwhile
			}
			return nil, err
		}
		switch cfg["connector.class"] {
		case "org.apache.kafka.connect.mirror.MirrorCheckpointConnector", "MirrorCheckpointConnector", "MirrorCheckpoint",
			"org.apache.kafka.connect.mirror.MirrorHeartbeatConnector", "MirrorHeartbeatConnector", "MirrorHeartbeat":
			others = append(others, name+" ("+cfg["connector.class"]+")")
		}
	}
	slices.Sort(others)
	out = append(out, check("no-checkpoint-or-heartbeat-connector", len(others) == 0,
		"none on the Connect cluster", fmt.Sprintf("found %v: the design runs MirrorSourceConnector alone", others)))

	cfg, err := c.Config(ctx, connector)
	if err != nil {
		return nil, err
	}
	info, err := c.ServerInfo(ctx)
	if err != nil {
		return nil, err
	}
	place, err := connect.OffsetSyncs(cfg, info.Version)
	if err != nil {
		return nil, err
	}
	for _, side := range []struct {
		name string
		r    TopicMatcher
	}{{"source", source}, {"target", target}} {
		topics, err := side.r.TopicsMatching(ctx, offsetSyncsTopics)
		if err != nil {
			return nil, err
		}
		out = append(out, offsetSyncsFinding(side.name, topics.Names(), place))
	}

	changed := p.CheckConfig(cfg)
	out = append(out, check("config-digest", changed == nil, "the connector's configuration has the plan's digest "+p.ConfigDigest,
		fmt.Sprintf("the connector was reconfigured after the plan: %v", changed)))
	return out, nil
}

// offsetSyncsFinding judges the offset-syncs topics found on one cluster
// against where the connector's configuration puts them. It is pure.
func offsetSyncsFinding(cluster string, found []string, place connect.OffsetSyncsPlacement) Check {
	if place.Emitted && place.Location == cluster {
		return check("offset-syncs-topic-on-"+cluster, slices.Equal(found, []string{place.Topic}),
			fmt.Sprintf("exactly %s, where the connector was configured to write offset syncs (a worker below Kafka 3.9 always writes them)", place.Topic),
			fmt.Sprintf("found %v, want exactly %s: the connector was configured to write its offset syncs there", found, place.Topic))
	}
	return check("no-offset-syncs-topic-on-"+cluster, len(found) == 0, "no mm2-offset-syncs topic",
		fmt.Sprintf("found %v: emit.offset-syncs.enabled is not false, a worker below 3.9 wrote them, or another MirrorMaker 2 runs", found))
}

// check is a passed check with the detail good, or a failed one with bad.
func check(name string, ok bool, good, bad string) Check {
	if ok {
		return Check{Name: name, Verdict: Pass, Detail: good}
	}
	return Check{Name: name, Verdict: Fail, Detail: bad}
}
