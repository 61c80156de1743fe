//go:build e2e

package deploy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/confighash/confighash/e2e/controlplane"
	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/e2e/images"
	"github.com/confighash/confighash/internal/contract"
)

// TestReadmeInstall runs the README's install and use commands as a user
// types them, in bash with -euo pipefail, with the real make, kubectl and
// helm (and `kubectl confighash`, the binary installed as kubectl-confighash
// on PATH), on a local cluster with a real node. The image goes to the
// harness's registry, whose host stands in for the README's registry; the
// node pulls it from there. Each install way gets its own cluster. The use
// commands run around what the README leaves to the user (a namespace, a
// Deployment reading a ConfigMap, a changed ConfigMap in shared-config.yaml):
// the stamp must be a stamp, preview must name the reader, the change must
// roll it exactly once, and status must name the change.
func TestReadmeInstall(t *testing.T) {
	p, blocks := readmeBlocks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	helm, err := controlplane.EnsureHelm(ctx, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	pluginDir := t.TempDir()
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(pluginDir, "kubectl-confighash"), "./cmd/confighash")
	build.Dir = p.Root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building kubectl-confighash: %v\n%s", err, out)
	}
	path := strings.Join([]string{pluginDir, filepath.Dir(p.Kubectl), filepath.Dir(helm), os.Getenv("PATH")}, string(os.PathListSeparator))
	for _, install := range []string{"install-helm", "install-kustomize"} {
		t.Run(install, func(t *testing.T) {
			env := startNode(ctx, t)
			host := env.Registry.Host()
			// The node pulls the README's image from the local registry in
			// plain HTTP, as a node configured for a local registry does.
			if err := env.ControlPlane.MirrorRegistry(host, env.Registry.Endpoint()); err != nil {
				t.Fatal(err)
			}
			sh := userShell{t: t, ctx: ctx, path: path, kubeconfig: env.Kubeconfig, home: t.TempDir(), registry: host, blocks: blocks}

			out := sh.run(p.Root, "image-push")
			digest := regexp.MustCompile(`(?m)^digest (sha256:[0-9a-f]{64})$`).FindStringSubmatch(out)
			if digest == nil {
				t.Fatalf("make image-push printed no digest:\n%s", out)
			}
			if install == "install-kustomize" {
				overlay := filepath.Join(p.Root, "confighash-overlay")
				if _, err := os.Stat(overlay); err == nil {
					t.Fatalf("%s exists: the README's kustomize commands create it", overlay)
				}
				defer os.RemoveAll(overlay)
			}
			begin := time.Now()
			sh.run(p.Root, install)
			t.Logf("%s: confighash installed and Ready in %s", install, time.Since(begin).Round(time.Millisecond))
			checkRunsImage(ctx, t, env, host+"/confighash:dev", digest[1])

			useReadme(t, env, sh)
		})
	}
}

// useReadme runs the README's use commands around what the README leaves to
// the user.
func useReadme(t *testing.T, env *framework.NodeEnv, sh userShell) {
	ctx := env.SpecContext(t)
	dir := t.TempDir()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}); err != nil {
		t.Fatal(err)
	}
	sh.run(dir, "use-label")
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "shared-config"}, Data: map[string]string{"greeting": "hello"}}
	if err := env.Client.Create(ctx, cm.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	web := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: ptr.To[int64](2),
				Containers: []corev1.Container{{Name: "app", Image: images.SampleApp().Ref, Args: []string{"-env", "GREETING"},
					Env: []corev1.EnvVar{{Name: "GREETING", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "shared-config"}, Key: "greeting"}}}}}},
			}},
		},
	}
	waitStampedOnCreate(t, env, web)
	if err := env.Client.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	if err := env.WaitRollout(ctx, "shop", "web", 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	stamp := strings.TrimSpace(sh.run(dir, "use-stamp"))
	if !regexp.MustCompile(`^v2:[0-9a-f]{16}:[0-9a-f]{64}$`).MatchString(stamp) {
		t.Fatalf("the README's stamp command printed %q, not a stamp", stamp)
	}

	cm.Data["greeting"] = "hello again"
	manifest, err := yaml.Marshal(cm)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "shared-config.yaml"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	before := sh.run(dir, "use-preview-status")
	if !strings.Contains(before, "1 workload rolls") || !strings.Contains(before, "deployment/web") {
		t.Errorf("preview before the change does not say web rolls:\n%s", before)
	}
	if _, err := env.Run(ctx, string(manifest), "apply", "-f", "-"); err != nil {
		t.Fatal(err)
	}
	var restamped string
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		restamped = env.StampOf(t, web)
		return restamped != stamp, nil
	}); err != nil {
		t.Fatalf("web was not re-stamped after its ConfigMap changed")
	}
	if err := env.WaitRollout(ctx, "shop", "web", 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second) // longer than the hook's coalescing window: a second roll would show
	if got := env.StampOf(t, web); got != restamped {
		t.Errorf("web rolled twice: %s, then %s", restamped, got)
	}
	if n := len(env.ReplicaSets(t, "shop", "web")); n != 2 {
		t.Errorf("%d ReplicaSets of web after one change, want 2", n)
	}
	after := sh.run(dir, "use-preview-status")
	if !strings.Contains(after, "configmap/shared-config") {
		t.Errorf("status after the change does not name configmap/shared-config:\n%s", after)
	}
}

// checkRunsImage fails unless confighash's Deployment runs ref and its pods
// run the index that make image-push reported.
func checkRunsImage(ctx context.Context, t *testing.T, env *framework.NodeEnv, ref, digest string) {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: framework.Namespace, Name: "confighash"}, d); err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Spec.Containers[0].Image; got != ref {
		t.Fatalf("confighash runs %s, want the pushed %s", got, ref)
	}
	var pods corev1.PodList
	if err := env.Client.List(ctx, &pods, client.InNamespace(framework.Namespace)); err != nil {
		t.Fatal(err)
	}
	repo, _, _ := strings.Cut(ref, ":dev")
	want := repo + "@" + digest
	for _, pod := range pods.Items {
		for _, c := range pod.Status.ContainerStatuses {
			if c.ImageID != want {
				t.Errorf("%s runs %s, want the pushed %s", pod.Name, c.ImageID, want)
			}
		}
	}
	if len(pods.Items) == 0 {
		t.Fatal("no confighash pod")
	}
}

// waitStampedOnCreate waits until the webhook stamps a dry-run create of d: the
// apiserver matches a webhook's namespaceSelector against its cache of
// namespaces, which lags the README's label by a moment, and a workload
// admitted in that moment is stamped only at its sources' next change (as
// one created before the label).
func waitStampedOnCreate(t *testing.T, env *framework.NodeEnv, d *appsv1.Deployment) {
	t.Helper()
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		probe := d.DeepCopy()
		if err := env.Client.Create(ctx, probe, client.DryRunAll); err != nil {
			return false, err
		}
		_, stamped := probe.Spec.Template.Annotations[contract.ChecksumAnnotation]
		return stamped, nil
	})
	if err != nil {
		t.Fatalf("the webhook does not stamp %s in namespace %s: %v", d.Name, d.Namespace, err)
	}
}

// userShell runs a README block as a user's shell does: bash -euo pipefail,
// the README's registry replaced by the local one, PATH with the kubectl,
// helm and kubectl-confighash under test first, KUBECONFIG the cluster's,
// and Helm's files in a home of its own.
type userShell struct {
	t          *testing.T
	ctx        context.Context
	path       string
	kubeconfig string
	home       string
	registry   string
	blocks     map[string]string
}

func (s userShell) run(dir, block string) string {
	s.t.Helper()
	script := strings.ReplaceAll(s.blocks[block], ReadmeRegistry, s.registry)
	cmd := exec.CommandContext(s.ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(userEnv(os.Environ()), "PATH="+s.path, "KUBECONFIG="+s.kubeconfig,
		"HELM_CONFIG_HOME="+filepath.Join(s.home, "config"), "HELM_CACHE_HOME="+filepath.Join(s.home, "cache"),
		"HELM_DATA_HOME="+filepath.Join(s.home, "data"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	begin := time.Now()
	out, err := cmd.Output()
	s.t.Logf("README block %s (%s):\n%s\n%s%s", block, time.Since(begin).Round(time.Millisecond), script, out, stderr.String())
	if err != nil {
		s.t.Fatalf("README block %s: %v", block, err)
	}
	return string(out)
}

// userEnv is the test's environment without what a user's shell would not
// have: the variables of the make that runs the tests (a nested make would
// take its job server) and the ones userShell sets.
func userEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "PATH", "KUBECONFIG":
			continue
		}
		out = append(out, kv)
	}
	return out
}
