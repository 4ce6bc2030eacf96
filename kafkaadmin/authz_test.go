package kafkaadmin

import (
	"slices"
	"testing"

	"github.com/IBM/sarama"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/redact"
)

func TestAccessOf(t *testing.T) {
	for _, tc := range []struct {
		bits int32
		want ResourceAccess
	}{
		{notProvided, ResourceAccess{}},
		{0, ResourceAccess{Known: true}},
		{1<<3 | 1<<8, ResourceAccess{Known: true, Allowed: []Operation{OpRead, OpDescribe}}},
		// Kafka 4.x topics without an authorizer: every operation a topic supports.
		{1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<10 | 1<<11, ResourceAccess{Known: true, Allowed: []Operation{
			OpRead, OpWrite, OpCreate, OpDelete, OpAlter, OpDescribe, OpDescribeConfigs, OpAlterConfigs}}},
		{1 << 30, ResourceAccess{Known: true}}, // an operation this package does not know
	} {
		got := accessOf(tc.bits)
		if got.Known != tc.want.Known || !slices.Equal(got.Allowed, tc.want.Allowed) {
			t.Errorf("accessOf(%#x) = %+v, want %+v", tc.bits, got, tc.want)
		}
	}
	if (ResourceAccess{Allowed: []Operation{OpRead}}).Allows(OpRead) {
		t.Error("an unknown set allows READ")
	}
}

// TestSandboxAccessWithoutAuthorizer: brokers without an authorizer report
// every operation as allowed, and DescribeAcls tells that none runs.
func TestSandboxAccessWithoutAuthorizer(t *testing.T) {
	boot := sandboxtest.Shared(t).Source().Bootstrap()
	topic := uniq(t, "t")
	createTopic(t, testAdmin(t, boot), boot, topic, 1)
	got, err := newTestClient(t, boot).Access(testCtx(t), []string{topic}, []string{uniq(t, "g")})
	if err != nil {
		t.Fatal(err)
	}
	if got.Authorizer != AuthorizerAbsent {
		t.Errorf("authorizer %q, want absent", got.Authorizer)
	}
	for _, op := range []Operation{OpRead, OpWrite, OpDescribe} {
		if !got.Topics[topic].Allows(op) {
			t.Errorf("topic %+v does not allow %s", got.Topics[topic], op)
		}
	}
	if !got.Cluster.Allows(OpCreate) || !got.Topics[topic].Exists {
		t.Errorf("cluster %+v, topic %+v", got.Cluster, got.Topics[topic])
	}
}

// TestSandboxAccessWithAuthorizer runs against brokers with
// StandardAuthorizer: a user granted READ on a topic, DESCRIBE and CREATE
// on a topic that does not exist, DESCRIBE on a group, and nothing else,
// is reported exactly so — the topic and group it may not describe, and
// the cluster whose operations the brokers withhold from it, as
// DescribeDenied — until it is allowed to DESCRIBE the cluster. A super
// user may do everything.
func TestSandboxAccessWithAuthorizer(t *testing.T) {
	sb := sandboxtest.Dedicated(t, sandbox.Config{Secure: true, Authorizer: true})
	src := sb.Source()
	ctx := testCtx(t)
	admin, err := sarama.NewClusterAdmin(src.Addrs(), src.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	topic, missing, hidden := "access-topic", "access-missing", "access-hidden"
	group, hiddenGroup := "access-group", "access-hidden-group"
	for _, tn := range []string{topic, hidden} {
		if err := admin.CreateTopic(tn, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false); err != nil {
			t.Fatal(err)
		}
	}
	user, err := src.AddUser(ctx, "cutover")
	if err != nil {
		t.Fatal(err)
	}
	allow := func(typ sarama.AclResourceType, name string, op sarama.AclOperation) {
		t.Helper()
		if err := admin.CreateACLs([]*sarama.ResourceAcls{{
			Resource: sarama.Resource{ResourceType: typ, ResourceName: name, ResourcePatternType: sarama.AclPatternLiteral},
			Acls:     []*sarama.Acl{{Principal: "User:" + user.Name, Host: "*", Operation: op, PermissionType: sarama.AclPermissionAllow}},
		}}); err != nil {
			t.Fatal(err)
		}
	}
	allow(sarama.AclResourceTopic, topic, sarama.AclOperationRead)
	allow(sarama.AclResourceTopic, missing, sarama.AclOperationDescribe)
	allow(sarama.AclResourceTopic, missing, sarama.AclOperationCreate)
	allow(sarama.AclResourceGroup, group, sarama.AclOperationDescribe)

	r, err := NewClient(Config{BootstrapServers: src.Addrs(), SecurityProtocol: SASLSSL, SASLMechanism: ScramSHA512,
		Username: user.Name, Password: redact.Secret(user.Password), TLS: TLSConfig{CAFile: sb.CAFile()}, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	// ACLs reach every broker through the metadata log: wait for them.
	var got Access
	for {
		if got, err = r.Access(ctx, []string{topic, missing, hidden}, []string{group, hiddenGroup}); err != nil {
			t.Fatal(err)
		}
		if got.Topics[topic].Allows(OpRead) && got.Groups[group].Allows(OpDescribe) && got.Topics[missing].Allows(OpCreate) || ctx.Err() != nil {
			break
		}
	}
	t.Logf("access of %s: %+v", user.Name, got)
	if got.Principal != user.Name || got.Authorizer != AuthorizerPresent {
		t.Errorf("principal %q, authorizer %q", got.Principal, got.Authorizer)
	}
	if tc := got.Topics[topic]; !tc.Exists || !slices.Equal(tc.Allowed, []Operation{OpRead, OpDescribe}) {
		t.Errorf("topic granted READ: %+v, want READ and the DESCRIBE it implies", tc)
	}
	if tc := got.Topics[missing]; tc.Exists || !slices.Equal(tc.Allowed, []Operation{OpCreate, OpDescribe}) {
		t.Errorf("missing topic granted DESCRIBE and CREATE: %+v", tc)
	}
	if tc := got.Topics[hidden]; !tc.DescribeDenied || tc.Known {
		t.Errorf("topic without ACL: %+v, want DescribeDenied", tc)
	}
	if g := got.Groups[group]; !g.Allows(OpDescribe) || g.Allows(OpRead) {
		t.Errorf("group granted DESCRIBE: %+v", g)
	}
	if g := got.Groups[hiddenGroup]; !g.DescribeDenied {
		t.Errorf("group without ACL: %+v, want DescribeDenied", g)
	}
	if !got.Cluster.DescribeDenied {
		t.Errorf("cluster without ACL: %+v, want DescribeDenied", got.Cluster)
	}

	allow(sarama.AclResourceCluster, "kafka-cluster", sarama.AclOperationDescribe)
	for {
		if got, err = r.Access(ctx, nil, nil); err != nil {
			t.Fatal(err)
		}
		if got.Cluster.Known || ctx.Err() != nil {
			break
		}
	}
	if !got.Cluster.Allows(OpDescribe) || got.Cluster.Allows(OpCreate) || got.Authorizer != AuthorizerPresent {
		t.Errorf("cluster granted DESCRIBE: %+v (authorizer %s)", got.Cluster, got.Authorizer)
	}

	superUser, err := NewClient(Config{BootstrapServers: src.Addrs(), SecurityProtocol: SASLSSL, SASLMechanism: ScramSHA512,
		Username: src.Admin().Name, Password: redact.Secret(src.Admin().Password), TLS: TLSConfig{CAFile: sb.CAFile()}})
	if err != nil {
		t.Fatal(err)
	}
	if got, err = superUser.Access(ctx, []string{hidden}, []string{hiddenGroup}); err != nil {
		t.Fatal(err)
	}
	if !got.Cluster.Allows(OpCreate) || !got.Topics[hidden].Allows(OpWrite) || !got.Groups[hiddenGroup].Allows(OpRead) || got.Authorizer != AuthorizerPresent {
		t.Errorf("super user: %+v", got)
	}
}
