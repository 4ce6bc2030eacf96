package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
)

// step is one step of the command line, or one of its other commands
// (help, version, completion, options).
type step struct {
	name, summary string
	// about is what the step's help says after the summary (its approval).
	about string
	// examples are real command lines, each under a comment, shown first
	// in the step's help (TestStepHelp parses each).
	examples []example
	// flags are the step's own flags; a cluster step also takes
	// settings.RequiredFlags and the shared flags. flagNames are all of them:
	// every flag the step reads (TestStepFlagsAreWhatItReads derives them
	// from the code), which its help shows and its completion offers.
	flags []string
	// cluster is set for the steps that reach the clusters and Connect.
	cluster bool
	// other is set for help, version, completion and options: listed
	// apart from the cutover's steps.
	other bool
	// args are what the usage line shows after the name: "[flags]" when
	// empty and the step has flags.
	args string
}

// example is one command line of a step's help, under its comment.
type example struct{ comment, command string }

// Flag lists the steps' flags are made of.
var (
	// connection is how every step that reaches them reaches the clusters
	// and Connect (app.Open, FirstContact).
	connection = []string{"source-bootstrap", "target-bootstrap", "connect-url",
		"source-client-config", "target-client-config", "source-security-protocol", "target-security-protocol",
		"source-sasl-mechanism", "target-sasl-mechanism", "source-sasl-username", "target-sasl-username",
		"source-tls-ca", "target-tls-ca", "connect-user", "connect-ca", "connect-client-config",
		"request-timeout", "retry-timeout"}
	// connectorFlags make the connector's configuration, which every step
	// that reaches Connect builds to compare with the plan's.
	connectorFlags = []string{"connector", "topics", "source-alias", "target-alias", "policy", "tasks-max",
		"mm2-source-client", "mm2-target-client", "connector-properties", "offset-syncs-location", "offset-syncs-replication-factor",
		"exactly-once"}
	// mm2Input is read again by the steps after the plan when the plan was
	// made from an old MirrorMaker's offsets topic (mm2:TOPIC).
	mm2Input = []string{"offsets-from", "offsets-alias", "offsets-connector", "offsets-connector-topic"}
	// shared are the flags every step that reaches the clusters reads:
	// its help lists them by name, 'cutover options' describes them.
	shared = flagList(connection, connectorFlags, mm2Input)
	// planInput is where the plan's offsets come from, and the precheck's
	// settings.
	planInput = []string{"offsets-from", "offsets-alias", "offsets-connector", "offsets-connector-topic", "offsets-file-overrides-group",
		"savepoint", "flink-source-uid", "flink-rest", "flink-job", "stability-window", "stopped-window",
		"accept-expired", "accepted-by", "strimzi-cluster",
		"worker-producer-max-request-size", "worker-config-topic", "worker-offset-topic", "worker-status-topic", "worker-storage-replication-factor",
		"worker-group", "worker-principal"}
	// files are the plan and the audit file of every step (the audit file
	// is named after the plan file by default).
	files = []string{"plan", "audit"}
	// output is how every step prints and logs.
	output = []string{"config", "output", "json", "log-level"}
)

// flagList joins lists of flags, each flag once.
func flagList(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		for _, f := range l {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// applyApproval is why apply writes without -yes.
const applyApproval = `Apply writes without -yes, unlike resume and rollback: it only creates the connector STOPPED (or
adopts one that is STOPPED with the plan's configuration) and writes its offsets, which nothing reads
until resume, and 'cutover rollback -yes' before resume removes both. Nothing reaches the target topics
before resume, which needs -yes. The Kubernetes Job runs apply unattended. Preview with -dry-run.`

var steps = []step{
	{name: "precheck", cluster: true,
		summary: "read-only checks of the clusters, the group, the target topics and Connect: what would block the cutover",
		examples: []example{
			{"Read-only checks with the settings file (exit 3 when something blocks the cutover)", "cutover precheck -config cutover.env"},
			{"Offsets from the old Flink job's final savepoint rather than its group's commits", "cutover precheck -config cutover.env -offsets-from flink-savepoint:/savepoints/savepoint-4f2a91"},
			{"The old job is stopped already: a shorter stability window, the checks as JSON", "cutover precheck -config cutover.env -stability-window 10s -o json"},
		},
		flags: flagList(planInput, files, output)},
	{name: "plan", cluster: true,
		summary: "the precheck, then the plan: per partition where MM2 resumes and why, written to -plan",
		examples: []example{
			{"Check, then write the plan to mm2cutover-plan.json and show its summary", "cutover plan -config cutover.env"},
			{"From the Flink savepoint, to a plan file of its own", "cutover plan -config cutover.env -offsets-from flink-savepoint:/savepoints/savepoint-4f2a91 -plan orders-plan.json"},
			{"Accept losing the expired records of two partitions (the plan records who did)", "cutover plan -config cutover.env -accept-expired orders-3,orders-5 -accepted-by jane.doe"},
		},
		flags: flagList(planInput, []string{"table"}, files, output)},
	{name: "apply", cluster: true,
		summary: "re-check the plan, create the connector STOPPED, back up, guard, PATCH the offsets, read them back (-dry-run: show the connector config and offsets it would write)",
		about:   applyApproval,
		examples: []example{
			{"Preview: the connector configuration (secrets redacted) and the offsets; nothing is written", "cutover apply -config cutover.env -dry-run"},
			{"Create the connector STOPPED, write the plan's offsets, read them back", "cutover apply -config cutover.env"},
			{"Another plan file, a longer read-back", "cutover apply -config cutover.env -plan orders-plan.json -readback-timeout 5m"},
		},
		flags: flagList([]string{"strimzi-cluster", "dry-run", "readback-timeout"}, files, output)},
	{name: "resume", cluster: true,
		summary: "re-check, capture the boundary records, resume the connector (only with -yes)",
		about:   "Without -yes resume says what it would do and exits 5: resuming starts MirrorMaker 2 copying.",
		examples: []example{
			{"Say what resume would do, and do nothing (exit 5)", "cutover resume -config cutover.env"},
			{"Re-check the plan against the clusters, then resume MirrorMaker 2", "cutover resume -config cutover.env -yes"},
		},
		flags: flagList([]string{"strimzi-cluster", "yes"}, files, output)},
	{name: "verify", cluster: true,
		summary: "before resume: the read-back (from Connect, or -strimzi-offsets: Strimzi's listOffsets ConfigMap); after: boundary records, lag, acceptance checks",
		examples: []example{
			{"Before resume: the read-back; after: the first record copied per partition, the lag, acceptance", "cutover verify -config cutover.env"},
			{"After resume: wait up to 15 minutes for MirrorMaker 2 to catch up", "cutover verify -config cutover.env -catchup-timeout 15m"},
			{"A Strimzi-managed connector: the offsets Strimzi listed (kubectl get configmap mm2-orders-list-offsets -o json > listed.json)", "cutover verify -config cutover.env -strimzi-offsets listed.json"},
		},
		flags: flagList([]string{"readback-timeout", "catchup-timeout", "strimzi-offsets", "strimzi-kubectl", "strimzi-namespace"}, files, output)},
	{name: "status", cluster: true,
		summary: "the connector's state and tasks, its offsets against the plan, the lag",
		examples: []example{
			{"The connector, its offsets against the plan, the lag and whether it moves", "cutover status -config cutover.env"},
			{"The same as JSON, for a dashboard or a script", "cutover status -config cutover.env -o json"},
		},
		flags: flagList(files, output)},
	{name: "run", cluster: true,
		summary: "plan, apply, resume (only with -yes) and verify, in order",
		about:   "Without -yes run stops after apply, before resume (exit 5), as resume does.",
		examples: []example{
			{"Plan and apply, and say what resume would do (exit 5)", "cutover run -config cutover.env"},
			{"The whole cutover: plan, apply, resume, verify", "cutover run -config cutover.env -yes"},
		},
		flags: flagList(planInput, []string{"yes", "readback-timeout", "catchup-timeout", "table"}, files, output)},
	{name: "strimzi", cluster: true,
		summary: "re-check the plan, render the Strimzi resources that apply it through the operator (KafkaConnector or KafkaMirrorMaker2, state stopped, and the alter ConfigMap) to -strimzi-out, with the steps",
		examples: []example{
			{"Render the resources for a KafkaConnect the operator owns; kubectl applies them", "cutover strimzi -config cutover.env -strimzi-cluster mm2-connect -strimzi-namespace kafka"},
			{"A KafkaMirrorMaker2 of three workers", "cutover strimzi -config cutover.env -strimzi-cluster mm2 -strimzi-replicas 3 -strimzi-out mm2-orders.yaml"},
		},
		flags: flagList([]string{"strimzi-cluster", "strimzi-namespace", "strimzi-out", "strimzi-alter-configmap",
			"strimzi-list-configmap", "strimzi-replicas", "strimzi-group-id", "worker-config-topic", "worker-offset-topic", "worker-status-topic"}, files, output)},
	{name: "rollback", cluster: true,
		summary: "before resume: delete the connector and its offsets; after resume: write C' = M'+1 to -rollback-group (only with -yes)",
		about:   "Without -yes rollback says what it would do and exits 5.",
		examples: []example{
			{"Say what the rollback of the connector's phase would do (exit 5)", "cutover rollback -config cutover.env"},
			{"Before resume: delete the connector and its offsets", "cutover rollback -config cutover.env -yes"},
			{"After resume: stop MirrorMaker 2, commit C' = M'+1 to the group the old job restarts from", "cutover rollback -config cutover.env -rollback-group flink-orders-replicator -yes"},
		},
		flags: flagList([]string{"strimzi-cluster", "rollback-group", "yes"}, files, output)},
	{name: "report",
		summary: "the change record to attach to the change, from the plan and the audit file: an HTML page that loads nothing and the same as Markdown, to -report-out (reads no cluster; exit 0 when written, whatever its verdict)",
		examples: []example{
			{"The change record of the plan and audit file the settings name", "cutover report -config cutover.env"},
			{"Of another plan, to a file named after the change", "cutover report -plan orders-plan.json -report-out CHG-1234.html"},
		},
		flags: flagList([]string{"report-out"}, files, []string{"config", "output", "json", "log-level"})},
	{name: "help", other: true, args: "[step]",
		summary: "the steps, or a step's examples and flags",
		examples: []example{
			{"The steps", "cutover help"},
			{"A step's examples and flags (also: cutover apply -h)", "cutover help apply"},
		}},
	{name: "options", other: true,
		summary:  "the flags every step that reaches the clusters takes: how it reaches them, the connector",
		examples: []example{{"Describe them", "cutover options"}},
		flags:    flagList(settings.RequiredFlags(), shared)},
	{name: "version", other: true,
		summary: "the tool version, and the Connect worker's when the settings name one",
		examples: []example{
			{"The tool's version and build", "cutover version"},
			{"And the Connect worker's, from the settings file", "cutover version -config cutover.env"},
			{"As JSON", "cutover version -o json"},
		},
		flags: []string{"config", "output", "json", "connect-url", "connect-user", "connect-ca", "connect-client-config", "request-timeout", "retry-timeout"}},
	{name: "completion", other: true, args: "bash|zsh",
		summary: "a shell completion script: steps, each step's flags, the values of flags that have a fixed set, files",
		examples: []example{
			{"bash, for this shell (add the line to ~/.bashrc to keep it)", "source <(cutover completion bash)"},
			{"zsh", `cutover completion zsh > "${fpath[1]}/_cutover"`},
		}},
}

// flagNames are the flags st takes: a cluster step's required and shared
// flags, and its own.
func (st step) flagNames() []string {
	if st.cluster {
		return flagList(settings.RequiredFlags(), shared, st.flags)
	}
	return slices.Clone(st.flags)
}

func findStep(name string) (step, bool) {
	for _, st := range steps {
		if st.name == name {
			return st, true
		}
	}
	return step{}, false
}

// stepNames are the names of the steps, the other commands last.
func stepNames() []string {
	var out []string
	for _, st := range steps {
		out = append(out, st.name)
	}
	return out
}

// flagGroup is a heading of the help and the flags under it, in the order
// shown.
type flagGroup struct {
	title string
	flags []string
}

// flagGroups order every flag of the steps under a heading. A step's help
// shows its required flags first, then the groups that hold its own flags,
// then the shared flags it takes by name; 'cutover options' shows the
// shared flags under their groups.
var flagGroups = []flagGroup{
	{"Clusters", []string{"source-bootstrap", "target-bootstrap", "source-client-config", "target-client-config",
		"source-security-protocol", "target-security-protocol", "source-sasl-mechanism", "target-sasl-mechanism",
		"source-sasl-username", "target-sasl-username", "source-tls-ca", "target-tls-ca"}},
	{"Connect", []string{"connect-url", "connect-user", "connect-ca", "connect-client-config", "request-timeout", "retry-timeout"}},
	{"Connector", []string{"connector", "topics", "source-alias", "target-alias", "policy", "tasks-max",
		"mm2-source-client", "mm2-target-client", "connector-properties", "offset-syncs-location", "offset-syncs-replication-factor",
		"exactly-once"}},
	{"Plan", []string{"group", "offsets-from", "offsets-alias", "offsets-connector", "offsets-connector-topic", "offsets-file-overrides-group",
		"savepoint", "flink-source-uid", "flink-rest", "flink-job", "stability-window", "stopped-window", "accept-expired", "accepted-by"}},
	{"Connect workers (what their REST API does not show)", []string{"worker-producer-max-request-size", "worker-config-topic",
		"worker-offset-topic", "worker-status-topic", "worker-storage-replication-factor", "worker-group", "worker-principal"}},
	{"Strimzi", []string{"strimzi-cluster", "strimzi-namespace", "strimzi-out", "strimzi-alter-configmap", "strimzi-list-configmap",
		"strimzi-replicas", "strimzi-group-id", "strimzi-offsets", "strimzi-kubectl"}},
	{"Safety", []string{"yes", "dry-run", "rollback-group", "readback-timeout", "catchup-timeout"}},
	{"Files and output", []string{"config", "plan", "audit", "report-out", "output", "json", "table", "log-level"}},
}

// topLevelFlags are the flags of the command line without a step (the
// sandbox demo, -version): no step's help shows them; the top help does.
var topLevelFlags = []string{"sandbox", "secure", "kerberos", "go-replicator", "from-group", "version"}

// flagAliases are short names of flags: shown beside the flag, completed,
// read as the flag.
var flagAliases = map[string]string{"o": "output"}

// withoutAlias is the flag an alias stands for, or name.
func withoutAlias(name string) string {
	if of, ok := flagAliases[name]; ok {
		return of
	}
	return name
}

// flagValues are the values of the flags that have a fixed set, for the
// completion and the help. -offsets-from's are prefixes.
var flagValues = map[string][]string{
	"source-security-protocol": protocols(), "target-security-protocol": protocols(),
	"source-sasl-mechanism": mechanisms(), "target-sasl-mechanism": mechanisms(),
	"policy":                {"identity", "default"},
	"offset-syncs-location": {"source", "target"},
	"log-level":             {"debug", "info", "warn", "error"},
	"output":                outputFormats,
	"offsets-from":          {"group", "flink-savepoint:", "csv:", "mm2:"},
}

func protocols() []string {
	return []string{string(kafkaadmin.Plaintext), string(kafkaadmin.SSL), string(kafkaadmin.SASLPlaintext), string(kafkaadmin.SASLSSL)}
}

// mechanisms are the SASL mechanisms the flags take; GSSAPI and
// OAUTHBEARER come from a client properties file.
func mechanisms() []string {
	return []string{string(kafkaadmin.Plain), string(kafkaadmin.ScramSHA256), string(kafkaadmin.ScramSHA512)}
}

// fileFlags are the flags whose value is a path: completion offers files,
// the help shows FILE.
var fileFlags = []string{"config", "plan", "audit", "source-tls-ca", "target-tls-ca", "connect-ca", "source-client-config",
	"target-client-config", "connect-client-config", "mm2-source-client", "mm2-target-client", "connector-properties", "report-out",
	"strimzi-out", "strimzi-offsets"}

// dirFlags are the flags whose value is a directory.
var dirFlags = []string{"savepoint"}

// flagArgs name the value of a flag in the help where its type says too
// little.
var flagArgs = map[string]string{
	"source-bootstrap": "HOST:PORT", "target-bootstrap": "HOST:PORT", "connect-url": "URL", "topics": "TOPIC,...",
	"connector": "NAME", "group": "GROUP", "rollback-group": "GROUP", "offsets-from": "SOURCE", "accept-expired": "PARTITION,...",
	"source-sasl-username": "USER", "target-sasl-username": "USER", "connect-user": "USER", "flink-rest": "URL", "flink-job": "ID",
	"source-security-protocol": "PROTOCOL", "target-security-protocol": "PROTOCOL", "source-sasl-mechanism": "MECHANISM",
	"target-sasl-mechanism": "MECHANISM", "output": "FORMAT", "log-level": "LEVEL", "savepoint": "DIR",
}

// helpWidth is the width the help wraps its text to.
const helpWidth = 100

// usage writes the help: the steps (st nil), or st's.
func usage(w io.Writer, fs *flag.FlagSet, st *step) {
	if st == nil {
		topUsage(w)
		return
	}
	wrapWords(w, "", strings.Fields(sentence(st.summary)+"."))
	if st.about != "" {
		fmt.Fprintln(w)
		wrapWords(w, "", strings.Fields(st.about))
	}
	if len(st.examples) > 0 {
		fmt.Fprintln(w, "\nExamples:")
		for i, ex := range st.examples {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "  # %s\n  %s\n", ex.comment, ex.command)
		}
	}
	var required, byName []string
	own := st.flags
	switch {
	case st.name == "options":
		required = settings.RequiredFlags()
	case st.cluster:
		required = settings.RequiredFlags()
		fmt.Fprintln(w, "\nRequired:")
		writeFlagLines(w, fs, required, nil)
		for _, n := range shared {
			if !slices.Contains(required, n) && !slices.Contains(own, n) {
				byName = append(byName, n)
			}
		}
	}
	for _, g := range flagGroups {
		var shown []string
		for _, n := range g.flags {
			if slices.Contains(own, n) && (st.name == "options" || !slices.Contains(required, n)) {
				shown = append(shown, n)
			}
		}
		if len(shown) > 0 {
			fmt.Fprintf(w, "\n%s:\n", g.title)
			writeFlagLines(w, fs, shown, required)
		}
	}
	if len(byName) > 0 {
		fmt.Fprintln(w, "\nAlso, as every step that reaches the clusters ('cutover options' describes them):")
		wrapWords(w, "  ", dashed(byName))
	}
	args := st.args
	if args == "" && len(st.flags) > 0 {
		args = "[flags]"
	}
	fmt.Fprintf(w, "\nUsage:\n  %s\n", strings.TrimSpace("cutover "+st.name+" "+args))
	if len(st.flags) > 0 {
		fmt.Fprintln(w, "\nEvery flag is also MM2CUTOVER_<FLAG> in the environment or a line of the -config file; flags win.")
	}
	if st.name == "options" {
		fmt.Fprintln(w, "Passwords come from the environment only (MM2CUTOVER_SOURCE_SASL_PASSWORD,")
		fmt.Fprintln(w, "MM2CUTOVER_TARGET_SASL_PASSWORD, MM2CUTOVER_CONNECT_PASSWORD) or from the client properties files.")
	}
}

// flagColumn is where the help's flag descriptions start.
const flagColumn = 30

// writeFlagLines writes a line per flag, "-name ARG" and its usage beside
// it, wrapped; the required ones marked.
func writeFlagLines(w io.Writer, fs *flag.FlagSet, names, required []string) {
	for _, n := range names {
		f := fs.Lookup(n)
		if f == nil {
			continue
		}
		left := "  -" + n
		for a, of := range flagAliases {
			if of == n {
				left = "  -" + a + ", -" + n
			}
		}
		if arg := flagArg(f); arg != "" {
			left += " " + arg
		}
		text := f.Usage
		if slices.Contains(required, n) {
			text = "(required) " + text
		}
		if def := f.DefValue; def != "" && def != "false" && def != "0" && def != "0s" {
			text += fmt.Sprintf(" (default %s)", def)
		}
		lines := wrap(text, helpWidth-flagColumn)
		if len(left) >= flagColumn {
			fmt.Fprintln(w, left)
		} else {
			fmt.Fprintf(w, "%-*s%s\n", flagColumn, left, lines[0])
			lines = lines[1:]
		}
		for _, l := range lines {
			fmt.Fprintf(w, "%*s%s\n", flagColumn, "", l)
		}
	}
}

// flagArg names the value of f: none for a boolean flag.
func flagArg(f *flag.Flag) string {
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return ""
	}
	switch {
	case flagArgs[f.Name] != "":
		return flagArgs[f.Name]
	case slices.Contains(fileFlags, f.Name):
		return "FILE"
	}
	switch name, _ := flag.UnquoteUsage(f); name {
	case "duration":
		return "DURATION"
	case "int":
		return "N"
	}
	return "VALUE"
}

// wrap breaks text into lines of at most width columns, at blanks.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) > width:
			lines = append(lines, line)
			line = word
		default:
			line += " " + word
		}
	}
	return append(lines, line)
}

// wrapWords writes words after indent, wrapped at helpWidth.
func wrapWords(w io.Writer, indent string, words []string) {
	for _, l := range wrap(strings.Join(words, " "), helpWidth-len(indent)) {
		fmt.Fprintf(w, "%s%s\n", indent, l)
	}
}

func dashed(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "-" + n
	}
	return out
}

// sentence is s with its first letter upper case.
func sentence(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// topUsage writes the help of the command line: what it does, examples,
// the steps, the other commands.
func topUsage(w io.Writer) {
	fmt.Fprint(w, `cutover moves replication from a Flink job (or any replicator that commits its position to a consumer
group) to MirrorMaker 2 on Kafka Connect, without losing a record.

Examples:
  # A cutover, step by step, with a settings file of MM2CUTOVER_<FLAG>=value lines
  cutover precheck -config cutover.env
  cutover plan -config cutover.env
  cutover apply -config cutover.env
  cutover resume -config cutover.env -yes
  cutover verify -config cutover.env

  # The whole cutover on local real Kafka and Connect (a binary built with -tags sandbox)
  cutover -sandbox

Steps:
`)
	for _, s := range steps {
		if !s.other {
			writeSummary(w, s)
		}
	}
	fmt.Fprintln(w, "\nOther commands:")
	for _, s := range steps {
		if s.other {
			writeSummary(w, s)
		}
	}
	fmt.Fprint(w, `
The sandbox (a binary built with -tags sandbox: go run -tags sandbox ./examples/cutover -sandbox):
  cutover -sandbox [-json] [-go-replicator | -from-group]
                      the whole cutover on local real Kafka and Connect
  cutover -sandbox -exactly-once [-go-replicator]
                      the same with an old job and a MirrorMaker 2 that both write exactly-once
  cutover -sandbox -secure [-kerberos]
                      the same on SASL_SSL clusters and HTTPS Connect with basic auth (-kerberos: GSSAPI)

Usage:
  cutover <step> [flags]    (flags may also come before the step)

Use 'cutover help <step>' (or 'cutover <step> -h') for a step's examples and flags.
Every flag is also MM2CUTOVER_<FLAG> in the environment or in a -config file; passwords come from the
environment only: MM2CUTOVER_SOURCE_SASL_PASSWORD, MM2CUTOVER_TARGET_SASL_PASSWORD, MM2CUTOVER_CONNECT_PASSWORD.
Exit status: 0 done, 1 error worth a retry, 2 usage or settings a system rejected (credentials, CA,
security protocol), 3 a check failed, 4 refused by a guard, 5 not approved.
`)
}

// writeSummary writes a step's line of the top help, wrapped.
func writeSummary(w io.Writer, s step) {
	lines := wrap(s.summary, helpWidth-14)
	fmt.Fprintf(w, "  %-11s %s\n", s.name, lines[0])
	for _, l := range lines[1:] {
		fmt.Fprintf(w, "  %-11s %s\n", "", l)
	}
}
