package verify_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/verify"
)

// TestPrecheckExactlyOnceWorkers: on a group of two real workers with
// exactly-once support, exactly-once-workers asks each at the URL it
// advertises and passes; with one worker restarted without it, the check
// fails naming that worker and exactly.once.source.support (the other
// worker, asked alone, would have passed: validate is not forwarded);
// without the group's name, or with a wrong one, it fails saying what to
// name. The old job's transactional writes to the target are seen
// (old-job-transactions).
func TestPrecheckExactlyOnceWorkers(t *testing.T) {
	sb := sandboxtest.Dedicated(t, sandbox.Config{Workers: 2, ExactlyOnce: true})
	source, target := clients(t, sb)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	topic, group := quietSetup(ctx, t, sb, source, "eos")
	// The old job wrote the target in a transaction.
	txn, err := sandbox.NewTxnProducer(sb.Target().Bootstrap(), unique("old-job-sink"))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	if err := txn.Send(ctx, true, &sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder("r0")}); err != nil {
		t.Fatal(err)
	}
	c, err := connect.New(sb.ConnectURL(), connect.WithRetry(connect.Retry{Elapsed: time.Minute}))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := connect.MirrorSource{Name: unique("eos-mirror"), SourceBootstrap: sb.Source().Bootstrap(), TargetBootstrap: sb.Target().Bootstrap(),
		Topics: []string{topic}, ExactlyOnce: true, Extra: map[string]string{"replication.factor": "1"}}.Config()
	if err != nil {
		t.Fatal(err)
	}
	precheck := func(what, workerGroup string, config map[string]string) *verify.PrecheckReport {
		t.Helper()
		r, err := verify.Precheck(ctx, c, source, target, verify.PrecheckSpec{Group: group, Topics: []string{topic}, StabilityWindow: time.Second,
			Config: config, Connector: config["name"], WorkerGroup: workerGroup})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for _, ch := range r.Checks {
			if strings.HasPrefix(ch.Name, "exactly-once") || ch.Name == "old-job-transactions" {
				t.Logf("%s: %s %s: %s", what, ch.Verdict, ch.Name, ch.Detail)
			}
		}
		return r
	}
	r := precheck("enabled", sandbox.WorkerGroupID, cfg)
	ok := wantChecks(t, "enabled", r, "exactly-once-workers", verify.Pass)
	if len(ok) == 1 {
		mustContain(t, "enabled", ok[0].Detail, "all 2 workers", sb.Workers()[0].URL(), sb.Workers()[1].URL())
	}
	wantChecks(t, "enabled", r, "old-job-transactions", verify.Pass)
	wantChecks(t, "enabled", r, "exactly-once-acls", verify.Pass) // no authorizer
	if failed := r.Checks.Failed(); len(failed) > 0 {
		t.Errorf("enabled: failed checks %v", failed)
	}
	plain := mirrorConfig(sb, cfg["name"], topic)
	plain["source.consumer.isolation.level"] = "read_committed"
	plain["replication.factor"] = "1"
	r = precheck("at least once", sandbox.WorkerGroupID, plain)
	wantChecks(t, "at least once", r, "exactly-once-workers")
	if got := wantChecks(t, "at least once", r, "old-job-transactions", verify.Warn); len(got) == 1 {
		mustContain(t, "at least once", got[0].Detail, "in transactions", "connect.MirrorSource.ExactlyOnce")
	}

	for _, tc := range []struct{ group, says string }{
		{"", "CONNECT_GROUP_ID"},
		{"no-such-group", "has no members"},
		{group, "not a Kafka Connect group"}, // the old job's simple group: no members either
	} {
		r := precheck("group "+tc.group, tc.group, cfg)
		if got := wantChecks(t, "group "+tc.group, r, "exactly-once-workers", verify.Fail); len(got) == 1 && !strings.Contains(got[0].Detail, tc.says) && !strings.Contains(got[0].Detail, "has no members") {
			t.Errorf("group %q: %s, want it to say %q", tc.group, got[0].Detail, tc.says)
		}
	}

	w := sb.Workers()[1]
	if err := w.Stop(ctx); err != nil && !errors.Is(err, sandbox.ErrStopHung) { // 4.3.1 now and then hangs on SIGTERM: killed, as a Pod is
		t.Fatal(err)
	}
	if err := w.SetEnv("CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT=disabled"); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// The group may still be rebalancing: the check asks the members it
	// sees, and until the restarted worker has joined, the one it sees is
	// enabled (ok). On a loaded machine that lasted more than one try.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		r = precheck("one disabled", sandbox.WorkerGroupID, cfg)
		got := checksNamed(r, "exactly-once-workers")
		if len(got) == 1 && got[0].Verdict == verify.Fail && strings.Contains(got[0].Detail, w.URL()) {
			mustContain(t, "one disabled", got[0].Detail, "1 of 2 workers", "exactly.once.source.support=enabled", "CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the disabled worker %s was never named: %+v", w.URL(), got)
		}
		time.Sleep(2 * time.Second)
	}
	// Connect's own validation, answered by the first (enabled) worker, is
	// silent about the second: only asking each worker finds it.
	for _, ch := range r.Checks {
		if ch.Name == "connector-config" && strings.Contains(ch.Detail, "exactly-once source support") {
			t.Errorf("the worker asked answered for the other: %s", ch.Detail)
		}
	}
}

// TestPrecheckExactlyOnceACLs: on a target with an authorizer, the
// connector's producer principal (producer.override.sasl.jaas.config)
// without the transactional IDs' ACLs fails exactly-once-acls naming the
// principal, the operation and the transactional ID; with a PREFIXED ACL
// on <group>-<connector>- and the offsets topic it passes. The workers'
// principal, a super user, is named by no ACL: the brokers do not show
// super.users (DescribeConfigs reports it sensitive, without a value), so
// it only warns.
func TestPrecheckExactlyOnceACLs(t *testing.T) {
	sb := sandboxtest.Dedicated(t, sandbox.Config{Secure: true, Authorizer: true})
	src, tgt := sb.Source(), sb.Target()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const topic, group, connector, workerGroup, offsetsTopic = "orders", "flink-orders", "eos-orders", "mm2-connect", "mm2-connect-offsets"
	for _, b := range []*sandbox.Broker{src, tgt} {
		if err := b.CreateTopic(ctx, topic, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := tgt.CreateTopic(ctx, offsetsTopic, 1); err != nil {
		t.Fatal(err)
	}
	adminSrc, adminTgt := secureClient(t, sb, src, src.Admin()), secureClient(t, sb, tgt, tgt.Admin())
	if err := adminSrc.CommitOffsets(ctx, group, map[kafkaadmin.TopicPartition]int64{{Topic: topic, Partition: 0}: 0}); err != nil {
		t.Fatal(err)
	}
	producer, err := tgt.AddUser(ctx, "mm2eos")
	if err != nil {
		t.Fatal(err)
	}
	// MM2's producer writes the target topics: some ACL names it.
	admin, err := sarama.NewClusterAdmin(tgt.Addrs(), tgt.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	allow := func(rt sarama.AclResourceType, name string, pattern sarama.AclResourcePatternType, op sarama.AclOperation) {
		t.Helper()
		if err := admin.CreateACLs([]*sarama.ResourceAcls{{Resource: sarama.Resource{ResourceType: rt, ResourceName: name, ResourcePatternType: pattern},
			Acls: []*sarama.Acl{{Principal: "User:" + producer.Name, Host: "*", Operation: op, PermissionType: sarama.AclPermissionAllow}}}}); err != nil {
			t.Fatal(err)
		}
	}
	allow(sarama.AclResourceTopic, topic, sarama.AclPatternLiteral, sarama.AclOperationWrite)
	cfgs, err := adminTgt.BrokerConfigs(ctx, "super.users")
	if err != nil {
		t.Fatal(err)
	}
	for id, c := range cfgs {
		if v := c.Values["super.users"]; !v.Sensitive || v.Value != "" {
			t.Errorf("broker %d shows super.users as %+v: the check could read the super users", id, v)
		}
	}
	noWorker, err := connect.New("http://127.0.0.1:1", connect.WithRetry(connect.Retry{Attempts: 1}))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := connect.MirrorSource{Name: connector, SourceBootstrap: strings.Join(src.Addrs(), ","), TargetBootstrap: strings.Join(tgt.Addrs(), ","),
		Topics: []string{topic}, TasksMax: 2, ExactlyOnce: true,
		Extra: map[string]string{"producer.override.sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="` + producer.Name + `" password="` + producer.Password + `";`}}.Config()
	if err != nil {
		t.Fatal(err)
	}
	precheck := func(what string) verify.Checks {
		t.Helper()
		r, err := verify.Precheck(ctx, noWorker, adminSrc, adminTgt, verify.PrecheckSpec{Group: group, Topics: []string{topic},
			Policy: offsets.ReplicationPolicy{Kind: offsets.IdentityPolicy}, StabilityWindow: time.Second, Config: cfg, Connector: connector,
			WorkerGroup: workerGroup, WorkerPrincipal: "User:" + sandbox.MM2User, WorkerStorage: &verify.WorkerStorage{OffsetTopic: offsetsTopic}})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		got := wantChecks(t, what, r, "exactly-once-acls", verify.Warn, map[bool]verify.Verdict{true: verify.Pass, false: verify.Fail}[what == "granted"])
		for _, ch := range got {
			t.Logf("%s: %s: %s", what, ch.Verdict, ch.Detail)
			if strings.Contains(ch.Detail, producer.Password) {
				t.Errorf("the check shows the producer's password")
			}
		}
		return got
	}
	deadline := time.Now().Add(time.Minute)
	got := precheck("no transactional ACL")
	for ; len(got) == 2 && !strings.Contains(got[1].Detail, "mm2eos") && time.Now().Before(deadline); got = precheck("no transactional ACL") {
		time.Sleep(time.Second) // the topic ACL reaches the brokers shortly after
	}
	if len(got) == 2 {
		mustContain(t, "no transactional ACL", got[0].Detail, "User:"+sandbox.MM2User, "super user")
		mustContain(t, "no transactional ACL", got[1].Detail, "User:mm2eos WRITE on TRANSACTIONAL_ID mm2-connect-eos-orders-0", `"mm2-connect-eos-orders-"`)
		if strings.Contains(got[1].Detail, "User:"+sandbox.MM2User+" ") {
			t.Errorf("the workers' principal, a super user, was found lacking: %s", got[1].Detail)
		}
	}

	allow(sarama.AclResourceTopic, offsetsTopic, sarama.AclPatternLiteral, sarama.AclOperationRead)
	allow(sarama.AclResourceTopic, offsetsTopic, sarama.AclPatternLiteral, sarama.AclOperationWrite)
	if got := precheck("offsets topic only"); len(got) == 2 {
		mustContain(t, "offsets topic only", got[1].Detail, "TRANSACTIONAL_ID mm2-connect-eos-orders-1")
	}
	allow(sarama.AclResourceTransactionalID, workerGroup+"-"+connector+"-", sarama.AclPatternPrefixed, sarama.AclOperationWrite)
	deadline = time.Now().Add(time.Minute)
	for got := precheck("granted"); (len(got) != 2 || got[1].Verdict != verify.Pass) && time.Now().Before(deadline); got = precheck("granted") {
		time.Sleep(time.Second) // ACLs reach every broker shortly after
	}
}
