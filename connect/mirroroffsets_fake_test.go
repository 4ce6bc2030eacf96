package connect_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/connect/connectfake"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// A worker stores a partition with a key MirrorSourceConnector does not
// have as a partition of its own, which MM2 never reads (pinned on the real
// 4.3.1 worker by connectfake's conformance test). MirrorOffsets must not
// read it as the partition without that key: a read-back or a guard would
// then see the plan's offset where MM2 has none.
func TestMirrorOffsetsRefusesExtraKeys(t *testing.T) {
	fake := connectfake.New()
	defer fake.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := connect.New(fake.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := connect.MirrorSource{Name: "mm2", SourceBootstrap: "s:9092", TargetBootstrap: "t:9092", Topics: []string{"orders"}}.Config()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "mm2", cfg, connect.InitialStopped); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitStopped(ctx, "mm2"); err != nil {
		t.Fatal(err)
	}
	p := mirrorOffset("source", "orders", 0).Partition
	p["extra"] = "y"
	if _, err := c.AlterOffsets(ctx, "mm2", []connect.Offset{{Partition: p, Offset: map[string]any{connect.MirrorKeyOffset: int64(41)}}}); err != nil {
		t.Fatal(err)
	}
	want := []offsets.ConnectOffset{{Partition: offsets.ConnectPartition{Cluster: "source", Topic: "orders", Partition: 0}, Offset: offsets.NewMirrorOffset(41)}}
	if got, err := c.MirrorOffsets(ctx, "mm2"); !errors.Is(err, connect.ErrNotMirrorOffset) || !errors.Is(err, offsets.ErrMalformed) {
		t.Errorf("MirrorOffsets = %v, %v; want ErrNotMirrorOffset and offsets.ErrMalformed", got, err)
	}
	if rb, err := c.WaitMirrorOffsets(ctx, "mm2", want); !errors.Is(err, connect.ErrNotMirrorOffset) {
		t.Errorf("WaitMirrorOffsets = %v, %v; want ErrNotMirrorOffset at once", rb, err)
	}
}
