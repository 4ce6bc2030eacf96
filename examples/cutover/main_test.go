package main

import (
	"os"
	"testing"

	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
)

// TestMain runs the command line itself when the test binary is started as
// it (so that a test can signal it as a process), and the tests otherwise.
func TestMain(m *testing.M) {
	if os.Getenv("MM2CUTOVER_CLI_TEST_AS_MAIN") == "1" {
		main()
		return
	}
	sandboxtest.Main(m)
}
