package app

import (
	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
	"github.com/mm2cutover/mm2cutover/verify"
)

// The -offsets-from mm2:TOPIC input: the old job is MirrorMaker 2 in
// dedicated mode (connect-mirror-maker.sh), whose source offsets M are in
// its worker's offsets topic on the target cluster,
// mm2-offsets.<its source alias>.internal, under the connector name
// MirrorSourceConnector. C = M+1 per partition (offsets.Reverse), and the
// plan turns it back into M for the new connector, with the same checks as
// the other inputs (bounds, full partition set).

// mm2Input is the old MirrorMaker's offsets topic as the precheck's input.
func mm2Input(env *Env, s settings.Settings) verify.ConnectorOffsets {
	return verify.ConnectorOffsets{Reader: env.Target, Topic: s.OffsetsTopic, ConnectorTopic: s.OffsetsConnectorTopic, Connector: s.OffsetsConnector, Alias: s.OffsetsAlias, Topics: s.Topics}
}
