package kafkaadmin

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCost(t *testing.T) {
	var m meter
	m.connections.Add(1)
	for _, k := range []int16{18, 3, 2, 2, 500} {
		m.request(k)
	}
	before := m.cost()
	m.connections.Add(1)
	m.request(2)
	m.request(9)
	got := m.cost().Sub(before)
	want := Cost{Requests: 2, Connections: 1, ByKind: map[string]int64{"ListOffsets": 1, "OffsetFetch": 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Sub (-want +got):\n%s", diff)
	}
	if s, want := m.cost().String(), "7 requests on 2 connections: 3 ListOffsets, 1 ApiVersions, 1 Metadata, 1 OffsetFetch, 1 api-127"; s != want {
		t.Errorf("String() = %q, want %q", s, want)
	}
	if sum := got.Add(got); sum.Requests != 4 || sum.ByKind["ListOffsets"] != 2 {
		t.Errorf("Add = %+v", sum)
	}
}
