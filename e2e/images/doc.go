// Package images builds the container images that the local node runs. The
// machines this harness runs on reach no public registry and have no Docker
// engine, so every image is one static Go binary on an empty base, assembled
// with go-containerregistry.
//
// Two ways onto the node:
//   - BuildIndex cross-compiles (CGO_ENABLED=0, GOARCH per platform) and
//     assembles a two-platform image index (linux/amd64, linux/arm64), as a
//     release publishes; Registry serves one in this process
//     (go-containerregistry's pkg/registry, in memory, plain HTTP on
//     loopback) and the node's containerd pulls from it, the path users'
//     nodes take. The e2e specs run this way. Inspect and Check read each
//     platform's image back from the registry and check its binary's ELF
//     machine, so an index whose arm64 entry holds an amd64 binary fails.
//   - Build writes one image for this machine's architecture as a tarball
//     for `ctr images import`: for the sandbox image, which the kubelet
//     needs before any registry is up, and for `cluster up`, whose cluster
//     outlives the process that would serve a registry.
//
// The confighash image built here must match the Dockerfile's: a static
// binary at /confighash, run as the distroless nonroot user 65532, with the
// binary as the entrypoint, for every platform the Dockerfile builds
// (TARGETOS/TARGETARCH). TestImageMatchesDockerfile, TestIndexFromRegistry
// and TestDockerfileCrossBuilds keep them equal.
package images
