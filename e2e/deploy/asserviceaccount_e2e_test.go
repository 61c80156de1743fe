//go:build e2e

package deploy

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/confighash/confighash/e2e/controlplane"
	"github.com/confighash/confighash/e2e/framework"
)

// adminClient is a cluster admin's client of the local control plane.
func adminClient(t *testing.T, c *controlplane.ControlPlane) kubernetes.Interface {
	t.Helper()
	admin, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return admin
}

// install applies r for real, its Namespaces first, and types its objects.
func install(ctx context.Context, t *testing.T, r Render) *rendered {
	t.Helper()
	namespaces, rest := splitNamespaces(r.Objects)
	apply(ctx, t, namespaces, false)
	apply(ctx, t, rest, false)
	return decode(t, r)
}

// runAsServiceAccount runs bin with the Deployment's args, authenticated as
// the manifests' ServiceAccount, and waits until it is ready. With an
// external certificate, a self-signed pair stands in for the one
// cert-manager would have mounted.
func runAsServiceAccount(ctx context.Context, t *testing.T, c *controlplane.ControlPlane, admin kubernetes.Interface, bin string, dec *rendered) (*process, local) {
	t.Helper()
	kubeconfig := framework.ServiceAccountKubeconfig(ctx, t, admin, c.RESTConfig().Host, c.RESTConfig().CAData, dec.SA)
	l := localArgs(t, dec, kubeconfig)
	if dec.Mode.Flag == "external" {
		writeSelfSignedPair(t, l.certDir, servingCert(t, dec).Spec.DNSNames)
	}
	proc := startBinary(t, bin, l.args)
	waitReady(ctx, t, proc, l.healthURL)
	return proc, l
}

// stopNeverForbidden stops the binary and fails the test if it was denied
// anything while it ran.
func stopNeverForbidden(t *testing.T, proc *process) {
	t.Helper()
	proc.stop(t)
	if log := proc.log(); strings.Contains(strings.ToLower(log), "forbidden") {
		t.Errorf("the binary was denied something:\n%s", grep(log, "forbidden"))
	}
}

// createReader creates the ConfigMap app-config and the Deployment app,
// which reads it through envFrom, in ns.
func createReader(ctx context.Context, t *testing.T, admin kubernetes.Interface, ns string) *corev1.ConfigMap {
	t.Helper()
	cm, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "app-config"}, Data: map[string]string{"n": "0"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "app"}
	if _, err := admin.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: "registry.invalid/app:1",
					EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name},
					}}},
				}}},
			},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return cm
}
