package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// verdicts returns the checks of one name as "verdict: detail" lines.
func verdicts(cs Checks, name string) []Check {
	var out []Check
	for _, c := range cs {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// expect asserts that the checks of one name hold exactly the verdicts
// given, in order, each detail containing its fragment.
func expect(t *testing.T, what string, cs Checks, name string, want ...string) {
	t.Helper()
	got := verdicts(cs, name)
	if len(got) != len(want) {
		t.Errorf("%s: %d %s checks, want %d: %+v", what, len(got), name, len(want), got)
		return
	}
	for i, w := range want {
		v, frag, _ := strings.Cut(w, ": ")
		if string(got[i].Verdict) != v || !strings.Contains(got[i].Detail, frag) {
			t.Errorf("%s: %s check %d is %s %q, want %s containing %q", what, name, i, got[i].Verdict, got[i].Detail, v, frag)
		}
	}
}

func topicCfg(v string, src kafkaadmin.ConfigSource) kafkaadmin.Configs {
	return kafkaadmin.Configs{Values: map[string]kafkaadmin.ConfigValue{"max.message.bytes": {Value: v, Source: src}}}
}

func brokerCfg(mmb, rfmb string) map[int32]kafkaadmin.Configs {
	return map[int32]kafkaadmin.Configs{1: {Values: map[string]kafkaadmin.ConfigValue{
		"message.max.bytes":       {Value: mmb, Source: kafkaadmin.ConfigFromDefault},
		"replica.fetch.max.bytes": {Value: rfmb, Source: kafkaadmin.ConfigFromDefault},
	}}}
}

// TestCheckRecordSizes: each limit along the path, at Kafka's defaults, at
// a source topic allowing 5 MB, and raised where the check says.
func TestCheckRecordSizes(t *testing.T) {
	def := kafkaadmin.ConfigFromDefault
	facts := func(src, tgt string, config, worker map[string]string) sizeFacts {
		tgtSource := kafkaadmin.ConfigFromTopic
		if tgt == "1048588" {
			tgtSource = def
		}
		srcSource := kafkaadmin.ConfigFromTopic
		if src == "1048588" {
			srcSource = def
		}
		return sizeFacts{
			targets:       map[string]string{"orders": "orders"},
			sourceTopics:  map[string]kafkaadmin.Configs{"orders": topicCfg(src, srcSource)},
			targetTopics:  map[string]kafkaadmin.Configs{"orders": topicCfg(tgt, tgtSource)},
			sourceBrokers: brokerCfg("1048588", "1048576"),
			targetBrokers: brokerCfg("1048588", "1048576"),
			config:        config, worker: worker,
		}
	}
	five := map[string]string{"producer.override.max.request.size": "5242880"}
	for _, tc := range []struct {
		what string
		f    sizeFacts
		want []string
	}{
		{"Kafka's defaults everywhere (12 bytes of log overhead apart)", facts("1048588", "1048588", nil, nil),
			[]string{"ok: the largest batch a source topic may hold is 1048588"}},
		{"a 5 MB source, defaults elsewhere", facts("5242880", "1048588", nil, nil), []string{
			"fail: MM2's producer max.request.size is 1048576 (Kafka's default",
			"fail: 1 target topic accepts smaller batches than the source may hold: orders accepts 1048588 (topic orders inherits the brokers' message.max.bytes",
			"warn: MM2's source consumer max.partition.fetch.bytes is 1048576 (Kafka's default)",
		}},
		{"target raised, producer overridden", facts("5242880", "5242880", five, nil), []string{
			"warn: not a blocker",
			"ok: MM2's producer max.request.size 5242880 (producer.override.max.request.size)",
		}},
		{"the workers' producer setting, stated", facts("5242880", "5242880", nil, map[string]string{"max.request.size": "11457280"}), []string{
			"warn: target broker 1's replica.fetch.max.bytes",
			"ok: MM2's producer max.request.size 11457280 (the workers' producer.max.request.size)",
		}},
		{"target.producer.* does not reach the records' producer", facts("5242880", "5242880", map[string]string{"target.producer.max.request.size": "6291456"}, nil), []string{
			"fail: producer.override.max.request.size=5242880",
			"warn: the connector sets target.producer.max.request.size=6291456, which in Connect reaches only MM2's offset-syncs producer",
			"warn: not a blocker",
		}},
		{"a 40 MB source needs buffer.memory too", facts("41943040", "41943040", map[string]string{"producer.override.max.request.size": "41943040", "source.consumer.max.partition.fetch.bytes": "41943040", "source.consumer.fetch.max.bytes": "52428800"}, nil), []string{
			"fail: MM2's producer buffer.memory is 33554432 (Kafka's default",
			"warn: target broker 1's replica.fetch.max.bytes",
		}},
		{"a topic whose configs cannot be read", sizeFacts{targets: map[string]string{"orders": "orders"},
			sourceTopics: map[string]kafkaadmin.Configs{"orders": {Err: errDenied}}}, []string{
			"warn: cannot read max.message.bytes: source topic orders: denied",
		}},
	} {
		var cs Checks
		checkRecordSizes(&cs, tc.f)
		expect(t, tc.what, cs, "record-size", tc.want...)
	}
}

var errDenied = &deniedError{}

type deniedError struct{}

func (*deniedError) Error() string { return "denied" }

// TestCheckAccess: each denied operation fails by name; a cluster without
// an authorizer is a warning; CREATE counts on the cluster or the topic.
func TestCheckAccess(t *testing.T) {
	ops := func(o ...kafkaadmin.Operation) kafkaadmin.ResourceAccess {
		return kafkaadmin.ResourceAccess{Known: true, Allowed: o, Exists: true}
	}
	rd := ops(kafkaadmin.OpRead, kafkaadmin.OpDescribe)
	wd := ops(kafkaadmin.OpWrite, kafkaadmin.OpDescribe)
	d := ops(kafkaadmin.OpDescribe)
	spec := PrecheckSpec{Group: "flink", Topics: []string{"orders"}}
	targets := map[string]string{"orders": "orders"}
	present := kafkaadmin.AuthorizerPresent
	src := func(topic, group kafkaadmin.ResourceAccess) kafkaadmin.Access {
		return kafkaadmin.Access{Principal: "cutover", Authorizer: present, Cluster: kafkaadmin.ResourceAccess{DescribeDenied: true},
			Topics: map[string]kafkaadmin.ResourceAccess{"orders": topic}, Groups: map[string]kafkaadmin.ResourceAccess{"flink": group}}
	}
	tgt := func(topic kafkaadmin.ResourceAccess, cluster kafkaadmin.ResourceAccess) kafkaadmin.Access {
		return kafkaadmin.Access{Principal: "cutover", Authorizer: present, Cluster: cluster, Topics: map[string]kafkaadmin.ResourceAccess{"orders": topic}}
	}
	config := map[string]string{"source.cluster.sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="mm2" password="x";`}
	for _, tc := range []struct {
		what     string
		s, t     kafkaadmin.Access
		want     []string
		wantRead bool
	}{
		{"all granted", src(rd, d), tgt(wd, kafkaadmin.ResourceAccess{DescribeDenied: true}), []string{"ok: on the source, User:cutover (the tool's principal) may do all the cutover needs; MM2's source clients authenticate as User:mm2"}, true},
		{"READ denied", src(d, d), tgt(wd, kafkaadmin.ResourceAccess{}), []string{"fail: source READ denied for User:cutover (the tool's principal) on 1 topic orders (MM2's source consumer reads it); MM2's source clients authenticate as User:mm2"}, true},
		{"source topic hidden", src(kafkaadmin.ResourceAccess{DescribeDenied: true}, d), tgt(wd, kafkaadmin.ResourceAccess{}), []string{"fail: source DESCRIBE denied for User:cutover (the tool's principal) on 1 topic orders (the brokers refuse to describe it"}, false},
		{"group hidden", src(rd, kafkaadmin.ResourceAccess{DescribeDenied: true}), tgt(wd, kafkaadmin.ResourceAccess{}), []string{"fail: source DESCRIBE denied for User:cutover (the tool's principal) on 1 group flink"}, false},
		{"WRITE denied", src(rd, d), tgt(d, kafkaadmin.ResourceAccess{}), []string{"fail: target WRITE denied for User:cutover (the tool's principal) on 1 topic orders (MM2's producer writes it); MM2's records are written by the worker producer, as the workers' producer.sasl.jaas.config principal"}, true},
		{"target topic hidden", src(rd, d), tgt(kafkaadmin.ResourceAccess{DescribeDenied: true}, kafkaadmin.ResourceAccess{}), []string{"fail: target DESCRIBE denied for User:cutover (the tool's principal) on 1 topic orders"}, false},
		{"missing target, CREATE on the cluster", src(rd, d), tgt(kafkaadmin.ResourceAccess{Known: true, Allowed: []kafkaadmin.Operation{kafkaadmin.OpDescribe}}, ops(kafkaadmin.OpCreate, kafkaadmin.OpDescribe)), []string{"ok: on the source"}, true},
		{"missing target, CREATE on the topic", src(rd, d), tgt(kafkaadmin.ResourceAccess{Known: true, Allowed: []kafkaadmin.Operation{kafkaadmin.OpDescribe, kafkaadmin.OpCreate}}, kafkaadmin.ResourceAccess{DescribeDenied: true}), []string{"ok: on the source"}, true},
		{"missing target, no CREATE, cluster visible", src(rd, d), tgt(kafkaadmin.ResourceAccess{Known: true, Allowed: []kafkaadmin.Operation{kafkaadmin.OpDescribe}}, ops(kafkaadmin.OpDescribe)), []string{"fail: target CREATE denied for User:cutover (the tool's principal) on 1 topic orders (MM2 creates it)"}, true},
		{"missing target, no CREATE, cluster hidden", src(rd, d), tgt(kafkaadmin.ResourceAccess{Known: true, Allowed: []kafkaadmin.Operation{kafkaadmin.OpDescribe}}, kafkaadmin.ResourceAccess{DescribeDenied: true}), []string{"warn: target CREATE allowed neither on the topic nor visibly on the cluster for User:cutover (the tool's principal) on 1 topic orders"}, true},
		{"no authorizer", kafkaadmin.Access{Authorizer: kafkaadmin.AuthorizerAbsent}, kafkaadmin.Access{Authorizer: kafkaadmin.AuthorizerAbsent}, []string{
			"warn: the source brokers run no authorizer", "warn: the target brokers run no authorizer"}, true},
	} {
		var cs Checks
		needs := accessNeeds(spec, targets, tc.t, "", "", kafkaadmin.Access{})
		got := checkAccess(&cs, tc.s, tc.t, needs, config)
		expect(t, tc.what, cs, "permissions", tc.want...)
		if got != tc.wantRead {
			t.Errorf("%s: canRead %v, want %v", tc.what, got, tc.wantRead)
		}
	}
}

// TestCheckTargetQuiet names the target topics written during the window.
func TestCheckTargetQuiet(t *testing.T) {
	p := func(topic string, n int32) offsets.SourcePartition {
		return offsets.SourcePartition{Topic: topic, Partition: n}
	}
	targets := map[string]string{"orders": "dc1.orders", "payments": "dc1.payments"}
	before := map[offsets.SourcePartition]int64{p("orders", 0): 5, p("orders", 1): 5, p("payments", 0): 1}
	var cs Checks
	checkTargetQuiet(&cs, time.Minute, targets, before, before, nil, "mm2", "")
	expect(t, "quiet", cs, "target-quiet", "ok: no end offset of the 3 target partitions moved in 1m0s")
	cs = nil
	moved := map[offsets.SourcePartition]int64{p("orders", 0): 7, p("orders", 1): 9, p("payments", 0): 1}
	for _, state := range []string{"", connect.StateStopped} {
		cs = nil
		checkTargetQuiet(&cs, time.Minute, targets, before, moved, nil, "mm2", state)
		expect(t, "written", cs, "target-quiet", "fail: 1 target topic written during the 1m0s window: dc1.orders (2 partitions, +6 offsets)")
	}
	cs = nil
	checkTargetQuiet(&cs, time.Minute, targets, before, moved, nil, "mm2", connect.StateRunning)
	expect(t, "written by the cutover's running connector", cs, "target-quiet", "warn: the cutover's connector mm2 is RUNNING and may be the writer")
	cs = nil
	markers := map[offsets.SourcePartition]bool{p("orders", 0): true, p("orders", 1): true}
	checkTargetQuiet(&cs, time.Minute, targets, before, moved, markers, "mm2", "")
	expect(t, "moved by markers only", cs, "target-quiet", "ok: the end offset of 2 moved by transaction markers only")
	cs = nil
	checkTargetQuiet(&cs, time.Minute, targets, before, moved, map[offsets.SourcePartition]bool{p("orders", 0): true}, "mm2", "")
	expect(t, "one partition written beside one moved by a marker", cs, "target-quiet", "fail: 1 target topic written during the 1m0s window: dc1.orders (1 partition, +4 offsets)")
}

// TestCheckOtherConnectors: a reverse connector covering the source topics
// under IdentityReplicationPolicy, a second connector writing the same
// target topics, and the shapes that are no collision.
func TestCheckOtherConnectors(t *testing.T) {
	ours := newCutoverEnds(map[string]string{
		"source.cluster.alias": "wbads", "target.cluster.alias": "wbbz",
		"source.cluster.bootstrap.servers": "10.26.28.41:9111,10.26.28.29:9111",
		"target.cluster.bootstrap.servers": "10.75.12.95:9111",
	}, nil, []string{"dst:9092"})
	targets := map[string]string{"orders": "orders", "payments": "payments"}
	mirror := func(kv ...string) connect.ConnectorInfo {
		cfg := map[string]string{"connector.class": connect.MirrorSourceConnectorClass}
		for i := 0; i < len(kv); i += 2 {
			cfg[kv[i]] = kv[i+1]
		}
		return connect.ConnectorInfo{Config: cfg}
	}
	identity := offsets.IdentityPolicyClass
	for _, tc := range []struct {
		what             string
		infos            map[string]connect.ConnectorInfo
		reverse, another []string
	}{
		{"the cutover's own connector only", map[string]connect.ConnectorInfo{"mm2": mirror("topics", "orders,payments", "replication.policy.class", identity,
			"source.cluster.bootstrap.servers", "10.26.28.41:9111")}, []string{"ok: no other"}, []string{"ok: no other"}},
		{"reverse, identity, covering", map[string]connect.ConnectorInfo{"back": mirror("topics", "orders|refunds", "replication.policy.class", identity,
			"source.cluster.bootstrap.servers", "10.75.12.95:9111", "producer.override.bootstrap.servers", "10.26.28.29:9111")},
			[]string{"fail: connector back reads the target (its bootstrap servers include 10.75.12.95:9111) and writes to the source (producer.override.bootstrap.servers: its bootstrap servers include 10.26.28.29:9111) and copies orders -> orders"},
			[]string{"ok: no other"}},
		{"reverse by aliases, default policy: renamed, no loop", map[string]connect.ConnectorInfo{"back": mirror("topics", ".*",
			"source.cluster.alias", "wbbz", "target.cluster.alias", "wbads", "producer.override.bootstrap.servers", "src-lb:9111")},
			[]string{"ok: no other"}, []string{"ok: no other", "warn: connector back reads the target (its alias is wbbz) and writes to the source (producer.override.bootstrap.servers: its alias is wbads): replication back to the source"}},
		{"same direction, same topics", map[string]connect.ConnectorInfo{"old": mirror("topics", "orders", "replication.policy.class", identity,
			"source.cluster.bootstrap.servers", "10.26.28.41:9111")},
			[]string{"ok: no other"}, []string{"fail: connector old reads the source (its bootstrap servers include 10.26.28.41:9111) and writes to the target (it writes to the workers' own cluster, as this cutover's connector does) and already writes orders -> orders"}},
		{"same direction, default policy: other names", map[string]connect.ConnectorInfo{"old": mirror("topics", "orders",
			"source.cluster.bootstrap.servers", "10.26.28.41:9111")}, []string{"ok: no other"}, []string{"ok: no other"}},
		{"excluded by topics.exclude", map[string]connect.ConnectorInfo{"old": mirror("topics", ".*", "topics.exclude", "orders,payments", "replication.policy.class", identity,
			"source.cluster.bootstrap.servers", "10.26.28.41:9111")}, []string{"ok: no other"}, []string{"ok: no other"}},
		{"writes elsewhere", map[string]connect.ConnectorInfo{"dr": mirror("topics", ".*", "replication.policy.class", identity,
			"producer.override.bootstrap.servers", "third:9092")}, []string{"ok: no other"}, []string{"ok: no other"}},
		{"an unknown source cluster", map[string]connect.ConnectorInfo{"x": mirror("topics", "orders", "replication.policy.class", identity,
			"source.cluster.bootstrap.servers", "third:9092")}, []string{"ok: no other"}, []string{"ok: no other", "warn: connector x reads an unrecognised cluster and writes to the target"}},
		{"a pattern Go cannot read", map[string]connect.ConnectorInfo{"x": mirror("topics", "(?<=a)b", "replication.policy.class", identity)}, []string{"ok: no other"},
			[]string{"ok: no other", "warn: connector x writes to the target"}},
		{"same direction, same topics, STOPPED", map[string]connect.ConnectorInfo{"stopped": mirror("topics", "orders", "replication.policy.class", identity,
			"source.cluster.bootstrap.servers", "10.26.28.41:9111")},
			[]string{"ok: no other"}, []string{"ok: no other", "warn: connector stopped reads the source (its bootstrap servers include 10.26.28.41:9111) and writes to the target (it writes to the workers' own cluster, as this cutover's connector does) and would write orders -> orders if resumed; it is STOPPED"}},
		{"reverse, identity, covering, PAUSED", map[string]connect.ConnectorInfo{"paused": mirror("topics", "orders", "replication.policy.class", identity,
			"source.cluster.bootstrap.servers", "10.75.12.95:9111", "producer.override.bootstrap.servers", "10.26.28.29:9111")},
			[]string{"ok: no other"}, []string{"ok: no other", "warn: connector paused reads the target"}},
		{"not a MirrorSourceConnector", map[string]connect.ConnectorInfo{"hb": {Config: map[string]string{"connector.class": "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
			"producer.override.bootstrap.servers": "10.26.28.41:9111"}}}, []string{"ok: no other"}, []string{"ok: no other"}},
	} {
		infos := tc.infos
		var cs Checks
		states := map[string]string{"stopped": connect.StateStopped, "paused": connect.StatePaused, "old": connect.StateRunning}
		checkOtherConnectors(&cs, infos, states, "mm2", ours, targets, "4.3.1")
		expect(t, tc.what, cs, "reverse-replication", tc.reverse...)
		expect(t, tc.what, cs, "other-mirror-connectors", tc.another...)
	}
}

// TestCheckRESTExposure warns about plain HTTP off loopback only.
func TestCheckRESTExposure(t *testing.T) {
	for _, tc := range []struct {
		url  string
		auth bool
		want string
	}{
		{"http://10.52.139.55:18088", false, "warn: http://10.52.139.55:18088 is plain HTTP on 10.52.139.55: anyone who can reach it"},
		{"http://mm2-connect:8083", true, "warn: crosses the network in clear text"},
		{"http://127.0.0.2:8083", false, "ok: plain HTTP on a loopback address"},
		{"http://localhost:8083/connect", false, "ok: plain HTTP on a loopback address"},
		{"http://[::1]:8083", false, "ok: plain HTTP on a loopback address"},
		{"https://connect:8443", true, "ok: HTTPS and this client authenticates"},
		{"https://connect:8443", false, "ok: make sure the workers require authentication"},
	} {
		var cs Checks
		checkRESTExposure(&cs, tc.url, tc.auth)
		expect(t, tc.url, cs, "connect-rest-exposure", tc.want)
	}
}

// TestPrincipalsWithKerberos: the permissions check names a Kerberos
// principal as the brokers name it by default — its first component — and
// the principal itself, for the tool and for MM2's clients.
func TestPrincipalsWithKerberos(t *testing.T) {
	tool := kafkaadmin.Access{Principal: "mm2cutover", KerberosPrincipal: "mm2cutover@CORP.EXAMPLE.COM"}
	if got, want := principal(tool), "User:mm2cutover (the tool's principal, Kerberos mm2cutover@CORP.EXAMPLE.COM by the brokers' DEFAULT principal.to.local rules)"; got != want {
		t.Errorf("principal = %q, want %q", got, want)
	}
	if got, want := principal(kafkaadmin.Access{Principal: "alice@corp"}), "User:alice@corp (the tool's principal)"; got != want {
		t.Errorf("a SCRAM user with an @: %q, want %q", got, want)
	}
	for _, tc := range []struct{ jaas, want string }{
		{`com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/k/mm2.keytab" principal="mm2-source/host1@CORP.EXAMPLE.COM";`,
			"MM2's source clients authenticate as User:mm2-source (Kerberos mm2-source/host1@CORP.EXAMPLE.COM by the brokers' DEFAULT principal.to.local rules, source.cluster.sasl.jaas.config)"},
		{`org.apache.kafka.common.security.scram.ScramLoginModule required username="mm2" password="x";`,
			"MM2's source clients authenticate as User:mm2 (source.cluster.sasl.jaas.config)"},
		{`org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="principal=\"x\"";`,
			"MM2's source clients authenticate as User:u (source.cluster.sasl.jaas.config)"},
	} {
		got := connectorPrincipal("source", kafkaadmin.OpRead, map[string]string{"source.cluster.sasl.jaas.config": tc.jaas})
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("connectorPrincipal(%s) = %q, want it to start %q", tc.jaas, got, tc.want)
		}
	}
}
