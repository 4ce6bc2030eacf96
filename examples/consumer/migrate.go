// Package migrationtool is another team's migration tool, as a platform
// team writes it on the mm2cutover library: the guarded steps of a
// cutover, with the team's own record of the change and its own approval.
// It is a module of its own, so that its go.sum shows what a consumer of
// the library inherits, and its tests run on the library's exported fakes
// (connect/connectfake and kafkaadmin/kafkafake).
package migrationtool

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/mm2cutover/mm2cutover/cutover"
	"github.com/mm2cutover/mm2cutover/plan"
)

// Run runs one step of the cutover of p: "apply", "resume" or "rollback"
// (into group, the consumer group the old job restarts from, once MM2 has
// run). Each write is recorded in log, one JSON line before it is sent;
// resume and rollback write only when approved.
func Run(ctx context.Context, step string, clients cutover.Clients, p *plan.Plan, config map[string]string, group string, approved bool, log io.Writer) error {
	enc := json.NewEncoder(log)
	c, err := cutover.Open(ctx, clients, p, config, cutover.Options{
		Record:  func(_ context.Context, e cutover.Event) error { return enc.Encode(e) },
		Approve: func(context.Context, cutover.Intent) (bool, error) { return approved, nil },
	})
	if err != nil {
		return err
	}
	switch step {
	case "apply":
		_, err = c.Apply(ctx)
	case "resume":
		_, err = c.Resume(ctx)
	case "rollback":
		_, err = c.Rollback(ctx, group)
	default:
		err = fmt.Errorf("unknown step %q", step)
	}
	return err
}
