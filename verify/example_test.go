package verify_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// A guarded apply of a plan built earlier: refuse it if the clusters moved
// since, if the connector is not the plan's or not STOPPED, or if it holds
// offsets the plan does not set; write once; read back until equal. The
// connector was created STOPPED with the plan's configuration
// (connect.InitialStopped). Resuming it is a separate decision.
func Example_guardedApply() {
	ctx := context.Background()
	f, err := os.Open("plan.json")
	if err != nil {
		log.Fatal(err)
	}
	p, err := plan.Decode(f) // validates the plan and its fingerprint
	f.Close()
	if err != nil {
		log.Fatal(err)
	}
	source, _ := kafkaadmin.NewClient(kafkaadmin.Config{BootstrapServers: []string{"source-kafka:9092"}})
	target, _ := kafkaadmin.NewClient(kafkaadmin.Config{BootstrapServers: []string{"target-kafka:9092"}})
	c, _ := connect.New("http://connect:8083")
	name := p.ConnectorName

	// The clusters as the plan saw them: same cluster IDs, no group member,
	// commits and log bounds where they were, nothing written to the target.
	policy := offsets.ReplicationPolicy{Kind: offsets.IdentityPolicy}
	obs, err := verify.Observe(ctx, source, target, p, policy, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := verify.Recheck(p, obs); err != nil {
		log.Fatal(err) // a *verify.StalePlanError naming each problem
	}
	// The connector is the plan's (name, clusters, alias, topics,
	// configuration digest) and STOPPED. Prove it again before every write.
	clusters := verify.Clusters{Source: obs.SourceClusterID, Target: obs.TargetClusterID}
	if _, err := verify.ConfirmConnector(ctx, c, p, name, clusters); err != nil {
		log.Fatal(err) // a *verify.ForeignConnectorError: never write another flow's connector
	}
	if st, err := c.Status(ctx, name); err != nil || st.Connector.State != connect.StateStopped || len(st.Tasks) > 0 {
		log.Fatalf("connector %s is not STOPPED: %v %v", name, st, err)
	}
	// The guard: only offsets the plan sets to the same values may be there.
	existing, err := c.MirrorOffsets(ctx, name)
	if err != nil {
		log.Fatal(err)
	}
	action, err := p.Guard(existing)
	if err != nil {
		log.Fatal(err) // a *plan.StaleOffsetsError: never re-apply over them
	}
	if action == plan.GuardApply {
		patch, err := p.ConnectOffsets()
		if err != nil {
			log.Fatal(err)
		}
		if _, err := c.AlterMirrorOffsets(ctx, name, patch); err != nil {
			log.Fatal(err)
		}
	}
	want, err := p.ExpectedOffsets()
	if err != nil {
		log.Fatal(err)
	}
	rb, err := c.WaitMirrorOffsets(ctx, name, want) // bound it with ctx
	if err != nil {
		log.Fatal(err) // a *connect.ReadBackError with what was read
	}
	fmt.Println(rb.Count(offsets.Match), "partitions hold the plan's offsets")
}
