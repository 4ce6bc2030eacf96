package verify_test

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// TestPrepare: the plan's own configuration on unchanged clusters passes,
// with the policy from the configuration and the clusters' IDs; each real
// problem is refused with its own error and kind: a configuration that is
// not the plan's, one that fails the lint (a plan built with it), an old
// job back in the group. A recent observation is reused, an old one not.
func TestPrepare(t *testing.T) {
	worker, source, target, p, config := exampleWorld()
	defer worker.Close()
	ctx := stepsCtx(t)
	c, err := connect.New(worker.URL())
	if err != nil {
		t.Fatal(err)
	}

	pre, err := verify.Prepare(ctx, c, source, target, p, config, verify.PrepareOptions{})
	policy, _ := offsets.PolicyOf(config)
	if err != nil || pre.Policy != policy || pre.Reached.Source() != "src-id" || pre.Reached.Target() != "tgt-id" || pre.Reused {
		t.Fatalf("Prepare of the plan's own configuration = %+v, %v; want the policy %v and the clusters' IDs", pre, err, policy)
	}

	changed := maps.Clone(config)
	changed["tasks.max"] = "7"
	_, err = verify.Prepare(ctx, c, source, target, p, changed, verify.PrepareOptions{})
	if changedErr := (*plan.ConfigChangedError)(nil); !errors.As(err, &changedErr) || errkind.Of(err) != errkind.Refused {
		t.Errorf("Prepare with tasks.max changed = %v (%s); want a *plan.ConfigChangedError, refused", err, errkind.Of(err))
	}

	tolerant, tolerantConfig, err := buildConnectorPlanWith(map[string]string{"errors.tolerance": "all"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = verify.Prepare(ctx, c, source, target, tolerant, tolerantConfig(), verify.PrepareOptions{})
	var lint *verify.LintError
	if !errors.As(err, &lint) || !errors.Is(err, verify.ErrCheckFailed) || errkind.Of(err) != errkind.CheckFailed ||
		!strings.Contains(err.Error(), "errors.tolerance") {
		t.Errorf("Prepare of a plan built with errors.tolerance=all = %v (%s); want a *verify.LintError naming the key", err, errkind.Of(err))
	}

	recent := pre.Observation
	again, err := verify.Prepare(ctx, c, source, target, p, config, verify.PrepareOptions{Previous: &recent, Now: recent.At.Add(time.Second)})
	if err != nil || !again.Reused || again.Reached != pre.Reached {
		t.Errorf("Prepare a second after an observation = %+v, %v; want it reused", again, err)
	}
	again, err = verify.Prepare(ctx, c, source, target, p, config, verify.PrepareOptions{Previous: &recent, Now: recent.At.Add(verify.ObservationReuse)})
	if err != nil || again.Reused {
		t.Errorf("Prepare %v after an observation = %+v, %v; want everything read again", verify.ObservationReuse, again, err)
	}
	// An observation no read made (filled by hand, naming other clusters)
	// is read again, never taken for a proof of the clusters.
	forged := verify.Observation{At: recent.At, SourceClusterID: "elsewhere", TargetClusterID: "tgt-id"}
	again, err = verify.Prepare(ctx, c, source, target, p, config, verify.PrepareOptions{Previous: &forged, Now: recent.At.Add(time.Second)})
	if err != nil || again.Reused || again.Reached.Source() != "src-id" {
		t.Errorf("Prepare with an observation filled by hand = %+v, %v; want everything read again", again, err)
	}

	source.Members["flink"] = 1 // the old job came back
	_, err = verify.Prepare(ctx, c, source, target, p, config, verify.PrepareOptions{})
	var stale *verify.StalePlanError
	if !errors.As(err, &stale) || errkind.Of(err) != errkind.Refused {
		t.Errorf("Prepare with a member in the group = %v (%s); want a *verify.StalePlanError, refused", err, errkind.Of(err))
	}
}
