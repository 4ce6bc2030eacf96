package kafkaadmin

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
)

// Cost is what a Client's calls have cost the brokers: the Kafka requests
// it sent (connection setup — ApiVersions, SASL — and retries included),
// by kind, and the connections it opened. Read it with [Client.Cost]; the
// cost of a step is the difference of two readings ([Cost.Sub]).
type Cost struct {
	Requests    int64 `json:"requests"`
	Connections int64 `json:"connections"`
	// ByKind holds the requests of each Kafka API sent, by its name in the
	// protocol ("Metadata", "ListOffsets", "SaslAuthenticate", ...).
	ByKind map[string]int64 `json:"by_kind,omitempty"`
}

// Sub returns the cost since the reading before.
func (c Cost) Sub(before Cost) Cost {
	out := Cost{Requests: c.Requests - before.Requests, Connections: c.Connections - before.Connections}
	for k, n := range c.ByKind {
		if d := n - before.ByKind[k]; d != 0 {
			if out.ByKind == nil {
				out.ByKind = make(map[string]int64)
			}
			out.ByKind[k] = d
		}
	}
	return out
}

// Add returns the sum of two costs (of two clusters' clients, say).
func (c Cost) Add(o Cost) Cost {
	out := Cost{Requests: c.Requests + o.Requests, Connections: c.Connections + o.Connections}
	for _, m := range []map[string]int64{c.ByKind, o.ByKind} {
		for k, n := range m {
			if out.ByKind == nil {
				out.ByKind = make(map[string]int64)
			}
			out.ByKind[k] += n
		}
	}
	return out
}

// String is "N requests on M connections: a Metadata, b ListOffsets, ...",
// kinds by count, most first.
func (c Cost) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d requests on %d connections", c.Requests, c.Connections)
	kinds := slices.SortedFunc(maps.Keys(c.ByKind), func(x, y string) int {
		return cmp.Or(cmp.Compare(c.ByKind[y], c.ByKind[x]), strings.Compare(x, y))
	})
	for i, k := range kinds {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d %s", c.ByKind[k], k)
	}
	return b.String()
}

// Cost returns what the Client's calls have cost so far. It is a meter: a
// tool reports what a step cost the brokers, tests pin how many requests
// and connections a step takes (they are deterministic where times are
// not), and the scale benchmark (examples/internal/scalebench) reports it
// per step.
func (r *Client) Cost() Cost {
	return r.meter.cost()
}

// meter counts a Client's requests, by API key, and its connections.
type meter struct {
	requests    atomic.Int64
	connections atomic.Int64
	byKey       [maxAPIKey + 1]atomic.Int64 // the last slot counts keys beyond
}

const maxAPIKey = 127

func (m *meter) request(key int16) {
	m.requests.Add(1)
	m.byKey[min(max(int(key), 0), maxAPIKey)].Add(1)
}

func (m *meter) cost() Cost {
	c := Cost{Requests: m.requests.Load(), Connections: m.connections.Load()}
	for k := range m.byKey {
		if n := m.byKey[k].Load(); n > 0 {
			if c.ByKind == nil {
				c.ByKind = make(map[string]int64)
			}
			c.ByKind[apiName(int16(k))] += n
		}
	}
	return c
}

// apiName names a Kafka API key as the protocol does; keys this package
// never sends are "api-N".
func apiName(key int16) string {
	if n, ok := apiNames[key]; ok {
		return n
	}
	return fmt.Sprintf("api-%d", key)
}

var apiNames = map[int16]string{
	0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 8: "OffsetCommit", 9: "OffsetFetch",
	10: "FindCoordinator", 11: "JoinGroup", 12: "Heartbeat", 13: "LeaveGroup", 14: "SyncGroup",
	15: "DescribeGroups", 16: "ListGroups", 17: "SaslHandshake", 18: "ApiVersions", 19: "CreateTopics",
	20: "DeleteTopics", 29: "DescribeAcls", 32: "DescribeConfigs", 35: "DescribeLogDirs",
	36: "SaslAuthenticate", 60: "DescribeCluster", 61: "DescribeProducers", 65: "DescribeTransactions",
	66: "ListTransactions", 68: "ConsumerGroupHeartbeat", 69: "ConsumerGroupDescribe",
}
