# Build with the pinned Go, statically, then ship only the binary on
# distroless as the nonroot user (65532), which the manifests' restricted
# securityContext expects.
#
# The whole module is copied and .dockerignore leaves out what the binary
# does not need (tests' harness, deploy YAML, docs): a new package is then in
# the build context without anyone remembering to list it here.
# e2e/images/dockerfile_test.go builds ./cmd/confighash from exactly this
# context, and checks that the image the e2e harness builds in Go matches the
# final stage below (static binary, user, entrypoint).
#
# Multi-platform: the build stage runs on the builder's own platform and
# cross-compiles for the target's (no emulation; the binary has no cgo), e.g.
#   docker buildx build --platform linux/amd64,linux/arm64 .
# TARGETOS and TARGETARCH are set by BuildKit for each platform. The e2e
# image builder compiles the same two platforms into one image index.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS
ARG TARGETARCH
# The release and commit `confighash version` prints (make passes them);
# "dev" and "unknown" otherwise.
ARG VERSION=dev
ARG COMMIT
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags="-s -w -X github.com/confighash/confighash/cmd/confighash/app.version=$VERSION -X github.com/confighash/confighash/cmd/confighash/app.commit=$COMMIT" -o /out/confighash ./cmd/confighash

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/confighash /confighash
USER 65532:65532
ENTRYPOINT ["/confighash"]
