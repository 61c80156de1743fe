//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/hashkey"
	"github.com/confighash/confighash/workload"
)

func specContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// namespace creates a fresh namespace, labelled for injection or not, and
// deletes it when the spec ends.
func namespace(t *testing.T, labelled bool) string {
	t.Helper()
	ctx := specContext(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("e2e-%d", rand.Uint32())}}
	if labelled {
		ns.Labels = map[string]string{workload.InjectionLabel: workload.InjectionEnabled}
	}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), ns) })
	return ns.Name
}

func create(t *testing.T, obj client.Object, opts ...client.CreateOption) {
	t.Helper()
	if err := env.Client.Create(specContext(t), obj, opts...); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

func configMap(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

func secret(ns, name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// podSpec reads configmap cm wholly (envFrom) and key "password" of secret s.
func podSpec(cm, s string) corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", Image: "registry.k8s.io/pause:3.10",
		EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}},
		Env: []corev1.EnvVar{{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: s}, Key: "password"}}}},
	}}}
}

func template(spec corev1.PodSpec) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "e2e"}}, Spec: spec}
}

func deploymentOf(ns, name string, spec corev1.PodSpec) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "e2e"}},
			Template: template(spec),
		},
	}
}

// expectedChecksum computes, with confighash's own key and hasher, what the
// stamp of spec must be given the sources as they are in the cluster now.
func expectedChecksum(t *testing.T, ns string, spec *corev1.PodSpec, annotations map[string]string) string {
	t.Helper()
	ctx := specContext(t)
	key, err := hashkey.Ensure(ctx, env.Client, types.NamespacedName{Namespace: framework.Namespace, Name: "confighash-hmac-key"})
	if err != nil {
		t.Fatal(err)
	}
	refs, err := hasher.References(spec, annotations)
	if err != nil {
		t.Fatal(err)
	}
	res, err := hasher.Checksum(key, refs, func(s hasher.Source) (hasher.Content, bool, error) {
		var obj client.Object = &corev1.ConfigMap{}
		if s.Kind == hasher.Secret {
			obj = &corev1.Secret{}
		}
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: s.Name}, obj)
		if err != nil {
			return hasher.Content{}, false, client.IgnoreNotFound(err)
		}
		switch o := obj.(type) {
		case *corev1.ConfigMap:
			return hasher.ConfigMapContent(o), true, nil
		default:
			return hasher.SecretContent(o.(*corev1.Secret)), true, nil
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return res.Checksum
}

// stampOf reads obj back and returns its template's stamp.
func stampOf(t *testing.T, obj client.Object) string {
	t.Helper()
	if err := env.Client.Get(specContext(t), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatalf("reading %s: %v", obj.GetName(), err)
	}
	tmpl, ok := workload.PodTemplate(obj)
	if !ok {
		t.Fatalf("%T has no pod template", obj)
	}
	return tmpl.Checksum()
}

// replicaSets returns the names of the ReplicaSets of Deployment name,
// once the controller has settled on a count that holds for a moment.
func replicaSets(t *testing.T, ns, name string) []string {
	t.Helper()
	ctx := specContext(t)
	var names []string
	var last int
	stable := 0
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list := &appsv1.ReplicaSetList{}
		if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		names = names[:0]
		for _, rs := range list.Items {
			if c := metav1.GetControllerOf(&rs); c != nil && c.Kind == "Deployment" && c.Name == name {
				names = append(names, rs.Name)
			}
		}
		if len(names) > 0 && len(names) == last {
			stable++
		} else {
			stable = 0
		}
		last = len(names)
		return stable >= 5, nil
	})
	if err != nil {
		t.Fatalf("waiting for replicasets of %s: %v", name, err)
	}
	return names
}

// kubectl runs the real kubectl against the cluster.
func kubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(specContext(t), env.Kubectl, append([]string{"--kubeconfig", env.Kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
