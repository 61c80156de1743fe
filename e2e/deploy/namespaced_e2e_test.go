//go:build e2e

package deploy

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/confighash/confighash/internal/contract"
)

// TestNamespacedRBACSufficesAtRunTime is TestRBACSufficesAtRunTime for the
// shipped namespaced component: the self-managed overlay with
// components/namespaced applied for real, and the binary run with its
// Deployment's args as its ServiceAccount. It must get ready and re-stamp a
// workload in team-a, leave one in a labelled namespace outside the list
// alone, and never be denied anything.
func TestNamespacedRBACSufficesAtRunTime(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r := renderNamed(t, namespacedRenders(t), "kustomize/self-managed+namespaced")
	bin, _ := confighashBinary(t)
	c := controlPlane(t)
	admin, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	// The served namespaces exist before their Roles, as the component
	// says; team-c is labelled but not served.
	const outside = "team-c"
	for _, ns := range append([]string{outside}, r.Namespaces...) {
		_, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: ns, Labels: map[string]string{contract.InjectionLabel: contract.InjectionEnabled},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	namespaces, rest := splitNamespaces(r.Objects)
	apply(ctx, t, namespaces, false)
	apply(ctx, t, rest, false)
	dec := decode(t, r)

	kubeconfig := serviceAccountKubeconfig(ctx, t, admin, c.RESTConfig().Host, c.RESTConfig().CAData, dec.SA)
	l := localArgs(t, dec, kubeconfig)
	proc := startBinary(t, bin, l.args)
	waitReady(ctx, t, proc, l.healthURL)

	// A workload outside the list, with a config change the hook would
	// act on if it watched there. Created first, so the re-stamp in
	// team-a below proves the hook had time to act on it.
	cm, err := admin.CoreV1().ConfigMaps(outside).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "app-config"}, Data: map[string]string{"n": "0"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "app"}
	if _, err := admin.AppsV1().Deployments(outside).Create(ctx, &appsv1.Deployment{
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
	cm.Data["n"] = "1"
	if _, err := admin.CoreV1().ConfigMaps(outside).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	restampWorkload(ctx, t, admin, proc, r.Namespaces[0])
	d, err := admin.AppsV1().Deployments(outside).Get(ctx, "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := d.Spec.Template.Annotations[contract.ChecksumAnnotation]; s != "" {
		t.Errorf("%s (labelled, not served): stamped %q", outside, s)
	}
	proc.stop(t)
	if log := proc.log(); strings.Contains(strings.ToLower(log), "forbidden") {
		t.Errorf("the binary was denied something:\n%s", grep(log, "forbidden"))
	}
}
