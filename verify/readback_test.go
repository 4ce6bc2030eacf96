package verify_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/verify"
)

func set(topic string, p int32, m int64) offsets.ConnectOffset {
	return offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "src", Topic: topic, Partition: p}, Offset: offsets.NewMirrorOffset(m)}
}

func TestCompareReadBack(t *testing.T) {
	a0, a1, b0 := set("a", 0, 9), set("a", 1, 0), set("b", 0, 41)
	other := set("a", 0, 10)
	alias := offsets.ConnectOffset{Partition: offsets.ConnectPartition{Cluster: "other", Topic: "a", Partition: 0}, Offset: offsets.NewMirrorOffset(9)}
	for _, tc := range []struct {
		name      string
		want, got []offsets.ConnectOffset
		ok        bool
		counts    map[verify.Status]int
	}{
		{"both empty", nil, nil, true, map[verify.Status]int{}},
		{"equal, other order", []offsets.ConnectOffset{a0, a1, b0}, []offsets.ConnectOffset{b0, a0, a1}, true, map[verify.Status]int{verify.Match: 3}},
		{"nothing read back yet", []offsets.ConnectOffset{a0, b0}, nil, false, map[verify.Status]int{verify.Missing: 2}},
		{"one missing", []offsets.ConnectOffset{a0, b0}, []offsets.ConnectOffset{a0}, false, map[verify.Status]int{verify.Match: 1, verify.Missing: 1}},
		{"wrong value", []offsets.ConnectOffset{a0}, []offsets.ConnectOffset{other}, false, map[verify.Status]int{verify.WrongValue: 1}},
		{"extra partition", []offsets.ConnectOffset{a0}, []offsets.ConnectOffset{a0, b0}, false, map[verify.Status]int{verify.Match: 1, verify.Unexpected: 1}},
		{"wrong alias is not a match", []offsets.ConnectOffset{a0}, []offsets.ConnectOffset{alias}, false, map[verify.Status]int{verify.Missing: 1, verify.Unexpected: 1}},
		{"listed twice", []offsets.ConnectOffset{a0}, []offsets.ConnectOffset{a0, a0}, false, map[verify.Status]int{verify.Match: 1, verify.Unexpected: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rb := verify.CompareReadBack(tc.want, tc.got)
			if rb.OK() != tc.ok {
				t.Errorf("OK() = %v, want %v: %s", rb.OK(), tc.ok, rb)
			}
			if (rb.Diff == "") != tc.ok {
				t.Errorf("Diff = %q, want it empty exactly when OK", rb.Diff)
			}
			for _, s := range []verify.Status{verify.Match, verify.WrongValue, verify.Missing, verify.Unexpected} {
				if got, want := rb.Count(s), tc.counts[s]; got != want {
					t.Errorf("Count(%s) = %d, want %d", s, got, want)
				}
			}
		})
	}
}

func TestGuard(t *testing.T) {
	a0, b0 := set("a", 0, 9), set("b", 0, 41)
	for _, tc := range []struct {
		name           string
		want, existing []offsets.ConnectOffset
		action         verify.GuardAction
		stale          bool
	}{
		{"fresh connector", []offsets.ConnectOffset{a0, b0}, nil, verify.Apply, false},
		{"plan applied", []offsets.ConnectOffset{a0, b0}, []offsets.ConnectOffset{b0, a0}, verify.AlreadyApplied, false},
		{"plan partly applied", []offsets.ConnectOffset{a0, b0}, []offsets.ConnectOffset{a0}, verify.Apply, false},
		{"only clears, nothing stored", nil, nil, verify.AlreadyApplied, false},
		{"connector ran", []offsets.ConnectOffset{a0, b0}, []offsets.ConnectOffset{set("a", 0, 120), b0}, 0, true},
		{"leftover of an earlier connector", []offsets.ConnectOffset{a0}, []offsets.ConnectOffset{a0, set("c", 0, 5)}, 0, true},
		{"plan clears what is stored", nil, []offsets.ConnectOffset{a0}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			action, err := verify.Guard(tc.want, tc.existing)
			if tc.stale {
				var se *verify.StaleOffsetsError
				if !errors.As(err, &se) || !errors.Is(err, verify.ErrStaleOffsets) {
					t.Fatalf("got %v, %v; want a *StaleOffsetsError", action, err)
				}
				if !strings.Contains(err.Error(), "refusing to apply") {
					t.Errorf("error does not say it refuses: %v", err)
				}
				return
			}
			if err != nil || action != tc.action {
				t.Fatalf("got %v, %v; want %v", action, err, tc.action)
			}
		})
	}
}

func TestConnectConversionRoundTrips(t *testing.T) {
	list := []offsets.ConnectOffset{set("a", 0, 9), {Partition: offsets.ConnectPartition{Cluster: "src", Topic: "z", Partition: 3}}}
	back, err := verify.FromConnect(verify.ToConnect(list))
	if err != nil {
		t.Fatal(err)
	}
	if rb := verify.CompareReadBack(list, back); !rb.OK() {
		t.Fatalf("round trip differs:\n%s", rb.Diff)
	}
	_, err = verify.FromConnect([]connect.Offset{{Partition: map[string]any{"file": "x"}, Offset: map[string]any{"position": int64(3)}}})
	if !errors.Is(err, verify.ErrNotMirrorOffset) {
		t.Fatalf("got %v, want ErrNotMirrorOffset", err)
	}
}
