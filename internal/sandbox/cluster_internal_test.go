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

func TestWorkerHeap(t *testing.T) {
	for _, c := range []struct {
		xmx   string
		valid bool
		opts  string
	}{
		{"", true, heapFlags}, // the brokers' heap
		{"2g", true, "-Xms128m -Xmx2g"},
		{"1536m", true, "-Xms128m -Xmx1536m"},
		{"2G", true, "-Xms128m -Xmx2G"},
		{"g", false, ""},
		{"2gb", false, ""},
		{"-2g", false, ""},
		{"0m", false, ""},
		{"2g -XX:+Foo", false, ""}, // one size, never more flags
	} {
		if got := validHeap(c.xmx); got != c.valid {
			t.Errorf("validHeap(%q) = %v, want %v", c.xmx, got, c.valid)
		}
		if c.valid {
			if got := workerHeap(c.xmx); got != c.opts {
				t.Errorf("workerHeap(%q) = %q, want %q", c.xmx, got, c.opts)
			}
		}
	}
}
