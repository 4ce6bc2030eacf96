package app

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/connect/connectfake"
)

// TestT43FailedPatchRanNoReadBack: after a PATCH the worker refused, no
// read-back ran, and the result says so (ReadBackRan false, and in its
// JSON), instead of a read-back of 0 matching partitions.
func TestT43FailedPatchRanNoReadBack(t *testing.T) {
	w, ctx := newStepsWorld(t), context.Background()
	p := w.plan(t)
	w.worker.FailNext("PATCH", "/connectors/mm2-orders/offsets", 1, connectfake.ForwardingFailed)
	res, err := Apply(ctx, w.env, w.s, p, NewAudit(&w.audit))
	if err == nil {
		t.Fatal("the PATCH failed, Apply did not")
	}
	if res == nil || res.Patched || res.ReadBackRan || res.Matched != 0 {
		t.Fatalf("result %+v, want no PATCH and no read-back", res)
	}
	if got := w.steps(t); slices.Contains(got, "read-back") {
		t.Errorf("audit %v records a read-back", got)
	}
	b, _ := json.Marshal(res)
	if !strings.Contains(string(b), `"read_back_ran":false`) {
		t.Errorf("JSON %s does not say the read-back did not run", b)
	}
	res, err = Apply(ctx, w.env, w.s, p, NewAudit(&w.audit))
	if err != nil || !res.ReadBackRan || res.Matched != 2 {
		t.Errorf("apply again: %+v, %v; want a read-back of 2", res, err)
	}
}
