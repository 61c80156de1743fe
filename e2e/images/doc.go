// Package images builds the container images that the local node runs, as
// tarballs that containerd imports. The machines this harness runs on reach
// no image registry and have no Docker engine, so every image is one static
// Go binary on an empty base, assembled with go-containerregistry.
//
// The confighash image built here must match the Dockerfile's: a static
// binary at /confighash, run as the distroless nonroot user 65532, with the
// binary as the entrypoint. TestImageMatchesDockerfile keeps them equal.
package images
