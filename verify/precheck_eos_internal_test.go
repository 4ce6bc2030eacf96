package verify

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/kafkaadmin"
)

func eosVerdicts(cs Checks) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name+" "+string(c.Verdict))
	}
	return out
}

// TestExactlyOnceWorkersRule: every worker must answer for itself; one
// without support, one that cannot be asked, no group named, an empty or
// foreign group each fail, naming the setting or what to name.
func TestExactlyOnceWorkersRule(t *testing.T) {
	group := kafkaadmin.Group{ID: "mm2-connect", ProtocolType: "connect", State: kafkaadmin.GroupStable, Members: []kafkaadmin.Member{{ID: "a"}, {ID: "b"}}}
	for _, tc := range []struct {
		name string
		f    exactlyOnceWorkerFacts
		want Verdict
		says string
	}{
		{"all enabled", exactlyOnceWorkerFacts{group: "mm2-connect", members: group,
			answers: []workerAnswer{{url: "http://10.0.0.1:8083/"}, {url: "http://10.0.0.2:8083/"}}}, Pass, "all 2 workers"},
		{"one lacks it", exactlyOnceWorkerFacts{group: "mm2-connect", members: group,
			answers: []workerAnswer{{url: "http://10.0.0.1:8083/"}, {url: "http://10.0.0.2:8083/", lacks: true}}}, Fail, "exactly.once.source.support=enabled"},
		{"rebalancing", exactlyOnceWorkerFacts{group: "mm2-connect", members: kafkaadmin.Group{ID: "mm2-connect", ProtocolType: "connect", State: kafkaadmin.GroupPreparingRebalance, Members: group.Members}}, Fail, "not Stable"},
		{"one cannot be asked", exactlyOnceWorkerFacts{group: "mm2-connect", members: group,
			answers: []workerAnswer{{url: "http://10.0.0.1:8083/"}, {url: "http://10.0.0.2:8083/", err: errors.New("connection refused")}}}, Fail, "could not be asked"},
		{"no group named", exactlyOnceWorkerFacts{}, Fail, "CONNECT_GROUP_ID"},
		{"no members", exactlyOnceWorkerFacts{group: "typo", members: kafkaadmin.Group{ID: "typo", State: kafkaadmin.GroupDead}}, Fail, "no members"},
		{"a consumer group", exactlyOnceWorkerFacts{group: "orders", members: kafkaadmin.Group{ID: "orders", ProtocolType: "consumer", Members: group.Members}}, Fail, "not a Kafka Connect group"},
	} {
		var cs Checks
		exactlyOnceWorkersRule(&cs, tc.f)
		if len(cs) == 0 || cs[0].Verdict != tc.want || !strings.Contains(cs[0].Detail, tc.says) {
			t.Errorf("%s: %v, want %s saying %q", tc.name, cs, tc.want, tc.says)
		}
	}
}

// TestExactlyOnceNeeds: who needs what, from the configuration and the
// workers' principal.
func TestExactlyOnceNeeds(t *testing.T) {
	cfg := map[string]string{"name": "orders", "tasks.max": "2", "exactly.once.support": "required",
		"producer.override.sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="mm2eos" password="hunter2";`}
	spec := PrecheckSpec{WorkerGroup: "mm2-connect", WorkerStorage: &WorkerStorage{OffsetTopic: "mm2-connect-offsets"}}
	needs, unknown := exactlyOnceNeeds(cfg, spec)
	if len(unknown) != 2 { // the admin's and the consumer's: the workers', not named
		t.Errorf("unknown = %q", unknown)
	}
	var got []string
	for _, n := range needs {
		got = append(got, n.principal+" "+string(n.resource)+" "+strings.Join(n.names, ","))
	}
	want := []string{"User:mm2eos TRANSACTIONAL_ID mm2-connect-orders-0,mm2-connect-orders-1", "User:mm2eos TOPIC mm2-connect-offsets"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("needs = %q, want %q", got, want)
	}

	spec.WorkerPrincipal = "User:mm2"
	cfg["offsets.storage.topic"] = "orders-offsets"
	needs, unknown = exactlyOnceNeeds(cfg, spec)
	if len(unknown) != 0 || len(needs) != 5 {
		t.Errorf("with the workers' principal: %d needs, unknown %q", len(needs), unknown)
	}
	for _, n := range needs {
		if n.resource == kafkaadmin.ResourceTopic && n.names[0] != "orders-offsets" {
			t.Errorf("the connector's own offsets topic is not the one checked: %v", n.names)
		}
		if n.principal == "User:mm2" && n.resource == kafkaadmin.ResourceTransactionalID && strings.HasPrefix(n.names[0], "connect-cluster-") && n.names[0] != "connect-cluster-mm2-connect" {
			t.Errorf("the leader's transactional ID: %v", n.names)
		}
	}
	cfg["producer.override.sasl.jaas.config"] = "${file:/etc/mm2/jaas.properties:producer}"
	if _, unknown := exactlyOnceNeeds(cfg, spec); len(unknown) != 1 || !strings.Contains(unknown[0], "producer") {
		t.Errorf("a config provider reference: unknown %q, want the producer's", unknown)
	}
}

// TestExactlyOnceACLRule: a missing ACL fails naming the principal, the
// operation and the transactional ID; a super user needs none; no
// authorizer passes; unreadable ACLs warn.
func TestExactlyOnceACLRule(t *testing.T) {
	needs, _ := exactlyOnceNeeds(map[string]string{"name": "orders", "tasks.max": "1",
		"producer.override.sasl.jaas.config": `x required username="mm2eos" password="p";`}, PrecheckSpec{WorkerGroup: "g", WorkerStorage: &WorkerStorage{OffsetTopic: "g-offsets"}})
	topicRW := []kafkaadmin.ACL{{ResourceType: kafkaadmin.ResourceTopic, Name: "g-offsets", Principal: "User:mm2eos", Host: "*", Operation: kafkaadmin.OpAll}}
	txn := kafkaadmin.ACL{ResourceType: kafkaadmin.ResourceTransactionalID, Name: "g-orders-", Prefixed: true, Principal: "User:mm2eos", Host: "*", Operation: kafkaadmin.OpWrite}
	other := kafkaadmin.ACL{ResourceType: kafkaadmin.ResourceTopic, Name: "orders", Principal: "User:tool", Host: "*", Operation: kafkaadmin.OpRead}
	for _, tc := range []struct {
		name string
		f    exactlyOnceACLFacts
		want []Verdict
		says string
	}{
		{"no transactional ACL", exactlyOnceACLFacts{needs: needs, acls: topicRW, prefix: "g-orders-"}, []Verdict{Fail}, "User:mm2eos WRITE on TRANSACTIONAL_ID g-orders-0"},
		{"granted", exactlyOnceACLFacts{needs: needs, acls: append(topicRW, txn), prefix: "g-orders-"}, []Verdict{Pass}, "allow"},
		{"named by no ACL: a super user, or nobody", exactlyOnceACLFacts{needs: needs, acls: []kafkaadmin.ACL{other}, prefix: "g-orders-"}, []Verdict{Warn}, "super user"},
		{"no authorizer", exactlyOnceACLFacts{needs: needs, unknown: []string{"the workers' principal"}, aclsErr: errors.Join(kafkaadmin.ErrNoAuthorizer, sarama.ErrSecurityDisabled)}, []Verdict{Pass}, "no authorizer"},
		{"not allowed to read ACLs", exactlyOnceACLFacts{needs: needs, aclsErr: errors.Join(kafkaadmin.ErrACLsUnreadable, sarama.ErrClusterAuthorizationFailed)}, []Verdict{Warn}, "by hand"},
	} {
		var cs Checks
		exactlyOnceACLRule(&cs, tc.f)
		var got []Verdict
		for _, c := range cs {
			got = append(got, c.Verdict)
		}
		if !slices.Equal(got, tc.want) || !strings.Contains(cs[len(cs)-1].Detail, tc.says) {
			t.Errorf("%s: %v, want %v saying %q", tc.name, cs, tc.want, tc.says)
		}
	}
}

func TestOldJobTransactionsRule(t *testing.T) {
	for _, tc := range []struct {
		found string
		eos   bool
		want  []string
	}{
		{"", false, nil},
		{"", true, nil},
		{"orders-3 at 41", false, []string{"old-job-transactions warn"}},
		{"orders-3 at 41", true, []string{"old-job-transactions ok"}},
	} {
		var cs Checks
		oldJobTransactionsRule(&cs, tc.found, tc.eos)
		if strings.Join(eosVerdicts(cs), ",") != strings.Join(tc.want, ",") {
			t.Errorf("%q eos=%v: %v, want %v", tc.found, tc.eos, eosVerdicts(cs), tc.want)
		}
		if tc.found != "" && !tc.eos && !strings.Contains(cs[0].Detail, "MirrorSource.ExactlyOnce") {
			t.Errorf("the warning does not recommend exactly-once: %s", cs[0].Detail)
		}
	}
}

func TestPrincipalOfJAAS(t *testing.T) {
	for in, want := range map[string]string{
		`org.apache.kafka.common.security.scram.ScramLoginModule required username="mm2" password="x";`:                          "User:mm2",
		`com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/k" principal="connect/host@EXAMPLE.COM";`: "User:connect",
		`${env:JAAS}`: "",
		``:            "",
	} {
		if got, _ := principalOfJAAS(in); got != want {
			t.Errorf("principalOfJAAS(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestConnectorOffsetsTopicRule(t *testing.T) {
	for _, tc := range []struct {
		l      kafkaadmin.TopicLayout
		policy string
		want   Verdict
	}{
		{kafkaadmin.TopicLayout{}, "", Pass},
		{kafkaadmin.TopicLayout{Partitions: 25, ReplicationFactor: 3}, "compact", Pass},
		{kafkaadmin.TopicLayout{Partitions: 25, ReplicationFactor: 3}, "delete", Fail},
		{kafkaadmin.TopicLayout{Partitions: 25, ReplicationFactor: 3}, "compact,delete", Fail},
	} {
		var cs Checks
		connectorOffsetsTopicRule(&cs, "orders-offsets", tc.l, tc.policy)
		if len(cs) != 1 || cs[0].Verdict != tc.want || !strings.Contains(cs[0].Detail, "orders-offsets") {
			t.Errorf("%+v %q: %v, want %s", tc.l, tc.policy, cs, tc.want)
		}
	}
}
