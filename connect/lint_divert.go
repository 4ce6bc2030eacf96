package connect

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mm2cutover/mm2cutover/offsets"
)

// The lint rules for keys that drop or divert records: each makes MM2 do
// something other than what the cutover's checks looked at.

// clusterBootstrapKeys are the addresses the cutover's checks follow: MM2's
// clients for each cluster take them, and the precheck compares the
// clusters they reach with its own.
var clusterBootstrapKeys = map[string]bool{
	"source.cluster.bootstrap.servers": true,
	"target.cluster.bootstrap.servers": true,
}

// producerOverrideBootstrap is the key that sends the worker's producer,
// which writes MM2's records, to other addresses than the workers' own
// cluster.
const producerOverrideBootstrap = "producer.override.bootstrap.servers"

// lintDiversions adds the findings of the rules above to add.
func lintDiversions(config map[string]string, workerVersion string, exp LintExpectations, add func(sev Severity, key, msg, advice string)) {
	example := "orders"
	if len(exp.Topics) > 0 {
		example = exp.Topics[0]
	}
	policy, err := offsets.PolicyOf(config)
	switch {
	case err != nil:
		key := "replication.policy.class"
		if strings.Contains(err.Error(), "separator") {
			key = "replication.policy.separator"
		}
		add(SeverityError, key, fmt.Sprintf("%v: the cutover cannot name the topics MM2 writes", err),
			"use "+shortClass(offsets.IdentityPolicyClass)+" or "+shortClass(offsets.DefaultPolicyClass)+" with a non-empty separator")
	case exp.Policy != nil && !policy.Same(*exp.Policy):
		key := "replication.policy.class"
		if policy.Kind == exp.Policy.Kind {
			key = "replication.policy.separator"
			if policy.SourceAlias != exp.Policy.SourceAlias {
				key = "source.cluster.alias"
			}
		}
		writes, _ := policy.TargetTopic(example)
		checked, cerr := exp.Policy.TargetTopic(example)
		if cerr != nil {
			checked = cerr.Error()
		}
		add(SeverityError, key, fmt.Sprintf("makes MM2 write %s to %s, but the checks look at %s", example, writes, checked),
			"derive the replication policy from this configuration (offsets.PolicyOf), or change the configuration")
	}

	if v := strings.TrimSpace(config["transforms"]); v != "" {
		add(SeverityError, "transforms", fmt.Sprintf("is %q: single message transforms change records or drop them (a Filter drops them silently), and the cutover copies every record byte for byte", v),
			"remove transforms and its transforms.* keys")
	}
	if v := strings.TrimSpace(config["predicates"]); v != "" {
		add(SeverityError, "predicates", fmt.Sprintf("is %q: predicates decide which records transforms change or drop", v),
			"remove predicates and its predicates.* keys")
	}
	if v, ok := config["errors.tolerance"]; ok && !strings.EqualFold(strings.TrimSpace(v), "none") {
		add(SeverityError, "errors.tolerance", fmt.Sprintf("is %q: a record that fails conversion is skipped (and at most logged) instead of copied", v),
			"remove it: with the default none the task fails and no record is lost")
	}
	if class := strings.TrimSpace(config["topic.filter.class"]); class != "" && class != defaultTopicFilterClass {
		add(SeverityError, "topic.filter.class", fmt.Sprintf("is %s: which topics it replicates cannot be checked", class),
			"remove it: DefaultTopicFilter with topics and topics.exclude selects the topics")
	} else if len(exp.Topics) > 0 {
		lintScope(config, workerVersion, exp.Topics, add)
	}

	keys := make([]string, 0, len(config))
	for k := range config {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch {
		case k == producerOverrideBootstrap:
			add(SeverityWarning, k, fmt.Sprintf("is %q: MM2's records are written there, not to the Connect workers' own cluster", config[k]),
				"the precheck fails unless it reaches the target cluster; remove it where the workers' cluster is the target")
		case clusterBootstrapKeys[k]:
		case k == "bootstrap.servers" || strings.HasSuffix(k, ".bootstrap.servers"):
			add(SeverityError, k, fmt.Sprintf("is %q: it sends one of MM2's clients elsewhere than source.cluster.bootstrap.servers and target.cluster.bootstrap.servers, which the cutover checks", config[k]),
				"remove it; set the clusters' addresses only in source.cluster.bootstrap.servers and target.cluster.bootstrap.servers")
		}
	}
}

// lintScope reports the topics in scope that MM2 would not replicate,
// grouped by the setting that drops them.
func lintScope(config map[string]string, workerVersion string, topics []string, add func(sev Severity, key, msg, advice string)) {
	f, err := NewTopicFilter(config, workerVersion)
	if err != nil {
		add(SeverityWarning, "topics", fmt.Sprintf("cannot tell which topics MM2 replicates: %v", err),
			"list the topics in scope by name")
		return
	}
	dropped := map[string][]string{}
	why := map[string]string{}
	for _, t := range topics {
		if key, reason := f.Drop(t); key != "" {
			dropped[key] = append(dropped[key], t)
			why[key] = reason
		}
	}
	keys := make([]string, 0, len(dropped))
	for k := range dropped {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ts := dropped[k]
		add(SeverityError, k, fmt.Sprintf("keeps %d topic%s in scope from being replicated (%s: %s): the plan would set offsets MM2 never reads, and their records would not be copied",
			len(ts), pluralS(len(ts)), strings.Join(ts, ", "), why[k]),
			"change "+k+" so that every topic in scope is replicated, or take those topics out of scope")
	}
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func shortClass(c string) string { return c[strings.LastIndexByte(c, '.')+1:] }
