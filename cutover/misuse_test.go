package cutover_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestMisuseDoesNotCompile builds the programs of testdata/misuse, each
// one of the harmful orders another team's tool once wrote (a PATCH
// without the guard, a resume without its check, clusters filled by hand,
// the forward and reverse plans swapped, a proof forged), and expects the
// compiler to refuse each, for the reason the types give. The zero values
// of the proofs, all a caller can make of them, are refused at run time
// (TestZeroProofsAreRefused).
func TestMisuseDoesNotCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds five programs")
	}
	for _, tc := range []struct {
		probe, says string
	}{
		{"patch", "cannot use p (variable of type *plan.Plan) as verify.Guarded value"},
		{"resume", "cannot use p (variable of type *plan.Plan) as verify.Resumable value"},
		{"clusters", "unknown field Source in struct literal of type verify.Reached"},
		{"reverse", "cannot use forward (variable of type *plan.Plan) as *verify.Reverse value"},
		{"guarded", "cannot refer to unexported field plan in struct literal of type verify.Guarded"},
	} {
		t.Run(tc.probe, func(t *testing.T) {
			out, err := exec.Command("go", "vet", "./testdata/misuse/"+tc.probe).CombinedOutput()
			if err == nil {
				t.Fatalf("probe %s compiled: the misuse it writes is possible again", tc.probe)
			}
			if !strings.Contains(string(out), tc.says) {
				t.Errorf("probe %s failed to compile, but not because %q:\n%s", tc.probe, tc.says, out)
			}
		})
	}
}
