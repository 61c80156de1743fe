// Package release builds, signs and publishes a confighash release to an
// OCI registry, and verifies one as a user would, from what the registry
// serves back.
//
// A release of version vX.Y.Z pushed to REGISTRY (host/path) is:
//   - REGISTRY/confighash:vX.Y.Z, the linux/amd64+arm64 image index, built
//     by e2e/images as the e2e specs' images are, with the version linked in;
//   - its signature, in cosign's layout: the tag sha256-<index hex>.sig
//     holds a simple-signing payload naming the index digest and, in the
//     layer's annotation, an ECDSA P-256 signature of it, so that
//     `cosign verify --key release.pub --insecure-ignore-tlog` accepts it
//     (keyed, no transparency log: nothing is sent to Rekor or Fulcio);
//   - its SBOM, CycloneDX JSON made by cyclonedx-gomod from the linux/amd64
//     binary's build info (what the image runs), at cosign's
//     sha256-<index hex>.sbom, and signed the same way, so a replaced SBOM
//     fails verification like a replaced signature does;
//   - the chart at oci://REGISTRY/charts/confighash, version X.Y.Z, whose
//     default image is REGISTRY/confighash:vX.Y.Z;
//   - REGISTRY/kubectl-confighash:vX.Y.Z, an OCI artefact whose layers are
//     the kubectl plugin archives (linux/darwin × amd64/arm64), their
//     sha256 checksums and the krew manifest, each titled with its file name.
//
// The archives, checksums, krew manifest and SBOM are also left in a local
// directory (dist/), for the forge's release page, which is where the krew
// manifest's URIs point.
//
// It is its own module, as e2e/deploy is, for the Helm SDK that packages
// and pushes the chart: the product's go.mod stays without it.
package release
