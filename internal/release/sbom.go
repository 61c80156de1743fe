package release

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
)

// WriteSBOM writes the CycloneDX JSON SBOM of a Go binary to out, from the
// module list the binary carries (go version -m), so that it names exactly
// the module versions linked into what the image runs. version is the main
// module's version, which a binary built from a work tree records as
// (devel).
func WriteSBOM(ctx context.Context, cyclonedx, binary, version, out string) error {
	cmd := exec.CommandContext(ctx, cyclonedx, "bin", "-json", "-version", version, "-output", out, binary)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s bin %s: %w\n%s", cyclonedx, binary, err, b)
	}
	return nil
}

// sbomImage is the image cosign's `attach sbom` pushes: one layer, the
// SBOM document.
func sbomImage(path string) (v1.Image, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the SBOM: %w", err)
	}
	img, err := mutate.AppendLayers(artefactBase(), static.NewLayer(b, cycloneDXType))
	if err != nil {
		return nil, fmt.Errorf("assembling the SBOM image: %w", err)
	}
	return img, nil
}

// Component is a CycloneDX component as the SBOM names it.
type Component struct {
	Type    string `json:"type"`
	Name    string `json:"name"`
	Version string `json:"version"`
	PURL    string `json:"purl"`
}

// SBOM is the part of a CycloneDX document a check reads: the subject
// (metadata.component) and what it is made of.
type SBOM struct {
	BOMFormat string `json:"bomFormat"`
	Metadata  struct {
		Component Component `json:"component"`
	} `json:"metadata"`
	Components []Component `json:"components"`
}

// ParseSBOM reads a CycloneDX JSON document.
func ParseSBOM(b []byte) (SBOM, error) {
	var s SBOM
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("parsing the SBOM: %w", err)
	}
	if s.BOMFormat != "CycloneDX" {
		return s, fmt.Errorf("the SBOM's bomFormat is %q, not CycloneDX", s.BOMFormat)
	}
	return s, nil
}

// Version is the version the SBOM gives module path, "" if it names none.
func (s SBOM) Version(path string) string {
	if s.Metadata.Component.Name == path {
		return s.Metadata.Component.Version
	}
	for _, c := range s.Components {
		if c.Name == path {
			return c.Version
		}
	}
	return ""
}
