package connect_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/connect"
)

func TestStrimziSigns(t *testing.T) {
	info := func(cfg map[string]string) connect.ConnectorInfo { return connect.ConnectorInfo{Config: cfg} }
	for _, tt := range []struct {
		name  string
		infos map[string]connect.ConnectorInfo
		want  []string // a word of each sign, in order
	}{
		{"none", nil, nil},
		{"plain connectors", map[string]connect.ConnectorInfo{
			"mm2-orders": info(map[string]string{"source.cluster.sasl.jaas.config": "${env:MM2_SOURCE_JAAS}"}),
			"a-b":        info(map[string]string{"x": "${file:/etc/x.properties:y}"}),
			"a->b":       info(nil), // "->" but not a mirror connector's name
		}, nil},
		{"a KafkaMirrorMaker2's connectors", map[string]connect.ConnectorInfo{
			"src->dst.MirrorSourceConnector":     info(map[string]string{"source.cluster.ssl.keystore.key": "${strimzisecrets:kafka/user:user.key}", "target.cluster.alias": "dst"}),
			"src->dst.MirrorCheckpointConnector": info(nil),
		}, []string{"MirrorCheckpointConnector", "MirrorSourceConnector\" is named", "source.cluster.ssl.keystore.key references the config provider strimzisecrets"}},
		{"a KafkaConnector on Strimzi's workers", map[string]connect.ConnectorInfo{
			"orders": info(map[string]string{"consumer.client.rack": "${strimzifile:/tmp/strimzi-connect.properties:consumer.client.rack}", "other": "${strimzienv:X}"}),
		}, []string{"consumer.client.rack references the config provider strimzifile"}},
	} {
		got := connect.StrimziSigns(tt.infos)
		if len(got) != len(tt.want) || !slices.EqualFunc(got, tt.want, strings.Contains) {
			t.Errorf("%s: StrimziSigns = %q, want signs containing %q", tt.name, got, tt.want)
		}
		for _, g := range got {
			if strings.Contains(g, "kafka/user") {
				t.Errorf("%s: a sign shows a value: %s", tt.name, g)
			}
		}
	}
}
