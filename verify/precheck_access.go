package verify

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mm2cutover/mm2cutover/kafkaadmin"
)

// accessNeed is what the cutover needs to do to one resource of one
// cluster, and who does it.
type accessNeed struct {
	cluster string // "source" or "target"
	kind    string // "topic" or "group"
	name    string
	ops     []kafkaadmin.Operation
	who     string // what needs it, e.g. "MM2's source consumer reads it"
	// read: the precheck itself must DESCRIBE the resource to go on.
	read bool
}

// accessNeeds lists what the cutover needs: READ and DESCRIBE on every
// source topic (MM2's consumer reads them, the precheck reads their
// offsets), DESCRIBE on the old job's group (the precheck reads its
// commits), WRITE and DESCRIBE on every target topic that exists (MM2's
// producer writes them), and CREATE where MM2 would create a topic: a
// target topic that is missing, and the offset-syncs topic of a worker
// below Kafka 3.9 (syncsOn names its cluster, or is "").
func accessNeeds(spec PrecheckSpec, targets map[string]string, tgtAccess kafkaadmin.Access, syncsOn, syncsTopic string, syncsAccess kafkaadmin.Access) []accessNeed {
	var out []accessNeed
	for _, s := range sortedKeys(targets) {
		out = append(out, accessNeed{"source", "topic", s, []kafkaadmin.Operation{kafkaadmin.OpDescribe, kafkaadmin.OpRead}, "MM2's source consumer reads it", true})
	}
	out = append(out, accessNeed{"source", "group", spec.Group, []kafkaadmin.Operation{kafkaadmin.OpDescribe}, "the cutover reads its commits", true})
	for _, s := range sortedKeys(targets) {
		t := targets[s]
		if a, ok := tgtAccess.Topics[t]; ok && !a.Exists && !a.DescribeDenied {
			out = append(out, accessNeed{"target", "topic", t, []kafkaadmin.Operation{kafkaadmin.OpCreate}, "MM2 creates it", false})
			continue
		}
		out = append(out, accessNeed{"target", "topic", t, []kafkaadmin.Operation{kafkaadmin.OpDescribe, kafkaadmin.OpWrite}, "MM2's producer writes it", true})
	}
	if syncsOn != "" {
		need := accessNeed{syncsOn, "topic", syncsTopic, []kafkaadmin.Operation{kafkaadmin.OpDescribe, kafkaadmin.OpWrite}, "MM2 writes offset syncs there (Kafka below 3.9)", false}
		if a, ok := syncsAccess.Topics[syncsTopic]; ok && !a.Exists && !a.DescribeDenied {
			need.ops = []kafkaadmin.Operation{kafkaadmin.OpCreate, kafkaadmin.OpWrite}
			need.who = "MM2 creates it and writes offset syncs there (Kafka below 3.9)"
		}
		out = append(out, need)
	}
	return out
}

// checkAccess reports, for the principal the tool connects as, each
// operation the cutover needs that the brokers deny: one failed check per
// cluster and operation, naming the resources. A cluster without an
// authorizer is a warning: everything is allowed to everyone there. CREATE
// on a topic is allowed by CREATE on the cluster or on the topic. It
// returns whether the precheck itself may DESCRIBE what it reads next
// (the source topics, the group, the target topics that exist).
func checkAccess(cs *Checks, source, target kafkaadmin.Access, needs []accessNeed, config map[string]string) (canRead bool) {
	const name = "permissions"
	access := map[string]kafkaadmin.Access{"source": source, "target": target}
	type key struct {
		cluster, kind string
		op            kafkaadmin.Operation
		verdict       Verdict
		state, why    string
	}
	found := map[key][]string{}
	var order []key
	note := func(k key, resource string) {
		if _, ok := found[k]; !ok {
			order = append(order, k)
		}
		found[k] = append(found[k], resource)
	}
	canRead = true
	checked := map[string]int{}
	for _, n := range needs {
		a := access[n.cluster]
		if a.Authorizer == kafkaadmin.AuthorizerAbsent {
			continue
		}
		checked[n.cluster]++
		var res kafkaadmin.ResourceAccess
		if n.kind == "group" {
			res = a.Groups[n.name]
		} else {
			res = a.Topics[n.name]
		}
		for _, op := range n.ops {
			switch {
			case op == kafkaadmin.OpCreate && (a.Cluster.Allows(op) || res.Allows(op)):
			case op == kafkaadmin.OpCreate && !a.Cluster.Known && res.Known:
				note(key{n.cluster, n.kind, op, Warn, "allowed neither on the topic nor visibly on the cluster", "the brokers show cluster operations only to a principal that may DESCRIBE the cluster; " + n.who}, n.name)
			case res.Allows(op):
			case res.DescribeDenied && op == kafkaadmin.OpDescribe:
				note(key{n.cluster, n.kind, op, Fail, "denied", "the brokers refuse to describe it; " + n.who}, n.name)
				if n.read {
					canRead = false
				}
			case res.DescribeDenied:
				// Reported as DESCRIBE denied; the other operations are not known.
			case !res.Known:
				note(key{n.cluster, n.kind, op, Warn, "not reported by the brokers", n.who}, n.name)
			default:
				note(key{n.cluster, n.kind, op, Fail, "denied", n.who}, n.name)
			}
		}
	}
	for _, cl := range []string{"source", "target"} {
		a := access[cl]
		switch a.Authorizer {
		case kafkaadmin.AuthorizerAbsent:
			cs.add(name, Warn, "the %s brokers run no authorizer (DescribeAcls answers SECURITY_DISABLED): any client that reaches them may read, write and delete every topic; there are no permissions to check", cl)
		case kafkaadmin.AuthorizerUnknown:
			cs.add(name, Warn, "cannot tell whether the %s brokers run an authorizer (DescribeAcls: %s)", cl, a.AuthorizerError)
		}
	}
	for _, k := range order {
		rs := found[k]
		cs.add(name, k.verdict, "%s %s %s for %s on %d %s %s (%s); %s", k.cluster, k.op, k.state, principal(access[k.cluster]),
			len(rs), k.kind+plural(len(rs)), listSome(rs, 5), k.why, connectorPrincipal(k.cluster, k.op, config))
	}
	if len(order) == 0 && checked["source"]+checked["target"] > 0 {
		var parts []string
		for _, cl := range []string{"source", "target"} {
			if checked[cl] > 0 {
				parts = append(parts, fmt.Sprintf("on the %s, %s may do all the cutover needs; %s", cl, principal(access[cl]), connectorPrincipal(cl, "", config)))
			}
		}
		cs.add(name, Pass, "%s", strings.Join(parts, "; "))
	}
	return canRead
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// principal names the principal the tool connects as.
func principal(a kafkaadmin.Access) string {
	switch {
	case a.Principal == "":
		return "the tool's principal (ANONYMOUS, or its TLS certificate's name)"
	case a.KerberosPrincipal != "":
		return "User:" + a.Principal + " (the tool's principal, Kerberos " + a.KerberosPrincipal + " by the brokers' DEFAULT principal.to.local rules)"
	}
	return "User:" + a.Principal + " (the tool's principal)"
}

// jaasUser finds the user name in a sasl.jaas.config value, and
// jaasKerberos the principal of a Krb5LoginModule entry.
var (
	jaasUser     = regexp.MustCompile(`username\s*=\s*"([^"]*)"`)
	jaasKerberos = regexp.MustCompile(`^\s*com\.sun\.security\.auth\.module\.Krb5LoginModule\s.*\bprincipal\s*=\s*"([^"]*)"`)
)

// connectorPrincipal says who MM2's clients authenticate as on a
// cluster, as far as the connector's configuration tells: the checks are
// made for the tool's principal, which may differ. On the target, MM2's
// records are written by the worker producer (producer.override.* in the
// connector), not with target.cluster.*.
func connectorPrincipal(cluster string, op kafkaadmin.Operation, config map[string]string) string {
	key, who := cluster+".cluster.sasl.jaas.config", "MM2's "+cluster+" clients authenticate"
	if cluster == "target" && (op == kafkaadmin.OpWrite || op == "") {
		key, who = "producer.override.sasl.jaas.config", "MM2's records are written by the worker producer,"
	}
	const grant = "; that may differ from the tool's: grant it the same"
	v, ok := config[key]
	switch {
	case !ok && key == "producer.override.sasl.jaas.config":
		return who + " as the workers' producer.sasl.jaas.config principal, not visible here" + grant
	case !ok:
		return who + " without SASL (no " + key + ")" + grant
	case strings.Contains(v, "${"):
		return who + " as the principal of " + key + ", set through a config provider" + grant
	}
	if m := jaasKerberos.FindStringSubmatch(v); m != nil {
		short, _, _ := strings.Cut(m[1], "@")
		short, _, _ = strings.Cut(short, "/")
		return fmt.Sprintf("%s as User:%s (Kerberos %s by the brokers' DEFAULT principal.to.local rules, %s)%s", who, short, m[1], key, grant)
	}
	if m := jaasUser.FindStringSubmatch(v); m != nil {
		return fmt.Sprintf("%s as User:%s (%s)%s", who, m[1], key, grant)
	}
	return who + " as the principal of " + key + grant
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
