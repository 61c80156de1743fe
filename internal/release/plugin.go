package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// PluginBinary is the name kubectl finds the plugin by: `kubectl confighash`.
const PluginBinary = "kubectl-confighash"

// PluginPlatforms are the systems the kubectl plugin is archived for.
func PluginPlatforms() []v1.Platform {
	return []v1.Platform{
		{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"},
		{OS: "darwin", Architecture: "amd64"}, {OS: "darwin", Architecture: "arm64"},
	}
}

// Archive is one plugin archive as written.
type Archive struct {
	Platform v1.Platform
	Name     string // file name, in dist
	SHA256   string // hex
	Bytes    int64
}

// ArchiveName is the plugin archive's file name for a version and platform.
func ArchiveName(version string, p v1.Platform) string {
	return fmt.Sprintf("%s_%s_%s_%s.tar.gz", PluginBinary, version, p.OS, p.Architecture)
}

// ChecksumsName is the checksums file's name for a version.
func ChecksumsName(version string) string {
	return fmt.Sprintf("%s_%s_checksums.txt", PluginBinary, version)
}

// WriteArchive writes a tar.gz to dist holding binary as kubectl-confighash,
// executable, with fixed times so that the same binary gives the same
// archive.
func WriteArchive(dist, version string, p v1.Platform, binary string) (Archive, error) {
	data, err := os.ReadFile(binary)
	if err != nil {
		return Archive{}, fmt.Errorf("reading %s: %w", binary, err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	hdr := &tar.Header{Name: PluginBinary, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}
	if err := tw.WriteHeader(hdr); err != nil {
		return Archive{}, fmt.Errorf("archiving %s: %w", binary, err)
	}
	if _, err := tw.Write(data); err != nil {
		return Archive{}, fmt.Errorf("archiving %s: %w", binary, err)
	}
	if err := tw.Close(); err != nil {
		return Archive{}, fmt.Errorf("archiving %s: %w", binary, err)
	}
	if err := zw.Close(); err != nil {
		return Archive{}, fmt.Errorf("compressing %s: %w", binary, err)
	}
	a := Archive{Platform: p, Name: ArchiveName(version, p), Bytes: int64(buf.Len())}
	sum := sha256.Sum256(buf.Bytes())
	a.SHA256 = hex.EncodeToString(sum[:])
	if err := os.WriteFile(filepath.Join(dist, a.Name), buf.Bytes(), 0o644); err != nil {
		return Archive{}, fmt.Errorf("writing %s: %w", a.Name, err)
	}
	return a, nil
}

// WriteChecksums writes the archives' checksums to dist in sha256sum's
// format, so that `sha256sum -c` checks a download.
func WriteChecksums(dist, version string, archives []Archive) (string, error) {
	var b strings.Builder
	for _, a := range archives {
		fmt.Fprintf(&b, "%s  %s\n", a.SHA256, a.Name)
	}
	path := filepath.Join(dist, ChecksumsName(version))
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return "", fmt.Errorf("writing the checksums: %w", err)
	}
	return path, nil
}

// ParseChecksums reads a sha256sum-format file into file name → hex.
func ParseChecksums(b []byte) (map[string]string, error) {
	out := map[string]string{}
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		sum, file, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != sha256.Size*2 || file == "" {
			return nil, fmt.Errorf("checksums line %d: %q is not <sha256>  <file>", i+1, line)
		}
		if _, dup := out[file]; dup {
			return nil, fmt.Errorf("checksums line %d: %s twice", i+1, file)
		}
		out[file] = sum
	}
	return out, nil
}
