package plan

import (
	"encoding/json"
	"maps"
)

// ClaimKey is the connector configuration key under which an apply records
// which plan created the connector: the value is that plan's [Plan.Claim].
// Connect keeps it with the rest of the configuration, and neither
// MirrorSourceConnector nor its tasks read it. Creating a connector is the
// one write Kafka Connect makes atomic (a second POST of the same name is
// answered 409), so the claim decides between two applies of different
// plans racing for one connector: only the plan whose apply created it may
// write its offsets or resume it. The config digest leaves the key out.
const ClaimKey = "mm2cutover.plan.claim"

// Claim identifies what applying the plan writes: the connector, the
// clusters, the configuration's digest and every partition's offset. Two
// plans with the same claim write the same thing, so a plan made again
// from an unchanged snapshot claims the connector its first apply created.
// It is "sha256:" and 64 hex digits.
func (p *Plan) Claim() string {
	type entry struct {
		Topic     string `json:"t"`
		Partition int32  `json:"p"`
		Offset    *int64 `json:"o"`
	}
	es := make([]entry, 0, len(p.Entries))
	for _, e := range p.Entries {
		x := entry{Topic: e.Partition.Topic, Partition: e.Partition.Partition}
		if m, ok := e.Offset.Get(); ok {
			x.Offset = &m
		}
		es = append(es, x)
	}
	b, _ := json.Marshal(struct { // always marshals
		Connector, Source, Target, Alias, Config string
		Entries                                  []entry
	}{p.ConnectorName, p.SourceClusterID, p.TargetClusterID, p.SourceAlias, p.ConfigDigest, es})
	return digest(b)
}

// WithClaim returns a copy of config that records the plan's claim under
// [ClaimKey]: the configuration an apply creates the connector with.
func (p *Plan) WithClaim(config map[string]string) map[string]string {
	c := maps.Clone(config)
	if c == nil {
		c = map[string]string{}
	}
	c[ClaimKey] = p.Claim()
	return c
}

// withoutClaim returns config without [ClaimKey], a copy only when it held
// the key.
func withoutClaim(config map[string]string) map[string]string {
	if _, ok := config[ClaimKey]; !ok {
		return config
	}
	c := maps.Clone(config)
	delete(c, ClaimKey)
	return c
}
