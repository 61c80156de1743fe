//go:build e2e && linux

package controlplane_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/confighash/confighash/e2e/controlplane"
)

// binaries builds or finds the control plane. The first build takes about 15
// minutes: run with -timeout 30m, or `go run ./e2e/cmd/cluster build` first.
func binaries(t *testing.T) controlplane.Binaries {
	t.Helper()
	// Progress goes to stderr, not t.Log, so that it shows while building.
	_, bins, err := controlplane.EnsureRepoBinaries(t.Context(), os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	return bins
}

func TestControlPlaneRunsControllers(t *testing.T) {
	bins := binaries(t)
	begin := time.Now()
	cp, err := controlplane.Start(t.Context(), bins, controlplane.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Error(err)
		}
	})
	t.Logf("control plane started in %s", time.Since(begin).Round(time.Millisecond))
	for _, p := range cp.StartupPhases() {
		t.Logf("  %-28s %s", p.Name, p.Duration.Round(time.Millisecond))
	}

	client, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	labels := map[string]string{"app": "probe"}
	deploy, err := client.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "probe"},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A ReplicaSet owned by the Deployment can only come from the
	// deployment controller, so this proves the controller-manager works.
	created := time.Now()
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := client.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, rs := range list.Items {
			if ref := metav1.GetControllerOf(&rs); ref != nil && ref.UID == deploy.UID {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no ReplicaSet for the Deployment: %v", err)
	}
	t.Logf("ReplicaSet appeared %s after the Deployment", time.Since(created).Round(time.Millisecond))

	out, err := exec.CommandContext(ctx, cp.Kubectl, "--kubeconfig", cp.Kubeconfig, "get", "replicasets", "-o", "name").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "replicaset.apps/probe-") {
		t.Errorf("kubectl get replicasets: %v\n%s", err, out)
	}

	pids := cp.PIDs()
	if len(pids) != 3 {
		t.Fatalf("PIDs() = %v, want 3", pids)
	}
	if err := cp.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("pid %d after Stop: kill(pid, 0) = %v, want ESRCH", pid, err)
		}
	}
}

func TestStartFailureQuotesLogAndCleansUp(t *testing.T) {
	bins := binaries(t)
	// etcd in place of kube-apiserver refuses the API server's flags.
	bins.APIServer = bins.Etcd
	dir := t.TempDir()
	_, err := controlplane.Start(t.Context(), bins, controlplane.Options{Dir: dir})
	if err == nil {
		t.Fatal("Start succeeded with a broken kube-apiserver")
	}
	t.Logf("Start error (expected):\n%s", err)
	if msg := err.Error(); !strings.Contains(msg, "kube-apiserver exited during startup") || !strings.Contains(msg, "last 30 lines") {
		t.Errorf("error does not explain the failure with the log:\n%s", msg)
	}
	if left := processesMentioning(t, dir); len(left) > 0 {
		t.Errorf("processes left running after a failed Start: %v", left)
	}
}

// processesMentioning lists live processes whose arguments contain dir.
func processesMentioning(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), dir+"/") {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue
		}
		found = append(found, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return found
}
