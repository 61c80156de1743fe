package release

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"sigs.k8s.io/yaml"

	"github.com/confighash/confighash/e2e/images"
)

// Verified is a release as pulled back and checked.
type Verified struct {
	Index name.Digest
	// Images are the index's images as pulled, one per platform.
	Images []images.PlatformImage
	SBOM   SBOM
	// Files are the plugin artefact's files by name: archives, checksums,
	// krew manifest, each matching the checksums and the manifest.
	Files map[string][]byte
	Krew  KrewPlugin
}

// Verify pulls a release of version from registry as a user would and
// checks it: the image index holds a static confighash for each platform;
// a signature by the public key at cosign's .sig tag vouches for the
// index's digest; the SBOM at its .sbom tag is signed too and is CycloneDX;
// each plugin archive matches the checksums file and the krew manifest.
func Verify(ctx context.Context, version, registry, publicKey string, plainHTTP bool) (Verified, error) {
	var v Verified
	o := Options{Version: version, Registry: registry, PlainHTTP: plainHTTP}
	key, err := LoadPublicKey(publicKey)
	if err != nil {
		return v, err
	}
	ref, err := o.Ref(ImageRepo)
	if err != nil {
		return v, err
	}
	idx, err := remote.Index(ref, remoteOpts(ctx)...)
	if err != nil {
		return v, fmt.Errorf("pulling %s: %w", ref, err)
	}
	h, err := idx.Digest()
	if err != nil {
		return v, fmt.Errorf("digest of %s: %w", ref, err)
	}
	v.Index = ref.Context().Digest(h.String())
	imgs, err := images.Inspect(idx)
	if err != nil {
		return v, fmt.Errorf("%s: %w", ref, err)
	}
	v.Images = imgs
	if err := images.Check(imgs, images.Confighash().Binary, images.Platforms()); err != nil {
		return v, fmt.Errorf("%s: %w", ref, err)
	}
	if err := verifySigned(ctx, v.Index, key); err != nil {
		return v, err
	}
	if v.SBOM, err = pullSBOM(ctx, v.Index, key); err != nil {
		return v, err
	}
	pluginRef, err := o.Ref(PluginRepo)
	if err != nil {
		return v, err
	}
	if v.Files, v.Krew, err = pullPlugin(ctx, pluginRef, version); err != nil {
		return v, err
	}
	return v, nil
}

// verifySigned pulls d's signature image from its .sig tag and checks it.
func verifySigned(ctx context.Context, d name.Digest, key *ecdsa.PublicKey) error {
	tag, err := attachedTag(d, "sig")
	if err != nil {
		return err
	}
	img, err := remote.Image(tag, remoteOpts(ctx)...)
	if err != nil {
		return fmt.Errorf("pulling the signature %s: %w", tag, err)
	}
	if err := verifySignatures(img, d, key); err != nil {
		return fmt.Errorf("%s: %w", tag, err)
	}
	return nil
}

// pullSBOM pulls the SBOM attached to index, checks its signature and
// parses it.
func pullSBOM(ctx context.Context, index name.Digest, key *ecdsa.PublicKey) (SBOM, error) {
	tag, err := attachedTag(index, "sbom")
	if err != nil {
		return SBOM{}, err
	}
	desc, err := remote.Get(tag, remoteOpts(ctx)...)
	if err != nil {
		return SBOM{}, fmt.Errorf("pulling the SBOM %s: %w", tag, err)
	}
	img, err := desc.Image()
	if err != nil {
		return SBOM{}, fmt.Errorf("the SBOM %s: %w", tag, err)
	}
	// The digest of what was pulled, not what the registry says it is.
	h, err := img.Digest()
	if err != nil {
		return SBOM{}, fmt.Errorf("the SBOM %s: %w", tag, err)
	}
	if err := verifySigned(ctx, tag.Context().Digest(h.String()), key); err != nil {
		return SBOM{}, fmt.Errorf("the SBOM: %w", err)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		return SBOM{}, fmt.Errorf("the SBOM %s: want one layer (%d, %w)", tag, len(layers), err)
	}
	if mt, err := layers[0].MediaType(); err != nil || mt != cycloneDXType {
		return SBOM{}, fmt.Errorf("the SBOM %s: layer media type %q, want %s (%w)", tag, mt, cycloneDXType, err)
	}
	b, err := readAll(layers[0])
	if err != nil {
		return SBOM{}, fmt.Errorf("the SBOM %s: %w", tag, err)
	}
	return ParseSBOM(b)
}

// pullPlugin pulls the plugin artefact and checks every archive against
// the checksums file and the krew manifest.
func pullPlugin(ctx context.Context, ref name.Tag, version string) (map[string][]byte, KrewPlugin, error) {
	var krew KrewPlugin
	img, err := remote.Image(ref, remoteOpts(ctx)...)
	if err != nil {
		return nil, krew, fmt.Errorf("pulling %s: %w", ref, err)
	}
	files, err := titledFiles(img)
	if err != nil {
		return nil, krew, fmt.Errorf("%s: %w", ref, err)
	}
	sums, err := ParseChecksums(files[ChecksumsName(version)])
	if err != nil {
		return nil, krew, fmt.Errorf("%s: %w", ref, err)
	}
	if err := yaml.UnmarshalStrict(files[KrewName], &krew); err != nil {
		return nil, krew, fmt.Errorf("%s: the krew manifest: %w", ref, err)
	}
	var errs []error
	if krew.Spec.Version != version {
		errs = append(errs, fmt.Errorf("the krew manifest is for %q", krew.Spec.Version))
	}
	byName := map[string]KrewPlatform{}
	for _, p := range krew.Spec.Platforms {
		byName[ArchiveName(version, v1.Platform{OS: p.Selector.MatchLabels["os"], Architecture: p.Selector.MatchLabels["arch"]})] = p
	}
	for _, p := range PluginPlatforms() {
		n := ArchiveName(version, p)
		b, ok := files[n]
		if !ok {
			errs = append(errs, fmt.Errorf("no archive %s", n))
			continue
		}
		sum := sha256.Sum256(b)
		got := hex.EncodeToString(sum[:])
		if sums[n] != got {
			errs = append(errs, fmt.Errorf("%s: sha256 %s, the checksums file says %q", n, got, sums[n]))
		}
		if k := byName[n]; k.SHA256 != got || k.Bin != PluginBinary {
			errs = append(errs, fmt.Errorf("%s: the krew manifest says sha256 %q bin %q, want %s %s", n, k.SHA256, k.Bin, got, PluginBinary))
		}
	}
	if len(sums) != len(PluginPlatforms()) || len(krew.Spec.Platforms) != len(PluginPlatforms()) {
		errs = append(errs, fmt.Errorf("%d checksums and %d krew platforms, want %d", len(sums), len(krew.Spec.Platforms), len(PluginPlatforms())))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, krew, fmt.Errorf("%s: %w", ref, err)
	}
	return files, krew, nil
}

// titledFiles reads an artefact's layers by their title annotation.
func titledFiles(img v1.Image) (map[string][]byte, error) {
	m, err := img.Manifest()
	if err != nil {
		return nil, fmt.Errorf("reading the manifest: %w", err)
	}
	files := map[string][]byte{}
	for _, desc := range m.Layers {
		title := desc.Annotations[titleAnnotation]
		if title == "" {
			return nil, fmt.Errorf("layer %s has no title", desc.Digest)
		}
		l, err := img.LayerByDigest(desc.Digest)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", title, err)
		}
		if files[title], err = readAll(l); err != nil {
			return nil, fmt.Errorf("%s: %w", title, err)
		}
	}
	return files, nil
}
