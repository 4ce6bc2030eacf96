package app

import (
	"runtime/debug"
	"testing"
)

func TestLeanGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	LeanGC()
	if got := debug.SetGCPercent(100); got != 50 {
		t.Errorf("GOGC unset: the collector's percent is %d, want 50", got)
	}
	t.Setenv("GOGC", "200") // the operator's choice stands
	LeanGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC set: LeanGC changed the collector's percent to %d", got)
	}
}
