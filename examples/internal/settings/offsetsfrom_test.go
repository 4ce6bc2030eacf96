package settings

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

// TestOffsetsFromMM2Flags: -offsets-from mm2:TOPIC takes the old
// MirrorMaker's alias and connector name beside it.
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
		{args: []string{"-offsets-from", "mm2:"}, bad: "want group, flink-savepoint:DIR, csv:FILE or mm2:TOPIC"},
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
