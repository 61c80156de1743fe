//go:build linux

package controlplane

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// The Argo Rollouts controller is a third-party workload controller: its
// Rollouts own ReplicaSets the way Deployments do, so specs about workloads
// confighash does not know natively need the real controller, not a fake.
// It is built on demand only, never by EnsureBinaries or `make controlplane`:
// most runs do not need it, and its cold build would add minutes to each.
const (
	// RolloutsVersion must match the requirement of the tools module under
	// e2e/controlplane/tools/rollouts.
	RolloutsVersion = "v1.10.2"
	rolloutsModule  = "github.com/argoproj/argo-rollouts"
	// rolloutsToolchain builds the tools module: argo-rollouts v1.10.2
	// declares go 1.26.10, newer than the Go the rest of the repository
	// needs, and this is the toolchain e2e/argocd already uses (so it is
	// usually in the module cache).
	rolloutsToolchain = "go1.27.3"
	// rolloutsStartTimeout covers the controller's start until it serves
	// /healthz; it does not wait for the informer caches (see StartRollouts).
	rolloutsStartTimeout = time.Minute
)

// Rollouts locates a built Argo Rollouts controller and its CRDs.
type Rollouts struct {
	// Controller is the path of the rollouts-controller binary.
	Controller string
	// CRDDir is the manifests/crds directory of the argo-rollouts module in
	// the module cache (read-only): the CRDs of the very version built.
	CRDDir string
}

func rolloutsGroup(repoRoot string) binaryGroup {
	return binaryGroup{
		label:    "Argo Rollouts",
		version:  RolloutsVersion,
		toolsDir: filepath.Join(repoRoot, "e2e", "controlplane", "tools", "rollouts"),
		outDir:   filepath.Join(repoRoot, "bin", "argo-rollouts-"+RolloutsVersion),
		estimate: "about 5 minutes on 2 cores, plus downloading its modules and Go 1.27 if they are not cached yet",
		env:      []string{"GOTOOLCHAIN=" + rolloutsToolchain},
		targets:  []buildTarget{{rolloutsModule + "/cmd/rollouts-controller", "rollouts-controller"}},
	}
}

// EnsureRollouts returns the cached Argo Rollouts controller under
// <repo>/bin, building it from the Go module proxy first if it is missing,
// and reporting that build's progress to progress (nil discards it). It
// shares EnsureBinaries' lock, so parallel callers wait for one build.
func EnsureRollouts(ctx context.Context, progress io.Writer) (Rollouts, error) {
	g, bin, err := ensureTool(ctx, progress, rolloutsGroup)
	if err != nil {
		return Rollouts{}, err
	}
	r := Rollouts{Controller: bin}
	// Asked of the go command, not derived from GOMODCACHE, so that it also
	// works with a moved or cleaned module cache (it downloads again).
	dir, err := moduleDir(ctx, g.toolsDir, g.env, rolloutsModule)
	if err != nil {
		return Rollouts{}, err
	}
	r.CRDDir = filepath.Join(dir, "manifests", "crds")
	if _, err := os.Stat(filepath.Join(r.CRDDir, "rollout-crd.yaml")); err != nil {
		return Rollouts{}, fmt.Errorf("argo-rollouts CRDs: %w", err)
	}
	return r, nil
}

// moduleDir returns the module cache directory of module, at the version
// the tools module in toolsDir requires.
func moduleDir(ctx context.Context, toolsDir string, env []string, module string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", module)
	cmd.Dir = toolsDir
	cmd.Env = append(append(os.Environ(), "GOWORK=off"), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// On failure the go command still prints the JSON, whose Error says why.
	var info struct{ Dir, Error string }
	jsonErr := json.Unmarshal(out, &info)
	switch {
	case info.Error != "":
		err = errors.New(info.Error)
	case err != nil:
	case jsonErr != nil:
		err = fmt.Errorf("decoding its output: %w", jsonErr)
	case info.Dir == "":
		err = errors.New("no Dir in its output")
	}
	if err != nil {
		return "", fmt.Errorf("go mod download -json %s in %s: %w\n%s", module, toolsDir, err, stderr.String())
	}
	return info.Dir, nil
}

// CRDFiles lists the CRD manifests, without the kustomization.yaml beside
// them. The controller needs all of them, not just the Rollout CRD: it waits
// for the caches of Experiments, AnalysisRuns, AnalysisTemplates and
// ClusterAnalysisTemplates too, and without their CRDs it waits forever,
// silently, and reconciles nothing.
func (r Rollouts) CRDFiles() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(r.CRDDir, "*-crd.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no *-crd.yaml in %s", r.CRDDir)
	}
	return files, nil
}

// InstallCRDs applies the CRDs with kubectl and waits until the API server
// serves them. Server-side apply, because the Rollout CRD is too large for
// the last-applied annotation of a client-side apply.
func (r Rollouts) InstallCRDs(ctx context.Context, kubectl, kubeconfig string) error {
	files, err := r.CRDFiles()
	if err != nil {
		return err
	}
	return ApplyCRDs(ctx, kubectl, kubeconfig, files)
}

// StartRollouts runs the controller against the cluster of kubeconfig, with
// dir as its working directory and its log in dir/logs/argo-rollouts.log
// (like the control plane's processes: pass ControlPlane.Dir). It returns
// once the controller serves /healthz, which it does before its informer
// caches sync: install the CRDs first (InstallCRDs), and expect its first
// reconciliation a moment later. stop terminates it like Stop does the
// control plane (SIGTERM, SIGKILL after 10 s); call it before stopping the
// control plane. Like the control plane's processes, the
// controller is killed if this process dies without calling stop.
//
// The controller watches all namespaces (--namespaced=false), as it does in
// a real cluster, and runs without leader election: there is one instance,
// and taking the Lease would only delay its start.
func StartRollouts(ctx context.Context, r Rollouts, kubeconfig, dir string) (stop func() error, err error) {
	if err := isExecutable(r.Controller); err != nil {
		return nil, fmt.Errorf("Rollouts.Controller: %w", err)
	}
	// The controller listens on all interfaces (0.0.0.0), not only on
	// loopback where FreePorts looks; a clash on another address is unlikely
	// enough for tests.
	ports, err := FreePorts(2)
	if err != nil {
		return nil, err
	}
	healthzPort, metricsPort := ports[0], ports[1]
	p, err := startProcess(processSpec{
		name: "argo-rollouts",
		path: r.Controller,
		args: rolloutsArgs(kubeconfig, healthzPort, metricsPort),
		dir:  dir,
	})
	if err != nil {
		return nil, err
	}
	if err := waitReady(ctx, p, rolloutsStartTimeout, httpHealthy(healthzPort)); err != nil {
		if stopErr := p.stop(); stopErr != nil {
			err = fmt.Errorf("%w (and stopping it: %w)", err, stopErr)
		}
		return nil, err
	}
	// Once: a second p.stop would send SIGKILL to a process group ID that
	// may have been reused since.
	return sync.OnceValue(p.stop), nil
}

func rolloutsArgs(kubeconfig string, healthzPort, metricsPort int) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--namespaced=false",
		"--leader-elect=false",
		"--healthzPort=" + strconv.Itoa(healthzPort),
		"--metricsPort=" + strconv.Itoa(metricsPort),
		"--loglevel=info",
	}
}

// ApplyCRDs applies CRD manifests with kubectl and waits until the API
// server serves them. Server-side apply, because large CRDs (the Rollout's,
// Argo CD's Application) exceed the last-applied annotation of a client-side
// apply.
func ApplyCRDs(ctx context.Context, kubectl, kubeconfig string, files []string) error {
	apply := []string{"--kubeconfig", kubeconfig, "apply", "--server-side", "--field-manager=confighash-e2e"}
	wait := []string{"--kubeconfig", kubeconfig, "wait", "--for=condition=Established", "--timeout=60s"}
	for _, f := range files {
		apply = append(apply, "-f", f)
		wait = append(wait, "-f", f)
	}
	if out, err := exec.CommandContext(ctx, kubectl, apply...).CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl apply: %w\n%s", err, out)
	}
	// Right after the apply a CRD may have no status.conditions yet, and
	// kubectl wait then fails at once ("accessor error: <nil>") instead of
	// waiting: ask again until the wait's own timeout has passed.
	deadline := time.Now().Add(time.Minute)
	for {
		out, err := exec.CommandContext(ctx, kubectl, wait...).CombinedOutput()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("kubectl wait --for=condition=Established: %w\n%s", errors.Join(err, ctx.Err()), out)
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}
