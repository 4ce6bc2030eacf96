package main

import "testing"

func TestSplitImage(t *testing.T) {
	for _, tc := range []struct{ image, repository, tag string }{
		{"apache/kafka:4.3.1", "apache/kafka", "4.3.1"},
		{"apache/kafka", "apache/kafka", "latest"},
		{"localhost:5000/kafka", "localhost:5000/kafka", "latest"},
		{"localhost:5000/kafka:4.3.1", "localhost:5000/kafka", "4.3.1"},
		{"localhost/mm2cutover-kafka:0123abcd", "localhost/mm2cutover-kafka", "0123abcd"},
	} {
		if repository, tag := splitImage(tc.image); repository != tc.repository || tag != tc.tag {
			t.Errorf("splitImage(%q) = %q, %q; want %q, %q", tc.image, repository, tag, tc.repository, tc.tag)
		}
	}
}

// TestUsage pins the usage errors, which need no engine: they are checked
// before the client is made.
func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"pull"}, {"stop", "id"}, {"kill"}, {"ping", "extra"}} {
		if code, err := run(args); code != exitUsage || err == nil {
			t.Errorf("run(%q) = %d, %v; want exit status %d and an error", args, code, err, exitUsage)
		}
	}
}
