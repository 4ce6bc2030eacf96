//go:build unix

package plan_test

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time (user and system) the process has used. On a
// shared machine it varies less than wall time: the benchmarks report it
// per op beside sec/op.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
