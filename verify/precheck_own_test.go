package verify

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
)

// TestCheckOwnConnector: the connector-name check passes for a free name
// and for a connector apply adopts (STOPPED, the cutover's configuration,
// no offsets or only the plan's), and fails, saying what to do, for every
// connector of the name that apply would refuse.
func TestCheckOwnConnector(t *testing.T) {
	want, err := connect.MirrorSource{Name: "mm2-orders", SourceBootstrap: "src:9092", TargetBootstrap: "tgt:9092", Topics: []string{"orders"}}.Config()
	if err != nil {
		t.Fatal(err)
	}
	o0, o1 := offsets.SourcePartition{Topic: "orders", Partition: 0}, offsets.SourcePartition{Topic: "orders", Partition: 1}
	p, err := plan.Build(plan.Spec{CreatedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), SourceClusterID: "s", TargetClusterID: "t",
		ConnectorName: "mm2-orders", SourceAlias: "source", GroupID: "flink", ConnectorConfig: want},
		plan.Snapshot{Group: offsets.GroupOffsets{o0: 10, o1: 4}, Source: map[offsets.SourcePartition]offsets.LogBounds{o0: {End: 20}, o1: {End: 4}},
			TargetEnd: map[offsets.SourcePartition]int64{o0: 10, o1: 4}})
	if err != nil {
		t.Fatal(err)
	}
	at := func(tp offsets.SourcePartition, m int64) offsets.ConnectOffset {
		return offsets.ConnectOffset{Partition: tp.Connect("source"), Offset: offsets.NewMirrorOffset(m)}
	}
	other := maps.Clone(want)
	other["topics"] = "invoices"
	for _, tc := range []struct {
		name    string
		have    ownConnector
		wouldBe *plan.Plan
		verdict Verdict
		says    string
	}{
		{"a free name", ownConnector{}, p, Pass, "apply creates it STOPPED"},
		{"another flow's, running", ownConnector{exists: true, config: other, state: connect.StateRunning}, p, Fail, `RUNNING, source alias "source", topics "invoices") with another configuration`},
		{"someone else's, stopped", ownConnector{exists: true, config: other, state: connect.StateStopped}, p, Fail, "choose a connector name nobody uses"},
		{"ours, running", ownConnector{exists: true, config: want, state: connect.StateRunning}, p, Fail, "roll back after resume"},
		{"ours, paused", ownConnector{exists: true, config: want, state: connect.StatePaused}, p, Fail, "is PAUSED"},
		{"ours, state unknown", ownConnector{exists: true, config: want}, p, Warn, "cannot be read"},
		{"ours, stopped, no offsets (a Job that died after create)", ownConnector{exists: true, config: want, state: connect.StateStopped}, p, Pass, "apply adopts it"},
		{"ours, stopped, the plan's offsets (a Job retried after its PATCH)", ownConnector{exists: true, config: want, state: connect.StateStopped,
			offsets: []offsets.ConnectOffset{at(o1, 3), at(o0, 9)}}, p, Pass, "already applied"},
		{"ours, stopped, some of the plan's offsets", ownConnector{exists: true, config: want, state: connect.StateStopped,
			offsets: []offsets.ConnectOffset{at(o0, 9)}}, p, Pass, "1 of the plan's offsets"},
		{"ours, stopped after MM2 ran", ownConnector{exists: true, config: want, state: connect.StateStopped,
			offsets: []offsets.ConnectOffset{at(o0, 15), at(o1, 3)}}, p, Fail, "1 wrong value"},
		{"ours, stopped, offsets unreadable", ownConnector{exists: true, config: want, state: connect.StateStopped, offsetsErr: errors.New("boom")}, p, Warn, "boom"},
		{"ours, stopped, no plan to compare with", ownConnector{exists: true, config: want, state: connect.StateStopped,
			offsets: []offsets.ConnectOffset{at(o0, 15)}}, nil, Warn, "not compared"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cs Checks
			checkOwnConnector(&cs, "mm2-orders", want, tc.wouldBe, tc.have)
			if len(cs) != 1 || cs[0].Name != "connector-name" {
				t.Fatalf("checks %+v, want one connector-name", cs)
			}
			if cs[0].Verdict != tc.verdict || !strings.Contains(cs[0].Detail, tc.says) {
				t.Errorf("%s: %s, want %s saying %q", cs[0].Verdict, cs[0].Detail, tc.verdict, tc.says)
			}
		})
	}
}
