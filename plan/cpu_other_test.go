//go:build !unix

package plan_test

import (
	"testing"
	"time"
)

// cpuTime is not measured here: the cpu-ns/op metric reads 0.
func cpuTime(*testing.B) time.Duration { return 0 }
