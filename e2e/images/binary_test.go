package images

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// TestBinaryImage turns a static binary into an image and refuses one that
// the node could not run: dynamically linked, or for another architecture.
func TestBinaryImage(t *testing.T) {
	root, dir := repoRoot(t), t.TempDir()
	static := filepath.Join(dir, "static", "sandbox")
	if err := compile(context.Background(), root, static, "./e2e/cmd/sandbox", runtime.GOARCH); err != nil {
		t.Fatal(err)
	}
	tarPath, ref, err := BinaryImage(static, "", filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	if ref != Domain+"/sandbox:dev" {
		t.Errorf("default reference %s", ref)
	}
	img, err := tarball.ImageFromPath(tarPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := inspectImage(img)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := Machine(runtime.GOARCH); p.Machine != want || !p.Static || p.Entrypoint[0] != "/sandbox" || p.User != NonrootUser || p.ConfigArch != runtime.GOARCH {
		t.Errorf("image of a static binary: %+v", p)
	}

	other := "arm64"
	if runtime.GOARCH == "arm64" {
		other = "amd64"
	}
	foreign := filepath.Join(dir, "foreign", "sandbox")
	if err := compile(context.Background(), root, foreign, "./e2e/cmd/sandbox", other); err != nil {
		t.Fatal(err)
	}
	if _, _, err := BinaryImage(foreign, "", filepath.Join(dir, "out")); err == nil || !strings.Contains(err.Error(), "binary; the node runs") {
		t.Errorf("a %s binary: %v", other, err)
	}
	// Any dynamically linked program of the machine's will do.
	dynamic, err := exec.LookPath("ls")
	if err != nil {
		t.Skip("no ls to try a dynamic binary with")
	}
	if _, _, err := BinaryImage(dynamic, "", filepath.Join(dir, "out")); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		t.Errorf("a dynamically linked binary: %v", err)
	}
	if _, _, err := BinaryImage(static, "Not A Ref", filepath.Join(dir, "out")); err == nil {
		t.Error("an invalid reference was accepted")
	}
}
