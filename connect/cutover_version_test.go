package connect_test

import (
	"errors"
	"testing"

	"github.com/mm2cutover/mm2cutover/connect"
)

func TestRequireCutoverVersion(t *testing.T) {
	for _, tc := range []struct {
		version string
		ok      bool
	}{
		{"3.7.0", true}, {"3.9.1", true}, {"4.3.1", true}, {"3.7.0-SNAPSHOT", true},
		{"3.6.2", false}, {"3.5.0", false}, {"2.8.1", false}, {"7.7.0-ccs", true}, {"7.6.0-ccs", false},
	} {
		err := connect.RequireCutoverVersion(tc.version)
		if tc.ok != (err == nil) {
			t.Errorf("RequireCutoverVersion(%q) = %v, want ok %v", tc.version, err, tc.ok)
		}
		if err != nil && !errors.Is(err, connect.ErrUnsupportedVersion) {
			t.Errorf("RequireCutoverVersion(%q) = %v, want ErrUnsupportedVersion", tc.version, err)
		}
	}
	if err := connect.RequireCutoverVersion("banana"); err == nil || errors.Is(err, connect.ErrUnsupportedVersion) {
		t.Errorf("RequireCutoverVersion(banana) = %v, want a parse error", err)
	}
}
