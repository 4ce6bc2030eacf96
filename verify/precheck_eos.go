package verify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// The checks of an exactly-once cutover (a configuration with
// exactly.once.support=required, connect.MirrorSource.ExactlyOnce):
//
//   - exactly-once-workers: every worker of the Connect group runs with
//     exactly.once.source.support=enabled. A worker without it runs the
//     tasks it is given at least once, silently (DistributedHerder.
//     startTask), and nothing a worker's REST API shows says how it was
//     started, except its own answer to validate: a worker without support
//     refuses exactly.once.support=required ("This worker does not have
//     exactly-once source support enabled."), and validate is answered by
//     the worker asked, never forwarded. So the precheck lists the group's
//     members — each advertises its REST URL in its metadata, as the
//     coordinator of the workers' group (on the target) holds it — and
//     asks each worker itself. Connect's config topic would not do: it
//     holds connectors' configurations, not workers'.
//   - exactly-once-acls: on the target, the principal of the connector's
//     producer may WRITE (and DESCRIBE) the tasks' transactional IDs
//     <group.id>-<connector>-<task> and READ, WRITE and DESCRIBE the
//     connector's offsets topic, its admin principal (which fences the
//     previous tasks' producers) WRITE the transactional IDs, and the
//     workers' principal WRITE connect-cluster-<group.id>, as the
//     StandardAuthorizer would decide from the target's ACLs.
//
// And, whatever the configuration, old-job-transactions: the old job's
// last writes to the target were transactional, so its read_committed
// readers never saw a duplicate; the precheck recommends exactly-once then.

// exactlyOnceWorkerFacts is what the precheck reads of the Connect group
// for exactly-once-workers.
type exactlyOnceWorkerFacts struct {
	group    string
	members  kafkaadmin.Group
	groupErr error
	answers  []workerAnswer
}

// workerAnswer is one worker's answer to validate.
type workerAnswer struct {
	url   string
	lacks bool  // it refused exactly.once.support=required for itself
	err   error // it could not be asked (or its metadata read)
}

// precheckExactlyOnceWorkers reads the Connect group's members from the
// target and asks each worker to validate config, then judges
// (exactlyOnceWorkersRule).
func precheckExactlyOnceWorkers(ctx context.Context, cs *Checks, c *connect.Client, target *kafkaadmin.Client, spec PrecheckSpec) {
	f := exactlyOnceWorkerFacts{group: spec.WorkerGroup}
	if f.group != "" {
		f.members, f.groupErr = stableConnectGroup(ctx, target, f.group)
	}
	if f.group != "" && f.groupErr == nil && f.members.ProtocolType == "connect" {
		class := spec.Config["connector.class"]
		if class == "" {
			class = connect.MirrorSourceConnectorClass
		}
		f.answers = make([]workerAnswer, len(f.members.Members))
		var wg sync.WaitGroup
		for i, m := range f.members.Members {
			wg.Go(func() {
				a := &f.answers[i]
				if a.url, a.err = kafkaadmin.ConnectWorkerURL(m.Metadata); a.err != nil {
					a.url = m.ClientHost
					return
				}
				w, err := c.At(a.url)
				if err != nil {
					a.err = err
					return
				}
				infos, err := w.Validate(ctx, class, spec.Config)
				a.lacks, a.err = connect.WorkerLacksExactlyOnce(infos), err
			})
		}
		wg.Wait()
	}
	exactlyOnceWorkersRule(cs, f)
}

// groupSettle bounds how long the precheck waits for a rebalancing Connect
// group to settle: its coordinator shows the members' metadata (their
// URLs) only while the group is Stable.
const groupSettle = 30 * time.Second

// stableConnectGroup describes the Connect group until it is Stable, or
// groupSettle has passed, or it is not a group of Connect workers: the
// coordinator shows members' metadata only in a Stable group
// (DescribeGroups; a group in a rebalance lists its members without it).
func stableConnectGroup(ctx context.Context, target *kafkaadmin.Client, group string) (kafkaadmin.Group, error) {
	deadline := time.Now().Add(groupSettle)
	for {
		g, err := target.DescribeGroup(ctx, group)
		if err != nil || g.ProtocolType != "connect" || g.State == kafkaadmin.GroupStable || time.Now().After(deadline) {
			return g, err
		}
		if err := sleep(ctx, time.Second); err != nil {
			return g, err
		}
	}
}

// exactlyOnceWorkersRule judges the answers of the workers
// (exactly-once-workers). It reads nothing.
func exactlyOnceWorkersRule(cs *Checks, f exactlyOnceWorkerFacts) {
	const name = "exactly-once-workers"
	const setting = connect.WorkerExactlyOnceKey + "=enabled (the image's CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT)"
	switch {
	case f.group == "":
		cs.add(name, Fail, "the connector requires exactly-once (exactly.once.support=required), which needs %s on every worker of the Connect group; name the workers' group.id (PrecheckSpec.WorkerGroup; the image's CONNECT_GROUP_ID), which REST does not show, so that the precheck asks each worker",
			setting)
		return
	case f.groupErr != nil:
		cs.add(name, Fail, "cannot read the Connect group %s on the target: %v", f.group, f.groupErr)
		return
	case len(f.members.Members) == 0:
		cs.add(name, Fail, "the Connect group %s has no members on the target, the workers' cluster: is %s the workers' group.id?", f.group, f.group)
		return
	case f.members.ProtocolType != "connect":
		cs.add(name, Fail, "group %s is not a Kafka Connect group (protocol type %q): name the workers' group.id", f.group, f.members.ProtocolType)
		return
	case f.members.State != kafkaadmin.GroupStable:
		cs.add(name, Fail, "the Connect group %s is %s, not Stable, after %v: its coordinator shows the workers' URLs only in a stable group; run the precheck again once the workers settled",
			f.group, f.members.State, groupSettle)
		return
	}
	var lacking, unasked, ok []string
	for _, a := range f.answers {
		switch {
		case a.err != nil:
			unasked = append(unasked, fmt.Sprintf("%s (%v)", a.url, a.err))
		case a.lacks:
			lacking = append(lacking, a.url)
		default:
			ok = append(ok, a.url)
		}
	}
	slices.Sort(lacking)
	slices.Sort(ok)
	if len(lacking) > 0 {
		cs.add(name, Fail, "%d of %d workers of group %s run without exactly-once source support (%s): %s is not set there, and a worker without it runs the tasks it is given at least once; set it on every worker and restart them",
			len(lacking), len(f.answers), f.group, listSome(lacking, 5), setting)
	}
	if len(unasked) > 0 {
		cs.add(name, Fail, "%d of %d workers of group %s could not be asked whether they run with %s: %s; each worker must be asked at the REST URL it advertises to its group",
			len(unasked), len(f.answers), f.group, setting, listSome(unasked, 3))
	}
	if len(lacking)+len(unasked) == 0 {
		cs.add(name, Pass, "all %d workers of group %s (%s) run with %s: each validated exactly.once.support=required itself",
			len(ok), f.group, listSome(ok, 5), connect.WorkerExactlyOnceKey+"=enabled")
	}
}

// aclNeed is one operation a principal needs on one resource of the
// target for an exactly-once connector.
type aclNeed struct {
	principal, role string
	resource        kafkaadmin.ResourceType
	names           []string
	ops             []kafkaadmin.Operation
}

// exactlyOnceACLFacts is what exactly-once-acls judges.
type exactlyOnceACLFacts struct {
	needs   []aclNeed
	unknown []string // roles whose principal is not known
	// acls are the target's ACLs of every resource type the check reads:
	// transactional IDs and topics decide, groups and the cluster only show
	// which principals some ACL names.
	acls    []kafkaadmin.ACL
	aclsErr error
	// prefix is <group.id>-<connector>-, the prefix of the tasks'
	// transactional IDs, for the advice.
	prefix string
}

// exactlyOnceNeeds lists what an exactly-once connector of config needs on
// the target, for the principals known: the producer's (the connector's
// producer.override.sasl.jaas.config, else the workers'), the admin's
// (admin.override.*, else the workers'), the offsets consumer's
// (consumer.override.*, else the workers'), and the workers' own. tasks is
// tasks.max. It is pure.
func exactlyOnceNeeds(config map[string]string, spec PrecheckSpec) (needs []aclNeed, unknown []string) {
	tasks, err := strconv.Atoi(strings.TrimSpace(config["tasks.max"]))
	if err != nil || tasks < 1 {
		tasks = 1
	}
	connector := config["name"]
	if connector == "" {
		connector = spec.Connector
	}
	ids := connect.TransactionalIDs(spec.WorkerGroup, connector, tasks)
	offsetsTopic := connect.OffsetsTopicOf(config, spec.WorkerStorage.offsetTopic())
	principal := func(role, key string) string {
		if p, ok := principalOfJAAS(config[key]); ok {
			return p
		}
		if _, set := config[key]; set {
			unknown = append(unknown, role+" ("+key+" names no principal the precheck can read)")
			return ""
		}
		if spec.WorkerPrincipal == "" {
			unknown = append(unknown, role+" (the workers' own: PrecheckSpec.WorkerPrincipal)")
		}
		return spec.WorkerPrincipal
	}
	producer := principal("MM2's producer", "producer.override.sasl.jaas.config")
	admin := principal("MM2's admin client, which fences the tasks' producers", "admin.override.sasl.jaas.config")
	consumer := principal("the connector's offsets consumer", "consumer.override.sasl.jaas.config")
	rw := []kafkaadmin.Operation{kafkaadmin.OpDescribe, kafkaadmin.OpRead, kafkaadmin.OpWrite}
	if producer != "" && spec.WorkerGroup != "" {
		needs = append(needs, aclNeed{producer, "the tasks write their records and offsets in transactions", kafkaadmin.ResourceTransactionalID, ids,
			[]kafkaadmin.Operation{kafkaadmin.OpDescribe, kafkaadmin.OpWrite}})
	}
	if producer != "" && offsetsTopic != "" {
		needs = append(needs, aclNeed{producer, "the tasks write their offsets there in their transactions", kafkaadmin.ResourceTopic, []string{offsetsTopic}, rw})
	}
	if admin != "" && spec.WorkerGroup != "" {
		needs = append(needs, aclNeed{admin, "the leader fences the previous tasks' producers before new tasks start and before an offsets PATCH", kafkaadmin.ResourceTransactionalID, ids,
			[]kafkaadmin.Operation{kafkaadmin.OpDescribe, kafkaadmin.OpWrite}})
	}
	if consumer != "" && offsetsTopic != "" {
		needs = append(needs, aclNeed{consumer, "the connector reads its offsets there read_committed", kafkaadmin.ResourceTopic, []string{offsetsTopic},
			[]kafkaadmin.Operation{kafkaadmin.OpDescribe, kafkaadmin.OpRead}})
	}
	if spec.WorkerPrincipal != "" && spec.WorkerGroup != "" {
		needs = append(needs, aclNeed{spec.WorkerPrincipal, "the leader of an exactly-once group writes the config topic in transactions", kafkaadmin.ResourceTransactionalID,
			[]string{connect.WorkerTransactionalID(spec.WorkerGroup)}, []kafkaadmin.Operation{kafkaadmin.OpDescribe, kafkaadmin.OpWrite}})
	}
	if offsetsTopic == "" {
		unknown = append(unknown, "the offsets topic (the workers' offset.storage.topic: PrecheckSpec.WorkerStorage)")
	}
	return needs, unknown
}

// precheckExactlyOnceACLs reads the target's ACLs and judges what an
// exactly-once connector needs (exactlyOnceACLRule).
func precheckExactlyOnceACLs(ctx context.Context, cs *Checks, target *kafkaadmin.Client, spec PrecheckSpec) {
	f := exactlyOnceACLFacts{}
	f.needs, f.unknown = exactlyOnceNeeds(spec.Config, spec)
	f.prefix = strings.TrimSuffix(connect.TransactionalIDs(spec.WorkerGroup, spec.Config["name"], 1)[0], "0")
	f.acls, f.aclsErr = target.ACLs(ctx, kafkaadmin.ResourceTransactionalID, kafkaadmin.ResourceTopic, kafkaadmin.ResourceGroup, kafkaadmin.ResourceCluster)
	exactlyOnceACLRule(cs, f)
}

// exactlyOnceACLRule judges the needs against the ACLs
// (exactly-once-acls), as the StandardAuthorizer would
// (kafkaadmin.Authorize). A super user needs no ACL, and the brokers do
// not show who is one (DescribeConfigs reports super.users as sensitive,
// with no value: Kafka 4.3.1): a principal that some ACL of the target
// names is taken for an ordinary one, and what it lacks fails; a principal
// that no ACL names is a super user or may do nothing, and only warns. It
// reads nothing.
func exactlyOnceACLRule(cs *Checks, f exactlyOnceACLFacts) {
	const name = "exactly-once-acls"
	if errors.Is(f.aclsErr, kafkaadmin.ErrNoAuthorizer) {
		cs.add(name, Pass, "the target's brokers run no authorizer: the transactional IDs and the offsets topic are open to every principal")
		return
	}
	if len(f.unknown) > 0 {
		cs.add(name, Warn, "not checked for %s", strings.Join(f.unknown, "; "))
	}
	if len(f.needs) == 0 {
		return
	}
	switch {
	case f.aclsErr != nil:
		cs.add(name, Warn, "cannot read the target's ACLs (DescribeAcls needs DESCRIBE on the cluster): %v; check the transactional IDs and the offsets topic by hand", f.aclsErr)
		return
	}
	named := map[string]bool{}
	for _, a := range f.acls {
		if !a.Deny {
			named[a.Principal] = true
		}
	}
	var missing, unnamed []string
	checked := 0
	for _, n := range f.needs {
		if !named[n.principal] && !named["User:*"] {
			if !slices.Contains(unnamed, n.principal) {
				unnamed = append(unnamed, n.principal)
			}
			continue
		}
		for _, res := range n.names {
			for _, op := range n.ops {
				checked++
				if v := kafkaadmin.Authorize(f.acls, n.principal, n.resource, res, op); v != kafkaadmin.ACLAllowed {
					missing = append(missing, fmt.Sprintf("%s %s on %s %s: %s (%s)", n.principal, op, n.resource, res, v, n.role))
				}
			}
		}
	}
	if len(unnamed) > 0 {
		cs.add(name, Warn, "no ACL of the target names %s: a super user (the brokers do not show super.users) needs none; any other principal may do nothing there, and an exactly-once connector needs WRITE and DESCRIBE on the transactional IDs %s* and READ, WRITE and DESCRIBE on its offsets topic",
			strings.Join(unnamed, ", "), f.prefix)
	}
	switch {
	case len(missing) > 0:
		cs.add(name, Fail, "an exactly-once connector needs on the target %s; grant WRITE and DESCRIBE on the transactional IDs (a PREFIXED ACL on %q covers every task) and READ, WRITE and DESCRIBE on the offsets topic",
			listSome(missing, 4), f.prefix)
	case checked > 0:
		cs.add(name, Pass, "the target's ACLs allow what an exactly-once connector needs (%d operations: transactional IDs %s*, the offsets topic)", checked, f.prefix)
	}
}

// principalOfJAAS returns "User:<name>" of a sasl.jaas.config value: the
// username of a PLAIN or SCRAM login, the short name of a Kerberos
// principal (the brokers' DEFAULT principal.to.local rules). False when the
// value names none the precheck can read (a config provider reference).
func principalOfJAAS(v string) (string, bool) {
	if v == "" || strings.Contains(v, "${") {
		return "", false
	}
	if m := jaasKerberos.FindStringSubmatch(v); m != nil {
		short, _, _ := strings.Cut(m[1], "@")
		short, _, _ = strings.Cut(short, "/")
		return "User:" + short, true
	}
	if m := jaasUser.FindStringSubmatch(v); m != nil {
		return "User:" + m[1], true
	}
	return "", false
}

// offsetTopic is the workers' offset.storage.topic, "" when not named.
func (w *WorkerStorage) offsetTopic() string {
	if w == nil {
		return ""
	}
	return w.OffsetTopic
}

// oldJobTransactionsRule says whether the old job's last writes to the
// target were transactional (transactional names a target partition whose
// last data record was, "" for none) and, when they were and the
// connector does not run exactly-once, recommends it
// (old-job-transactions). It reads nothing.
func oldJobTransactionsRule(cs *Checks, transactional string, exactlyOnce bool) {
	const name = "old-job-transactions"
	switch {
	case transactional == "":
	case exactlyOnce:
		cs.add(name, Pass, "the old job wrote the target in transactions (%s), and the connector runs exactly-once too", transactional)
	default:
		cs.add(name, Warn, "the old job wrote the target in transactions (%s): its read_committed readers never saw a duplicate, but MirrorMaker 2 at least once copies again, after a restart or a lost worker, what it copied since its last offset flush; cut over to exactly-once MirrorMaker 2 (connect.MirrorSource.ExactlyOnce)",
			transactional)
	}
}

// precheckOldJobTransactions reads the last data record before each
// target partition's end (read_uncommitted: the old job's, as target-quiet
// proved nothing else writes) and judges (oldJobTransactionsRule).
func precheckOldJobTransactions(ctx context.Context, cs *Checks, target *kafkaadmin.Client, spec PrecheckSpec, ends map[offsets.SourcePartition]int64) {
	targets := targetNames(spec)
	spans := map[kafkaadmin.TopicPartition]kafkaadmin.Span{}
	for sp, end := range ends {
		if t := targets[sp.Topic]; t != "" && end > 0 {
			spans[kafkaadmin.TopicPartition{Topic: t, Partition: sp.Partition}] = kafkaadmin.Span{From: max(0, end-oldJobTail), Until: end}
		}
	}
	found := ""
	if len(spans) > 0 {
		recs, err := target.ReadSpans(ctx, spans, kafkaadmin.ReadUncommitted)
		var perr *kafkaadmin.PartitionErrors
		if err != nil && !errors.As(err, &perr) {
			cs.add("old-job-transactions", Warn, "cannot read the target's last records: %v", err)
			return
		}
		tps := make([]kafkaadmin.TopicPartition, 0, len(recs))
		for tp := range recs {
			tps = append(tps, tp)
		}
		slices.SortFunc(tps, kafkaadmin.TopicPartition.Compare)
		for _, tp := range tps {
			if rs := recs[tp]; len(rs) > 0 && rs[len(rs)-1].Transactional {
				found = fmt.Sprintf("%s at %d", tp, rs[len(rs)-1].Offset)
				break
			}
		}
	}
	oldJobTransactionsRule(cs, found, connect.ExactlyOnceOf(spec.Config))
}

// oldJobTail is how many offsets before a target partition's end the
// old-job-transactions check reads: enough to pass a transaction's
// markers (one per transaction) to its last data record.
const oldJobTail = 16

// precheckConnectorOffsetsTopic checks the connector's own offsets topic,
// when its configuration names one (offsets.storage.topic): on the
// workers' cluster, the target, it must be compacted like the workers'
// own (connector-offsets-topic). Connect creates it, compacted, when it
// first writes the connector's offsets (the cutover's PATCH).
func precheckConnectorOffsetsTopic(ctx context.Context, cs *Checks, target *kafkaadmin.Client, spec PrecheckSpec) {
	const name = "connector-offsets-topic"
	own := strings.TrimSpace(spec.Config[connect.OffsetsStorageTopicKey])
	if own == "" {
		return
	}
	layouts, err := target.TopicLayouts(ctx, own)
	if err != nil {
		cs.add(name, Warn, "cannot read the connector's offsets topic %s: %v", own, err)
		return
	}
	policy := ""
	if _, ok := layouts[own]; ok {
		cfgs, err := target.TopicConfigs(ctx, []string{own}, "cleanup.policy")
		if err != nil {
			cs.add(name, Warn, "cannot read the cleanup.policy of the connector's offsets topic %s: %v", own, err)
			return
		}
		policy = cfgs[own].Values["cleanup.policy"].Value
	}
	connectorOffsetsTopicRule(cs, own, layouts[own], policy)
}

// connectorOffsetsTopicRule judges the connector's own offsets topic; a
// zero layout means it does not exist. It reads nothing.
func connectorOffsetsTopicRule(cs *Checks, topic string, l kafkaadmin.TopicLayout, policy string) {
	const name = "connector-offsets-topic"
	switch {
	case l.Partitions == 0:
		cs.add(name, Pass, "the connector keeps its offsets in a topic of its own, %s, which Connect creates (compacted) on the target when the plan's offsets are written; the cutover reads them through Connect", topic)
	case strings.ReplaceAll(policy, " ", "") != "compact":
		cs.add(name, Fail, "the connector's offsets topic %s has cleanup.policy %q, not compact: Connect loses the offsets deletion removes, and MM2 would start over from the earliest record", topic, policy)
	default:
		cs.add(name, Pass, "the connector keeps its offsets in %s, compacted, on the target", topic)
	}
}
