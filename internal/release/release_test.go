package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"

	"github.com/confighash/confighash/e2e/images"
)

const testVersion = "v0.0.1-test.1"

// TestMakeRelease runs `make release` against a registry in this process,
// then pulls the release back and verifies it as a user would: the
// signature of the index digest with the public key, the signed SBOM
// naming confighash and its dependencies at go.mod's versions, every
// archive against the checksums and the krew manifest, and the plugin
// binary reporting the version. Then it tampers with what is in the
// registry, one thing at a time, and verification must fail.
func TestMakeRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles confighash for four platforms")
	}
	ctx := context.Background()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := images.StartRegistry(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := reg.Close(); err != nil {
			t.Error(err)
		}
	})
	keys, dist := t.TempDir(), t.TempDir()
	priv, pub, err := GenerateKeyPair(keys)
	if err != nil {
		t.Fatal(err)
	}
	registry := reg.Host() + "/confighash-test"

	start := time.Now()
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "release",
		"VERSION="+testVersion, "REGISTRY="+registry, "COSIGN_KEY="+priv, "DIST="+dist)
	cmd.Dir = root
	// Its progress as it goes, for the minutes the compiles can take.
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stdout
	if err := cmd.Run(); err != nil {
		t.Fatalf("make release: %v", err)
	}
	t.Logf("make release took %s", time.Since(start).Round(time.Second))

	v, err := Verify(ctx, testVersion, registry, pub, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, img := range v.Images {
		t.Logf("image %s: layer %d bytes, binary %d bytes", img.Platform, img.LayerBytes, img.BinaryBytes)
	}
	checkSBOM(t, root, v.SBOM)
	checkPluginVersion(t, v.Files)
	checkDist(t, dist, v.Files)

	// Tampering, each undone before the next.
	index := v.Index
	t.Run("signature byte flipped", func(t *testing.T) {
		tag, err := attachedTag(index, "sig")
		if err != nil {
			t.Fatal(err)
		}
		tamper(t, tag, func(img v1.Image) v1.Image { return flipSignatureByte(t, img) })
		expectVerifyFails(t, registry, pub, "does not match the payload and key")
	})
	t.Run("SBOM replaced", func(t *testing.T) {
		tag, err := attachedTag(index, "sbom")
		if err != nil {
			t.Fatal(err)
		}
		tamper(t, tag, func(img v1.Image) v1.Image {
			b := layerBytes(t, img, 0)
			changed := strings.Replace(string(b), `"name": "k8s.io/client-go"`, `"name": "k8s.io/client-go-fork"`, 1)
			if changed == string(b) {
				t.Fatalf("the SBOM names no k8s.io/client-go to change")
			}
			return appendLayer(t, artefactBase(), static.NewLayer([]byte(changed), cycloneDXType), nil)
		})
		expectVerifyFails(t, registry, pub, "the SBOM: ")
	})
	t.Run("archive byte flipped", func(t *testing.T) {
		ref, err := name.NewTag(registry+"/"+PluginRepo+":"+testVersion, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		tamper(t, ref, func(img v1.Image) v1.Image { return flipArchiveByte(t, img) })
		expectVerifyFails(t, registry, pub, "the checksums file says")
	})
	t.Run("other key", func(t *testing.T) {
		_, otherPub, err := GenerateKeyPair(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		expectVerifyFails(t, registry, otherPub, "does not match the payload and key")
	})
}

// tamper replaces the image at ref with change(it) for the rest of the
// subtest, then puts the original back and checks that the release
// verifies again, so that each tampering is the only one.
func tamper(t *testing.T, ref name.Reference, change func(v1.Image) v1.Image) {
	t.Helper()
	ctx := context.Background()
	orig, err := remote.Image(ref, remote.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, change(orig), remote.WithContext(ctx)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := remote.Write(ref, orig, remote.WithContext(ctx)); err != nil {
			t.Fatal(err)
		}
	})
}

func expectVerifyFails(t *testing.T, registry, pub, want string) {
	t.Helper()
	_, err := Verify(context.Background(), testVersion, registry, pub, true)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("verify: %v, want an error with %q", err, want)
	}
	t.Logf("verify failed as it should: %v", err)
}

// flipSignatureByte rewrites the signature layer's annotation with one
// byte of the signature changed; the payload stays.
func flipSignatureByte(t *testing.T, img v1.Image) v1.Image {
	t.Helper()
	m, err := img.Manifest()
	if err != nil || len(m.Layers) != 1 {
		t.Fatalf("signature manifest: %v, %d layers", err, len(m.Layers))
	}
	sig, err := base64.StdEncoding.DecodeString(m.Layers[0].Annotations[signatureAnnotation])
	if err != nil {
		t.Fatal(err)
	}
	sig[len(sig)/2] ^= 1
	layer := static.NewLayer(layerBytes(t, img, 0), simpleSigningType)
	return appendLayer(t, artefactBase(), layer, map[string]string{signatureAnnotation: base64.StdEncoding.EncodeToString(sig)})
}

// flipArchiveByte rebuilds the plugin artefact with one byte of its first
// archive changed and everything else as it was.
func flipArchiveByte(t *testing.T, img v1.Image) v1.Image {
	t.Helper()
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	out := artefactBase()
	for i, desc := range m.Layers {
		b := layerBytes(t, img, i)
		if i == 0 {
			b = bytes.Clone(b)
			b[len(b)/2] ^= 1
		}
		out = appendLayer(t, out, static.NewLayer(b, desc.MediaType), desc.Annotations)
	}
	return out
}

func layerBytes(t *testing.T, img v1.Image, i int) []byte {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) <= i {
		t.Fatalf("layers: %v (%d)", err, len(layers))
	}
	b, err := readAll(layers[i])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func appendLayer(t *testing.T, img v1.Image, l v1.Layer, annotations map[string]string) v1.Image {
	t.Helper()
	out, err := mutate.Append(img, mutate.Addendum{Layer: l, Annotations: annotations})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkSBOM: the SBOM names confighash at the release's version and a few
// of its dependencies at the versions go.mod requires.
func checkSBOM(t *testing.T, root string, s SBOM) {
	t.Helper()
	if got := s.Version("github.com/confighash/confighash"); got != testVersion {
		t.Errorf("the SBOM gives confighash version %q, want %s", got, testVersion)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, mod := range []string{"k8s.io/client-go", "sigs.k8s.io/controller-runtime", "github.com/prometheus/client_golang", "github.com/spf13/pflag"} {
		req := regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(mod) + ` (v\S+)`).FindSubmatch(gomod)
		if req == nil {
			t.Fatalf("go.mod requires no %s", mod)
		}
		if got := s.Version(mod); got != string(req[1]) {
			t.Errorf("the SBOM gives %s version %q, go.mod %s", mod, got, req[1])
		}
	}
	t.Logf("the SBOM names %d components", len(s.Components))
}

// checkPluginVersion runs this machine's plugin binary, from its archive
// as pulled, as kubectl runs it: `kubectl-confighash version`.
func checkPluginVersion(t *testing.T, files map[string][]byte) {
	t.Helper()
	archive := files[ArchiveName(testVersion, v1.Platform{OS: runtime.GOOS, Architecture: runtime.GOARCH})]
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	hdr, err := tr.Next()
	if err != nil || hdr.Name != PluginBinary || hdr.Mode&0o111 == 0 {
		t.Fatalf("the archive's first entry: %v, %+v", err, hdr)
	}
	bin := filepath.Join(t.TempDir(), PluginBinary)
	b, err := io.ReadAll(tr)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", PluginBinary, err, out)
	}
	if !strings.HasPrefix(string(out), "confighash "+testVersion+"\n") {
		t.Errorf("%s version printed %q, want confighash %s first", PluginBinary, out, testVersion)
	}
}

// checkDist: what was pushed is what was left in dist, and the SBOM and
// chart are there too.
func checkDist(t *testing.T, dist string, pushed map[string][]byte) {
	t.Helper()
	for n, b := range pushed {
		local, err := os.ReadFile(filepath.Join(dist, n))
		if err != nil {
			t.Error(err)
			continue
		}
		if !bytes.Equal(local, b) {
			t.Errorf("dist/%s differs from the pushed one", n)
		}
	}
	for _, n := range []string{"confighash_" + testVersion + "_sbom.cdx.json", "confighash-" + strings.TrimPrefix(testVersion, "v") + ".tgz"} {
		if _, err := os.Stat(filepath.Join(dist, n)); err != nil {
			t.Error(err)
		}
	}
}
