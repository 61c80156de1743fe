package release

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// cosign's layout, as `cosign sign` and `cosign attach sbom` write and
// `cosign verify` and `cosign download sbom` read.
const (
	// simpleSigningType is the media type of a signature image's layers;
	// each holds a payload, signed in its signatureAnnotation.
	simpleSigningType   = types.MediaType("application/vnd.dev.cosign.simplesigning.v1+json")
	signatureAnnotation = "dev.cosignproject.cosign/signature"
	// payloadType is the payload's critical.type that cosign requires.
	payloadType = "cosign container image signature"
	// cycloneDXType is the SBOM layer's media type for CycloneDX JSON.
	cycloneDXType = types.MediaType("application/vnd.cyclonedx+json")
)

// payload is the simple-signing payload cosign signs and verifies: the
// digest it vouches for and the repository it was pushed to.
type payload struct {
	Critical struct {
		Identity struct {
			DockerReference string `json:"docker-reference"`
		} `json:"identity"`
		Image struct {
			DockerManifestDigest string `json:"docker-manifest-digest"`
		} `json:"image"`
		Type string `json:"type"`
	} `json:"critical"`
	Optional map[string]any `json:"optional"`
}

// attachedTag is cosign's tag for what it attaches to digest d:
// sha256-<hex>.<suffix> ("sig", "sbom") in the same repository.
func attachedTag(d name.Digest, suffix string) (name.Tag, error) {
	h, err := v1.NewHash(d.DigestStr())
	if err != nil {
		return name.Tag{}, fmt.Errorf("digest %s: %w", d, err)
	}
	return d.Context().Tag(h.Algorithm + "-" + h.Hex + "." + suffix), nil
}

// signatureImage signs d's simple-signing payload with key: the image
// cosign keeps at d's .sig tag, one layer.
func signatureImage(d name.Digest, key *ecdsa.PrivateKey) (v1.Image, error) {
	var p payload
	p.Critical.Identity.DockerReference = d.Context().Name()
	p.Critical.Image.DockerManifestDigest = d.DigestStr()
	p.Critical.Type = payloadType
	body, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encoding the signed payload: %w", err)
	}
	sum := sha256.Sum256(body)
	sig, err := ecdsa.SignASN1(rand.Reader, key, sum[:])
	if err != nil {
		return nil, fmt.Errorf("signing %s: %w", d, err)
	}
	img, err := mutate.Append(artefactBase(), mutate.Addendum{
		Layer:       static.NewLayer(body, simpleSigningType),
		Annotations: map[string]string{signatureAnnotation: base64.StdEncoding.EncodeToString(sig)},
	})
	if err != nil {
		return nil, fmt.Errorf("assembling the signature of %s: %w", d, err)
	}
	return img, nil
}

// artefactBase is the empty OCI image that cosign's signature and SBOM
// images, and the plugin artefact, start from.
func artefactBase() v1.Image {
	return mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
}

// verifySignatures checks that at least one layer of a signature image is
// a payload for digest d signed by key, as `cosign verify --key` does. It
// says why each layer failed when none passes.
func verifySignatures(sigImg v1.Image, d name.Digest, key *ecdsa.PublicKey) error {
	m, err := sigImg.Manifest()
	if err != nil {
		return fmt.Errorf("reading the signature manifest: %w", err)
	}
	var why []string
	for _, desc := range m.Layers {
		err := verifyLayer(sigImg, desc, d, key)
		if err == nil {
			return nil
		}
		why = append(why, err.Error())
	}
	if len(why) == 0 {
		return fmt.Errorf("no signature of %s", d)
	}
	return fmt.Errorf("no valid signature of %s: %s", d, strings.Join(why, "; "))
}

func verifyLayer(sigImg v1.Image, desc v1.Descriptor, d name.Digest, key *ecdsa.PublicKey) error {
	if desc.MediaType != simpleSigningType {
		return fmt.Errorf("layer %s is a %s, not a signature", desc.Digest, desc.MediaType)
	}
	sig, err := base64.StdEncoding.DecodeString(desc.Annotations[signatureAnnotation])
	if err != nil {
		return fmt.Errorf("layer %s: the signature annotation: %w", desc.Digest, err)
	}
	layer, err := sigImg.LayerByDigest(desc.Digest)
	if err != nil {
		return fmt.Errorf("layer %s: %w", desc.Digest, err)
	}
	body, err := readAll(layer)
	if err != nil {
		return fmt.Errorf("layer %s: %w", desc.Digest, err)
	}
	sum := sha256.Sum256(body)
	if !ecdsa.VerifyASN1(key, sum[:], sig) {
		return fmt.Errorf("layer %s: the signature does not match the payload and key", desc.Digest)
	}
	var p payload
	if err := json.Unmarshal(body, &p); err != nil {
		return fmt.Errorf("layer %s: the signed payload: %w", desc.Digest, err)
	}
	if p.Critical.Type != payloadType {
		return fmt.Errorf("layer %s: signed payload of type %q", desc.Digest, p.Critical.Type)
	}
	if p.Critical.Image.DockerManifestDigest != d.DigestStr() {
		return fmt.Errorf("layer %s: signed for %s", desc.Digest, p.Critical.Image.DockerManifestDigest)
	}
	return nil
}
