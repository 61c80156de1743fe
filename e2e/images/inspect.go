package images

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// PlatformImage is what one platform's image of an index holds: its
// platform as the index declares it and as its config says, its entrypoint
// and user, and the binary at the entrypoint as read from its layer.
type PlatformImage struct {
	Platform   v1.Platform // from the index
	ConfigArch string      // from the image's config
	Entrypoint []string
	User       string
	// Machine is the binary's ELF machine, e.g. elf.EM_AARCH64.
	Machine elf.Machine
	// Static is true when the binary asks for no ELF interpreter.
	Static bool
	// LayerBytes is the compressed layer as pushed and pulled;
	// BinaryBytes the uncompressed binary.
	LayerBytes, BinaryBytes int64
}

// Machine is the ELF machine a Go architecture's binaries are for; ok is
// false for an architecture this harness does not build.
func Machine(arch string) (m elf.Machine, ok bool) {
	switch arch {
	case "amd64":
		return elf.EM_X86_64, true
	case "arm64":
		return elf.EM_AARCH64, true
	}
	return 0, false
}

// Inspect reads every image of an index: its config, and the ELF header of
// the file at its entrypoint in its single layer. It reads the index as
// given, so an index from a registry is inspected as a client pulls it.
func Inspect(idx v1.ImageIndex) ([]PlatformImage, error) {
	manifest, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("reading the index: %w", err)
	}
	var out []PlatformImage
	for _, desc := range manifest.Manifests {
		if desc.Platform == nil {
			return nil, fmt.Errorf("index entry %s declares no platform", desc.Digest)
		}
		img, err := idx.Image(desc.Digest)
		if err != nil {
			return nil, fmt.Errorf("reading the %s image: %w", desc.Platform, err)
		}
		p, err := inspectImage(img)
		if err != nil {
			return nil, fmt.Errorf("the %s image: %w", desc.Platform, err)
		}
		p.Platform = *desc.Platform
		out = append(out, p)
	}
	return out, nil
}

func inspectImage(img v1.Image) (PlatformImage, error) {
	var p PlatformImage
	cfg, err := img.ConfigFile()
	if err != nil {
		return p, fmt.Errorf("reading config: %w", err)
	}
	p.ConfigArch, p.Entrypoint, p.User = cfg.Architecture, cfg.Config.Entrypoint, cfg.Config.User
	if len(p.Entrypoint) != 1 {
		return p, fmt.Errorf("entrypoint %q is not one binary", p.Entrypoint)
	}
	layers, err := img.Layers()
	if err != nil {
		return p, fmt.Errorf("listing layers: %w", err)
	}
	if len(layers) != 1 {
		return p, fmt.Errorf("%d layers, want the binary's one", len(layers))
	}
	if p.LayerBytes, err = layers[0].Size(); err != nil {
		return p, fmt.Errorf("layer size: %w", err)
	}
	bin, err := fileInLayer(layers[0], p.Entrypoint[0])
	if err != nil {
		return p, err
	}
	p.BinaryBytes = int64(len(bin))
	if p.Machine, p.Static, err = readELF(bytes.NewReader(bin)); err != nil {
		return p, fmt.Errorf("%s: %w", p.Entrypoint[0], err)
	}
	return p, nil
}

// readELF reads a binary's ELF header: the machine it is for, and whether
// it is static (asks for no ELF interpreter, so runs on an empty base).
func readELF(r io.ReaderAt) (elf.Machine, bool, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return 0, false, fmt.Errorf("not an ELF binary: %w", err)
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return f.Machine, false, nil
		}
	}
	return f.Machine, true, nil
}

// fileInLayer returns the content of the file at path in a layer.
func fileInLayer(layer v1.Layer, path string) ([]byte, error) {
	rc, err := layer.Uncompressed()
	if err != nil {
		return nil, fmt.Errorf("opening layer: %w", err)
	}
	defer rc.Close()
	want := filepath.Clean(path)[1:]
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s is not in the layer", path)
		}
		if err != nil {
			return nil, fmt.Errorf("reading layer: %w", err)
		}
		if filepath.Clean(hdr.Name) == want {
			b, err := io.ReadAll(tr)
			if err != nil {
				return nil, fmt.Errorf("reading %s from the layer: %w", path, err)
			}
			return b, nil
		}
	}
}

// Check holds an index to what the node and the Dockerfile expect: every
// platform of platforms (nil means Platforms), each image's config for the platform the index
// names, entrypoint binary and user, and a static binary for that
// platform's architecture.
func Check(imgs []PlatformImage, binary string, platforms []v1.Platform) error {
	if platforms == nil {
		platforms = Platforms()
	}
	var errs []error
	seen := map[string]bool{}
	for _, p := range imgs {
		seen[p.Platform.String()] = true
		want, ok := Machine(p.Platform.Architecture)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("unexpected platform %s", p.Platform))
		case p.Machine != want:
			errs = append(errs, fmt.Errorf("%s: %s is a %s binary, want %s", p.Platform, binary, p.Machine, want))
		}
		if p.ConfigArch != p.Platform.Architecture {
			errs = append(errs, fmt.Errorf("%s: the image config says %s", p.Platform, p.ConfigArch))
		}
		if !p.Static {
			errs = append(errs, fmt.Errorf("%s: %s is dynamically linked", p.Platform, binary))
		}
		if len(p.Entrypoint) != 1 || p.Entrypoint[0] != binary {
			errs = append(errs, fmt.Errorf("%s: entrypoint %q, want %s", p.Platform, p.Entrypoint, binary))
		}
		if p.User != NonrootUser {
			errs = append(errs, fmt.Errorf("%s: user %q, want %s", p.Platform, p.User, NonrootUser))
		}
	}
	for _, want := range platforms {
		if !seen[want.String()] {
			errs = append(errs, fmt.Errorf("no image for %s", want))
		}
	}
	return errors.Join(errs...)
}
