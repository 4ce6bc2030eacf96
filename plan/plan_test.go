package plan_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func sp(topic string, p int32) offsets.SourcePartition {
	return offsets.SourcePartition{Topic: topic, Partition: p}
}

func spec() plan.Spec {
	return plan.Spec{
		CreatedAt:       time.Date(2025, 6, 1, 10, 0, 0, 0, time.FixedZone("CEST", 2*3600)),
		ToolVersion:     "mm2cutover v0.1.0",
		SourceClusterID: "src-cluster-Xy1",
		TargetClusterID: "tgt-cluster-Zq2",
		ConnectorName:   "flink-to-mm2-source",
		SourceAlias:     "source",
		ConnectorConfig: map[string]string{
			"connector.class":                      "org.apache.kafka.connect.mirror.MirrorSourceConnector",
			"source.cluster.alias":                 "source",
			"target.cluster.alias":                 "target",
			"topics":                               "^(orders|payments)$",
			"source.cluster.sasl.jaas.config":      `org.apache.kafka.common.security.plain.PlainLoginModule required username="mm2" password="s3cret";`,
			"target.cluster.ssl.keystore.password": "${file:/etc/kafka/secrets.properties:keystore}",
		},
		GroupID:   "flink-orders-replicator",
		Savepoint: "s3://flink/savepoints/savepoint-4f2a",
	}
}

// blockedSnapshot has a partition for every row of the conversion table.
func blockedSnapshot() plan.Snapshot {
	return plan.Snapshot{
		Group: offsets.GroupOffsets{
			sp("orders", 0): 42, sp("orders", 1): 0, sp("orders", 2): 5, sp("orders", 3): 120,
			sp("payments", 1): 7, sp("payments", 2): 3,
			sp("audit", 0): 9, // not in scope: ignored
		},
		Source: map[offsets.SourcePartition]offsets.LogBounds{
			sp("orders", 0): {Start: 0, End: 100}, sp("orders", 1): {Start: 0, End: 0},
			sp("orders", 2): {Start: 20, End: 300}, sp("orders", 3): {Start: 0, End: 100},
			sp("payments", 0): {Start: 0, End: 10}, sp("payments", 1): {Start: 7, End: 7},
			sp("payments", 2): {Start: 10, End: 50},
		},
		TargetEnd: map[offsets.SourcePartition]int64{
			sp("orders", 0): 1042, sp("orders", 1): 0, sp("orders", 2): 17, sp("orders", 3): 99,
			sp("payments", 0): 0, sp("payments", 1): 7, sp("payments", 2): 40,
		},
	}
}

func blockedSpec() plan.Spec {
	s := spec()
	s.AcceptExpired = []plan.ExpiredAcceptance{{Partition: sp("orders", 2), By: "jane.doe", Note: "INC-4711: 5..19 not needed downstream"}}
	return s
}

// applicableSnapshot is blockedSnapshot with the blocked partitions fixed.
func applicableSnapshot() plan.Snapshot {
	s := blockedSnapshot()
	s.Group[sp("orders", 3)] = 100
	s.Group[sp("payments", 0)] = 10
	s.Group[sp("payments", 2)] = 10
	return s
}

func mustBuild(t testing.TB, s plan.Spec, snap plan.Snapshot) *plan.Plan {
	t.Helper()
	p, err := plan.Build(s, snap)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return p
}

func encode(t testing.TB, p *plan.Plan) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := p.Encode(&b); err != nil {
		t.Fatalf("Encode: %v", err)
	}
	return b.Bytes()
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./plan -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

func TestGolden(t *testing.T) {
	blocked := mustBuild(t, blockedSpec(), blockedSnapshot())
	golden(t, "blocked.plan.json", encode(t, blocked))
	var sum bytes.Buffer
	if err := blocked.WriteSummary(&sum); err != nil {
		t.Fatal(err)
	}
	golden(t, "blocked.summary.txt", sum.Bytes())

	ok := mustBuild(t, blockedSpec(), applicableSnapshot())
	golden(t, "applicable.plan.json", encode(t, ok))
	sum.Reset()
	if err := ok.WriteSummary(&sum); err != nil {
		t.Fatal(err)
	}
	golden(t, "applicable.summary.txt", sum.Bytes())
	body, err := ok.PatchBody()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "applicable.patch.json", body)
	var cm bytes.Buffer
	if err := ok.WriteStrimziConfigMap(&cm, "flink-to-mm2-source-offsets", "kafka"); err != nil {
		t.Fatal(err)
	}
	golden(t, "applicable.configmap.yaml", cm.Bytes())
}

func TestBuild(t *testing.T) {
	p := mustBuild(t, blockedSpec(), blockedSnapshot())
	type row struct {
		Partition string
		Action    string
		Offset    string
		Lost      int64
	}
	var got []row
	for _, e := range p.Entries {
		got = append(got, row{e.Partition.String(), e.Action.String(), e.Offset.String(), e.Lost})
	}
	want := []row{
		{"orders-0", "set", "41", 0},
		{"orders-1", "clear", "null", 0},
		{"orders-2", "set", "19", 15},
		{"orders-3", "block", "null", 0},
		{"payments-0", "block", "null", 0},
		{"payments-1", "set", "6", 0},
		{"payments-2", "block", "null", 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries mismatch (-want +got):\n%s", diff)
	}
	if got, want := p.CreatedAt, time.Date(2025, 6, 1, 8, 0, 0, 0, time.UTC); !got.Equal(want) || got.Location() != time.UTC {
		t.Errorf("CreatedAt = %v, want %v in UTC", got, want)
	}
	if p.Applicable() {
		t.Errorf("Applicable() = true with blocked entries")
	}
	err := p.Blocked()
	var be *plan.BlockedError
	if !errors.As(err, &be) || !errors.Is(err, plan.ErrBlocked) || len(be.Entries) != 3 {
		t.Errorf("Blocked() = %v, want a *BlockedError with 3 entries", err)
	}
	for _, f := range []func() error{
		func() error { _, err := p.PatchBody(); return err },
		func() error { _, err := p.ConnectOffsets(); return err },
		func() error { _, err := p.ExpectedOffsets(); return err },
		func() error { return p.WriteStrimziConfigMap(&bytes.Buffer{}, "x", "") },
	} {
		if err := f(); !errors.Is(err, plan.ErrBlocked) {
			t.Errorf("renderer on a blocked plan: got %v, want ErrBlocked", err)
		}
	}
	if e, ok := p.Lookup(sp("orders", 2)); !ok || e.Lost != 15 {
		t.Errorf("Lookup(orders-2) = %+v, %v", e, ok)
	}
	if _, ok := p.Lookup(sp("audit", 0)); ok {
		t.Errorf("Lookup(audit-0) found a partition outside the scope")
	}
	if strings.Contains(string(encode(t, p)), "s3cret") {
		t.Errorf("encoded plan contains a secret")
	}
}

func TestExpectedOffsets(t *testing.T) {
	p := mustBuild(t, blockedSpec(), applicableSnapshot())
	if !p.Applicable() || p.Blocked() != nil {
		t.Fatalf("plan not applicable: %v", p.Blocked())
	}
	cp := func(topic string, n int32) offsets.ConnectPartition {
		return offsets.ConnectPartition{Cluster: "source", Topic: topic, Partition: n}
	}
	m := offsets.NewMirrorOffset
	all, err := p.ConnectOffsets()
	if err != nil {
		t.Fatal(err)
	}
	want := []offsets.ConnectOffset{
		{Partition: cp("orders", 0), Offset: m(41)},
		{Partition: cp("orders", 1)},
		{Partition: cp("orders", 2), Offset: m(19)},
		{Partition: cp("orders", 3), Offset: m(99)},
		{Partition: cp("payments", 0), Offset: m(9)},
		{Partition: cp("payments", 1), Offset: m(6)},
		{Partition: cp("payments", 2), Offset: m(9)},
	}
	if diff := cmp.Diff(want, all); diff != "" {
		t.Errorf("ConnectOffsets mismatch (-want +got):\n%s", diff)
	}
	readBack, err := p.ExpectedOffsets()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(append(want[:1:1], want[2:]...), readBack); diff != "" {
		t.Errorf("ExpectedOffsets mismatch (-want +got):\n%s", diff)
	}
}

func TestBuildErrors(t *testing.T) {
	for _, tt := range []struct {
		name   string
		modify func(*plan.Spec, *plan.Snapshot)
		want   error
	}{
		{"no connector name", func(s *plan.Spec, _ *plan.Snapshot) { s.ConnectorName = "" }, plan.ErrMissingField},
		{"no group", func(s *plan.Spec, _ *plan.Snapshot) { s.GroupID = "" }, plan.ErrMissingField},
		{"no source cluster", func(s *plan.Spec, _ *plan.Snapshot) { s.SourceClusterID = "" }, plan.ErrMissingField},
		{"no time", func(s *plan.Spec, _ *plan.Snapshot) { s.CreatedAt = time.Time{} }, plan.ErrMissingField},
		{"no config", func(s *plan.Spec, _ *plan.Snapshot) { s.ConnectorConfig = nil }, plan.ErrMissingField},
		{"alias differs from config", func(s *plan.Spec, _ *plan.Snapshot) { s.SourceAlias = "primary" }, plan.ErrConfigMismatch},
		{"default alias differs", func(s *plan.Spec, _ *plan.Snapshot) {
			delete(s.ConnectorConfig, "source.cluster.alias")
			s.SourceAlias = "primary"
		}, plan.ErrConfigMismatch},
		{"name differs from config", func(s *plan.Spec, _ *plan.Snapshot) { s.ConnectorConfig["name"] = "other" }, plan.ErrConfigMismatch},
		{"empty scope", func(_ *plan.Spec, n *plan.Snapshot) { n.Source = nil }, plan.ErrNoPartitions},
		{"group offset for unknown partition", func(_ *plan.Spec, n *plan.Snapshot) { n.Group[sp("orders", 9)] = 1 }, plan.ErrUnknownPartition},
		{"target end for unknown partition", func(_ *plan.Spec, n *plan.Snapshot) { n.TargetEnd[sp("orders", 9)] = 1 }, plan.ErrUnknownPartition},
		{"missing target end", func(_ *plan.Spec, n *plan.Snapshot) { delete(n.TargetEnd, sp("payments", 1)) }, plan.ErrMissingTargetEnd},
		{"negative target end", func(_ *plan.Spec, n *plan.Snapshot) { n.TargetEnd[sp("payments", 1)] = -1 }, offsets.ErrNegative},
		{"acceptance outside scope", func(s *plan.Spec, _ *plan.Snapshot) {
			s.AcceptExpired = append(s.AcceptExpired, plan.ExpiredAcceptance{Partition: sp("audit", 0), By: "x"})
		}, plan.ErrUnknownPartition},
		{"acceptance twice", func(s *plan.Spec, _ *plan.Snapshot) {
			s.AcceptExpired = append(s.AcceptExpired, plan.ExpiredAcceptance{Partition: sp("orders", 2), By: "y"})
		}, plan.ErrDuplicatePartition},
		{"acceptance by nobody", func(s *plan.Spec, _ *plan.Snapshot) { s.AcceptExpired[0].By = "" }, plan.ErrMissingField},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, n := blockedSpec(), blockedSnapshot()
			tt.modify(&s, &n)
			p, err := plan.Build(s, n)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Build = %v, %v; want error matching %v", p, err, tt.want)
			}
			var fe *plan.FieldError
			var pe *plan.PartitionError
			if !errors.As(err, &fe) && !errors.As(err, &pe) {
				t.Errorf("error %T is neither *FieldError nor *PartitionError", err)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	for _, snap := range []plan.Snapshot{blockedSnapshot(), applicableSnapshot()} {
		p := mustBuild(t, blockedSpec(), snap)
		enc := encode(t, p)
		back, err := plan.Decode(bytes.NewReader(enc))
		if err != nil {
			t.Fatalf("Decode: %v", err)
		}
		if diff := cmp.Diff(p, back); diff != "" {
			t.Errorf("decoded plan mismatch (-built +decoded):\n%s", diff)
		}
		if got := encode(t, back); !bytes.Equal(got, enc) {
			t.Errorf("re-encoding differs:\n%s\n%s", enc, got)
		}
		// The fingerprint does not depend on whitespace or time zone.
		squashed := strings.ReplaceAll(string(enc), "\n", "")
		squashed = strings.Replace(squashed, `"2025-06-01T08:00:00Z"`, `"2025-06-01T10:00:00+02:00"`, 1)
		if _, err := plan.Decode(strings.NewReader(squashed)); err != nil {
			t.Errorf("Decode of reformatted plan: %v", err)
		}
	}
}

// TestStableEndNotRecorded: bounds as kafkaadmin reads them carry the last
// stable offset; a plan records only the log start and end, so the file, its
// fingerprint and the decoded plan are those of bounds without it.
func TestStableEndNotRecorded(t *testing.T) {
	snap := applicableSnapshot()
	withStable := applicableSnapshot()
	for p, b := range withStable.Source {
		b.StableEnd = max(b.End-1, b.Start) // an open transaction
		withStable.Source[p] = b
	}
	want := mustBuild(t, blockedSpec(), snap)
	got := mustBuild(t, blockedSpec(), withStable)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plan built from bounds with StableEnd mismatch (-without +with):\n%s", diff)
	}
	if !bytes.Equal(encode(t, want), encode(t, got)) || want.Fingerprint != got.Fingerprint {
		t.Errorf("StableEnd changed the plan file or its fingerprint")
	}
	golden(t, "applicable.plan.json", encode(t, got))
}

// TestDecodeErrors edits a valid encoded plan one way at a time; each edit
// must give its own error. Edits of entries keep the old fingerprint: entry
// rules are checked before it.
func TestDecodeErrors(t *testing.T) {
	valid := string(encode(t, mustBuild(t, blockedSpec(), blockedSnapshot())))
	entry0 := `{"topic":"orders","partition":0,"group_offset":42,"log_start":0,"log_end":100,"target_end":1042,"action":"set","connect_offset":41,"lost":0,`
	if !strings.Contains(valid, entry0) {
		t.Fatalf("fixture changed: %s", valid)
	}
	edit := func(old, new string) string {
		if !strings.Contains(valid, old) {
			t.Fatalf("fixture has no %q", old)
		}
		return strings.Replace(valid, old, new, 1)
	}
	// valid without the fields version 4 added, for the rules of older versions.
	withoutV4 := regexp.MustCompile(`(?s)\n  "connector_config": \{.*?\n  \},\n  "replication_policy": \{[^}]*\},`).ReplaceAllString(valid, "")
	if withoutV4 == valid {
		t.Fatal("fixture has no connector_config and replication_policy")
	}
	lines := strings.Split(valid, "\n")
	var orders0, orders1 string
	for _, l := range lines {
		if strings.Contains(l, `"topic":"orders","partition":0,"group`) {
			orders0 = l
		}
		if strings.Contains(l, `"topic":"orders","partition":1,"group`) {
			orders1 = l
		}
	}

	for _, tt := range []struct {
		name string
		in   string
		want error
	}{
		{"empty", "", plan.ErrMalformed},
		{"not json", "plan", plan.ErrMalformed},
		{"array", "[]", plan.ErrMalformed},
		{"null", "null", plan.ErrMalformed},
		{"truncated", valid[:len(valid)/2], plan.ErrMalformed},
		{"unknown field", edit(`"savepoint":`, `"color": "blue", "savepoint":`), plan.ErrUnknownField},
		{"unknown entry field", edit(entry0, entry0+`"x":1,`), plan.ErrUnknownField},
		{"trailing object", valid + "{}", plan.ErrTrailingData},
		{"trailing brace", valid + "}", plan.ErrTrailingData},
		{"field twice", edit(`"savepoint":`, `"group_id": "other", "savepoint":`), plan.ErrMalformed},
		{"partitions null beside an unknown key", edit(`"partitions": [`, `"partitions": null, "x": [`), plan.ErrUnknownField},
		{"partitions object", edit(`"partitions": [`, `"partitions": {"a": [`), plan.ErrMalformed},
		{"schema version 5", edit(`"schema_version": 4`, `"schema_version": 5`), plan.ErrSchemaVersion},
		{"schema version 5 with new fields", edit(`"schema_version": 4`, `"schema_version": 5, "new": {}`), plan.ErrSchemaVersion},
		{"version 2 from a flink savepoint", strings.Replace(strings.Replace(withoutV4, `"schema_version": 4`, `"schema_version": 2`, 1), `"kind":"group","ref":""`, `"kind":"flink-savepoint","ref":"dir=\"/sp\""`, 1), plan.ErrInvalidField},
		{"schema version 0", edit(`"schema_version": 4`, `"schema_version": 0`), plan.ErrSchemaVersion},
		{"schema version string", edit(`"schema_version": 4`, `"schema_version": "4"`), plan.ErrMalformed},
		{"no schema version", edit(`"schema_version": 4,`, ``), plan.ErrMissingField},
		{"version 1 with offsets_from", edit(`"schema_version": 4`, `"schema_version": 1`), plan.ErrUnknownField},
		{"version 3 with connector_config", edit(`"schema_version": 4`, `"schema_version": 3`), plan.ErrUnknownField},
		{"no connector_config", edit(`"connector_config": {`, `"x_connector_config": {`), plan.ErrUnknownField},
		{"connector_config null", regexp.MustCompile(`(?s)"connector_config": \{.*?\n  \}`).ReplaceAllString(valid, `"connector_config": null`), plan.ErrMissingField},
		{"a config value null", edit(`"topics": "^(orders|payments)$"`, `"topics": null`), plan.ErrInvalidField},
		{"a config value edited", edit(`"topics": "^(orders|payments)$"`, `"topics": "orders"`), plan.ErrFingerprint},
		{"a config naming the connector", edit(`"topics": "^(orders|payments)$"`, `"name": "x", "topics": "^(orders|payments)$"`), plan.ErrInvalidField},
		{"a config under another alias", edit(`"source.cluster.alias": "source"`, `"source.cluster.alias": "dc1"`), plan.ErrConfigMismatch},
		{"no replication_policy", edit(`"replication_policy": {"kind":"default","source_alias":"source","separator":""},`, ``), plan.ErrMissingField},
		{"policy without separator", edit(`"source_alias":"source","separator":""}`, `"source_alias":"source"}`), plan.ErrMissingField},
		{"policy not the config's", edit(`"replication_policy": {"kind":"default"`, `"replication_policy": {"kind":"identity"`), plan.ErrInvalidField},
		{"policy with an unknown key", edit(`"separator":""}`, `"separator":"","prefix":"x"}`), plan.ErrUnknownField},
		{"no offsets_from", edit(`"offsets_from": {"kind":"group","ref":"","overrides_group":false},`, ``), plan.ErrMissingField},
		{"offsets_from without ref", edit(`"kind":"group","ref":"",`, `"kind":"group",`), plan.ErrMissingField},
		{"unknown offsets kind", edit(`"kind":"group"`, `"kind":"guess"`), plan.ErrInvalidField},
		{"group source with a ref", edit(`"kind":"group","ref":""`, `"kind":"group","ref":"x"`), plan.ErrInvalidField},
		{"file source without a ref", edit(`"kind":"group","ref":""`, `"kind":"file","ref":""`), plan.ErrInvalidField},
		{"group overriding the group", edit(`"overrides_group":false`, `"overrides_group":true`), plan.ErrInvalidField},
		{"offsets source edited", edit(`"kind":"group","ref":""`, `"kind":"file","ref":"sha256:00"`), plan.ErrFingerprint},
		{"float offset", edit(`"group_offset":42`, `"group_offset":42.0`), plan.ErrMalformed},
		{"exponent offset", edit(`"group_offset":42`, `"group_offset":4.2e1`), plan.ErrMalformed},
		{"string offset", edit(`"group_offset":42`, `"group_offset":"42"`), plan.ErrMalformed},
		{"offset over int64", edit(`"log_end":100`, `"log_end":9223372036854775808`), plan.ErrMalformed},
		{"partition over int32", edit(`"partition":0,"group`, `"partition":2147483648,"group`), plan.ErrInvalidField},
		{"missing group offset", edit(`"group_offset":42,`, ``), plan.ErrMissingField},
		{"null log start", edit(`"log_start":0,"log_end":100,"target_end":1042`, `"log_start":null,"log_end":100,"target_end":1042`), plan.ErrMissingField},
		{"missing reason", edit(`,"reason":"MM2 resumes at committed offset 42"`, ``), plan.ErrMissingField},
		{"unknown action", edit(`"action":"set","connect_offset":41`, `"action":"skip","connect_offset":41`), plan.ErrMalformed},
		{"missing fingerprint", edit(`,
  "fingerprint"`, `,
  "x_fingerprint"`), plan.ErrUnknownField},
		{"duplicate partition", strings.Replace(valid, orders1, orders0, 1), plan.ErrDuplicatePartition},
		{"swapped partitions", swapLines(valid, orders0, orders1), plan.ErrUnsorted},
		{"action does not follow C", edit(`"connect_offset":41`, `"connect_offset":40`), plan.ErrInconsistent},
		{"set where blocked", edit(`"group_offset":120,"log_start":0,"log_end":100,"target_end":99,"action":"block","connect_offset":null`,
			`"group_offset":120,"log_start":0,"log_end":100,"target_end":99,"action":"set","connect_offset":119`), plan.ErrInconsistent},
		{"loss without acceptance", edit(`"accepted_by":"jane.doe"`, `"accepted_by":""`), plan.ErrMissingField},
		{"acceptance removed", edit(`{"topic":"orders","partition":2,"accepted_by":"jane.doe","note":"INC-4711: 5..19 not needed downstream"}`, ``), plan.ErrInconsistent},
		{"bad digest", edit(`"config_digest": "sha256:`, `"config_digest": "md5:`), plan.ErrInvalidField},
		{"bad time", edit(`"created_at": "2025-06-01T08:00:00Z"`, `"created_at": "yesterday"`), plan.ErrInvalidField},
		{"content edited", edit(`"group_id": "flink-orders-replicator"`, `"group_id": "other-group"`), plan.ErrFingerprint},
		{"reason edited", edit(`"reason":"MM2 resumes at committed offset 42"`, `"reason":"fine"`), plan.ErrFingerprint},
		{"fingerprint edited", edit(`"fingerprint": "sha256:`, `"fingerprint": "sha256:0`), plan.ErrFingerprint},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := plan.Decode(strings.NewReader(tt.in))
			if !errors.Is(err, tt.want) || !errors.Is(err, plan.ErrInvalid) {
				t.Fatalf("Decode = %v, %v; want error matching %v and ErrInvalid", p, err, tt.want)
			}
			if p != nil {
				t.Errorf("Decode returned a plan with error %v", err)
			}
		})
	}
}

func swapLines(s, a, b string) string {
	s = strings.Replace(s, a, "@@A", 1)
	s = strings.Replace(s, b, "@@B", 1)
	s = strings.Replace(s, "@@A", b, 1)
	return strings.Replace(s, "@@B", a, 1)
}

func TestDecodeErrorTypes(t *testing.T) {
	valid := string(encode(t, mustBuild(t, blockedSpec(), blockedSnapshot())))
	_, err := plan.Decode(strings.NewReader(strings.Replace(valid, `"schema_version": 4`, `"schema_version": 5`, 1)))
	var sve *plan.SchemaVersionError
	if !errors.As(err, &sve) || sve.Got != 5 || sve.Want != 4 {
		t.Errorf("got %v, want *SchemaVersionError{Got: 5, Want: 4}", err)
	}
	_, err = plan.Decode(strings.NewReader(strings.Replace(valid, `"group_id": "flink-orders-replicator"`, `"group_id": "x"`, 1)))
	var fpe *plan.FingerprintError
	if !errors.As(err, &fpe) || fpe.Stored == fpe.Computed {
		t.Errorf("got %v, want *FingerprintError", err)
	}
	_, err = plan.Decode(strings.NewReader(strings.Replace(valid, `"savepoint":`, `"color": 1, "savepoint":`, 1)))
	var fe *plan.FieldError
	if !errors.As(err, &fe) || fe.Field != "color" {
		t.Errorf("got %v, want *FieldError for field color", err)
	}
	_, err = plan.Decode(strings.NewReader(strings.Replace(valid, `"connect_offset":41`, `"connect_offset":7`, 1)))
	var pe *plan.PartitionError
	if !errors.As(err, &pe) || pe.Partition != sp("orders", 0) {
		t.Errorf("got %v, want *PartitionError for orders-0", err)
	}
}

func TestEncodeRefusesEditedPlan(t *testing.T) {
	p := mustBuild(t, blockedSpec(), applicableSnapshot())
	p.Entries[0].Offset = offsets.NewMirrorOffset(0)
	var b bytes.Buffer
	if err := p.Encode(&b); !errors.Is(err, plan.ErrInconsistent) || b.Len() != 0 {
		t.Errorf("Encode of inconsistent plan = %v, wrote %d bytes; want ErrInconsistent, nothing", err, b.Len())
	}
	p = mustBuild(t, blockedSpec(), applicableSnapshot())
	p.GroupID = "other"
	if err := p.Encode(&b); !errors.Is(err, plan.ErrFingerprint) || b.Len() != 0 {
		t.Errorf("Encode of edited plan = %v, wrote %d bytes; want ErrFingerprint, nothing", err, b.Len())
	}
}

func TestWriteStrimziConfigMapErrors(t *testing.T) {
	p := mustBuild(t, blockedSpec(), applicableSnapshot())
	for _, tt := range []struct{ name, ns string }{
		{"", ""}, {"Offsets", ""}, {"-x", ""}, {"x-", ""}, {"a_b", ""}, {strings.Repeat("a", 254), ""},
		{"ok", "a.b"}, {"ok", strings.Repeat("a", 64)}, {"ok", "Kafka"},
	} {
		var b bytes.Buffer
		if err := p.WriteStrimziConfigMap(&b, tt.name, tt.ns); !errors.Is(err, plan.ErrInvalidField) || b.Len() != 0 {
			t.Errorf("WriteStrimziConfigMap(%q, %q) = %v, wrote %d bytes; want ErrInvalidField", tt.name, tt.ns, err, b.Len())
		}
	}

	// 20,000 partitions do not fit in a ConfigMap.
	snap := plan.Snapshot{Group: offsets.GroupOffsets{}, Source: map[offsets.SourcePartition]offsets.LogBounds{}, TargetEnd: map[offsets.SourcePartition]int64{}}
	for i := int32(0); i < 20000; i++ {
		snap.Group[sp("orders", i)] = 1000
		snap.Source[sp("orders", i)] = offsets.LogBounds{Start: 0, End: 1000}
		snap.TargetEnd[sp("orders", i)] = 0
	}
	big := mustBuild(t, spec(), snap)
	var b bytes.Buffer
	if err := big.WriteStrimziConfigMap(&b, "offsets", ""); !errors.Is(err, plan.ErrInvalidField) || b.Len() != 0 {
		t.Errorf("WriteStrimziConfigMap of 20000 partitions = %v, wrote %d bytes; want ErrInvalidField", err, b.Len())
	}
}

// TestDecodeSchemaVersion1 reads a plan written by the previous version of
// this package: its fingerprint is checked against version 1's canonical
// form, it records no offsets source (re-checks treat it as a group plan),
// and it can be re-encoded unchanged.
func TestDecodeSchemaVersion1(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "schema1.plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("Decode of a version 1 plan: %v", err)
	}
	if p.SchemaVersion != 1 || p.OffsetsFrom != (plan.OffsetsSource{}) {
		t.Errorf("version %d, offsets from %+v; want 1 and none", p.SchemaVersion, p.OffsetsFrom)
	}
	var buf bytes.Buffer
	if err := p.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(data), buf.String()); diff != "" {
		t.Errorf("re-encoded version 1 plan differs (-read +written):\n%s", diff)
	}
	edited := bytes.Replace(data, []byte(`"group_id": "flink-orders-replicator"`), []byte(`"group_id": "other"`), 1)
	if _, err := plan.Decode(bytes.NewReader(edited)); !errors.Is(err, plan.ErrFingerprint) {
		t.Errorf("edited version 1 plan: %v, want ErrFingerprint", err)
	}
}

// TestDecodeSchemaVersion2 reads a plan written before version 3: it
// decodes, re-encodes unchanged, and CheckConfig compares its digest by
// version 2's rule (every value equal to a secret redacted), so the
// configuration it was built for still matches it.
func TestDecodeSchemaVersion2(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "schema2.plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("Decode of a version 2 plan: %v", err)
	}
	if p.SchemaVersion != 2 || p.OffsetsFrom != (plan.OffsetsSource{Kind: plan.FromGroup}) {
		t.Errorf("version %d, offsets from %+v; want 2 and the group", p.SchemaVersion, p.OffsetsFrom)
	}
	var buf bytes.Buffer
	if err := p.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(data), buf.String()); diff != "" {
		t.Errorf("re-encoded version 2 plan differs (-read +written):\n%s", diff)
	}
	cfg := maps.Clone(spec().ConnectorConfig)
	if err := p.CheckConfig(cfg); err != nil {
		t.Errorf("the configuration of the version 2 plan: %v", err)
	}
	cfg["topics"] = "orders"
	if err := p.CheckConfig(cfg); !errors.Is(err, plan.ErrConfigChanged) {
		t.Errorf("another topic list against the version 2 plan: %v, want ErrConfigChanged", err)
	}
}

func TestBuildOffsetsSource(t *testing.T) {
	spec := blockedSpec()
	p := mustBuild(t, spec, blockedSnapshot())
	if p.OffsetsFrom != (plan.OffsetsSource{Kind: plan.FromGroup}) {
		t.Errorf("default offsets source %+v, want the group", p.OffsetsFrom)
	}
	spec.OffsetsFrom = plan.OffsetsSource{Kind: plan.FromFile, Ref: "sha256:ab", OverridesGroup: true}
	if p = mustBuild(t, spec, blockedSnapshot()); p.OffsetsFrom != spec.OffsetsFrom {
		t.Errorf("offsets source %+v, want %+v", p.OffsetsFrom, spec.OffsetsFrom)
	}
	if p.SchemaVersion != plan.SchemaVersion {
		t.Errorf("a plan from a file has schema version %d, want %d (every plan is written in the newest: its digest rule)", p.SchemaVersion, plan.SchemaVersion)
	}
	spec.OffsetsFrom = plan.OffsetsSource{Kind: plan.FromFlinkSavepoint, Ref: `dir="/sp/savepoint-1" uid="kafka-source"`}
	p = mustBuild(t, spec, blockedSnapshot())
	if p.OffsetsFrom != spec.OffsetsFrom || p.SchemaVersion != plan.SchemaVersion {
		t.Errorf("offsets source %+v, schema version %d; want %+v and %d", p.OffsetsFrom, p.SchemaVersion, spec.OffsetsFrom, plan.SchemaVersion)
	}
	data := encode(t, p)
	back, err := plan.Decode(bytes.NewReader(data))
	if err != nil || back.SchemaVersion != plan.SchemaVersion || back.OffsetsFrom != spec.OffsetsFrom || back.Fingerprint != p.Fingerprint {
		t.Errorf("decoded plan from a savepoint: %+v, %v", back, err)
	}
	if !strings.Contains(string(data), `"kind":"flink-savepoint"`) {
		t.Errorf("encoded plan lacks the kind:\n%s", data)
	}
	for _, bad := range []plan.OffsetsSource{
		{Kind: plan.FromFile},
		{Kind: plan.FromFlinkSavepoint},
		{Kind: plan.FromFlinkSavepoint, Ref: "x", OverridesGroup: true},
		{Kind: plan.FromGroup, OverridesGroup: true},
		{Kind: "guess", Ref: "x"},
	} {
		spec.OffsetsFrom = bad
		if _, err := plan.Build(spec, blockedSnapshot()); !errors.Is(err, plan.ErrInvalidField) {
			t.Errorf("Build with offsets source %+v: %v, want ErrInvalidField", bad, err)
		}
	}
}

// TestDerivedOffsetsRefuseInvalidPlans: what a tool sends or compares is
// derived from a plan that Validate accepts, never from one edited in memory
// after Build (an entry's offset, the group) or never built at all (which
// read as "already applied" before).
func TestDerivedOffsetsRefuseInvalidPlans(t *testing.T) {
	edited := mustBuild(t, blockedSpec(), applicableSnapshot())
	edited.Entries[0].Offset = offsets.NewMirrorOffset(0)
	regrouped := mustBuild(t, blockedSpec(), applicableSnapshot())
	regrouped.GroupID = "other"
	for _, tt := range []struct {
		name string
		p    *plan.Plan
		want error
	}{
		{"an entry's offset edited", edited, plan.ErrInconsistent},
		{"the group edited", regrouped, plan.ErrFingerprint},
		{"never built", &plan.Plan{}, plan.ErrSchemaVersion},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.p.ConnectOffsets(); !errors.Is(err, tt.want) {
				t.Errorf("ConnectOffsets: %v, want %v", err, tt.want)
			}
			if _, err := tt.p.ExpectedOffsets(); !errors.Is(err, tt.want) {
				t.Errorf("ExpectedOffsets: %v, want %v", err, tt.want)
			}
			if _, err := tt.p.PatchBody(); !errors.Is(err, tt.want) {
				t.Errorf("PatchBody: %v, want %v", err, tt.want)
			}
			if a, err := tt.p.Guard(nil); !errors.Is(err, tt.want) {
				t.Errorf("Guard: %v %v, want %v", a, err, tt.want)
			}
		})
	}
	// The plan as built still derives its offsets.
	if _, err := mustBuild(t, blockedSpec(), applicableSnapshot()).ConnectOffsets(); err != nil {
		t.Errorf("ConnectOffsets of a plan as built: %v", err)
	}
}

// TestJSONIsThePlanFile: encoding/json writes and reads a plan in its
// canonical form, so a plan inside another JSON document is a plan file;
// Go's field names are refused on reading, as Decode refuses unknown fields.
func TestJSONIsThePlanFile(t *testing.T) {
	p := mustBuild(t, blockedSpec(), applicableSnapshot())
	b, err := json.Marshal(struct{ Plan *plan.Plan }{p})
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	if err := p.Encode(&file); err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, file.Bytes()); err != nil {
		t.Fatal(err)
	}
	if want := `{"Plan":` + compact.String() + `}`; string(b) != want {
		t.Errorf("json.Marshal:\n%s\nwant the plan file compacted:\n%s", b, want)
	}
	if vb, err := json.Marshal(*p); err != nil || string(vb) != compact.String() {
		t.Errorf("json.Marshal of a Plan value: %v, %s", err, vb)
	}
	var back struct{ Plan *plan.Plan }
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Plan.Fingerprint != p.Fingerprint {
		t.Errorf("read back fingerprint %s, want %s", back.Plan.Fingerprint, p.Fingerprint)
	}
	type goNames plan.Plan // no methods: Go's default encoding
	camel, err := json.Marshal((*goNames)(p))
	if err != nil {
		t.Fatal(err)
	}
	var q plan.Plan
	if err := json.Unmarshal(camel, &q); !errors.Is(err, plan.ErrMissingField) {
		t.Errorf("json.Unmarshal of Go's field names: %v, want ErrMissingField (schema_version)", err)
	}
	edited := *p
	edited.GroupID = "other"
	if _, err := json.Marshal(edited); !errors.Is(err, plan.ErrFingerprint) {
		t.Errorf("json.Marshal of an edited plan: %v, want ErrFingerprint", err)
	}
}
