package app

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/clientconf"
	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// TestReadOffsetsFileBounded: an -offsets-from csv:FILE is read up to 64
// MiB (it was read whole: /dev/zero filled the memory).
func TestReadOffsetsFileBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	if _, err := readOffsetsFile("/dev/zero"); !errors.Is(err, clientconf.ErrTooLarge) {
		t.Errorf("/dev/zero: %v, want ErrTooLarge", err)
	}
	if _, err := readOffsetsFile(t.TempDir()); err == nil {
		t.Error("a directory was read")
	}
}

// TestTasksMaxChosenByThePlan: -tasks-max 0 lets the plan step choose
// tasks.max by the source partitions (connect.TasksFor), the plan records
// it, and the steps after it take the plan's; a tasks.max given stays.
func TestTasksMaxChosenByThePlan(t *testing.T) {
	s := settings.Settings{
		Source: kafkaadmin.Config{BootstrapServers: []string{"source-1:9092"}}, Target: kafkaadmin.Config{BootstrapServers: []string{"target-1:9092"}},
		ConnectURL: "http://connect:8083", Connector: "mm2-orders", Group: "flink", Topics: []string{"orders"},
	}.WithDefaults()
	if s.TasksMax != 0 {
		t.Fatalf("WithDefaults set TasksMax %d, want 0 (chosen by the plan)", s.TasksMax)
	}
	pc := &Precheck{SourceClusterID: "src-id", TargetClusterID: "tgt-id", Group: offsets.GroupOffsets{},
		Bounds: map[offsets.SourcePartition]offsets.LogBounds{}, TargetEnds: map[offsets.SourcePartition]int64{}}
	for i := range int32(2500) {
		sp := offsets.SourcePartition{Topic: "orders", Partition: i}
		pc.Group[sp], pc.Bounds[sp], pc.TargetEnds[sp] = 5, offsets.LogBounds{Start: 0, End: 10}, 0
	}
	for _, tc := range []struct {
		name     string
		tasksMax int
		want     string
	}{{"chosen: 2,500 partitions", 0, "10"}, {"given", 7, "7"}} {
		t.Run(tc.name, func(t *testing.T) {
			s := s
			s.TasksMax = tc.tasksMax
			p, err := BuildPlan(s, pc, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if got := p.ConnectorConfig["tasks.max"]; got != tc.want {
				t.Fatalf("the plan records tasks.max %q, want %q", got, tc.want)
			}
			// A later step with the same flags builds the plan's configuration.
			if err := p.CheckConfig(mustConfig(t, s.WithPlan(p))); err != nil {
				t.Errorf("the settings with the plan: %v", err)
			}
			if tc.tasksMax == 0 {
				if err := p.CheckConfig(mustConfig(t, s)); err == nil {
					t.Error("tasks.max 1 (no plan) matches a plan that chose 5")
				}
			}
		})
	}
}

func mustConfig(t *testing.T, s settings.Settings) map[string]string {
	t.Helper()
	cfg, err := s.ConnectorConfig()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
