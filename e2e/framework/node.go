package framework

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/confighash/confighash/e2e/controlplane"
	"github.com/confighash/confighash/e2e/images"
)

// SelfManagedOverlay is the kustomize overlay the node specs and the demo
// deploy: confighash issues its own serving certificate, so no cert-manager
// is needed.
const SelfManagedOverlay = "manifests/overlays/self-managed"

// PinningComponent is the kustomize component that turns pinned config on
// (--pinning, the pod webhook, the pinner's ClusterRole and the admission
// policies). Deploy leaves out its example RoleBindings: a spec binds the
// pinner's role in its own namespace, as a user does.
const PinningComponent = "manifests/components/pinning"

// NodeEnv is a local cluster with a real node, on which confighash runs as a
// user runs it: from its image, pulled from a registry, deployed with its own
// manifests.
type NodeEnv struct {
	*Env
	// ControlPlane is the cluster, for importing more images.
	ControlPlane *controlplane.ControlPlane
	// Registry is the registry the node pulls the sample app's and
	// confighash's images from, served by this process; charts can be
	// pushed to it too.
	Registry *images.Registry
	// Root is the repository root.
	Root string
	// platforms the images are built for (NodeOptions.Platforms).
	platforms []images.Platform
}

// SetupNode starts a control plane with a node and a local registry, builds
// the sample app's and confighash's images from this source tree for every
// platform of images.Platforms, pushes them, and points the node's
// containerd at the registry for their domain: pods then pull them, as
// users' pods pull confighash. Each pushed index is read back and checked
// to hold a static binary for each platform's architecture. It does not
// deploy confighash: call Deploy. progress receives build and start-up
// messages, which on a fresh machine take minutes.
func SetupNode(ctx context.Context, progress io.Writer) (*NodeEnv, error) {
	return SetupNodeWith(ctx, progress, NodeOptions{})
}

// NodeOptions change what SetupNode builds.
type NodeOptions struct {
	// Platforms the images are built for; nil means images.Platforms, as a
	// release builds them. The demo builds images.HostPlatforms only.
	Platforms []images.Platform
	// MaxPods is the node's kubelet maxPods (controlplane.Options.MaxPods).
	MaxPods int
}

// SetupNodeWith is SetupNode with options.
func SetupNodeWith(ctx context.Context, progress io.Writer, o NodeOptions) (*NodeEnv, error) {
	if os.Getenv(KubeconfigEnv) != "" {
		return nil, fmt.Errorf("the node specs run on their own local cluster; unset %s", KubeconfigEnv)
	}
	root, bins, err := controlplane.EnsureRepoBinaries(ctx, progress)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "starting local control plane and node (containerd, kubelet %s)…\n", controlplane.KubernetesVersion)
	begin := time.Now()
	cp, err := controlplane.Start(ctx, bins, controlplane.Options{Node: true, MaxPods: o.MaxPods, Progress: progress})
	if err != nil {
		return nil, err
	}
	for _, p := range cp.StartupPhases() {
		fmt.Fprintf(progress, "  %-28s %s\n", p.Name, p.Duration.Round(time.Millisecond))
	}
	fmt.Fprintf(progress, "cluster with node ready in %s\n", time.Since(begin).Round(time.Millisecond))
	reg, stop, err := startRegistry(cp)
	if err != nil {
		return nil, joinStop(err, cp.Stop)
	}
	env, err := newEnv(cp.Kubeconfig, cp.Kubectl, cp.RESTConfig())
	if err != nil {
		return nil, joinStop(err, stop)
	}
	env.stop = stop
	// Pods on a real node pull, start and roll for real: slower than the
	// control plane's objects alone.
	env.SpecTimeout = 5 * time.Minute
	e := &NodeEnv{Env: env, ControlPlane: cp, Registry: reg, Root: root, platforms: o.Platforms}
	for _, spec := range []images.Spec{images.SampleApp(), images.Confighash()} {
		if err := e.pushImage(ctx, spec, progress); err != nil {
			return nil, joinStop(err, stop)
		}
	}
	return e, nil
}

// startRegistry serves the registry, its request log beside the cluster's
// logs, and points the node at it for images.Domain. stop stops the cluster,
// then the registry.
func startRegistry(cp *controlplane.ControlPlane) (reg *images.Registry, stop func() error, err error) {
	logPath := filepath.Join(cp.Dir, "logs", "registry.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, nil, fmt.Errorf("creating %s: %w", logPath, err)
	}
	reg, err = images.StartRegistry(logFile)
	if err != nil {
		return nil, nil, errors.Join(err, logFile.Close())
	}
	stop = func() error { return errors.Join(cp.Stop(), reg.Close(), logFile.Close()) }
	if err := cp.MirrorRegistry(images.Domain, reg.Endpoint()); err != nil {
		return nil, nil, joinStop(err, func() error { return errors.Join(reg.Close(), logFile.Close()) })
	}
	return reg, stop, nil
}

// pushImage builds spec's image index, pushes it, and checks what the
// registry serves back.
func (e *NodeEnv) pushImage(ctx context.Context, spec images.Spec, progress io.Writer) error {
	platforms := e.platforms
	if platforms == nil {
		platforms = images.Platforms()
	}
	fmt.Fprintf(progress, "building %s for %s and pushing it to the local registry…\n", spec.Ref, platforms)
	begin := time.Now()
	idx, err := images.BuildIndex(ctx, e.Root, filepath.Join(e.ControlPlane.Dir, "images"), spec, platforms)
	if err != nil {
		return err
	}
	if err := e.Registry.Push(ctx, spec, idx); err != nil {
		return err
	}
	pulled, err := e.Registry.Index(ctx, spec)
	if err != nil {
		return err
	}
	imgs, err := images.Inspect(pulled)
	if err != nil {
		return err
	}
	if err := images.Check(imgs, spec.Binary, platforms); err != nil {
		return fmt.Errorf("the registry's %s: %w", spec.Ref, err)
	}
	for _, p := range imgs {
		fmt.Fprintf(progress, "  %-12s %s layer %d bytes (compressed), binary %d bytes, ELF %s\n",
			p.Platform, spec.Ref, p.LayerBytes, p.BinaryBytes, p.Machine)
	}
	fmt.Fprintf(progress, "  built and pushed in %s\n", time.Since(begin).Round(time.Millisecond))
	return nil
}

// Deploy applies a kustomize overlay of this repository, with components of
// it (as a user's overlay lists them), with one change, the image, which
// becomes the locally built one, and waits until the confighash Deployment
// has rolled out: every replica Ready through its real readiness probe.
func (e *NodeEnv) Deploy(ctx context.Context, overlay string, components ...string) error {
	dir := filepath.Join(e.ControlPlane.Dir, "deploy")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	// kustomize refuses an absolute resource path; a relative one may leave
	// the kustomization's directory.
	rel := func(path string) (string, error) {
		r, err := filepath.Rel(dir, filepath.Join(e.Root, path))
		if err != nil {
			return "", fmt.Errorf("locating %s: %w", path, err)
		}
		return r, nil
	}
	base, err := rel(overlay)
	if err != nil {
		return err
	}
	img := images.Confighash().Ref
	name, tag, _ := strings.Cut(img, ":")
	kustomization := fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - %s
images:
  - name: ghcr.io/confighash/confighash
    newName: %s
    newTag: %s
`, base, name, tag)
	if len(components) > 0 {
		kustomization += "components:\n"
	}
	for _, c := range components {
		r, err := rel(c)
		if err != nil {
			return err
		}
		kustomization += "  - " + r + "\n"
	}
	if slices.Contains(components, PinningComponent) {
		// Its example namespaces do not exist here.
		kustomization += `patches:
  - target:
      kind: RoleBinding
      name: confighash-pinner
    patch: |-
      $patch: delete
      apiVersion: rbac.authorization.k8s.io/v1
      kind: RoleBinding
      metadata:
        name: confighash-pinner
`
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
		return fmt.Errorf("writing kustomization: %w", err)
	}
	if _, err := e.Run(ctx, "", "apply", "--server-side", "-k", dir); err != nil {
		return err
	}
	// From now on, stopping and starting confighash means scaling it.
	e.Confighash = &inClusterRunner{c: e.Client}
	return e.WaitRollout(ctx, Namespace, "confighash", 3*time.Minute)
}

// WaitRollout waits for `kubectl rollout status` of a Deployment.
func (e *NodeEnv) WaitRollout(ctx context.Context, ns, name string, timeout time.Duration) error {
	_, err := e.Run(ctx, "", "rollout", "status", "-n", ns, "deployment/"+name, "--timeout="+timeout.String())
	return err
}

// DumpNodeLogs writes what helps explain a failed node spec: the confighash
// pods and their logs, and the tails of the kubelet's and kube-proxy's logs
// (a Service the host cannot reach is kube-proxy's to explain).
func (e *NodeEnv) DumpNodeLogs(ctx context.Context, w io.Writer) {
	for _, args := range [][]string{
		{"get", "pods", "-A", "-o", "wide"},
		{"logs", "-n", Namespace, "-l", "app.kubernetes.io/name=confighash", "--tail=80", "--prefix"},
		{"get", "events", "-A", "--sort-by=.lastTimestamp"},
	} {
		out, err := e.Run(ctx, "", args...)
		fmt.Fprintf(w, "--- kubectl %s ---\n%s", strings.Join(args, " "), out)
		if err != nil {
			fmt.Fprintln(w, err)
		}
	}
	for _, component := range []string{"kubelet", "kube-proxy"} {
		text, err := controlplane.TailFile(filepath.Join(e.ControlPlane.Dir, "logs", component+".log"), 60)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(w, "reading %s log: %v\n", component, err)
		}
		fmt.Fprintf(w, "--- %s log (tail) ---\n%s\n", component, text)
	}
}
