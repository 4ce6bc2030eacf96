package connect

import (
	"fmt"
	"slices"
	"strings"
)

// What the Strimzi operator leaves visible over the Connect REST API
// (verified in strimzi-kafka-operator 1.2.0). A KafkaMirrorMaker2 names
// each mirror's connectors "<source alias>-><target alias>.<type>"
// (KafkaMirrorMaker2Connectors): "->" in a connector's name, which no
// KafkaConnector can have (its name is a Kubernetes object name). Every
// Connect worker Strimzi runs has the config providers strimzienv,
// strimzifile, strimzidir and strimzisecrets (KafkaConnectConfigurationBuilder),
// and the configurations Strimzi generates for KafkaMirrorMaker2's
// connectors reference them for credentials and certificates
// (${strimzisecrets:NAMESPACE/SECRET:KEY}) and rack awareness
// (${strimzifile:/tmp/strimzi-connect.properties:...}); users of a
// KafkaConnect reference them in their KafkaConnectors too. The worker's own
// configuration (config.providers, group.id) is not shown over REST, and a
// KafkaConnect with strimzi.io/use-connector-resources whose KafkaConnectors
// reference none of these shows nothing: the absence of signs proves
// nothing, and a caller who knows should say so.

// strimziProviders are the config providers Strimzi adds to every Connect
// worker it runs.
var strimziProviders = []string{"strimzienv", "strimzifile", "strimzidir", "strimzisecrets"}

// StrimziSigns returns, one line each, the signs in a Connect cluster's
// connectors (ConnectorInfos) that the Strimzi operator manages it: a
// connector named as a KafkaMirrorMaker2 names its connectors, and a
// configuration value referencing one of the config providers only
// Strimzi's workers have. Keys are named, values never (they may be
// secrets). Nil means none was seen, not that Strimzi is absent. It is
// pure.
func StrimziSigns(infos map[string]ConnectorInfo) []string {
	var out []string
	names := make([]string, 0, len(infos))
	for n := range infos {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if src, rest, ok := strings.Cut(n, "->"); ok && src != "" && strings.Contains(rest, ".Mirror") {
			out = append(out, fmt.Sprintf("connector %q is named as a KafkaMirrorMaker2 names its connectors (<source>-><target>.<type>)", n))
		}
		cfg := infos[n].Config
		keys := make([]string, 0, len(cfg))
		for k := range cfg {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if p := strimziProvider(cfg[k]); p != "" {
				out = append(out, fmt.Sprintf("connector %q's %s references the config provider %s, which only Strimzi's Connect workers have", n, k, p))
				break
			}
		}
	}
	return out
}

// strimziProvider returns the Strimzi config provider v references
// (${strimzisecrets:...}), or "".
func strimziProvider(v string) string {
	for _, p := range strimziProviders {
		if strings.Contains(v, "${"+p+":") {
			return p
		}
	}
	return ""
}
