package connect

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func exactlyOnceConfig(t *testing.T) map[string]string {
	t.Helper()
	cfg, err := MirrorSource{Name: "flink-to-mm2", SourceBootstrap: "source:9092", TargetBootstrap: "target:9092",
		Topics: []string{"orders"}, ExactlyOnce: true}.Config()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestMirrorSourceExactlyOnce: ExactlyOnce sets what KIP-618 and
// MirrorSourceConnector need — required, the poll boundary, a read_committed
// source consumer — over an isolation level left unset; read_uncommitted
// beside it is refused; nothing in Extra may set or change an exactly-once
// key, with or without ExactlyOnce, and the error names the key only.
func TestMirrorSourceExactlyOnce(t *testing.T) {
	cfg := exactlyOnceConfig(t)
	for k, want := range map[string]string{"exactly.once.support": "required", "transaction.boundary": "poll", "source.consumer.isolation.level": "read_committed"} {
		if cfg[k] != want {
			t.Errorf("%s = %q, want %q", k, cfg[k], want)
		}
	}
	if !ExactlyOnceOf(cfg) {
		t.Error("ExactlyOnceOf(builder output) = false")
	}
	plain := goodConfig(t)
	if ExactlyOnceOf(plain) {
		t.Error("ExactlyOnceOf(at-least-once config) = true")
	}
	for _, k := range []string{"exactly.once.support", "transaction.boundary", "transaction.boundary.interval.ms"} {
		if _, ok := plain[k]; ok {
			t.Errorf("the at-least-once configuration sets %s", k)
		}
	}

	base := MirrorSource{Name: "n", SourceBootstrap: "s:1", TargetBootstrap: "t:1", Topics: []string{"a"}}
	if _, err := (MirrorSource{Name: "n", SourceBootstrap: "s:1", TargetBootstrap: "t:1", Topics: []string{"a"}, ExactlyOnce: true, IsolationLevel: "read_uncommitted"}).Config(); err == nil || !strings.Contains(err.Error(), "read_committed") {
		t.Errorf("ExactlyOnce with read_uncommitted: %v, want a refusal", err)
	}
	for _, tc := range []struct {
		name  string
		eos   bool
		extra map[string]string
		clash string
	}{
		{"requested instead of required", true, map[string]string{"exactly.once.support": "requested"}, "exactly.once.support"},
		{"read_uncommitted again", true, map[string]string{"source.consumer.isolation.level": "read_uncommitted"}, "source.consumer.isolation.level"},
		{"an interval boundary", true, map[string]string{"transaction.boundary": "interval"}, "transaction.boundary"},
		{"an interval", true, map[string]string{"transaction.boundary.interval.ms": "60000"}, "transaction.boundary.interval.ms"},
		{"required behind the builder's back", false, map[string]string{"exactly.once.support": "required"}, "exactly.once.support"},
		{"a boundary without exactly-once", false, map[string]string{"transaction.boundary": "poll"}, "transaction.boundary"},
		{"the builder's own values again", true, map[string]string{"exactly.once.support": "required", "transaction.boundary": "poll"}, ""},
		{"a connector offsets topic", true, map[string]string{"offsets.storage.topic": "mm2-eos-offsets"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := base
			m.ExactlyOnce, m.Extra = tc.eos, tc.extra
			_, err := m.Config()
			if tc.clash == "" {
				if err != nil {
					t.Fatalf("Config = %v", err)
				}
				return
			}
			if !errors.Is(err, ErrExtraClash) || !strings.Contains(err.Error(), tc.clash) {
				t.Fatalf("Config = %v, want ErrExtraClash naming %s", err, tc.clash)
			}
		})
	}
}

// TestLintExactlyOnce: the exactly-once rules of Lint, on the builder's
// exactly-once output edited one way at a time.
func TestLintExactlyOnce(t *testing.T) {
	asked := LintExpectations{SourceAlias: "source", ExactlyOnce: true}
	for _, tt := range []struct {
		name    string
		edit    func(map[string]string)
		version string
		exp     LintExpectations
		want    []keySev
	}{
		{name: "builder output on 4.3", version: "4.3.1", exp: asked},
		{name: "builder output on 3.9", version: "3.9.1", exp: asked},
		{name: "required in any case", version: "4.3.1", exp: asked, edit: func(c map[string]string) { c["exactly.once.support"] = "REQUIRED" }},
		{name: "asked for but not required", version: "4.3.1", exp: asked, edit: func(c map[string]string) { delete(c, "exactly.once.support") },
			want: []keySev{{"exactly.once.support", SeverityError}}},
		{name: "requested while asked", version: "4.3.1", exp: asked, edit: func(c map[string]string) { c["exactly.once.support"] = "requested" },
			want: []keySev{{"exactly.once.support", SeverityError}, {"exactly.once.support", SeverityWarning}}},
		{name: "requested, not asked", version: "4.3.1", exp: LintExpectations{SourceAlias: "source"}, edit: func(c map[string]string) { c["exactly.once.support"] = "requested" },
			want: []keySev{{"exactly.once.support", SeverityWarning}}},
		{name: "required without being asked is checked as such", version: "4.3.1", exp: LintExpectations{SourceAlias: "source"},
			edit: func(c map[string]string) { delete(c, "source.consumer.isolation.level") },
			want: []keySev{{"source.consumer.isolation.level", SeverityError}, {"source.consumer.isolation.level", SeverityWarning}}},
		{name: "consumer.isolation.level does not win over source.consumer", version: "4.3.1", exp: asked,
			edit: func(c map[string]string) { c["consumer.isolation.level"] = "read_uncommitted" }},
		{name: "read_uncommitted through consumer.*", version: "4.3.1", exp: asked,
			edit: func(c map[string]string) {
				delete(c, "source.consumer.isolation.level")
				c["consumer.isolation.level"] = "read_uncommitted"
			},
			want: []keySev{{"consumer.isolation.level", SeverityError}}},
		{name: "connector boundary", version: "4.3.1", exp: asked, edit: func(c map[string]string) { c["transaction.boundary"] = "connector" },
			want: []keySev{{"transaction.boundary", SeverityError}}},
		{name: "interval boundary", version: "4.3.1", exp: asked, edit: func(c map[string]string) { c["transaction.boundary"] = "Interval" },
			want: []keySev{{"transaction.boundary", SeverityWarning}}},
		{name: "no boundary is poll", version: "4.3.1", exp: asked, edit: func(c map[string]string) { delete(c, "transaction.boundary") }},
		{name: "an offsets topic of its own on 4.3", version: "4.3.1", exp: asked, edit: func(c map[string]string) { c["offsets.storage.topic"] = "own" },
			want: []keySev{{"offsets.storage.topic", SeverityWarning}}},
		{name: "an offsets topic of its own on 3.7", version: "3.7.2", exp: asked, edit: func(c map[string]string) {
			c["offsets.storage.topic"] = "own"
			c["offset-syncs.topic.location"] = "target"
			c["offset-syncs.topic.replication.factor"] = "1"
			delete(c, "emit.offset-syncs.enabled")
		}, want: []keySev{{"offset-syncs.topic.location", SeverityWarning}}},
		{name: "a producer override Connect replaces", version: "4.3.1", exp: asked, edit: func(c map[string]string) { c["producer.override.transactional.id"] = "x" },
			want: []keySev{{"producer.override.transactional.id", SeverityWarning}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := exactlyOnceConfig(t)
			if tt.edit != nil {
				tt.edit(cfg)
			}
			var got []keySev
			for _, f := range Lint(cfg, tt.version, tt.exp) {
				got = append(got, keySev{f.Key, f.Severity})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Lint findings mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRequireExactlyOnceVersion: KIP-618 is from Kafka 3.3,
// MirrorSourceConnector's support (KAFKA-14021) from 3.5.0; every version
// the cutover admits passes.
func TestRequireExactlyOnceVersion(t *testing.T) {
	for _, tc := range []struct {
		version string
		ok      bool
		names   string
	}{
		{"3.2.3", false, "KIP-618"},
		{"3.3.2", false, "KAFKA-14021"},
		{"3.4.1", false, "KAFKA-14021"},
		{"3.5.0", true, ""},
		{"3.7.2", true, ""},
		{"4.3.1", true, ""},
		{"7.4.0-ccs", false, "KAFKA-14021"}, // Confluent 7.4 ships Kafka 3.4
		{"7.5.0-ccs", true, ""},
	} {
		err := RequireExactlyOnceVersion(tc.version)
		if (err == nil) != tc.ok || (err != nil && (!errors.Is(err, ErrUnsupportedVersion) || !strings.Contains(err.Error(), tc.names))) {
			t.Errorf("RequireExactlyOnceVersion(%q) = %v, want ok %v naming %q", tc.version, err, tc.ok, tc.names)
		}
		if err == nil && RequireCutoverVersion(tc.version) == nil && !tc.ok {
			t.Errorf("%s is admitted by the cutover but not for exactly-once", tc.version)
		}
	}
	if err := RequireExactlyOnceVersion("banana"); err == nil {
		t.Error("a version that does not parse passed")
	}
}

func TestTransactionalIDsAndOffsetsTopic(t *testing.T) {
	if diff := cmp.Diff([]string{"mm2-connect-orders-0", "mm2-connect-orders-1"}, TransactionalIDs("mm2-connect", "orders", 2)); diff != "" {
		t.Error(diff)
	}
	if got := WorkerTransactionalID("mm2-connect"); got != "connect-cluster-mm2-connect" {
		t.Errorf("WorkerTransactionalID = %q", got)
	}
	if got := OffsetsTopicOf(map[string]string{"offsets.storage.topic": " own "}, "mm2-connect-offsets"); got != "own" {
		t.Errorf("OffsetsTopicOf = %q, want own", got)
	}
	if got := OffsetsTopicOf(map[string]string{"offsets.storage.topic": ""}, "mm2-connect-offsets"); got != "mm2-connect-offsets" {
		t.Errorf("OffsetsTopicOf with an empty topic = %q, want the workers'", got)
	}
}

func TestWorkerLacksExactlyOnce(t *testing.T) {
	infos := func(name string, errs ...string) *ConfigInfos {
		var ci ConfigInfo
		ci.Value.Name, ci.Value.Errors = name, errs
		return &ConfigInfos{Configs: []ConfigInfo{ci}}
	}
	if !WorkerLacksExactlyOnce(infos("exactly.once.support", "This worker does not have exactly-once source support enabled.")) {
		t.Error("the worker's refusal was not recognised")
	}
	if WorkerLacksExactlyOnce(infos("exactly.once.support", "The connector does not support exactly-once semantics with the provided configuration.")) {
		t.Error("a refusal of the configuration was taken for the worker's")
	}
	if WorkerLacksExactlyOnce(infos("exactly.once.support")) || WorkerLacksExactlyOnce(nil) {
		t.Error("no error, yet the worker lacks support")
	}
}
