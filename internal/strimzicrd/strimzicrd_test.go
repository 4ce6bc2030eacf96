package strimzicrd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGenerate makes the CRDs in a fresh cache directory (Maven's local
// repository keeps the jars between runs) and checks each file is the v1
// CRD of its kind with the fields the cutover's resources use.
func TestGenerate(t *testing.T) {
	if testing.Short() {
		t.Skip("fetches from Maven Central and runs Java")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	dir, err := Generate(ctx, t.TempDir(), Version)
	if (errors.Is(err, ErrNoJava21) || errors.Is(err, ErrNoMaven)) && os.Getenv("CI") != "true" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("generated in %v", time.Since(start).Round(time.Millisecond))
	for kind, f := range Files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"kind: CustomResourceDefinition", "    kind: " + kind + "\n", "  - name: v1\n", "alterOffsets:", "listOffsets:", "- stopped"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s has no %q", f, want)
			}
		}
	}
}
