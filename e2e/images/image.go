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
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
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
	// LinkFlags are added to the linker's flags, e.g. a release's
	// -X …app.version=v1.2.3.
	LinkFlags []string
}

// Build compiles the spec's package statically for this machine's
// architecture and writes the image as a `docker save`-style tarball to
// outDir/<base of Binary>.tar, returning its path, for `ctr images import`.
// root is the repository root, the go command's working directory.
func Build(ctx context.Context, root, outDir string, spec Spec) (string, error) {
	ref, err := name.ParseReference(spec.Ref)
	if err != nil {
		return "", fmt.Errorf("image reference %q: %w", spec.Ref, err)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", outDir, err)
	}
	bin := filepath.Join(outDir, "bin-"+filepath.Base(spec.Package))
	if err := Compile(ctx, root, bin, spec, HostPlatforms()[0]); err != nil {
		return "", err
	}
	return writeTarball(bin, spec.Binary, runtime.GOARCH, ref, outDir)
}

// BuildIndex compiles the spec's package for each of platforms (nil means
// Platforms) and assembles an image index, one image per platform, each
// the same as Build's but for its architecture. The binaries land in outDir
// as bin-<package>-<arch>.
func BuildIndex(ctx context.Context, root, outDir string, spec Spec, platforms []v1.Platform) (v1.ImageIndex, error) {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", outDir, err)
	}
	if platforms == nil {
		platforms = Platforms()
	}
	idx := v1.ImageIndex(empty.Index)
	for _, p := range platforms {
		bin := filepath.Join(outDir, "bin-"+filepath.Base(spec.Package)+"-"+p.Architecture)
		if err := Compile(ctx, root, bin, spec, p); err != nil {
			return nil, err
		}
		img, err := imageOf(bin, spec.Binary, p.Architecture)
		if err != nil {
			return nil, fmt.Errorf("assembling %s for %s: %w", spec.Ref, p, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &p},
		})
	}
	// A Docker manifest list, since its images are Docker manifests (an
	// empty base's kind); registries and containerd take either.
	return mutate.IndexMediaType(idx, types.DockerManifestList), nil
}

// Platform is an image's platform.
type Platform = v1.Platform

// Platforms are the platforms an image index is built for: the two that
// Kubernetes nodes run on in practice.
func Platforms() []v1.Platform {
	return []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}
}

// HostPlatforms is this machine's platform alone, the node's: what the
// demo needs, which runs its images and ships none.
func HostPlatforms() []v1.Platform {
	return []v1.Platform{{OS: "linux", Architecture: runtime.GOARCH}}
}

// writeTarball puts a built binary in an image named ref and writes it to
// outDir/<base of path>.tar.
func writeTarball(bin, path, arch string, ref name.Reference, outDir string) (string, error) {
	img, err := imageOf(bin, path, arch)
	if err != nil {
		return "", fmt.Errorf("assembling %s: %w", ref, err)
	}
	out := filepath.Join(outDir, filepath.Base(path)+".tar")
	if err := tarball.WriteToFile(out, ref, img); err != nil {
		return "", fmt.Errorf("writing %s: %w", out, err)
	}
	return out, nil
}

// compile builds pkg for linux/arch as Compile does.
func compile(ctx context.Context, root, out, pkg, arch string) error {
	return Compile(ctx, root, out, Spec{Package: pkg}, v1.Platform{OS: "linux", Architecture: arch})
}

// Compile builds spec's package for platform p the way the Dockerfile does:
// no cgo (so the binary needs no libc on an empty base, and cross-compiles
// without a C toolchain), trimmed paths and no symbol tables, plus the
// spec's LinkFlags. A release builds its kubectl plugin binaries with it
// too, for other systems than linux.
func Compile(ctx context.Context, root, out string, spec Spec, p v1.Platform) error {
	ldflags := strings.Join(append([]string{"-s", "-w"}, spec.LinkFlags...), " ")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags="+ldflags, "-o", out, spec.Package)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s for %s: %w\n%s", spec.Package, p, err, b)
	}
	return nil
}

// imageOf puts the binary at path in a single layer on an empty base and sets
// the entrypoint, the user and the platform. The platform must be set:
// containerd imports and pulls only images for its own platform, and an
// empty base declares none.
func imageOf(bin, path, arch string) (v1.Image, error) {
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
	cfg.OS, cfg.Architecture = "linux", arch
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
