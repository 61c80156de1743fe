package images

import (
	"context"
	"path/filepath"
	"testing"
)

// TestIndexFromRegistry builds confighash's two-platform index, pushes it to
// the in-process registry and reads it back as a puller does: each
// platform's image must hold a static binary for that platform's
// architecture at the Dockerfile's entrypoint, run as its user.
func TestIndexFromRegistry(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiling the image takes a while")
	}
	ctx := context.Background()
	root := repoRoot(t)
	final := readDockerfile(t, filepath.Join(root, "Dockerfile"))
	spec := Confighash()
	if ep := final[len(final)-1].entrypoint; len(ep) != 1 || ep[0] != spec.Binary {
		t.Fatalf("Dockerfile ENTRYPOINT %q, harness binary %s", ep, spec.Binary)
	}
	idx, err := BuildIndex(ctx, root, t.TempDir(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := RegistryFor(t)
	if err := reg.Push(ctx, spec, idx); err != nil {
		t.Fatal(err)
	}
	pulled, err := reg.Index(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	imgs, err := Inspect(pulled)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range imgs {
		t.Logf("%s: layer %d bytes compressed, binary %d bytes, %s", p.Platform, p.LayerBytes, p.BinaryBytes, p.Machine)
	}
	if err := Check(imgs, spec.Binary, nil); err != nil {
		t.Error(err)
	}
}
