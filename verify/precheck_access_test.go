package verify_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/google/go-cmp/cmp"
	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/redact"
	"github.com/mm2cutover/mm2cutover/verify"
)

// secureClient connects to a secure cluster as user, with SCRAM-SHA-512.
func secureClient(t *testing.T, sb *sandbox.Sandbox, b *sandbox.Broker, user sandbox.User) *kafkaadmin.Client {
	t.Helper()
	r, err := kafkaadmin.NewClient(kafkaadmin.Config{BootstrapServers: b.Addrs(), SecurityProtocol: kafkaadmin.SASLSSL,
		SASLMechanism: kafkaadmin.ScramSHA512, Username: user.Name, Password: redact.Secret(user.Password),
		TLS: kafkaadmin.TLSConfig{CAFile: sb.CAFile()}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// acl is one ACL of the test's user.
type acl struct {
	cluster *sandbox.Broker
	typ     sarama.AclResourceType
	name    string
	op      sarama.AclOperation
	deny    bool
}

// written is what a cluster holds that a write would change.
type written struct {
	Topics  []string
	Commits map[kafkaadmin.TopicPartition]int64
	Ends    map[kafkaadmin.TopicPartition]int64
}

// TestPrecheckPermissions runs the precheck as a user that is not a super
// user, against brokers with StandardAuthorizer: with the ACLs the cutover
// needs it passes; then one operation at a time is denied (a DENY ACL wins
// over the ALLOW ones), and each denial is reported by cluster, operation
// and resource — READ and DESCRIBE on the source topic, DESCRIBE on the
// group, WRITE and DESCRIBE on the target topic, CREATE of a missing target
// topic. A denied DESCRIBE stops the precheck before the reads it would
// fail. Nothing is written on either cluster. On the way it pins that a
// follower fetches a 3 MB batch with the default 1 MB
// replica.fetch.max.bytes (the record-size check only warns about it).
func TestPrecheckPermissions(t *testing.T) {
	sb := sandboxtest.Dedicated(t, sandbox.Config{Secure: true, Authorizer: true, SourceBrokers: 2})
	src, tgt := sb.Source(), sb.Target()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const topic, missing, group = "orders", "refunds", "flink-orders"
	for _, b := range []*sandbox.Broker{src, tgt} {
		if err := b.CreateTopicWithConfig(ctx, topic, 1, map[string]string{"max.message.bytes": fiveMB}); err != nil {
			t.Fatal(err)
		}
	}
	if err := src.CreateTopic(ctx, missing, 1); err != nil {
		t.Fatal(err)
	}
	pinReplicaFetch(t, src, topic)
	adminSrc, adminTgt := secureClient(t, sb, src, src.Admin()), secureClient(t, sb, tgt, tgt.Admin())
	if err := adminSrc.CommitOffsets(ctx, group, map[kafkaadmin.TopicPartition]int64{{Topic: topic, Partition: 0}: 2}); err != nil {
		t.Fatal(err)
	}

	var users [2]sandbox.User
	for i, b := range []*sandbox.Broker{src, tgt} {
		u, err := b.AddUser(ctx, "cutover")
		if err != nil {
			t.Fatal(err)
		}
		users[i] = u
	}
	toolSrc, toolTgt := secureClient(t, sb, src, users[0]), secureClient(t, sb, tgt, users[1])
	admins := map[*sandbox.Broker]sarama.ClusterAdmin{}
	for _, b := range []*sandbox.Broker{src, tgt} {
		a, err := sarama.NewClusterAdmin(b.Addrs(), b.SaramaConfig())
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		admins[b] = a
	}
	setACL := func(a acl, add bool) {
		t.Helper()
		perm := sarama.AclPermissionAllow
		if a.deny {
			perm = sarama.AclPermissionDeny
		}
		res := sarama.Resource{ResourceType: a.typ, ResourceName: a.name, ResourcePatternType: sarama.AclPatternLiteral}
		if add {
			if err := admins[a.cluster].CreateACLs([]*sarama.ResourceAcls{{Resource: res,
				Acls: []*sarama.Acl{{Principal: "User:cutover", Host: "*", Operation: a.op, PermissionType: perm}}}}); err != nil {
				t.Fatal(err)
			}
			return
		}
		principal, host := "User:cutover", "*"
		if _, err := admins[a.cluster].DeleteACL(sarama.AclFilter{ResourceType: a.typ, ResourceName: &a.name, ResourcePatternTypeFilter: sarama.AclPatternLiteral,
			Principal: &principal, Host: &host, Operation: a.op, PermissionType: perm}, false); err != nil {
			t.Fatal(err)
		}
	}
	const cluster = "kafka-cluster"
	for _, a := range []acl{
		{src, sarama.AclResourceTopic, topic, sarama.AclOperationRead, false},
		{src, sarama.AclResourceTopic, topic, sarama.AclOperationDescribeConfigs, false},
		{src, sarama.AclResourceTopic, missing, sarama.AclOperationRead, false},
		{src, sarama.AclResourceTopic, missing, sarama.AclOperationDescribeConfigs, false},
		{src, sarama.AclResourceGroup, group, sarama.AclOperationDescribe, false},
		{src, sarama.AclResourceCluster, cluster, sarama.AclOperationDescribe, false},
		{src, sarama.AclResourceCluster, cluster, sarama.AclOperationDescribeConfigs, false},
		{tgt, sarama.AclResourceTopic, topic, sarama.AclOperationWrite, false},
		{tgt, sarama.AclResourceTopic, topic, sarama.AclOperationDescribeConfigs, false},
		{tgt, sarama.AclResourceTopic, missing, sarama.AclOperationDescribe, false},
		{tgt, sarama.AclResourceCluster, cluster, sarama.AclOperationDescribe, false},
		{tgt, sarama.AclResourceCluster, cluster, sarama.AclOperationDescribeConfigs, false},
	} {
		setACL(a, true)
	}
	// ACLs reach the brokers through the metadata log: wait until the
	// user's access shows the change.
	waitAccess := func(what string, ok func(s, t kafkaadmin.Access) bool) {
		t.Helper()
		for {
			s, err := toolSrc.Access(ctx, []string{topic, missing}, []string{group})
			if err != nil {
				t.Fatal(err)
			}
			tg, err := toolTgt.Access(ctx, []string{topic, missing}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if ok(s, tg) {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: never seen: source %+v, target %+v", what, s, tg)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	granted := func(s, tg kafkaadmin.Access) bool {
		return s.Topics[topic].Allows(kafkaadmin.OpRead) && s.Groups[group].Allows(kafkaadmin.OpDescribe) && s.Cluster.Known &&
			tg.Topics[topic].Allows(kafkaadmin.OpWrite) && tg.Topics[missing].Allows(kafkaadmin.OpDescribe) && tg.Cluster.Known
	}
	waitAccess("the grants", granted)

	snapshot := func() map[string]written {
		t.Helper()
		out := map[string]written{}
		for name, b := range map[string]*sandbox.Broker{"source": src, "target": tgt} {
			ts, err := admins[b].ListTopics()
			if err != nil {
				t.Fatal(err)
			}
			w := written{Topics: slices.Sorted(maps.Keys(ts))}
			r := map[string]*kafkaadmin.Client{"source": adminSrc, "target": adminTgt}[name]
			if name == "source" {
				g, err := r.GroupOffsets(ctx, group, []string{topic})
				if err != nil {
					t.Fatal(err)
				}
				w.Commits = g
			}
			bounds, err := r.LogBounds(ctx, []kafkaadmin.TopicPartition{{Topic: topic, Partition: 0}})
			if err != nil {
				t.Fatal(err)
			}
			w.Ends = map[kafkaadmin.TopicPartition]int64{}
			for tp, lb := range bounds {
				w.Ends[tp] = lb.End
			}
			out[name] = w
		}
		return out
	}
	before := snapshot()

	noWorker, err := connect.New("http://127.0.0.1:1", connect.WithRetry(connect.Retry{Attempts: 1}))
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]string{"producer.override.max.request.size": fiveMB,
		"source.cluster.sasl.jaas.config": `${env:MM2_SOURCE_SASL_JAAS_CONFIG}`,
		"replication.policy.class":        offsets.IdentityPolicyClass} // without it MM2 would write source.orders, and the checks look there
	cfg["source.cluster.bootstrap.servers"], cfg["target.cluster.bootstrap.servers"] = strings.Join(src.Addrs(), ","), strings.Join(tgt.Addrs(), ",")
	precheck := func(what string, topics ...string) *verify.PrecheckReport {
		t.Helper()
		r, err := verify.Precheck(ctx, noWorker, toolSrc, toolTgt, verify.PrecheckSpec{
			Group: group, Topics: topics, Policy: offsets.ReplicationPolicy{Kind: offsets.IdentityPolicy},
			StabilityWindow: time.Second, Config: cfg, Connector: "mm2-orders",
		})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for _, c := range r.Checks {
			if c.Name == "permissions" || c.Name == "precheck-stopped" {
				t.Logf("%s: %s %s: %s", what, c.Verdict, c.Name, c.Detail)
			}
		}
		return r
	}

	r := precheck("granted", topic)
	wantChecks(t, "granted", r, "permissions", verify.Pass)
	wantChecks(t, "granted", r, "precheck-stopped")
	wantChecks(t, "granted", r, "record-size", verify.Warn, verify.Pass)
	for _, c := range r.Checks.Failed() {
		if c.Name != "connect-reachable" {
			t.Errorf("granted: %s fails: %s", c.Name, c.Detail)
		}
	}

	for _, tc := range []struct {
		deny    acl
		says    string
		stopped bool
		seen    func(s, t kafkaadmin.Access) bool
	}{
		{acl{src, sarama.AclResourceTopic, topic, sarama.AclOperationRead, true}, "source READ denied for User:cutover (the tool's principal) on 1 topic orders (MM2's source consumer reads it)", false,
			func(s, _ kafkaadmin.Access) bool { return !s.Topics[topic].Allows(kafkaadmin.OpRead) }},
		{acl{src, sarama.AclResourceTopic, topic, sarama.AclOperationDescribe, true}, "source DESCRIBE denied for User:cutover (the tool's principal) on 1 topic orders", true,
			func(s, _ kafkaadmin.Access) bool { return s.Topics[topic].DescribeDenied }},
		{acl{src, sarama.AclResourceGroup, group, sarama.AclOperationDescribe, true}, "source DESCRIBE denied for User:cutover (the tool's principal) on 1 group flink-orders", true,
			func(s, _ kafkaadmin.Access) bool { return s.Groups[group].DescribeDenied }},
		{acl{tgt, sarama.AclResourceTopic, topic, sarama.AclOperationWrite, true}, "target WRITE denied for User:cutover (the tool's principal) on 1 topic orders (MM2's producer writes it)", false,
			func(_, tg kafkaadmin.Access) bool { return !tg.Topics[topic].Allows(kafkaadmin.OpWrite) }},
		{acl{tgt, sarama.AclResourceTopic, topic, sarama.AclOperationDescribe, true}, "target DESCRIBE denied for User:cutover (the tool's principal) on 1 topic orders", true,
			func(_, tg kafkaadmin.Access) bool { return tg.Topics[topic].DescribeDenied }},
	} {
		what := "deny " + tc.deny.op.String() + " on " + tc.deny.name
		setACL(tc.deny, true)
		waitAccess(what, tc.seen)
		r := precheck(what, topic)
		got := wantChecks(t, what, r, "permissions", verify.Fail)
		if len(got) == 1 {
			mustContain(t, what, got[0].Detail, tc.says, "grant it the same")
		}
		if stopped := len(checksNamed(r, "precheck-stopped")) == 1; stopped != tc.stopped {
			t.Errorf("%s: stopped early %v, want %v", what, stopped, tc.stopped)
		}
		setACL(tc.deny, false)
		waitAccess(what+" lifted", granted)
	}

	r = precheck("missing target topic", topic, missing)
	if got := wantChecks(t, "no CREATE", r, "permissions", verify.Fail); len(got) == 1 {
		mustContain(t, "no CREATE", got[0].Detail, "target CREATE denied for User:cutover (the tool's principal) on 1 topic refunds (MM2 creates it)")
	}
	create := acl{tgt, sarama.AclResourceTopic, missing, sarama.AclOperationCreate, false}
	setACL(create, true)
	waitAccess("CREATE", func(_, tg kafkaadmin.Access) bool { return tg.Topics[missing].Allows(kafkaadmin.OpCreate) })
	r = precheck("CREATE granted", topic, missing)
	wantChecks(t, "CREATE granted", r, "permissions", verify.Pass)
	if got := checksNamed(r, "target-topic"); len(got) != 1 || !strings.Contains(got[0].Detail, "refunds") {
		t.Errorf("CREATE granted: target-topic %+v, want the missing topic failed", got)
	}

	if diff := cmp.Diff(before, snapshot()); diff != "" {
		t.Errorf("the prechecks wrote something (-before +after):\n%s", diff)
	}
}

// pinReplicaFetch writes a 3 MB record, acknowledged by all in-sync
// replicas, to a topic replicated on two brokers whose
// replica.fetch.max.bytes is Kafka's default 1 MB, and checks that both
// replicas stay in sync: the follower fetched the oversize batch whole.
func pinReplicaFetch(t *testing.T, b *sandbox.Broker, topic string) {
	t.Helper()
	cfg := b.SaramaConfig()
	cfg.Producer.MaxMessageBytes = 6 << 20
	cfg.Producer.Timeout = 20 * time.Second // below replica.lag.time.max.ms (30 s): a stuck follower would time it out
	client, err := sarama.NewClient(b.Addrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	p, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	start := time.Now()
	_, off, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.ByteEncoder(make([]byte, threeMB))})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"r1", "r2"} {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(v)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := client.RefreshMetadata(topic); err != nil {
		t.Fatal(err)
	}
	replicas, _ := client.Replicas(topic, 0)
	isr, err := client.InSyncReplicas(topic, 0)
	if err != nil || len(replicas) != 2 || len(isr) != 2 {
		t.Fatalf("replicas %v, in sync %v (%v): want both in sync after the 3 MB record", replicas, isr, err)
	}
	t.Logf("a 3 MB record at offset %d acknowledged by both replicas in %v, replica.fetch.max.bytes at its default", off, time.Since(start).Round(time.Millisecond))
}
