//go:build sandbox

package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
	"github.com/mm2cutover/mm2cutover/plan"
)

// TestApplyWhenTheWorkerDies kills the only Connect worker in the middle of
// an apply, as a node failure would, and runs apply again once the worker
// is back, as the Job's retry does:
//
//   - right after the create, before the connector is seen STOPPED: apply
//     says it cannot tell, because the worker did not answer (exit 1),
//     instead of "not STOPPED ... stop it with PUT .../stop";
//   - right after the PATCH: the read-back never reads; apply says the
//     offsets could not be read (exit 1, worth a retry, and the audit's
//     read-back record says not read), instead of a failed check (exit 3,
//     "0 match, 0 wrong value, 0 missing, 0 unexpected"), which the Job's
//     podFailurePolicy failed at once.
//
// Each time the retry converges: it applies, or finds the plan applied.
func TestApplyWhenTheWorkerDies(t *testing.T) {
	sb := sandboxtest.Dedicated(t, sandbox.Config{Workers: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(testWriter{t}, nil))
	sc, err := newScenario(sb, log, &bytes.Buffer{}, false, "dies-", "identity")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sc.dir)
	if err := sc.start(ctx); err != nil {
		t.Fatal(err)
	}
	defer sc.traffic.Stop()
	if err := sc.newCLI(); err != nil {
		t.Fatal(err)
	}
	w := sb.Workers()[0]
	// A client that gives up on an unreachable worker after seconds, not
	// the default two minutes, so that the test does not wait for that.
	quick, err := connect.New(sb.ConnectURL(), connect.WithRetry(connect.Retry{Elapsed: 5 * time.Second}), connect.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		at   string   // the Apply step where the worker dies
		says []string // what the failed apply says
		not  string   // and what it must not say
		then string   // the retry's guard
	}{
		{"created", []string{"cannot tell whether connector", "the worker did not answer"}, "stop it with PUT", plan.GuardApply.String()},
		{"after-patch", []string{"could not be read back", "none of", "run apply again once the worker answers"}, "0 match", plan.GuardAlreadyApplied.String()},
	} {
		t.Run(tc.at, func(t *testing.T) {
			c := *sc.cli
			env := *c.env
			env.Connect = quick
			c.env = &env
			c.s.Connector = sc.connector + "-" + tc.at
			c.s.ReadBackTimeout = 10 * time.Second
			c.o.planPath = filepath.Join(sc.dir, "plan-"+tc.at+".json")
			c.o.auditPath = filepath.Join(sc.dir, "plan-"+tc.at+".audit.jsonl")
			p, err := c.buildPlan(ctx)
			if err != nil {
				t.Fatal(err)
			}
			c.s.OnStep = func(step string) {
				if step == tc.at {
					t.Logf("killing the worker at %s", step)
					if err := w.Kill(); err != nil {
						t.Error(err)
					}
				}
			}
			err = c.applyPlan(ctx, p)
			t.Logf("apply with the worker killed at %s: exit %d: %v", tc.at, app.ExitStatus(err), err)
			if app.ExitStatus(err) != app.ExitError {
				t.Errorf("apply with the worker killed at %s: %v (exit %d), want 1 (worth a retry)", tc.at, err, app.ExitStatus(err))
			}
			for _, want := range tc.says {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("the failed apply does not say %q: %v", want, err)
				}
			}
			if err != nil && strings.Contains(err.Error(), tc.not) {
				t.Errorf("the failed apply says %q: %v", tc.not, err)
			}
			if tc.at == "after-patch" {
				recs := auditRecords(t, c.o.auditPath, "read-back")
				if len(recs) != 1 {
					t.Fatalf("read-back records: %v, want one", recs)
				}
				if d := recs[0]["detail"].(map[string]any); d["read"] != false || !strings.Contains(d["summary"].(string), "not read") {
					t.Errorf("the read-back record does not say it did not read: %v", d)
				}
			}

			if err := w.Start(ctx); err != nil {
				t.Fatalf("restart the worker: %v", err)
			}
			c.s.OnStep = nil
			res, err := app.Apply(ctx, c.env, c.s, p, app.NewAudit(nil))
			if err != nil {
				t.Fatalf("apply again once the worker is back: %v", err)
			}
			if want, _ := p.ExpectedOffsets(); res.Guard != tc.then || res.Matched != len(want) {
				t.Errorf("apply again: guard %s with %d matched, want %s with %d", res.Guard, res.Matched, tc.then, len(want))
			}
		})
	}
}

// TestResumeOfAConnectorThatFails resumes a connector whose source client
// has a JAAS setting Kafka cannot parse: MirrorSourceConnector fails as it
// starts. resume -yes and verify say so as a failed check (exit 3, as the
// retried resume is refused with 4: no retry helps), with the cause from
// deep in the worker's trace and what to do; before, they exited 1 with
// the trace's first line only. The client's password never shows.
func TestResumeOfAConnectorThatFails(t *testing.T) {
	sc, ctx := newTestScenario(t, "failed-", "identity")
	const password = "failed-s3cret-5af2"
	c := *sc.cli
	c.s.SourceClient = map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
		"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule bogus username="mm2" password="` + password + `";`}
	t.Cleanup(func() { removeForeign(ctx, t, c.env.Connect, c.s.Connector) })
	p, err := c.buildPlan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.applyPlan(ctx, p); err != nil {
		t.Fatal(err)
	}
	const cause = "Invalid login module control flag 'bogus' in JAAS config"
	var said []string
	for _, step := range []struct {
		name string
		run  func(context.Context) error
		exit int
		says []string
	}{
		{"resume -yes", func(ctx context.Context) error { return c.resumePlan(ctx, p) }, app.ExitCheckFailed,
			[]string{"FAILED after its resume", cause, "roll back after resume"}},
		{"verify", c.verify, app.ExitCheckFailed, []string{"is FAILED", cause, "restart"}},
		{"resume -yes again", func(ctx context.Context) error { return c.resumePlan(ctx, p) }, app.ExitRefused,
			[]string{"is FAILED, not STOPPED", "restart?includeTasks=true&onlyFailed=true", "roll back after resume"}},
	} {
		err := step.run(ctx)
		t.Logf("%s: exit %d: %v", step.name, app.ExitStatus(err), err)
		if app.ExitStatus(err) != step.exit {
			t.Errorf("%s of a connector that fails: exit %d, want %d: %v", step.name, app.ExitStatus(err), step.exit, err)
		}
		for _, want := range step.says {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s does not say %q: %v", step.name, want, err)
			}
		}
		if err != nil {
			said = append(said, err.Error())
		}
	}
	if refusals := auditRecords(t, c.o.auditPath, "refuse"); len(refusals) != 1 {
		t.Errorf("refuse records %v, want the one of the resume retried", refusals)
	}
	audit, err := os.ReadFile(c.o.auditPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range append(said, string(audit)) {
		if strings.Contains(out, password) {
			t.Errorf("the client's password shows: %s", out)
		}
	}
}
