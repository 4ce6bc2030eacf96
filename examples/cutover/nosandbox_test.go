//go:build !sandbox

package main

import (
	"os"
	"testing"
)

// TestSandboxTestsNeedTag stands for the tests of this package that run the
// cutover on the sandbox: they are built with -tags sandbox only, as
// scripts/test does. Without the tag it skips (and fails under CI=true,
// where a skip fails the run), so that a run that leaves them out says so.
func TestSandboxTestsNeedTag(t *testing.T) {
	msg := "the sandbox tests of examples/cutover are built with -tags sandbox: go test -tags sandbox ./examples/cutover"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
