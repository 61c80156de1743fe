#!/usr/bin/env bash
# make e2e-kind: the same e2e specs against a kind cluster, with confighash
# deployed the way users deploy it (image + cert-manager overlay).
# Needs Docker and kind on PATH; it cannot run where no Docker engine runs.
set -euo pipefail
cd "$(dirname "$0")/../.."

: "${IMG:=ghcr.io/confighash/confighash:dev}"
: "${KIND_CLUSTER:=confighash-e2e}"
# Pinned so runs are reproducible; bump deliberately. kind supports a node
# image only with the kind release that built it, and only the digest
# guarantees that build: this pair is from the kind v0.33.0 release notes
# (Kubernetes v1.37, the minor version the local control plane runs).
KIND_VERSION="v0.33.0"
: "${KIND_NODE_IMAGE:=kindest/node:v1.37.0@sha256:a1ed56cfb0e7b93589bdf97c8cd566405a265939e3620fc4f5de89adff580ae5}"
CERT_MANAGER_VERSION="v1.21.2"

for tool in docker kind kubectl; do
  command -v "$tool" >/dev/null || { echo "e2e-kind needs $tool on PATH" >&2; exit 1; }
done
docker info >/dev/null 2>&1 || { echo "e2e-kind needs a running Docker engine" >&2; exit 1; }
if ! kind version | grep -q "kind $KIND_VERSION "; then
  case "$KIND_NODE_IMAGE" in
    *a1ed56cfb0e7b93589bdf97c8cd566405a265939e3620fc4f5de89adff580ae5)
      echo "e2e-kind pins kind $KIND_VERSION and its node image; found: $(kind version)." >&2
      echo "Install kind $KIND_VERSION, or set KIND_NODE_IMAGE to an image from your kind release's notes." >&2
      exit 1 ;;
  esac
fi

kubeconfig="$(mktemp)"
cleanup() { kind delete cluster --name "$KIND_CLUSTER" >/dev/null 2>&1 || true; rm -f "$kubeconfig"; }
trap cleanup EXIT

echo "==> creating kind cluster $KIND_CLUSTER ($KIND_NODE_IMAGE)"
kind create cluster --name "$KIND_CLUSTER" --image "$KIND_NODE_IMAGE" --kubeconfig "$kubeconfig" --wait 120s
export KUBECONFIG="$kubeconfig"

echo "==> building and loading $IMG"
docker build -t "$IMG" .
kind load docker-image "$IMG" --name "$KIND_CLUSTER"

echo "==> installing cert-manager $CERT_MANAGER_VERSION"
kubectl apply -f "https://github.com/cert-manager/cert-manager/releases/download/${CERT_MANAGER_VERSION}/cert-manager.yaml"
kubectl -n cert-manager wait --for=condition=Available deployment --all --timeout=300s

echo "==> deploying confighash (cert-manager overlay)"
overlay="$(mktemp -d)"
cat > "$overlay/kustomization.yaml" <<YAML
resources: [$(pwd)/manifests/overlays/cert-manager]
images:
- name: ghcr.io/confighash/confighash
  newName: ${IMG%:*}
  newTag: ${IMG##*:}
patches:
- target: {kind: Deployment, name: confighash}
  patch: |-
    - op: add
      path: /spec/template/spec/containers/0/imagePullPolicy
      value: IfNotPresent
YAML
kubectl apply -k "$overlay"
kubectl -n confighash-system wait --for=condition=Available deployment/confighash --timeout=300s

echo "==> running the e2e specs against kind"
CONFIGHASH_E2E_KUBECONFIG="$kubeconfig" go test -tags e2e -count=1 -timeout 60m -v ./e2e/

echo "==> running the Argo CD diff proof against kind (Go 1.27 module)"
# cluster exec --rollouts installs Argo Rollouts' CRDs and runs its controller
# (from this machine, against kind) for the proof's Rollout.
(cd e2e/argocd && GOTOOLCHAIN=go1.27.3 go test -c -o ../../bin/argocd-diff.test .)
CONFIGHASH_E2E_KUBECONFIG="$kubeconfig" go run ./e2e/cmd/cluster exec --rollouts -- bin/argocd-diff.test -test.v -test.count=1 -test.timeout=20m
