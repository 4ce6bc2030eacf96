package strimzi

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTarSourceRefusesAnotherCommit: a tar git archive made of another
// commit than tag Version's is refused, and nothing lands in the cache.
func TestTarSourceRefusesAnotherCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	for _, args := range [][]string{
		{"init", "-q", repo},
		{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty", "-m", "not strimzi"},
		{"-C", repo, "archive", "--format=tar", "-o", filepath.Join(dir, "other.tar"), "HEAD"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	cached := filepath.Join(dir, "cache.tar")
	_, err := tarSource(context.Background(), filepath.Join(dir, "other.tar"), cached)
	if err == nil || !strings.Contains(err.Error(), "is not git archive's tar of commit "+Commit) {
		t.Fatalf("got %v, want a refusal naming commit %s", err, Commit)
	}
	if _, err := os.Stat(cached); err == nil {
		t.Error("the refused tar was kept")
	}
}
