package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/examples/internal/cutover"
)

// TestF11StrimziReplicasRefused: -strimzi-replicas 0 or a negative number
// was rendered as a KafkaMirrorMaker2 of one worker. It is refused as
// settings (exit 2) before anything is read.
func TestF11StrimziReplicasRefused(t *testing.T) {
	requiredEnv(t, "http://127.0.0.1:3")
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"strimzi", "-strimzi-cluster", "mm2", "-strimzi-replicas", "0"}, "", "-strimzi-replicas 0"},
		{[]string{"strimzi", "-strimzi-cluster", "mm2", "-strimzi-replicas=-3"}, "", "-strimzi-replicas -3"},
		{[]string{"strimzi", "-strimzi-cluster", "mm2"}, "0", "-strimzi-replicas 0"},
	} {
		t.Setenv("MM2CUTOVER_STRIMZI_REPLICAS", tc.env)
		if tc.env == "" {
			t.Setenv("MM2CUTOVER_STRIMZI_REPLICAS", "1")
		}
		var out, errb bytes.Buffer
		args := append([]string{"-plan", t.TempDir() + "/none.json"}, tc.args...)
		if code := run(args, &out, &errb); code != cutover.ExitUsage || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%q (MM2CUTOVER_STRIMZI_REPLICAS=%s): exit %d, want %d saying %q; stderr:\n%s", tc.args, tc.env, code, cutover.ExitUsage, tc.want, errb.String())
		}
	}
}
