//go:build sandbox

package main

import "testing"

// TestCutoverUnderDefaultPolicy runs the whole cutover with MM2's
// DefaultReplicationPolicy: the old job and MM2 write "source.<topic>" on
// the target. The boundary check reads the renamed topics, and every source
// record ends up there exactly once.
func TestCutoverUnderDefaultPolicy(t *testing.T) {
	sc, ctx := newTestScenario(t, "dp-", "default")
	if got, want := sc.targetTopic("dp-orders"), "source.dp-orders"; got != want { // the policy, whatever the prefix
		t.Fatalf("target topic %q, want %q", got, want)
	}
	if err := sc.cli.runAll(ctx); err != nil {
		t.Fatalf("cutover: %v", err)
	}
	res, err := sc.finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.err(); err != nil || res.Records == 0 {
		t.Fatalf("%d records: %v", res.Records, err)
	}
	t.Logf("%d source records on source.* topics, 0 lost, 0 duplicated", res.Records)
}
