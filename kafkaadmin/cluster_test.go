package kafkaadmin

import (
	"errors"
	"testing"

	"github.com/mm2cutover/mm2cutover/internal/sandbox"
)

// TestSandboxLayout reads the brokers of each shared source (one broker
// plain, three secure), the layout of a topic, and the cluster ID through a
// client of the same settings at one of the other addresses.
func TestSandboxLayout(t *testing.T) { onBothSources(t, testSandboxLayout) }

func testSandboxLayout(t *testing.T, src *sandbox.Broker) {
	bs := src.Bootstrap()
	ctx := testCtx(t)
	a := testAdmin(t, bs)
	topic := uniq(t, "t")
	createTopic(t, a, bs, topic, 3)
	r := newTestClient(t, bs)

	ids, err := r.Brokers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != len(src.Addrs()) {
		t.Errorf("Brokers = %v, want %d brokers", ids, len(src.Addrs()))
	}
	layouts, err := r.TopicLayouts(ctx, topic, topic+"-missing")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := layouts, map[string]TopicLayout{topic: {Partitions: 3, ReplicationFactor: 1}}; len(got) != 1 || got[topic] != want[topic] {
		t.Errorf("TopicLayouts = %+v, want %+v (the missing topic absent)", got, want)
	}
	if _, err := r.TopicLayouts(ctx); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("TopicLayouts of no topic: %v, want ErrInvalidArgument", err)
	}

	want, err := r.ClusterID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	addrs := src.Addrs()
	other, err := r.WithBootstrap(addrs[len(addrs)-1:])
	if err != nil {
		t.Fatal(err)
	}
	if got, err := other.ClusterID(ctx); err != nil || got != want {
		t.Errorf("ClusterID at %v = %q, %v; want %q", addrs[len(addrs)-1:], got, err, want)
	}
	if _, err := r.WithBootstrap(nil); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("WithBootstrap(nil): %v, want ErrInvalidConfig", err)
	}
}
