package verify

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// checkTargetQuiet compares the target partitions' end offsets read before
// and after the stability window: a target topic written meanwhile has
// another writer — the old job still running, or another producer — whose
// records MM2's copies would interleave with.
//
// A partition in markersOnly moved by control records alone, no data
// record among them (a transaction marker: the abort of a transaction left
// open on the target before the window): no writer, and it passes.
//
// When the cutover's own connector exists and is not STOPPED (ownState),
// it may be the writer: the check then warns, and apply refuses such a
// connector anyway.
func checkTargetQuiet(cs *Checks, window time.Duration, targets map[string]string, before, after map[offsets.SourcePartition]int64, markersOnly map[offsets.SourcePartition]bool, own, ownState string) {
	const name = "target-quiet"
	type moved struct{ parts, records int64 }
	byTopic := map[string]*moved{}
	markers := 0
	for sp, b := range before {
		a, ok := after[sp]
		if !ok || a == b {
			continue
		}
		if markersOnly[sp] {
			markers++
			continue
		}
		t := targets[sp.Topic]
		if byTopic[t] == nil {
			byTopic[t] = &moved{}
		}
		byTopic[t].parts++
		byTopic[t].records += a - b
	}
	if len(byTopic) == 0 && markers > 0 {
		cs.add(name, Pass, "no data record was written to the %d target partitions in %v: the end offset of %d moved by transaction markers only (a transaction left open on the target, aborted by its coordinator)",
			len(after), window, markers)
		return
	}
	if len(byTopic) == 0 {
		cs.add(name, Pass, "no end offset of the %d target partitions moved in %v", len(after), window)
		return
	}
	var list []string
	for _, t := range sortedKeys(byTopic) {
		m := byTopic[t]
		list = append(list, fmt.Sprintf("%s (%d partition%s, %+d offsets)", t, m.parts, plural(int(m.parts)), m.records))
	}
	if ownState != "" && ownState != connect.StateStopped {
		cs.add(name, Warn, "%d target topic%s written during the %v window: %s; the cutover's connector %s is %s and may be the writer (apply refuses a connector that is not STOPPED)",
			len(list), plural(len(list)), window, listSome(list, 5), own, ownState)
		return
	}
	cs.add(name, Fail, "%d target topic%s written during the %v window: %s; something else writes them (the old job, or another producer), and MM2's copies would interleave with its records: find and stop it",
		len(list), plural(len(list)), window, listSome(list, 5))
}

// mirrorEnd is one end of another connector's replication as this cutover
// sees it: the source or the target cluster, or neither.
type mirrorEnd string

const (
	endSource  mirrorEnd = "source"
	endTarget  mirrorEnd = "target"
	endUnknown mirrorEnd = ""
)

// clusterMatch places addresses (a bootstrap.servers value) on this
// cutover's source or target cluster: any address in common decides.
// Failing that, an alias set explicitly in both configurations decides.
func clusterMatch(servers string, alias string, ours cutoverEnds) (mirrorEnd, string) {
	for _, a := range splitList(servers) {
		a = strings.ToLower(a)
		if ours.sourceAddrs[a] {
			return endSource, "its bootstrap servers include " + a
		}
		if ours.targetAddrs[a] {
			return endTarget, "its bootstrap servers include " + a
		}
	}
	if alias != "" && alias == ours.sourceAlias {
		return endSource, "its alias is " + alias
	}
	if alias != "" && alias == ours.targetAlias {
		return endTarget, "its alias is " + alias
	}
	return endUnknown, ""
}

// cutoverEnds is what identifies this cutover's clusters in another
// connector's configuration.
type cutoverEnds struct {
	sourceAddrs, targetAddrs map[string]bool // lower-case host:port
	sourceAlias, targetAlias string          // as set explicitly in the connector config, or ""
	producerOverride         bool            // the cutover's connector sets producer.override.bootstrap.servers
}

func newCutoverEnds(config map[string]string, sourceAddrs, targetAddrs []string) cutoverEnds {
	e := cutoverEnds{sourceAddrs: map[string]bool{}, targetAddrs: map[string]bool{},
		sourceAlias: config["source.cluster.alias"], targetAlias: config["target.cluster.alias"]}
	for _, a := range append(slices.Clone(sourceAddrs), splitList(config["source.cluster.bootstrap.servers"])...) {
		e.sourceAddrs[strings.ToLower(a)] = true
	}
	for _, a := range append(slices.Clone(targetAddrs), splitList(config["target.cluster.bootstrap.servers"])...) {
		e.targetAddrs[strings.ToLower(a)] = true
	}
	_, e.producerOverride = config["producer.override.bootstrap.servers"]
	return e
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// remoteTopic names the topic another connector writes for a topic it
// reads, under its replication policy: the same name under
// IdentityReplicationPolicy, "<its source alias><separator><topic>" under
// DefaultReplicationPolicy (MM2's default). ok is false for another policy.
func remoteTopic(config map[string]string, topic string) (string, bool) {
	p := offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: offsets.SourceAliasOf(config), Separator: config["replication.policy.separator"]}
	switch strings.TrimSpace(config["replication.policy.class"]) {
	case offsets.IdentityPolicyClass:
		p = offsets.ReplicationPolicy{Kind: offsets.IdentityPolicy}
	case "", offsets.DefaultPolicyClass:
	default:
		return "", false
	}
	t, err := p.TargetTopic(topic)
	return t, err == nil
}

// checkOtherConnectors looks at every other MirrorSourceConnector on the
// Connect cluster for a second writer of the cutover's topics:
//
//   - "reverse-replication": a connector writing to the source cluster
//     (producer.override.bootstrap.servers on the source) that covers
//     topics whose copies would land in the source topics this cutover
//     reads — under IdentityReplicationPolicy, a replication loop;
//   - "other-mirror-connectors": a connector writing to the target
//     cluster (the workers' own cluster, unless its producer is
//     overridden elsewhere) that covers topics whose copies land in this
//     cutover's target topics.
//
// A connector's clusters are recognised by bootstrap addresses (those of
// its source.cluster.bootstrap.servers and producer.override.bootstrap.servers),
// or by aliases both configurations set explicitly. own names the
// cutover's connector, which is skipped; targets maps each source topic
// to its target topic. Topic filters are read for a worker of
// workerVersion (connect.NewTopicFilter). states holds the connectors' states: a connector
// STOPPED or PAUSED writes nothing until it is resumed, so it is a warning
// (it would write if resumed); any other state, or none known, fails.
func checkOtherConnectors(cs *Checks, infos map[string]connect.ConnectorInfo, states map[string]string, own string, ours cutoverEnds, targets map[string]string, workerVersion string) {
	var reverse, same, warns []string
	looked := 0
	for _, n := range sortedKeys(infos) {
		cfg := infos[n].Config
		if n == own || strings.TrimSpace(cfg["connector.class"]) != connect.MirrorSourceConnectorClass {
			continue
		}
		looked++
		reads, readWhy := clusterMatch(cfg["source.cluster.bootstrap.servers"], cfg["source.cluster.alias"], ours)
		writes, writeWhy := endTarget, "it writes to the workers' own cluster, as this cutover's connector does"
		if o, ok := cfg["producer.override.bootstrap.servers"]; ok {
			writes, writeWhy = clusterMatch(o, cfg["target.cluster.alias"], ours)
			writeWhy = "producer.override.bootstrap.servers: " + writeWhy
		} else if ours.producerOverride {
			writes, writeWhy = endUnknown, ""
		}
		if writes == endUnknown {
			continue
		}
		filter, err := connect.NewTopicFilter(cfg, workerVersion)
		if err != nil {
			warns = append(warns, fmt.Sprintf("connector %s writes to the %s (%s) but its %v", n, writes, writeWhy, err))
			continue
		}
		var hits []string
		for _, s := range sortedKeys(targets) {
			t := targets[s]
			in, want := s, t // what it would read, and the topic its copy must not land in
			if reads == endTarget {
				in = t
			}
			if writes == endSource {
				want = s
			}
			if !filter.Covers(in) {
				continue
			}
			out, ok := remoteTopic(cfg, in)
			if !ok {
				warns = append(warns, fmt.Sprintf("connector %s covers %s but its replication.policy.class %s is unknown here: check where it writes", n, in, cfg["replication.policy.class"]))
				break
			}
			if out == want {
				hits = append(hits, fmt.Sprintf("%s -> %s", in, out))
			}
		}
		from := "an unrecognised cluster"
		if reads != endUnknown {
			from = fmt.Sprintf("the %s (%s)", reads, readWhy)
		}
		desc := fmt.Sprintf("connector %s reads %s and writes to the %s (%s)", n, from, writes, writeWhy)
		if st := states[n]; len(hits) > 0 && (st == connect.StateStopped || st == connect.StatePaused) {
			warns = append(warns, fmt.Sprintf("%s and would write %s if resumed; it is %s: keep it so, or delete it", desc, listSome(hits, 5), st))
			continue
		}
		switch {
		case writes == endSource && len(hits) > 0:
			reverse = append(reverse, fmt.Sprintf("%s and copies %s into the source topics this cutover reads", desc, listSome(hits, 5)))
		case writes == endSource:
			warns = append(warns, desc+": replication back to the source; none of this cutover's topics is in its scope now, keep it so")
		case len(hits) > 0 && reads == endUnknown:
			warns = append(warns, fmt.Sprintf("%s and would write %s if that cluster has those topics", desc, listSome(hits, 5)))
		case len(hits) > 0:
			same = append(same, fmt.Sprintf("%s and already writes %s", desc, listSome(hits, 5)))
		}
	}
	if len(reverse) > 0 {
		cs.add("reverse-replication", Fail, "%s: a replication loop — remove those topics from it, or stop it", strings.Join(reverse, "; "))
	} else {
		cs.add("reverse-replication", Pass, "no other MirrorSourceConnector on this Connect cluster copies into the source topics (%d looked at; replication run elsewhere is not seen)", looked)
	}
	if len(same) > 0 {
		cs.add("other-mirror-connectors", Fail, "%s: two writers on the same target topics — stop it before the cutover", strings.Join(same, "; "))
	} else {
		cs.add("other-mirror-connectors", Pass, "no other MirrorSourceConnector on this Connect cluster writes the target topics (%d looked at)", looked)
	}
	for _, w := range warns {
		cs.add("other-mirror-connectors", Warn, "%s", w)
	}
}

// checkRESTExposure warns when the Connect REST API is plain HTTP on an
// address other than loopback: the brokers' SASL settings do not protect
// it, and anyone who can reach it can create, change, stop or delete
// connectors and rewrite their offsets.
func checkRESTExposure(cs *Checks, base string, basicAuth bool) {
	const name = "connect-rest-exposure"
	u, err := url.Parse(base)
	if err != nil {
		return
	}
	host := u.Hostname()
	switch {
	case u.Scheme == "https" && basicAuth:
		cs.add(name, Pass, "%s is HTTPS and this client authenticates with basic auth", base)
	case u.Scheme == "https":
		cs.add(name, Pass, "%s is HTTPS; this client sends no basic auth: make sure the workers require authentication (HTTPS alone does not restrict who may change connectors)", base)
	case isLoopback(host):
		cs.add(name, Pass, "%s is plain HTTP on a loopback address, reachable from this host only", base)
	default:
		extra := ""
		if basicAuth {
			extra = "; and this client's basic-auth password crosses the network in clear text"
		}
		cs.add(name, Warn, "%s is plain HTTP on %s: anyone who can reach it can create, change, stop or delete connectors and rewrite their offsets — the brokers' SASL settings do not protect it; restrict who reaches it (firewall, NetworkPolicy, an authenticating proxy) or serve HTTPS with authentication%s",
			base, host, extra)
	}
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
