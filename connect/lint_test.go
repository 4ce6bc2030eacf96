package connect

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/redact"
)

func goodConfig(t *testing.T) map[string]string {
	t.Helper()
	cfg, err := MirrorSource{
		Name:            "flink-to-mm2",
		SourceBootstrap: "source:9092",
		TargetBootstrap: "target:9092",
		Topics:          []string{"orders", "payments.v1"},
		TasksMax:        4,
		IsolationLevel:  "read_committed",
	}.Config()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

type keySev struct {
	Key      string
	Severity Severity
}

func TestLint(t *testing.T) {
	exp := LintExpectations{SourceAlias: "source", HasClearedPartition: true}
	scope := LintExpectations{SourceAlias: "source", Topics: []string{"orders", "payments.v1"}}
	tests := []struct {
		name    string
		edit    func(map[string]string)
		version string
		exp     LintExpectations
		want    []keySev
	}{
		{name: "builder output on 3.9", version: "3.9.0", exp: exp},
		{name: "builder output on 4.3", version: "4.3.1", exp: exp},
		{name: "builder output on 3.8 fails: offset syncs are written anyway", version: "3.8.1", exp: exp,
			want: []keySev{{"emit.offset-syncs.enabled", SeverityError}}},
		{name: "3.8 with the offset-syncs opt-in only warns where the topic goes", version: "3.8.1", exp: exp,
			edit: func(c map[string]string) {
				delete(c, "emit.offset-syncs.enabled")
				c["offset-syncs.topic.location"] = "target"
				c["offset-syncs.topic.replication.factor"] = "1"
			},
			want: []keySev{{"offset-syncs.topic.location", SeverityWarning}}},
		{name: "3.7 opt-in without replication factor", version: "3.7.2", exp: exp,
			edit: func(c map[string]string) { c["offset-syncs.topic.location"] = "source" },
			want: []keySev{{"offset-syncs.topic.location", SeverityWarning}, {"offset-syncs.topic.replication.factor", SeverityWarning}}},
		{name: "offset-syncs opt-in on 3.9 is refused", version: "3.9.1", exp: exp,
			edit: func(c map[string]string) { c["offset-syncs.topic.location"] = "target" },
			want: []keySev{{"offset-syncs.topic.location", SeverityError}}},
		{name: "unknown version", version: "", exp: exp,
			want: []keySev{{"emit.offset-syncs.enabled", SeverityWarning}}},
		{name: "topics missing", version: "4.3.1", exp: exp, edit: func(c map[string]string) { delete(c, "topics") },
			want: []keySev{{"topics", SeverityError}}},
		{name: "topics .*", version: "4.3.1", exp: exp, edit: func(c map[string]string) { c["topics"] = "orders, .*" },
			want: []keySev{{"topics", SeverityError}}},
		{name: "sync configs missing", version: "4.3.1", exp: exp, edit: func(c map[string]string) { delete(c, "sync.topic.configs.enabled") },
			want: []keySev{{"sync.topic.configs.enabled", SeverityError}}},
		{name: "sync acls true", version: "4.3.1", exp: exp, edit: func(c map[string]string) { c["sync.topic.acls.enabled"] = "true" },
			want: []keySev{{"sync.topic.acls.enabled", SeverityError}}},
		{name: "sync FALSE accepted", version: "4.3.1", exp: exp, edit: func(c map[string]string) { c["sync.topic.acls.enabled"] = "FALSE" }},
		{name: "json value converter", version: "4.3.1", exp: exp,
			edit: func(c map[string]string) { c["value.converter"] = "org.apache.kafka.connect.json.JsonConverter" },
			want: []keySev{{"value.converter", SeverityError}}},
		{name: "header converter missing", version: "4.3.1", exp: exp, edit: func(c map[string]string) { delete(c, "header.converter") },
			want: []keySev{{"header.converter", SeverityError}}},
		{name: "emit offset-syncs true on 3.9", version: "3.9.0", exp: exp, edit: func(c map[string]string) { c["emit.offset-syncs.enabled"] = "true" },
			want: []keySev{{"emit.offset-syncs.enabled", SeverityError}}},
		{name: "emit offset-syncs missing on 4.0", version: "4.0.0", exp: exp, edit: func(c map[string]string) { delete(c, "emit.offset-syncs.enabled") },
			want: []keySev{{"emit.offset-syncs.enabled", SeverityError}}},
		{name: "emit offset-syncs missing on 3.7 fails too", version: "3.7.2", exp: exp, edit: func(c map[string]string) { delete(c, "emit.offset-syncs.enabled") },
			want: []keySev{{"emit.offset-syncs.enabled", SeverityError}}},
		{name: "alias differs from plan", version: "4.3.1", exp: LintExpectations{SourceAlias: "dc1"},
			want: []keySev{{"source.cluster.alias", SeverityError}}},
		{name: "alias default source", version: "4.3.1", exp: exp, edit: func(c map[string]string) { delete(c, "source.cluster.alias") }},
		{name: "no alias expectation", version: "4.3.1", exp: LintExpectations{}, edit: func(c map[string]string) { c["source.cluster.alias"] = "dc1" }},
		{name: "auto.offset.reset latest with cleared partition", version: "4.3.1", exp: exp,
			edit: func(c map[string]string) { c["source.consumer.auto.offset.reset"] = "latest" },
			want: []keySev{{"source.consumer.auto.offset.reset", SeverityError}}},
		{name: "consumer.auto.offset.reset latest with cleared partition", version: "4.3.1", exp: exp,
			edit: func(c map[string]string) {
				delete(c, "source.consumer.auto.offset.reset")
				c["consumer.auto.offset.reset"] = "latest"
			},
			want: []keySev{{"consumer.auto.offset.reset", SeverityError}}},
		{name: "auto.offset.reset unset defaults to earliest", version: "4.3.1", exp: exp,
			edit: func(c map[string]string) { delete(c, "source.consumer.auto.offset.reset") }},
		{name: "auto.offset.reset latest without cleared partition", version: "4.3.1", exp: LintExpectations{SourceAlias: "source"},
			edit: func(c map[string]string) { c["source.consumer.auto.offset.reset"] = "latest" }},
		{name: "plain text jaas", version: "4.3.1", exp: exp,
			edit: func(c map[string]string) {
				c["source.cluster.sasl.jaas.config"] = `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="hunter2";`
			},
			want: []keySev{{"source.cluster.sasl.jaas.config", SeverityWarning}}},
		{name: "provider reference", version: "4.3.1", exp: exp,
			edit: func(c map[string]string) {
				c["target.cluster.ssl.truststore.password"] = "${file:/etc/secrets/mm2.properties:truststore.password}"
			}},
		{name: "offset.consistency.enabled", version: "4.3.1", exp: exp, edit: func(c map[string]string) { c["offset.consistency.enabled"] = "false" },
			want: []keySev{{"offset.consistency.enabled", SeverityWarning}}},
		{name: "isolation level not stated", version: "4.3.1", exp: exp, edit: func(c map[string]string) { delete(c, "source.consumer.isolation.level") },
			want: []keySev{{"source.consumer.isolation.level", SeverityWarning}}},
		{name: "isolation level via consumer prefix", version: "4.3.1", exp: exp, edit: func(c map[string]string) {
			delete(c, "source.consumer.isolation.level")
			c["consumer.isolation.level"] = "read_uncommitted"
		}},
		// Keys that drop or divert records.
		{name: "a Filter transform", version: "4.3.1", exp: exp, edit: func(c map[string]string) {
			c["transforms"] = "drop"
			c["transforms.drop.type"] = "org.apache.kafka.connect.transforms.Filter"
			c["transforms.drop.predicate"] = "isTombstone"
			c["predicates"] = "isTombstone"
			c["predicates.isTombstone.type"] = "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone"
		}, want: []keySev{{"predicates", SeverityError}, {"transforms", SeverityError}}},
		{name: "errors.tolerance all", version: "4.3.1", exp: exp, edit: func(c map[string]string) { c["errors.tolerance"] = "all" },
			want: []keySev{{"errors.tolerance", SeverityError}}},
		{name: "errors.tolerance none", version: "4.3.1", exp: exp, edit: func(c map[string]string) { c["errors.tolerance"] = " NONE" }},
		{name: "topics.exclude drops a topic in scope", version: "4.3.1", exp: scope, edit: func(c map[string]string) { c["topics.exclude"] = "orders" },
			want: []keySev{{"topics.exclude", SeverityError}}},
		{name: "topics.exclude of other topics", version: "4.3.1", exp: scope, edit: func(c map[string]string) { c["topics.exclude"] = "orders-dlq, .*\\.replica" }},
		{name: "topics.blacklist below 4.0", version: "3.9.1", exp: scope, edit: func(c map[string]string) { c["topics.blacklist"] = "payments.*" },
			want: []keySev{{"topics.blacklist", SeverityError}}},
		{name: "topics.blacklist is gone in 4.0", version: "4.3.1", exp: scope, edit: func(c map[string]string) { c["topics.blacklist"] = "payments.*" }},
		{name: "topics does not match a topic in scope", version: "4.3.1", exp: LintExpectations{SourceAlias: "source", Topics: []string{"orders", "refunds"}},
			want: []keySev{{"topics", SeverityError}}},
		{name: "default exclude below 4.0 drops *.internal", version: "3.9.1", exp: LintExpectations{SourceAlias: "source", Topics: []string{"billing.internal"}},
			edit: func(c map[string]string) { c["topics"] = `billing\.internal` }, want: []keySev{{"topics.exclude", SeverityError}}},
		{name: "from 4.0 *.internal is replicated", version: "4.3.1", exp: LintExpectations{SourceAlias: "source", Topics: []string{"billing.internal"}},
			edit: func(c map[string]string) { c["topics"] = `billing\.internal` }},
		{name: "a custom topic filter", version: "4.3.1", exp: scope, edit: func(c map[string]string) { c["topic.filter.class"] = "com.example.MyFilter" },
			want: []keySev{{"topic.filter.class", SeverityError}}},
		{name: "a pattern Go cannot read", version: "4.3.1", exp: scope, edit: func(c map[string]string) { c["topics.exclude"] = "(?!orders).*" },
			want: []keySev{{"topics", SeverityWarning}}},
		{name: "a cycle under the default policy", version: "4.3.1", exp: LintExpectations{SourceAlias: "source", Topics: []string{"target.orders"}},
			edit: func(c map[string]string) {
				c["replication.policy.class"] = offsets.DefaultPolicyClass
				c["topics"] = `target\.orders`
			}, want: []keySev{{"replication.policy.class", SeverityError}}},
		{name: "separator the checks do not use", version: "4.3.1", exp: LintExpectations{SourceAlias: "source", Topics: []string{"orders"},
			Policy: &offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: "source"}},
			edit: func(c map[string]string) {
				c["replication.policy.class"] = offsets.DefaultPolicyClass
				c["replication.policy.separator"] = "_"
			}, want: []keySev{{"replication.policy.separator", SeverityError}}},
		{name: "the policy the checks use", version: "4.3.1", exp: LintExpectations{SourceAlias: "source", Topics: []string{"orders"},
			Policy: &offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: "source", Separator: "_"}},
			edit: func(c map[string]string) {
				c["replication.policy.class"] = offsets.DefaultPolicyClass
				c["replication.policy.separator"] = "_"
			}},
		{name: "identity where the checks use the default policy", version: "4.3.1", exp: LintExpectations{SourceAlias: "source",
			Policy: &offsets.ReplicationPolicy{Kind: offsets.DefaultPolicy, SourceAlias: "source"}},
			want: []keySev{{"replication.policy.class", SeverityError}}},
		{name: "a custom replication policy", version: "4.3.1", exp: exp, edit: func(c map[string]string) { c["replication.policy.class"] = "com.example.Prefixless" },
			want: []keySev{{"replication.policy.class", SeverityError}}},
		{name: "an empty separator", version: "4.3.1", exp: exp, edit: func(c map[string]string) {
			c["replication.policy.class"] = offsets.DefaultPolicyClass
			c["replication.policy.separator"] = " "
		},
			want: []keySev{{"replication.policy.separator", SeverityError}}},
		{name: "client overrides that divert MM2", version: "4.3.1", exp: exp, edit: func(c map[string]string) {
			c["source.consumer.bootstrap.servers"] = "elsewhere:9092"
			c["target.admin.bootstrap.servers"] = "elsewhere:9092"
			c["admin.override.bootstrap.servers"] = "elsewhere:9092"
		}, want: []keySev{{"admin.override.bootstrap.servers", SeverityError}, {"source.consumer.bootstrap.servers", SeverityError}, {"target.admin.bootstrap.servers", SeverityError}}},
		{name: "the producer override is checked by the precheck", version: "4.3.1", exp: exp, edit: func(c map[string]string) { c["producer.override.bootstrap.servers"] = "target:9092" },
			want: []keySev{{"producer.override.bootstrap.servers", SeverityWarning}}},
		{name: "errors sort first", version: "3.8.0", exp: exp, edit: func(c map[string]string) {
			delete(c, "source.consumer.isolation.level")
			c["topics"] = ".*"
		}, want: []keySev{{"emit.offset-syncs.enabled", SeverityError}, {"topics", SeverityError}, {"source.consumer.isolation.level", SeverityWarning}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := goodConfig(t)
			if tt.edit != nil {
				tt.edit(cfg)
			}
			fs := Lint(cfg, tt.version, tt.exp)
			var got []keySev
			for _, f := range fs {
				got = append(got, keySev{f.Key, f.Severity})
				if f.Message == "" || f.Advice == "" || f.Origin != OriginLint {
					t.Errorf("finding %+v lacks message, advice or origin", f)
				}
				if strings.Contains(f.String(), "hunter2") {
					t.Errorf("finding shows a secret: %s", f)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Lint findings mismatch (-want +got):\n%s", diff)
			}
			if HasErrors(fs) != (len(tt.want) > 0 && tt.want[0].Severity == SeverityError) {
				t.Errorf("HasErrors = %v for %v", HasErrors(fs), got)
			}
		})
	}
}

func TestMirrorSourceConfig(t *testing.T) {
	cfg := goodConfig(t)
	want := map[string]string{
		"name":                              "flink-to-mm2",
		"connector.class":                   MirrorSourceConnectorClass,
		"source.cluster.alias":              "source",
		"target.cluster.alias":              "target",
		"source.cluster.bootstrap.servers":  "source:9092",
		"target.cluster.bootstrap.servers":  "target:9092",
		"topics":                            `orders,payments\.v1`,
		"tasks.max":                         "4",
		"replication.policy.class":          offsets.IdentityPolicyClass,
		"emit.offset-syncs.enabled":         "false",
		"sync.topic.configs.enabled":        "false",
		"sync.topic.acls.enabled":           "false",
		"refresh.topics.enabled":            "true",
		"refresh.topics.interval.seconds":   "60",
		"source.consumer.auto.offset.reset": "earliest",
		"source.consumer.isolation.level":   "read_committed",
		"key.converter":                     ByteArrayConverterClass,
		"value.converter":                   ByteArrayConverterClass,
		"header.converter":                  ByteArrayConverterClass,
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("Config mismatch (-want +got):\n%s", diff)
	}

	bad := []MirrorSource{
		{SourceBootstrap: "s", TargetBootstrap: "t", Topics: []string{"a"}},
		{Name: "n", TargetBootstrap: "t", Topics: []string{"a"}},
		{Name: "n", SourceBootstrap: "s", TargetBootstrap: "t"},
		{Name: "n", SourceBootstrap: "s", TargetBootstrap: "t", Topics: []string{"a b"}},
		{Name: "n", SourceBootstrap: "s", TargetBootstrap: "t", TopicPatterns: []string{"a,b"}},
		{Name: "n", SourceBootstrap: "s", TargetBootstrap: "t", Topics: []string{"a"}, IsolationLevel: "committed"},
	}
	for _, m := range bad {
		if _, err := m.Config(); err == nil {
			t.Errorf("%#v.Config() = nil error, want one", m)
		}
	}
}

func TestMirrorSourceStringRedacts(t *testing.T) {
	m := MirrorSource{
		Name: "n", SourceBootstrap: "s:9092", TargetBootstrap: "t:9092", Topics: []string{"a"},
		SourceClient: map[string]string{
			"security.protocol": "SASL_SSL",
			"sasl.jaas.config":  `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="hunter2";`,
		},
		TargetClient: map[string]string{"ssl.keystore.password": "kspw-123"},
	}
	s := m.String()
	for _, secret := range []string{"hunter2", "kspw-123"} {
		if strings.Contains(s, secret) {
			t.Errorf("String() shows %q:\n%s", secret, s)
		}
	}
	if !strings.Contains(s, "source.cluster.sasl.jaas.config=[redacted]") || !strings.Contains(s, "source.cluster.security.protocol=SASL_SSL") {
		t.Errorf("String() = %s", s)
	}
}

func TestValidationFindings(t *testing.T) {
	v := "x"
	infos := &ConfigInfos{Name: MirrorSourceConnectorClass, ErrorCount: 2, Configs: []ConfigInfo{
		{Value: ConfigValueInfo{Name: "tasks.max", Value: &v, Errors: []string{"Invalid value x for configuration tasks.max: Not a number of type INT"}}},
		{Value: ConfigValueInfo{Name: "topics"}},
		{Value: ConfigValueInfo{Name: "source.cluster.sasl.jaas.config", Errors: []string{`bad value password="hunter2"`}}},
	}}
	fs := ValidationFindings(infos, map[string]string{"source.cluster.sasl.jaas.config": `x password="hunter2";`})
	if len(fs) != 2 {
		t.Fatalf("got %d findings, want 2: %v", len(fs), fs)
	}
	for _, f := range fs {
		if f.Severity != SeverityError || f.Origin != OriginValidate || strings.Contains(f.Message, "hunter2") {
			t.Errorf("bad finding %+v", f)
		}
	}
}

// TestValidationFindingsPasswordKeys: a value the worker echoes is redacted
// when the answer itself defines its key as PASSWORD, though no name rule
// knows the key.
func TestValidationFindingsPasswordKeys(t *testing.T) {
	infos := &ConfigInfos{Name: "com.example.Connector", ErrorCount: 1, Configs: []ConfigInfo{
		{Definition: ConfigKeyInfo{Name: "vault.credential", Type: TypePassword},
			Value: ConfigValueInfo{Name: "vault.credential", Errors: []string{"cannot log in with s3cr3t-v4lue"}}},
	}}
	fs := ValidationFindings(infos, map[string]string{"vault.credential": "s3cr3t-v4lue"})
	if len(fs) != 1 || strings.Contains(fs[0].Message, "s3cr3t") || !strings.Contains(fs[0].Message, redact.Redacted) {
		t.Errorf("findings %+v: want the PASSWORD value redacted", fs)
	}
}

// TestOffsetSyncs pins where MirrorSourceConfig puts the offset-syncs topic
// (offsetSyncsTopic: the other cluster's alias, on the location's cluster)
// and which versions write it.
func TestOffsetSyncs(t *testing.T) {
	for _, tt := range []struct {
		name    string
		version string
		config  map[string]string
		want    OffsetSyncsPlacement
	}{
		{"3.9 with emit false", "3.9.1", map[string]string{"emit.offset-syncs.enabled": "false"}, OffsetSyncsPlacement{Topic: "mm2-offset-syncs.target.internal", Location: "source"}},
		{"4.3 default emits", "4.3.1", map[string]string{}, OffsetSyncsPlacement{Emitted: true, Topic: "mm2-offset-syncs.target.internal", Location: "source"}},
		{"3.8 ignores emit false", "3.8.1", map[string]string{"emit.offset-syncs.enabled": "false"}, OffsetSyncsPlacement{Emitted: true, Topic: "mm2-offset-syncs.target.internal", Location: "source"}},
		{"3.8 on the target names the source alias", "3.8.1", map[string]string{"offset-syncs.topic.location": "target", "source.cluster.alias": "dc1"},
			OffsetSyncsPlacement{Emitted: true, Topic: "mm2-offset-syncs.dc1.internal", Location: "target"}},
		{"3.7 target alias and separator", "3.7.2", map[string]string{"target.cluster.alias": "dc2", "replication.policy.separator": "_"},
			OffsetSyncsPlacement{Emitted: true, Topic: "mm2-offset-syncs_dc2_internal", Location: "source"}},
		{"separator not used for internal topics", "3.7.2", map[string]string{"replication.policy.separator": "_", "replication.policy.internal.topic.separator.enabled": "false"},
			OffsetSyncsPlacement{Emitted: true, Topic: "mm2-offset-syncs.target.internal", Location: "source"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := OffsetSyncs(tt.config, tt.version)
			if err != nil || got != tt.want {
				t.Errorf("OffsetSyncs = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	if _, err := OffsetSyncs(nil, "x"); err == nil {
		t.Error("OffsetSyncs with an unparsable version: no error")
	}
}

func TestMirrorSourceOffsetSyncsOptIn(t *testing.T) {
	m := MirrorSource{Name: "n", SourceBootstrap: "s:1", TargetBootstrap: "t:1", Topics: []string{"a"},
		OffsetSyncs: &OffsetSyncsTopic{Location: "target", ReplicationFactor: 1}}
	cfg, err := m.Config()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg["emit.offset-syncs.enabled"]; ok || cfg["offset-syncs.topic.location"] != "target" || cfg["offset-syncs.topic.replication.factor"] != "1" {
		t.Errorf("config with the opt-in: %v", cfg)
	}
	m.OffsetSyncs = &OffsetSyncsTopic{Location: "elsewhere"}
	if _, err := m.Config(); err == nil {
		t.Error("an unknown offset-syncs location was accepted")
	}
}

func TestTasksFor(t *testing.T) {
	for _, tc := range []struct{ partitions, want int }{
		{0, 1}, {1, 1}, {250, 1}, {251, 2}, {1000, 4}, {2500, 10}, {10_000, 40}, {10_001, 41},
		{11_111, 45}, {11_112, 44}, {12_500, 40}, {20_000, 25}, // the budget decides from 11,112
		{50_000, 10}, {100_000, 5}, {500_000, 1}, {2_000_000, 1},
	} {
		if got := TasksFor(tc.partitions); got != tc.want {
			t.Errorf("TasksFor(%d) = %d, want %d", tc.partitions, got, tc.want)
		}
	}
}
