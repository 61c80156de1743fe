# confighash. Newcomers need two targets: `make demo` and `make test`.
SHELL := /bin/bash
GO    ?= go
IMG   ?= ghcr.io/confighash/confighash:dev
KIND_CLUSTER ?= confighash-e2e
# What `confighash version` prints: the tag, or the commit with -dirty for
# uncommitted changes; the binary says "dev" when it was built without it.
# The commit too, for builds without VCS build info (the image's context has
# no .git).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X github.com/confighash/confighash/cmd/confighash/app.version=$(VERSION) -X github.com/confighash/confighash/cmd/confighash/app.commit=$(COMMIT)

# Every Go command make starts, and every one those start (the harness's
# builds, the image builder), compiles with the image's flags: no cgo and
# trimmed paths, as the Dockerfile builds. One set of flags means one compile
# of each package: vet, the unit and e2e tests, the images and the pinned
# Kubernetes build share the build cache (the Kubernetes build shares about
# 560 packages with ours, e2e/deploy about 650). Before, the image's own
# flags made e2e/images compile the whole tree a second time.
export CGO_ENABLED = 0
export GOFLAGS += -trimpath

.PHONY: build test prebuild release release-verify release-key unit fuzz e2e e2e-oldest demo cluster-up cluster-down controlplane bench lint lint-fmt lint-vet lint-vet-argocd lint-golangci docker-build docker-buildx docker-push image-push e2e-kind clean

## build: the confighash binary, into bin/
build:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/confighash ./cmd/confighash

## controlplane: build (once) the pinned etcd and Kubernetes v1.37.2 binaries (control plane, kubelet, scheduler, kube-proxy) into bin/
controlplane:
	$(GO) run ./e2e/cmd/cluster build

## test: lint, the e2e specs on a local control plane and node, unit tests, fuzzing (its binaries, Argo Rollouts', Argo CD's and golangci-lint are built on first run, beside the rest: see prebuild; root)
# The order is set by a cold machine's 2 cores. The control plane's build
# comes first, in the foreground: it compiles most of what vet and the tests
# compile after it. The e2e specs wait on clusters most of the time, so they
# come next, in two lanes at once (see e2e), and `prebuild` compiles beside
# them, at the lowest priority, what the later steps need: it takes the CPU
# only when the steps leave it idle, and each step that needs a binary waits
# for it (the harness's build lock; golangci-lint's own), so nothing is built
# twice. The unit tests and fuzzing come last and find their packages
# compiled. A prebuild failure only loses the head start: the step that needs
# the binary builds it and reports the error. Its output is in
# bin/prebuild.log; it is stopped when the steps end.
test:
	@mkdir -p bin
	$(GO) build -o /dev/null ./e2e/cmd/cluster
	@setsid nice -n 19 $(MAKE) --no-print-directory prebuild > bin/prebuild.log 2>&1 & pg=$$!; \
	trap 'kill -- -'$$pg' 2>/dev/null || true' EXIT; \
	$(MAKE) --no-print-directory lint-fmt controlplane lint-vet e2e unit fuzz lint-vet-argocd lint-golangci

## prebuild: what make test compiles, in the order it needs it (control plane, Argo Rollouts, Helm, the arm64 images, Argo CD's controller and proof, the oldest Kubernetes minor's control plane, the fuzz targets, the release's darwin plugin, cyclonedx-gomod and test, golangci-lint and its first analysis); skips what is built
# Compiling only: `go build` without -o and `go test -c -o /dev/null` fill
# the build cache and keep nothing. The linter's run builds it and fills its
# own cache; its findings are left to the foreground's lint-golangci, so a
# failure here is ignored.
prebuild:
	$(GO) run ./e2e/cmd/cluster build controlplane rollouts helm
	GOOS=linux GOARCH=arm64 $(GO) build ./cmd/confighash ./e2e/cmd/sampleapp ./e2e/cmd/sandbox
	$(GO) run ./e2e/cmd/cluster build argocd
	cd e2e/argocd && GOTOOLCHAIN=$(ARGOCD_GO) $(GO) test -c -o /dev/null .
	$(GO) run ./e2e/cmd/cluster build controlplane-oldest
	$(GO) test -c -o /dev/null -fuzz '^FuzzAdmission$$' ./webhook/
	$(GO) test -c -o /dev/null -fuzz '^FuzzReferences$$' ./hasher/
	GOOS=darwin GOARCH=amd64 $(GO) build -o /dev/null ./cmd/confighash
	GOOS=darwin GOARCH=arm64 $(GO) build -o /dev/null ./cmd/confighash
	$(MAKE) --no-print-directory $(CYCLONEDX_GOMOD)
	cd internal/release && $(GO) test -c -o /dev/null .
	-$(MAKE) --no-print-directory lint-golangci > /dev/null 2>&1

# -timeout 20m: e2e/images cross-compiles confighash for arm64, which on a
# cold build cache takes minutes on 2 cores (go test's default is 10m).
# internal/release is its own module (the Helm SDK pushes the chart): its
# test runs make release against an in-process registry and verifies what
# it pulls back.
unit:
	$(GO) test -count=1 -timeout 20m ./...
	cd internal/release && $(GO) test -count=1 -timeout 20m ./...

## fuzz: each fuzz target for a fixed number of executions (seed corpora in testdata/fuzz/); go test fuzzes one target at a time
# Counts, not durations: with a duration, Go 1.26's fuzz coordinator can
# report its own deadline as a failure ("context deadline exceeded", no
# crasher; go.dev/issue/75804, fixed in 1.27), and CI hit it. A count has no
# deadline to race. Minimizing a new input is capped so one slow shrink
# cannot stall the run. About 1 and 0.5 min here (60 s and 29 s in the last run; 122 s and 23 s in the cold one).
FUZZ_ADMISSION ?= 40000x
FUZZ_REFERENCES ?= 200000x
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzAdmission$$' -fuzztime $(FUZZ_ADMISSION) -fuzzminimizetime 5s ./webhook/
	$(GO) test -run '^$$' -fuzz '^FuzzReferences$$' -fuzztime $(FUZZ_REFERENCES) -fuzzminimizetime 5s ./hasher/

# e2e/deploy is its own module (Helm SDK, cert-manager CRDs) so the main
# go.mod stays lean: it renders the manifests and the chart, compares them,
# and server-side dry-runs them on the local control plane.
# e2e/argocd is its own module too: Argo CD's diff code needs Go 1.27, which
# the go command fetches from the module proxy for that module only. Its test
# binary is built first, then run by `cluster exec` against a throwaway local
# control plane with confighash running (or the CONFIGHASH_E2E_KUBECONFIG
# cluster, as for the specs above). The same binary's TestArgoCDController
# specs then run Argo CD's own application controller and repo-server (built
# on first use: 2m14s here with e2e/argocd's build cache warm, 20m21s from
# an empty one at the lowest priority on a busy machine) on a cluster with a node and confighash
# deployed (`cluster exec --node`).
ARGOCD_GO := go1.27.3

# The suites run in two lanes at once, since each waits on its cluster most
# of the time (16% of one node spec's time was CPU here):
#   - the node lane runs the suites that need the node, one after another,
#     since only one node fits a machine: e2e/incluster, e2e/deploy, then
#     Argo CD's controllers;
#   - the control-plane lane runs the root e2e package and the harness's own
#     packages (-p 1, so that their clusters do not compete), builds the
#     Argo CD proof's test binary, which both lanes run, runs its
#     diff-level half, then the subset of the root specs that runs on the
#     oldest Kubernetes minor the chart claims (e2e-oldest).
# Each suite is a target that runs even when an earlier one failed (they
# share nothing): its output is kept in bin/e2e-logs/SUITE.log and printed
# with the suite's name in front of each line. The target fails at the end,
# printing each failed spec with the lines before it, then one line per
# failed spec, so that the end of a long CI log says what failed.
E2E_LOGS := $(CURDIR)/bin/e2e-logs
ARGOCD_TEST := $(CURDIR)/bin/argocd-diff.test
argocd_test_built = test -x $(ARGOCD_TEST) || { echo "the Argo CD test binary was not built: see argocd-build"; exit 1; }
suite = set -o pipefail; ( $(2) ) 2>&1 | tee $(E2E_LOGS)/$(1).log | sed -u 's/^/[$(1)] /' || grep -E -B 25 '^[[:space:]]*--- FAIL|^panic:' $(E2E_LOGS)/$(1).log > $(E2E_LOGS)/$(1).failed || echo "(no failed spec named; see $(E2E_LOGS)/$(1).log)" > $(E2E_LOGS)/$(1).failed
E2E_SUITES := e2e-incluster e2e-deploy e2e-argocd-controller e2e-root e2e-argocd-build e2e-argocd-diff e2e-oldest-suite
.PHONY: $(E2E_SUITES)
e2e: controlplane
	@rm -rf $(E2E_LOGS) $(ARGOCD_TEST) && mkdir -p $(E2E_LOGS)
	@$(MAKE) --no-print-directory -j2 e2e-argocd-controller e2e-oldest-suite
	@failed=$$(ls $(E2E_LOGS)/*.failed 2>/dev/null); [ -z "$$failed" ] || { for f in $$failed; do echo; echo "=== suite $$(basename $$f .failed) failed:"; cat $$f; done; \
		echo; echo "=== failed:"; for f in $$failed; do grep -h -E '^[[:space:]]*--- FAIL|^panic:|^\(no failed spec' $$f | sed "s|^|$$(basename $$f .failed): |"; done; exit 1; }

# The node lane.
e2e-incluster:
	@$(call suite,incluster,$(GO) test -tags e2e -count=1 -timeout 40m -v ./e2e/incluster/)
e2e-deploy: e2e-incluster
	@$(call suite,deploy,cd e2e/deploy && $(GO) test -tags e2e -count=1 -timeout 30m -v ./...)
e2e-argocd-controller: e2e-deploy e2e-argocd-build
	@$(call suite,argocd-controller,$(argocd_test_built); \
		$(GO) run ./e2e/cmd/cluster exec --node -- $(ARGOCD_TEST) -test.v -test.count=1 -test.timeout=40m -test.run '^TestArgoCDController')

# The control-plane lane.
e2e-root:
	@$(call suite,e2e,$(GO) test -tags e2e -count=1 -p 1 -timeout 60m -v $$($(GO) list -tags e2e ./e2e/... | grep -v '/e2e/incluster$$'))
e2e-argocd-build: e2e-root
	@$(call suite,argocd-build,cd e2e/argocd && GOTOOLCHAIN=$(ARGOCD_GO) $(GO) test -c -o $(ARGOCD_TEST) .)
e2e-argocd-diff: e2e-argocd-build
	@$(call suite,argocd-diff,$(argocd_test_built); \
		$(GO) run ./e2e/cmd/cluster exec --rollouts -- $(ARGOCD_TEST) -test.v -test.count=1 -test.timeout=20m -test.skip '^TestArgoCDController')
# Last in this lane: the node lane's Argo CD controller specs run longer, so
# the oldest minor's subset adds no time to make test.
e2e-oldest-suite: e2e-argocd-diff
	@$(call suite,oldest,$(E2E_OLDEST))

# The oldest Kubernetes minor the chart claims (Chart.yaml's kubeVersion,
# which e2e/deploy checks against it) runs a subset of the root specs, on
# its control plane only (built by `cluster build controlplane-oldest`; no
# node). The subset is the API surface whose behaviour could differ by
# minor: that the API server is the release asked for; admission of every
# kind, with its dry run, matchConditions and the API server's client
# certificate; the hook's re-stamp through patches of each workload kind;
# the server-side applied settings that status and preview read; status and
# its install check; the webhook's answer for a namespace its policy does
# not serve; kubectl's client- and server-side apply of stamped objects.
# 99 s here, 15 of them the control plane's start.
KUBERNETES_OLDEST := $(shell sed -n 's|^require k8s.io/kubernetes ||p' e2e/controlplane/tools/kube-oldest/go.mod)
E2E_OLDEST_SPECS := ^(TestServesTheAskedKubernetes|TestWebhookStampsEveryKind|TestWebhookServerSideDryRun|TestAdmissionSkipsControllerOwned|TestWebhookAnswersOnlyTheAPIServer|TestHookConfigMapChangeRollsReadersOnce|TestHookRollsStatefulSetsDaemonSetsAndCronJobs|TestStatusAndPreviewReadTheServersSettings|TestStatusCurrent|TestStatusCheckInstall|TestWebhookAnswersNothingForUnservedNamespace|TestNoOpWritesDoNotRoll)$$
E2E_OLDEST = CONFIGHASH_E2E_KUBERNETES=$(KUBERNETES_OLDEST) $(GO) test -tags e2e -count=1 -timeout 40m -v -run '$(E2E_OLDEST_SPECS)' ./e2e/

## e2e-oldest: the root specs of E2E_OLDEST_SPECS on the oldest Kubernetes minor the chart claims (its control plane is built on first run: 13 CPU-minutes)
e2e-oldest:
	$(E2E_OLDEST)

## release: build, sign and push release VERSION (the tag vX.Y.Z) to REGISTRY (host/path), signed with COSIGN_KEY (a PEM P-256 key; make release-key writes a pair); its files are left in dist/ (docs/releasing.md)
# The image index, its cosign signature and SBOM, the chart, the kubectl
# plugin archives with checksums and krew manifest. A registry on loopback
# is spoken to in plain HTTP, another one too with PLAIN_HTTP=1.
# cyclonedx-gomod writes the SBOM; like golangci-lint it is built with `go
# install pkg@version` into bin/ (about 1.5 min), out of our go.mod.
CYCLONEDX_GOMOD_VERSION := v1.10.0
CYCLONEDX_GOMOD := $(CURDIR)/bin/cyclonedx-gomod-$(CYCLONEDX_GOMOD_VERSION)
CYCLONEDX_GOMOD_TMP := $(CURDIR)/bin/.cyclonedx-gomod-$(CYCLONEDX_GOMOD_VERSION)
DIST ?= $(CURDIR)/dist
KEY_DIR ?= $(CURDIR)
RELEASE := cd internal/release && $(GO) run ./cmd/release
release: $(CYCLONEDX_GOMOD)
	$(RELEASE) publish -version '$(VERSION)' -commit '$(COMMIT)' -registry '$(REGISTRY)' -key '$(abspath $(COSIGN_KEY))' \
		-root '$(CURDIR)' -dist '$(abspath $(DIST))' -cyclonedx '$(CYCLONEDX_GOMOD)' $(if $(PLAIN_HTTP),-plain-http) \
		$(if $(DOWNLOAD_URL),-download-url '$(DOWNLOAD_URL)')

## release-verify: pull release VERSION from REGISTRY and verify it with COSIGN_PUB: signatures of the index and SBOM, the images, the plugin archives' checksums
release-verify:
	$(RELEASE) verify -version '$(VERSION)' -registry '$(REGISTRY)' -pub '$(abspath $(COSIGN_PUB))' $(if $(PLAIN_HTTP),-plain-http)

## release-key: write a new signing key pair, release.key and release.pub, to KEY_DIR (default: here)
release-key:
	$(RELEASE) keygen -dir '$(abspath $(KEY_DIR))'

$(CYCLONEDX_GOMOD):
	@mkdir -p $(CURDIR)/bin
	flock $(CURDIR)/bin/.cyclonedx-gomod.lock sh -c 'test -x $@ || { rm -rf $(CYCLONEDX_GOMOD_TMP) && \
		GOBIN=$(CYCLONEDX_GOMOD_TMP) $(GO) install "-ldflags=-s -w" github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@$(CYCLONEDX_GOMOD_VERSION) && \
		mv $(CYCLONEDX_GOMOD_TMP)/cyclonedx-gomod $@ && rmdir $(CYCLONEDX_GOMOD_TMP); }'

## demo: start a local cluster with a node, deploy confighash from its manifests, preview a change, roll it in waves, halt a broken value at its canary, explain it with status, roll the fix, stop (root)
demo: controlplane
	$(GO) run ./e2e/cmd/demo

## cluster-up / cluster-down: a local control plane and node left running, kubeconfig in .cluster/kubeconfig (root)
cluster-up:
	$(GO) run ./e2e/cmd/cluster up

cluster-down:
	$(GO) run ./e2e/cmd/cluster down

## bench: hasher, handler, hook-filter, change-planning (BenchmarkPlanChange), workload-slimming (BenchmarkSlimObject) and source-slimming (BenchmarkSlimSecret) micro-benchmarks, then the hook's, admission (against a do-nothing webhook) and cache figures on the local control plane, then a 600-namespace tenant cluster on its own control plane, then waves against all at once and the pinning soak (200 pods, 30 changes) on the local node
bench: controlplane
	$(GO) test -run '^$$' -bench . -benchmem ./hasher/ ./webhook/ ./internal/restamp/ ./internal/workload/ ./internal/sources/
	CONFIGHASH_BENCH=1 $(GO) test -tags e2e -count=1 -timeout 30m -run '^TestBench' -skip '^TestBenchTenants$$' -v ./e2e/
	CONFIGHASH_BENCH=1 $(GO) test -tags e2e -count=1 -timeout 40m -run '^TestBenchTenants$$' -v ./e2e/
	CONFIGHASH_BENCH=1 $(GO) test -tags e2e -count=1 -timeout 60m -run '^TestBench' -v ./e2e/incluster/

# golangci-lint is built from source on first use, at the pinned version,
# with `go install pkg@version`: that builds it with exactly the dependency
# versions its own go.mod pins (what its maintainers test and release),
# checked against the Go checksum database, and keeps its ~220 modules out of
# our go.mod and out of a tools go.mod we would have to keep in step. The
# binary is named by version, so bumping the pin builds the new one. v2.15.0
# needs Go 1.26, as this module does. Its checks are in .golangci.yml.
# It lints the root module, again with the e2e tag (only e2e/ has tagged
# files), e2e/deploy and internal/release; e2e/argocd needs Go 1.27, which
# this build cannot load, so it gets go vet only. The e2e/controlplane/tools modules hold only
# blank imports under the tools tag, which pin what the harness builds (and
# tools/argocd a main of a few lines that picks Argo CD's controller or
# repo-server): they get neither.
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(CURDIR)/bin/golangci-lint-$(GOLANGCI_LINT_VERSION)

# The build holds a lock, so that make test's prebuild and lint-golangci
# never build it at once; whoever comes second finds it built.
GOLANGCI_LINT_TMP := $(CURDIR)/bin/.golangci-lint-$(GOLANGCI_LINT_VERSION)
$(GOLANGCI_LINT):
	@mkdir -p $(CURDIR)/bin
	flock $(CURDIR)/bin/.golangci-lint.lock sh -c 'test -x $@ || { rm -rf $(GOLANGCI_LINT_TMP) && \
		GOBIN=$(GOLANGCI_LINT_TMP) $(GO) install "-ldflags=-s -w" github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) && \
		mv $(GOLANGCI_LINT_TMP)/golangci-lint $@ && rmdir $(GOLANGCI_LINT_TMP); }'

## lint: gofmt and go vet first (seconds), then golangci-lint (.golangci.yml; built into bin/ on first use: about 12 min cold, build and first analysis, about 1 min warm)
lint: lint-fmt lint-vet lint-vet-argocd lint-golangci

lint-fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

lint-vet:
	$(GO) vet ./...
	$(GO) vet -tags e2e ./e2e/...
	cd e2e/deploy && $(GO) vet -tags e2e ./...
	cd internal/release && $(GO) vet ./...

# Its own target so that make test can run it late: it compiles Argo CD's
# packages with Go 1.27, as prebuild's Argo CD build does, and after that
# build it mostly finds them compiled.
lint-vet-argocd:
	cd e2e/argocd && GOTOOLCHAIN=$(ARGOCD_GO) $(GO) vet ./...

# Only this step needs the linter, and make lint runs it last, so a gofmt or
# vet finding does not wait for the linter's build.
lint-golangci: $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run ./...
	$(GOLANGCI_LINT) run --build-tags e2e ./e2e/...
	cd e2e/deploy && $(GOLANGCI_LINT) run --config $(CURDIR)/.golangci.yml --build-tags e2e ./...
	cd internal/release && $(GOLANGCI_LINT) run --config $(CURDIR)/.golangci.yml ./...

## image-push: the image for $(PLATFORMS), built in Go from this tree (no Docker engine), pushed to $(IMG) with the Docker configuration's credentials; prints its digest. Plain HTTP for a registry on localhost or a private address without TLS, or for any with INSECURE=1
image-push:
	$(GO) run ./e2e/cmd/imagepush $(if $(INSECURE),-insecure) -platforms $(PLATFORMS) -version '$(VERSION)' -commit '$(COMMIT)' $(IMG)

## docker-build / docker-push: the image (needs a Docker engine)
docker-build:
	DOCKER_BUILDKIT=1 docker build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -t $(IMG) .

docker-push:
	docker push $(IMG)

## docker-buildx: the image for linux/amd64 and linux/arm64 as one index, pushed to $(IMG) (needs Docker with buildx; the build stage cross-compiles, no emulation)
PLATFORMS ?= linux/amd64,linux/arm64
docker-buildx:
	docker buildx build --platform $(PLATFORMS) --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -t $(IMG) --push .

## e2e-kind: the same e2e specs on a kind cluster with cert-manager (needs Docker and kind)
e2e-kind:
	IMG=$(IMG) KIND_CLUSTER=$(KIND_CLUSTER) ./e2e/kind/run.sh

clean:
	rm -rf bin/confighash .cluster
