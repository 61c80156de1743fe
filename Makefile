# confighash. Newcomers need two targets: `make demo` and `make test`.
SHELL := /bin/bash
GO    ?= go
IMG   ?= ghcr.io/confighash/confighash:dev
KIND_CLUSTER ?= confighash-e2e

.PHONY: build test prebuild unit fuzz e2e demo cluster-up cluster-down controlplane bench lint lint-fmt lint-vet lint-vet-argocd lint-golangci docker-build docker-buildx docker-push e2e-kind clean

## build: the confighash binary, into bin/
build:
	$(GO) build -o bin/confighash ./cmd/confighash

## controlplane: build (once) the pinned etcd and Kubernetes v1.37.2 binaries (control plane, kubelet, scheduler, kube-proxy) into bin/
controlplane:
	$(GO) run ./e2e/cmd/cluster build

## test: lint, unit tests, fuzzing, then the e2e specs on a local control plane and node (its binaries, Argo Rollouts', Argo CD's and golangci-lint are built on first run, beside the rest: see prebuild; root)
# The binaries the later steps need are built by `prebuild`, started at the
# lowest priority beside the foreground steps: it takes the CPU only when
# they leave it idle (waiting on a cluster, mostly), and each step that
# needs a binary waits for it (the harness's build lock; golangci-lint's
# own), so nothing is built twice. A prebuild failure only loses the head
# start: the step that needs the binary builds it and reports the error.
# golangci-lint and e2e/argocd's vet run last so that their cold builds land
# in that idle time; `make lint` still runs them straight away. The prebuild's output is in
# bin/prebuild.log; it is stopped when the steps end.
test:
	@mkdir -p bin
	@setsid nice -n 19 $(MAKE) --no-print-directory prebuild > bin/prebuild.log 2>&1 & pg=$$!; \
	trap 'kill -- -'$$pg' 2>/dev/null || true' EXIT; \
	$(MAKE) --no-print-directory lint-fmt lint-vet unit fuzz e2e lint-vet-argocd lint-golangci

## prebuild: every binary make test builds on first use, in the order it needs them (control plane, Argo Rollouts, golangci-lint, Argo CD); skips those already built
prebuild:
	$(GO) run ./e2e/cmd/cluster build controlplane rollouts
	$(MAKE) --no-print-directory $(GOLANGCI_LINT)
	$(GO) run ./e2e/cmd/cluster build argocd

# -timeout 20m: e2e/images cross-compiles confighash for arm64, which on a
# cold build cache takes minutes on 2 cores (go test's default is 10m).
unit:
	$(GO) test -count=1 -timeout 20m ./...

## fuzz: each fuzz target for a fixed number of executions (seed corpora in testdata/fuzz/); go test fuzzes one target at a time
# Counts, not durations: with a duration, Go 1.26's fuzz coordinator can
# report its own deadline as a failure ("context deadline exceeded", no
# crasher; go.dev/issue/75804, fixed in 1.27), and CI hit it. A count has no
# deadline to race. Minimizing a new input is capped so one slow shrink
# cannot stall the run. About 45 s and 15 s here.
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

# -p 1: the e2e packages each start a cluster (e2e/incluster one with a
# node); on 2 cores they must not compete, and only one node fits a machine.
# Each suite runs even when an earlier one failed (they share nothing), its
# output kept in bin/e2e-logs/SUITE.log; the target fails at the end,
# printing each failed spec with the lines before it, then one line per
# failed spec, so that the end of a long CI log says what failed.
E2E_LOGS := $(CURDIR)/bin/e2e-logs
suite = set -o pipefail; ( $(2) ) 2>&1 | tee $(E2E_LOGS)/$(1).log || grep -E -B 25 '^[[:space:]]*--- FAIL|^panic:' $(E2E_LOGS)/$(1).log > $(E2E_LOGS)/$(1).failed || echo "(no failed spec named; see $(E2E_LOGS)/$(1).log)" > $(E2E_LOGS)/$(1).failed
e2e: controlplane
	@rm -rf $(E2E_LOGS) && mkdir -p $(E2E_LOGS)
	@$(call suite,e2e,$(GO) test -tags e2e -count=1 -p 1 -timeout 60m -v ./e2e/...)
	@$(call suite,deploy,cd e2e/deploy && $(GO) test -tags e2e -count=1 -timeout 30m -v ./...)
	@$(call suite,argocd-build,cd e2e/argocd && GOTOOLCHAIN=$(ARGOCD_GO) $(GO) test -c -o $(CURDIR)/bin/argocd-diff.test .)
	@$(call suite,argocd-diff,$(GO) run ./e2e/cmd/cluster exec --rollouts -- bin/argocd-diff.test -test.v -test.count=1 -test.timeout=20m -test.skip '^TestArgoCDController')
	@$(call suite,argocd-controller,$(GO) run ./e2e/cmd/cluster exec --node -- bin/argocd-diff.test -test.v -test.count=1 -test.timeout=40m -test.run '^TestArgoCDController')
	@failed=$$(ls $(E2E_LOGS)/*.failed 2>/dev/null); [ -z "$$failed" ] || { for f in $$failed; do echo; echo "=== suite $$(basename $$f .failed) failed:"; cat $$f; done; \
		echo; echo "=== failed:"; for f in $$failed; do grep -h -E '^[[:space:]]*--- FAIL|^panic:|^\(no failed spec' $$f | sed "s|^|$$(basename $$f .failed): |"; done; exit 1; }

## demo: start a local cluster with a node, deploy confighash from its manifests, show a sample app's log before and after a config change, stop (root)
demo: controlplane
	$(GO) run ./e2e/cmd/demo

## cluster-up / cluster-down: a local control plane and node left running, kubeconfig in .cluster/kubeconfig (root)
cluster-up:
	$(GO) run ./e2e/cmd/cluster up

cluster-down:
	$(GO) run ./e2e/cmd/cluster down

## bench: hasher and handler micro-benchmarks, then the hook's, admission (against a do-nothing webhook) and cache figures on the local control plane, then waves against all at once on the local node
bench: controlplane
	$(GO) test -run '^$$' -bench . -benchmem ./hasher/ ./webhook/
	CONFIGHASH_BENCH=1 $(GO) test -tags e2e -count=1 -timeout 30m -run '^TestBench' -v ./e2e/
	CONFIGHASH_BENCH=1 $(GO) test -tags e2e -count=1 -timeout 30m -run '^TestBench' -v ./e2e/incluster/

# golangci-lint is built from source on first use, at the pinned version,
# with `go install pkg@version`: that builds it with exactly the dependency
# versions its own go.mod pins (what its maintainers test and release),
# checked against the Go checksum database, and keeps its ~220 modules out of
# our go.mod and out of a tools go.mod we would have to keep in step. The
# binary is named by version, so bumping the pin builds the new one. v2.15.0
# needs Go 1.26, as this module does. Its checks are in .golangci.yml.
# It lints the root module, again with the e2e tag (only e2e/ has tagged
# files), and e2e/deploy; e2e/argocd needs Go 1.27, which this build cannot
# load, so it gets go vet only. The e2e/controlplane/tools modules hold only
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

## docker-build / docker-push: the image (needs a Docker engine)
docker-build:
	DOCKER_BUILDKIT=1 docker build -t $(IMG) .

docker-push:
	docker push $(IMG)

## docker-buildx: the image for linux/amd64 and linux/arm64 as one index, pushed to $(IMG) (needs Docker with buildx; the build stage cross-compiles, no emulation)
PLATFORMS ?= linux/amd64,linux/arm64
docker-buildx:
	docker buildx build --platform $(PLATFORMS) -t $(IMG) --push .

## e2e-kind: the same e2e specs on a kind cluster with cert-manager (needs Docker and kind)
e2e-kind:
	IMG=$(IMG) KIND_CLUSTER=$(KIND_CLUSTER) ./e2e/kind/run.sh

clean:
	rm -rf bin/confighash .cluster
