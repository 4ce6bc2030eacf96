package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/examples/internal/app"
)

// TestStrimziRefusesREST: with -strimzi-cluster, the steps that write over
// REST (apply, resume, rollback, run) are refused before anything is
// contacted, naming the strimzi step; apply -dry-run, which writes nothing,
// is not; the strimzi step without -strimzi-cluster is a usage error.
func TestStrimziRefusesREST(t *testing.T) {
	base := []string{"-source-bootstrap", "127.0.0.1:1", "-target-bootstrap", "127.0.0.1:2", "-connect-url", "http://127.0.0.1:3",
		"-connector", "mm2-orders", "-group", "g", "-topics", "orders", "-plan", t.TempDir() + "/plan.json"}
	for _, step := range []string{"apply", "resume", "rollback", "run"} {
		var errb bytes.Buffer
		code := run(append([]string{step, "-strimzi-cluster", "mm2-connect"}, base...), &bytes.Buffer{}, &errb)
		if code != app.ExitUsage || !strings.Contains(errb.String(), "render the resources with 'cutover strimzi'") {
			t.Errorf("%s -strimzi-cluster: exit %d\n%s", step, code, errb.String())
		}
	}
	var errb bytes.Buffer
	if code := run(append([]string{"strimzi"}, base...), &bytes.Buffer{}, &errb); code != app.ExitUsage || !strings.Contains(errb.String(), "needs -strimzi-cluster") {
		t.Errorf("strimzi without -strimzi-cluster: exit %d\n%s", code, errb.String())
	}
}
