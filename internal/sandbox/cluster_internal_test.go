package sandbox

import "testing"

func TestReplicationFactor(t *testing.T) {
	for _, c := range []struct{ nodes, cfg, want int }{
		{1, 0, 1},
		{3, 0, 3}, // every node by default: leaders spread and can move
		{4, 1, 1}, // spread for scale: one replica each
		{3, 2, 2},
		{2, 5, 2}, // capped at the cluster's size
		{3, -1, 3},
	} {
		if got := replicationFactor(c.nodes, c.cfg); got != c.want {
			t.Errorf("replicationFactor(%d nodes, ReplicationFactor %d) = %d, want %d", c.nodes, c.cfg, got, c.want)
		}
	}
}
