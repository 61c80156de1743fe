//go:build linux

package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Versions of the control plane. They must match the requirements of the
// tools modules under e2e/controlplane/tools, which pin the exact sources.
const (
	EtcdVersion = "v3.6.16"
	// KubernetesVersion is the release every spec runs on: the control
	// plane and the node (tools/kube).
	KubernetesVersion = "v1.37.2"
	// OldestKubernetesVersion is the oldest minor the chart claims. Only its
	// control plane is built (tools/kube-oldest), for the subset of the root
	// specs that `make e2e-oldest` runs on it.
	OldestKubernetesVersion = "v1.36.3"
)

// kubernetesRelease is a Kubernetes release the harness builds from its own
// tools module, since one go.mod requires one version of k8s.io/kubernetes.
type kubernetesRelease struct {
	version string
	tools   string // directory under e2e/controlplane/tools
	// node: the kubelet, scheduler and kube-proxy are built too.
	node bool
}

// KubernetesVersions are the releases the harness builds, the default first.
func KubernetesVersions() []string {
	releases := kubernetesReleases()
	versions := make([]string, 0, len(releases))
	for _, r := range releases {
		versions = append(versions, r.version)
	}
	return versions
}

func kubernetesReleases() []kubernetesRelease {
	return []kubernetesRelease{
		{version: KubernetesVersion, tools: "kube", node: true},
		{version: OldestKubernetesVersion, tools: "kube-oldest"},
	}
}

// findRelease returns the release of version, one of KubernetesVersions.
func findRelease(version string) (kubernetesRelease, error) {
	for _, r := range kubernetesReleases() {
		if r.version == version {
			return r, nil
		}
	}
	return kubernetesRelease{}, fmt.Errorf("the harness builds no Kubernetes %q (it builds %s)", version, strings.Join(KubernetesVersions(), ", "))
}

// Binaries are the paths of the control-plane executables, and of the
// node's (kubelet, scheduler, kube-proxy), which are built with them from the
// same module so that a node never skews against its control plane. The
// node's are empty for a release built without them.
type Binaries struct {
	Etcd, APIServer, ControllerManager, Kubectl string
	Kubelet, Scheduler, Proxy                   string
}

// buildTarget is one executable of a tools module: the package to build and
// the file name it must get (the etcd main package is the module root
// go.etcd.io/etcd/server/v3, which `go build` would name "server").
type buildTarget struct {
	pkg, name string
}

// binaryGroup is a set of executables built together from one tools module
// into one versioned cache directory.
type binaryGroup struct {
	label    string // for error messages
	version  string
	toolsDir string // module to run `go build` in
	outDir   string // cache directory, versioned so upgrades rebuild
	estimate string // how long a cold build takes, so nobody thinks it hung
	ldflags  string
	// env is added to the go command's environment: GOTOOLCHAIN for a
	// module that needs a newer Go than the one running the harness.
	env     []string
	targets []buildTarget
}

// binaryGroups lists what EnsureKubernetes provides for release, relative
// to repoRoot: etcd, the same for every release, and the release's own.
func binaryGroups(repoRoot string, release kubernetesRelease) []binaryGroup {
	kube := binaryGroup{
		label:    "Kubernetes",
		version:  release.version,
		toolsDir: filepath.Join(repoRoot, "e2e", "controlplane", "tools", release.tools),
		outDir:   filepath.Join(repoRoot, "bin", "kubernetes-"+release.version),
		estimate: "about 4 minutes on 2 idle cores, much longer on a busy machine",
		ldflags:  kubeVersionLDFlags(release.version),
		targets: []buildTarget{
			{"k8s.io/kubernetes/cmd/kube-apiserver", "kube-apiserver"},
			{"k8s.io/kubernetes/cmd/kube-controller-manager", "kube-controller-manager"},
			{"k8s.io/kubernetes/cmd/kubectl", "kubectl"},
		},
	}
	if release.node {
		kube.targets = append(kube.targets,
			buildTarget{"k8s.io/kubernetes/cmd/kubelet", "kubelet"},
			buildTarget{"k8s.io/kubernetes/cmd/kube-scheduler", "kube-scheduler"},
			buildTarget{"k8s.io/kubernetes/cmd/kube-proxy", "kube-proxy"},
		)
	} else {
		// Its k8s.io packages are its own: none is shared with the
		// default release's build or the root module's.
		kube.estimate = "13 CPU-minutes, about 7 minutes on 2 idle cores, much longer on a busy machine"
	}
	return []binaryGroup{
		{
			label:    "etcd",
			version:  EtcdVersion,
			toolsDir: filepath.Join(repoRoot, "e2e", "controlplane", "tools", "etcd"),
			outDir:   filepath.Join(repoRoot, "bin", "etcd-"+EtcdVersion),
			estimate: "about a minute on 2 cores",
			targets:  []buildTarget{{"go.etcd.io/etcd/server/v3", "etcd"}},
		},
		kube,
	}
}

// kubeVersionLDFlags stamps the release version the way Kubernetes' own build
// (hack/lib/version.sh) does. Without it a `go build` reports
// v0.0.0-master+$Format:%H$ from /version and `kubectl version`, which
// confuses version checks in clients and skew warnings in kubectl.
func kubeVersionLDFlags(version string) string {
	major, minor, _ := strings.Cut(strings.TrimPrefix(version, "v"), ".")
	minor, _, _ = strings.Cut(minor, ".")
	var flags []string
	for _, pkg := range []string{"k8s.io/client-go/pkg/version", "k8s.io/component-base/version"} {
		flags = append(flags,
			"-X", pkg+".gitVersion="+version,
			"-X", pkg+".gitMajor="+major,
			"-X", pkg+".gitMinor="+minor,
			"-X", pkg+".gitTreeState=clean",
		)
	}
	return strings.Join(flags, " ")
}

func binariesIn(repoRoot string, release kubernetesRelease) Binaries {
	groups := binaryGroups(repoRoot, release)
	etcd, kube := groups[0], groups[1]
	b := Binaries{
		Etcd:              filepath.Join(etcd.outDir, "etcd"),
		APIServer:         filepath.Join(kube.outDir, "kube-apiserver"),
		ControllerManager: filepath.Join(kube.outDir, "kube-controller-manager"),
		Kubectl:           filepath.Join(kube.outDir, "kubectl"),
	}
	if release.node {
		b.Kubelet = filepath.Join(kube.outDir, "kubelet")
		b.Scheduler = filepath.Join(kube.outDir, "kube-scheduler")
		b.Proxy = filepath.Join(kube.outDir, "kube-proxy")
	}
	return b
}

// EnsureRepoBinaries is EnsureBinaries for the repository this runs in
// (RepoRoot), whose root it returns too.
func EnsureRepoBinaries(ctx context.Context, progress io.Writer) (root string, bins Binaries, err error) {
	if root, err = RepoRoot(); err != nil {
		return "", Binaries{}, err
	}
	bins, err = EnsureBinaries(ctx, root, progress)
	return root, bins, err
}

// EnsureBinaries is EnsureKubernetes of KubernetesVersion.
func EnsureBinaries(ctx context.Context, repoRoot string, progress io.Writer) (Binaries, error) {
	return EnsureKubernetes(ctx, repoRoot, KubernetesVersion, progress)
}

// EnsureKubernetes returns the cached binaries of Kubernetes version (one
// of KubernetesVersions) and etcd under <repoRoot>/bin, building the
// missing ones from the Go module proxy first.
// The first build takes minutes (about 5 on 2 idle cores, half an hour on a
// busy machine), so it reports progress to progress (nil discards it); with
// everything cached it prints nothing.
// Concurrent callers (parallel test packages) wait for a single build.
func EnsureKubernetes(ctx context.Context, repoRoot, version string, progress io.Writer) (Binaries, error) {
	if progress == nil {
		progress = io.Discard
	}
	release, err := findRelease(version)
	if err != nil {
		return Binaries{}, err
	}
	bins := binariesIn(repoRoot, release)
	groups := binaryGroups(repoRoot, release)
	if len(missingTargets(groups)) == 0 {
		return bins, nil
	}

	unlock, err := lockBuild(ctx, filepath.Join(repoRoot, "bin"), progress)
	if err != nil {
		return Binaries{}, err
	}
	defer unlock()
	// Check again: whoever held the lock may have built everything.
	for _, g := range groups {
		missing := g.missing()
		if len(missing) == 0 {
			continue
		}
		g.targets = missing
		if err := g.build(ctx, progress); err != nil {
			return Binaries{}, err
		}
	}
	if err := bins.validate(release.node); err != nil {
		return Binaries{}, fmt.Errorf("after building: %w", err)
	}
	return bins, nil
}

func missingTargets(groups []binaryGroup) []buildTarget {
	var missing []buildTarget
	for _, g := range groups {
		missing = append(missing, g.missing()...)
	}
	return missing
}

// ensureTool is what the Ensure functions of the tools built on demand
// share: it builds the group of the repository's tree that group makes,
// if a binary of it is missing, reporting to progress (nil discards it),
// and returns the group and the path of its first target, checked to be
// executable.
func ensureTool(ctx context.Context, progress io.Writer, group func(repoRoot string) binaryGroup) (binaryGroup, string, error) {
	if progress == nil {
		progress = io.Discard
	}
	root, err := RepoRoot()
	if err != nil {
		return binaryGroup{}, "", err
	}
	g := group(root)
	if err := g.ensure(ctx, root, progress); err != nil {
		return binaryGroup{}, "", err
	}
	bin := filepath.Join(g.outDir, g.targets[0].name)
	if err := isExecutable(bin); err != nil {
		return binaryGroup{}, "", fmt.Errorf("after building: %w", err)
	}
	return g, bin, nil
}

// ensure builds the group once if any of its binaries is missing, under
// EnsureBinaries' lock, so that parallel callers wait for one build. With
// everything built it prints nothing.
func (g binaryGroup) ensure(ctx context.Context, repoRoot string, progress io.Writer) error {
	if len(g.missing()) == 0 {
		return nil
	}
	unlock, err := lockBuild(ctx, filepath.Join(repoRoot, "bin"), progress)
	if err != nil {
		return err
	}
	defer unlock()
	// Check again: whoever held the lock may have built it.
	if len(g.missing()) == 0 {
		return nil
	}
	return g.build(ctx, progress)
}

func (g binaryGroup) missing() []buildTarget {
	var missing []buildTarget
	for _, t := range g.targets {
		if isExecutable(filepath.Join(g.outDir, t.name)) != nil {
			missing = append(missing, t)
		}
	}
	return missing
}

// validate checks that every binary, the node's too when node is set, is set
// and executable, so that a wrong path fails here rather than as an obscure
// exec error half-way through Start.
func (b Binaries) validate(node bool) error {
	var errs []error
	files := []struct{ name, path string }{
		{"Etcd", b.Etcd}, {"APIServer", b.APIServer}, {"ControllerManager", b.ControllerManager}, {"Kubectl", b.Kubectl},
	}
	if node {
		files = append(files, []struct{ name, path string }{{"Kubelet", b.Kubelet}, {"Scheduler", b.Scheduler}, {"Proxy", b.Proxy}}...)
	}
	for _, f := range files {
		if f.path == "" {
			errs = append(errs, fmt.Errorf("empty path in Binaries.%s", f.name))
			continue
		}
		if err := isExecutable(f.path); err != nil {
			errs = append(errs, fmt.Errorf("path in Binaries.%s: %w", f.name, err))
		}
	}
	return errors.Join(errs...)
}

func isExecutable(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}
