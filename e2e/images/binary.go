package images

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/google/go-containerregistry/pkg/name"
)

// BinaryImage puts a local static binary in an image, as Build does with a
// binary it compiled: at /<its file name>, as the entrypoint, run as
// NonrootUser. It writes the tarball for `ctr images import` to outDir and
// returns its path. ref names the image; empty means
// <Domain>/<file name>:dev. The binary must be static (an empty base has no
// libc) and for this machine's architecture (the node's); anything else is
// refused here rather than failing later as a pod that cannot start.
func BinaryImage(bin, ref, outDir string) (tarPath, imageRef string, err error) {
	base := filepath.Base(bin)
	if ref == "" {
		ref = Domain + "/" + base + ":dev"
	}
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return "", "", fmt.Errorf("image reference %q (name it with a reference of lower-case letters, digits, '.', '_' and '-'): %w", ref, err)
	}
	f, err := os.Open(bin)
	if err != nil {
		return "", "", fmt.Errorf("opening %s: %w", bin, err)
	}
	defer f.Close()
	machine, static, err := readELF(f)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", bin, err)
	}
	if want, _ := Machine(runtime.GOARCH); machine != want {
		return "", "", fmt.Errorf("%s is a %s binary; the node runs %s (%s)", bin, machine, want, runtime.GOARCH)
	}
	if !static {
		return "", "", fmt.Errorf("%s is dynamically linked, and the image has no libc; build it static (for Go: CGO_ENABLED=0 go build)", bin)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", "", fmt.Errorf("creating %s: %w", outDir, err)
	}
	tarPath, err = writeTarball(bin, "/"+base, runtime.GOARCH, parsed, outDir)
	if err != nil {
		return "", "", err
	}
	return tarPath, parsed.Name(), nil
}
