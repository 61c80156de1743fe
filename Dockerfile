# Build with the pinned Go, statically, then ship only the binary on
# distroless as the nonroot user (65532), which the manifests' restricted
# securityContext expects.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd/ cmd/
COPY certs/ certs/
COPY hasher/ hasher/
COPY hashkey/ hashkey/
COPY restamp/ restamp/
COPY sources/ sources/
COPY status/ status/
COPY webhook/ webhook/
COPY workload/ workload/
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags="-s -w" -o /out/confighash ./cmd/confighash

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/confighash /confighash
USER 65532:65532
ENTRYPOINT ["/confighash"]
