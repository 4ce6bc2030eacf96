package plan_test

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

func TestConfigDigest(t *testing.T) {
	cfg := map[string]string{
		"name":                                 "orders-mirror",
		"topics":                               "orders",
		"source.cluster.sasl.jaas.config":      `... password="hunter2";`,
		"target.cluster.ssl.keystore.password": "${file:/etc/kafka/secrets.properties:keystore}",
	}
	d := plan.ConfigDigest(cfg)
	if !strings.HasPrefix(d, "sha256:") || len(d) != len("sha256:")+64 {
		t.Errorf("ConfigDigest = %q, want sha256:<64 hex>", d)
	}
	other := maps.Clone(cfg)
	other["source.cluster.sasl.jaas.config"] = `... password="another";`
	if got := plan.ConfigDigest(other); got != d {
		t.Errorf("digest changed with a secret value: %s != %s", got, d)
	}
	delete(other, "name") // Connect adds the name to a stored configuration
	if got := plan.ConfigDigest(other); got != d {
		t.Errorf("digest changed without the name: %s != %s", got, d)
	}
	other["topics"] = "orders|payments"
	if got := plan.ConfigDigest(other); got == d {
		t.Errorf("digest did not change with topics")
	}
}

// TestConfigDigestExactlyOnce: the exactly-once settings are part of the
// digest: a connector stored without them (or with any of them changed) is
// not the plan's, and the steps refuse to write it.
func TestConfigDigestExactlyOnce(t *testing.T) {
	eos := map[string]string{"topics": "orders", "exactly.once.support": "required", "transaction.boundary": "poll",
		"source.consumer.isolation.level": "read_committed"}
	d := plan.ConfigDigest(eos)
	for k, v := range map[string]string{"exactly.once.support": "requested", "transaction.boundary": "interval",
		"source.consumer.isolation.level": "read_uncommitted", "offsets.storage.topic": "own-offsets", "consumer.isolation.level": "read_uncommitted"} {
		other := maps.Clone(eos)
		other[k] = v
		if plan.ConfigDigest(other) == d {
			t.Errorf("%s=%s did not change the digest", k, v)
		}
		delete(other, k)
		if _, was := eos[k]; was && plan.ConfigDigest(other) == d {
			t.Errorf("dropping %s did not change the digest", k)
		}
	}
}

// TestConfigDigestPasswordRotation: a password equal to an ordinary value
// (a topic named like it) or inside one (a URL holding it) is rotated; the
// configuration is the same, and so is its digest.
func TestConfigDigestPasswordRotation(t *testing.T) {
	cfg := func(password string) map[string]string {
		return map[string]string{
			"topics":                          "orders",
			"source.cluster.alias":            "source",
			"source.cluster.sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="mm2" password="` + password + `";`,
			"producer.override.client.id":     "mm2-orders-writer",
		}
	}
	for _, was := range []string{"orders", "mm2-orders", "source"} {
		if a, b := plan.ConfigDigest(cfg(was)), plan.ConfigDigest(cfg("rotated-7f3a")); a != b {
			t.Errorf("rotating the password %q changed the digest: %s != %s", was, a, b)
		}
	}
}

func TestParseResetOffsetsCSV(t *testing.T) {
	want := offsets.GroupOffsets{sp("orders", 0): 42, sp("orders", 1): 0, sp("pay.ments-x_1", 12): 9223372036854775807}
	for _, tt := range []struct {
		name, in, group string
	}{
		{"three columns", "orders,0,42\norders,1,0\npay.ments-x_1,12,9223372036854775807\n", ""},
		{"header and CRLF", "topic,partition,offset\r\norders,0,42\r\norders,1,0\r\npay.ments-x_1,12,9223372036854775807\r\n", ""},
		{"no final newline", "orders,0,42\norders,1,0\npay.ments-x_1,12,9223372036854775807", ""},
		{"four columns one group", "g1,orders,0,42\ng1,orders,1,0\ng1,pay.ments-x_1,12,9223372036854775807\n", ""},
		{"four columns named group", "g1,orders,0,42\ng2,orders,0,7\ng1,orders,1,0\ng1,pay.ments-x_1,12,9223372036854775807\ng2,audit,0,1\n", "g1"},
		{"four columns with header", "group,topic,partition,offset\ng1,orders,0,42\ng1,orders,1,0\ng1,pay.ments-x_1,12,9223372036854775807\n", "g1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := plan.ParseResetOffsetsCSV(strings.NewReader(tt.in), tt.group)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}

	for _, tt := range []struct {
		name, in, group string
		want            error
		line            int
	}{
		{"empty", "", "", plan.ErrMalformed, 0},
		{"no rows for group", "g2,orders,0,1\n", "g1", plan.ErrMalformed, 0},
		{"two columns", "orders,0\n", "", plan.ErrMalformed, 1},
		{"five columns", "a,b,c,d,e\n", "", plan.ErrMalformed, 1},
		{"mixed forms", "orders,0,1\ng,orders,1,1\n", "", plan.ErrMalformed, 2},
		{"two groups unnamed", "g1,orders,0,1\ng2,orders,0,1\n", "", plan.ErrMalformed, 2},
		{"negative offset", "orders,0,-1\n", "", plan.ErrMalformed, 1},
		{"float offset", "orders,0,1.5\n", "", plan.ErrMalformed, 1},
		{"offset overflow", "orders,0,9223372036854775808\n", "", plan.ErrMalformed, 1},
		{"negative partition", "orders,-1,1\n", "", plan.ErrMalformed, 1},
		{"partition overflow", "orders,2147483648,1\n", "", plan.ErrMalformed, 1},
		{"bad topic", "ord ers,0,1\n", "", plan.ErrMalformed, 1},
		{"empty topic", ",0,1\n", "", plan.ErrMalformed, 1},
		{"bad quote", "\"orders,0,1\n", "", plan.ErrMalformed, 1},
		{"duplicate", "orders,0,1\norders,1,1\norders,0,2\n", "", plan.ErrDuplicatePartition, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := plan.ParseResetOffsetsCSV(strings.NewReader(tt.in), tt.group)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, %v; want error matching %v", got, err, tt.want)
			}
			var le *plan.LineError
			if tt.line > 0 && (!errors.As(err, &le) || le.Line != tt.line) {
				t.Errorf("error %v, want a *LineError on line %d", err, tt.line)
			}
		})
	}
}

func TestGroupOffsetsFromConnector(t *testing.T) {
	body := `{"offsets":[
		{"partition":{"cluster":"dc1","topic":"orders","partition":0},"offset":{"offset":41}},
		{"partition":{"cluster":"dc1","topic":"orders","partition":1},"offset":{"offset":0}}]}`
	got, err := plan.GroupOffsetsFromConnector(strings.NewReader(body), "dc1")
	want := offsets.GroupOffsets{sp("orders", 0): 42, sp("orders", 1): 1}
	if err != nil || !cmp.Equal(want, got) {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
	got, err = plan.GroupOffsetsFromConnector(strings.NewReader(`{"offsets":[]}`), "dc1")
	if err != nil || len(got) != 0 {
		t.Errorf("empty list: got %v, %v", got, err)
	}

	for _, tt := range []struct {
		body, alias string
		want        error
	}{
		{body, "source", offsets.ErrAliasMismatch},
		{`{"offsets":[{"partition":{"cluster":"dc1","topic":"orders","partition":0},"offset":{"offset":-5}}]}`, "dc1", offsets.ErrNegative},
		{`{"offsets":[{"partition":{"cluster":"dc1","topic":"orders","partition":0},"offset":{"offset":"5"}}]}`, "dc1", plan.ErrMalformed},
		{`{"offsets":[{"partition":{"cluster":"dc1","topic":"orders","partition":0},"offset":{"offset":5}}]}x`, "dc1", offsets.ErrMalformed},
		{`{"error_code":404,"message":"Connector x not found"}`, "dc1", plan.ErrMalformed},
	} {
		got, err := plan.GroupOffsetsFromConnector(strings.NewReader(tt.body), tt.alias)
		if !errors.Is(err, tt.want) {
			t.Errorf("GroupOffsetsFromConnector(%s, %q) = %v, %v; want error matching %v", tt.body, tt.alias, got, err, tt.want)
		}
	}
}

// TestBuildFromCSV builds a plan from the CSV form end to end.
func TestBuildFromCSV(t *testing.T) {
	group, err := plan.ParseResetOffsetsCSV(strings.NewReader("orders,0,42\norders,1,0\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(spec(), plan.Snapshot{
		Group:     group,
		Source:    map[offsets.SourcePartition]offsets.LogBounds{sp("orders", 0): {End: 50}, sp("orders", 1): {End: 50}},
		TargetEnd: map[offsets.SourcePartition]int64{sp("orders", 0): 40, sp("orders", 1): 0},
	})
	if err != nil {
		t.Fatal(err)
	}
	body, err := p.PatchBody()
	want := `{"offsets":[{"partition":{"cluster":"source","topic":"orders","partition":0},"offset":{"offset":41}},{"partition":{"cluster":"source","topic":"orders","partition":1},"offset":null}]}`
	if err != nil || string(body) != want {
		t.Errorf("PatchBody() = %s, %v; want %s", body, err, want)
	}
}
