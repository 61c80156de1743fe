package release

import (
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// maxLayer bounds what is read of one pulled layer: a registry that
// serves more is refused, not buffered.
const maxLayer = 64 << 20

// readAll reads a layer's blob as stored, up to maxLayer: an artefact's
// layer is a file, which a gzipped one (an archive) is too, so it is never
// decompressed.
func readAll(l v1.Layer) ([]byte, error) {
	rc, err := l.Compressed()
	if err != nil {
		return nil, fmt.Errorf("opening: %w", err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxLayer+1))
	if err != nil {
		return nil, fmt.Errorf("reading: %w", err)
	}
	if len(b) > maxLayer {
		return nil, fmt.Errorf("larger than %d bytes", maxLayer)
	}
	return b, nil
}
