package images

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// NonrootUser is the user of the distroless nonroot base the Dockerfile
// ships on; the manifests' securityContext (runAsUser 65532) expects it.
const NonrootUser = "65532:65532"

// Spec says what goes into one image.
type Spec struct {
	// Ref names the image, e.g. "confighash.local/confighash:e2e". Pods use
	// it with imagePullPolicy IfNotPresent, so nothing is ever pulled.
	Ref string
	// Package is the Go main package to build, relative to the repository
	// root, e.g. "./cmd/confighash".
	Package string
	// Binary is where the executable lands in the image; it is also the
	// entrypoint.
	Binary string
}

// Build compiles the spec's package statically and writes the image as a
// `docker save`-style tarball to outDir/<base of Binary>.tar, returning its
// path. root is the repository root, the go command's working directory.
func Build(ctx context.Context, root, outDir string, spec Spec) (string, error) {
	ref, err := name.ParseReference(spec.Ref)
	if err != nil {
		return "", fmt.Errorf("image reference %q: %w", spec.Ref, err)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", outDir, err)
	}
	bin, err := compile(ctx, root, outDir, spec.Package)
	if err != nil {
		return "", err
	}
	img, err := imageOf(bin, spec.Binary)
	if err != nil {
		return "", fmt.Errorf("assembling %s: %w", spec.Ref, err)
	}
	out := filepath.Join(outDir, filepath.Base(spec.Binary)+".tar")
	if err := tarball.WriteToFile(out, ref, img); err != nil {
		return "", fmt.Errorf("writing %s: %w", out, err)
	}
	return out, nil
}

// compile builds pkg the way the Dockerfile does: no cgo (so the binary needs
// no libc on an empty base), trimmed paths and no symbol tables.
func compile(ctx context.Context, root, outDir, pkg string) (string, error) {
	out := filepath.Join(outDir, "bin-"+filepath.Base(pkg))
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %w\n%s", pkg, err, b)
	}
	return out, nil
}

// imageOf puts the binary at path in a single layer on an empty base and sets
// the entrypoint and user. The platform must be set: containerd imports only
// images for its own platform, and an empty base declares none.
func imageOf(bin, path string) (v1.Image, error) {
	layerTar, err := layerWith(bin, path)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("making layer: %w", err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, fmt.Errorf("appending layer: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	cfg.Config.Entrypoint = []string{path}
	cfg.Config.User = NonrootUser
	return mutate.ConfigFile(img, cfg)
}

// layerWith is the layer's file system: just the binary. The layer tar is the
// one piece go-containerregistry takes from its caller.
func layerWith(bin, path string) ([]byte, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", bin, err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{
		Name:     filepath.Clean(path)[1:], // layer paths are relative to /
		Mode:     0o755,
		Size:     int64(len(data)),
		Typeflag: tar.TypeReg,
		ModTime:  time.Unix(0, 0), // reproducible digests
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, fmt.Errorf("writing layer header: %w", err)
	}
	if _, err := tw.Write(data); err != nil {
		return nil, fmt.Errorf("writing layer: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("closing layer: %w", err)
	}
	return buf.Bytes(), nil
}
