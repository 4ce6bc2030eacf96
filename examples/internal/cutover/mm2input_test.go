package cutover

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/offsets"
)

func TestOffsetsFromMM2Flags(t *testing.T) {
	base := []string{"-source-bootstrap", "a:1", "-target-bootstrap", "b:1", "-connect-url", "http://c:8088",
		"-connector", "x", "-group", "g", "-topics", "orders"}
	for _, tc := range []struct {
		args []string
		want Settings // only the three Offsets* fields
		bad  string
	}{
		{args: []string{"-offsets-from", "mm2:mm2-offsets.primary.internal", "-offsets-alias", "primary"},
			want: Settings{OffsetsTopic: "mm2-offsets.primary.internal", OffsetsAlias: "primary", OffsetsConnector: "MirrorSourceConnector"}},
		{args: []string{"-offsets-from", "mm2:t", "-offsets-alias", "a", "-offsets-connector", "legacy"},
			want: Settings{OffsetsTopic: "t", OffsetsAlias: "a", OffsetsConnector: "legacy"}},
		{args: []string{"-offsets-from", "mm2:t"}, bad: "needs -offsets-alias"},
		{args: []string{"-offsets-from", "mm2:t", "-offsets-alias", "a", "-offsets-connector", ""}, bad: "needs -offsets-alias"},
		{args: []string{"-offsets-from", "mm2:"}, bad: "want group or csv:FILE, or mm2:TOPIC"},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f := BindFlags(fs)
		if err := fs.Parse(append(append([]string{}, base...), tc.args...)); err != nil {
			t.Fatal(err)
		}
		s, err := f.Settings()
		if tc.bad != "" {
			if !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("%v: %v, want ErrSettings saying %q", tc.args, err, tc.bad)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if s.OffsetsTopic != tc.want.OffsetsTopic || s.OffsetsAlias != tc.want.OffsetsAlias || s.OffsetsConnector != tc.want.OffsetsConnector {
			t.Errorf("%v: topic %q alias %q connector %q", tc.args, s.OffsetsTopic, s.OffsetsAlias, s.OffsetsConnector)
		}
	}
}

// TestCheckMM2Stopped: offsets that moved, appeared or vanished between the
// two readings fail the check; equal readings pass.
func TestCheckMM2Stopped(t *testing.T) {
	p := func(n int32) offsets.SourcePartition { return offsets.SourcePartition{Topic: "orders", Partition: n} }
	s := Settings{OffsetsTopic: "mm2-offsets.primary.internal"}
	for _, tc := range []struct {
		first, second offsets.GroupOffsets
		want          Status
		detail        string
	}{
		{offsets.GroupOffsets{p(0): 5, p(1): 7}, offsets.GroupOffsets{p(0): 5, p(1): 7}, OK, "no offset"},
		{offsets.GroupOffsets{}, offsets.GroupOffsets{}, OK, "no offset"},
		{offsets.GroupOffsets{p(0): 5}, offsets.GroupOffsets{p(0): 9}, Fail, "orders-0: 5 -> 9"},
		{offsets.GroupOffsets{p(0): 5}, offsets.GroupOffsets{p(0): 5, p(1): 1}, Fail, "orders-1: none -> 1"},
		{offsets.GroupOffsets{p(0): 5}, offsets.GroupOffsets{}, Fail, "orders-0: 5 -> none"},
	} {
		var cs Checks
		checkMM2Stopped(&cs, s, tc.first, tc.second)
		if len(cs) != 1 || cs[0].Status != tc.want || !strings.Contains(cs[0].Detail, tc.detail) {
			t.Errorf("%v -> %v: %+v, want %s saying %q", tc.first, tc.second, cs, tc.want, tc.detail)
		}
	}
}
