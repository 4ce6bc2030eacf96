//go:build sandbox

package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// waitFor polls cond every interval until it returns nil, and fails the
// test with cond's last error when limit passes or ctx ends first. Tests
// wait for what they need with it instead of sleeping a time that is
// enough only on an idle machine.
func waitFor(ctx context.Context, t *testing.T, what string, limit, interval time.Duration, cond func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		err := cond(ctx)
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not within %v: %v", what, limit, err)
		case <-time.After(interval):
		}
	}
}

// waitReplicatedPast waits until the offsets Connect stores for the
// connector (MM2's last copied record M, GET .../offsets) are past from
// (next offsets C) on at least n of its partitions: MM2 copied new records
// there and committed them.
func waitReplicatedPast(ctx context.Context, t *testing.T, c *connect.Client, connector string, from map[offsets.SourcePartition]int64, n int) {
	t.Helper()
	waitFor(ctx, t, fmt.Sprintf("MM2 (%s) copying past C on %d partitions", connector, n), 3*time.Minute, time.Second, func(ctx context.Context) error {
		got, err := c.MirrorOffsets(ctx, connector)
		if err != nil {
			return err
		}
		past := 0
		for _, o := range got {
			c, ok := from[o.Partition.Source()]
			if m, set := o.Offset.Get(); ok && set && m+1 > c {
				past++
			}
		}
		if past < n {
			return fmt.Errorf("MM2's offsets are past C on %d partitions", past)
		}
		return nil
	})
}
