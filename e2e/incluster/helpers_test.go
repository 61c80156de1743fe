//go:build e2e

package incluster

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/e2e/images"
)

// settle is longer than the hook's 1 s coalescing window plus its work, so
// that "nothing more rolled" is observed rather than assumed.
const settle = 5 * time.Second

// sampleConfig creates, in ns, the ConfigMap and the Secret the sample app
// reads, and returns them.
func sampleConfig(t *testing.T, ns, greeting, password string) (*corev1.ConfigMap, *corev1.Secret) {
	t.Helper()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-config"},
		Data:       map[string]string{"greeting": greeting, "unused": "read by nobody"},
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-secret"},
		Data:       map[string][]byte{"password": []byte(password)},
	}
	env.Create(t, cm)
	env.Create(t, sec)
	return cm, sec
}

// sharedConfig creates ConfigMap shared in ns, holding data: the config
// the specs' readers read.
func sharedConfig(t *testing.T, ns string, data map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name, cm.Data = ns, "shared", data
	env.Create(t, cm)
	return cm
}

// sampleApp is a Deployment of the sample app that reads the greeting and
// the password twice each: as environment variables and as mounted files.
func sampleApp(ns string) *appsv1.Deployment {
	keyRef := func(name, key string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}}
	}
	spec := corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](2),
		Containers: []corev1.Container{{
			Name: "app", Image: images.SampleApp().Ref, ImagePullPolicy: corev1.PullIfNotPresent,
			Args: []string{"-env", "GREETING", "-env", "PASSWORD", "-file", "/config/greeting", "-file", "/secret/password"},
			Env: []corev1.EnvVar{
				{Name: "GREETING", ValueFrom: keyRef("web-config", "greeting")},
				{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "web-secret"}, Key: "password"}}},
			},
			VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/config"}, {Name: "secret", MountPath: "/secret"}},
		}},
		Volumes: []corev1.Volume{
			{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"},
				Items:                []corev1.KeyToPath{{Key: "greeting", Path: "greeting"}}}}},
			{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: "web-secret", Items: []corev1.KeyToPath{{Key: "password", Path: "password"}}}}},
		},
	}
	return deployment(ns, "web", 1, spec)
}

func deployment(ns, name string, replicas int32, spec corev1.PodSpec) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}

// waitNewReplicaSet waits until the Deployment's current ReplicaSet is no
// longer old, and returns it.
func waitNewReplicaSet(t *testing.T, d *appsv1.Deployment, old string) string {
	t.Helper()
	var rs string
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		cur, ok := env.LookupCurrentReplicaSet(t, d.Namespace, d.Name)
		rs = cur
		return ok && cur != old, nil
	})
	if err != nil {
		t.Fatalf("%s: no new ReplicaSet after a config change", d.Name)
	}
	return rs
}

// waitCurrent waits until the Deployment's current ReplicaSet is want.
func waitCurrent(t *testing.T, d *appsv1.Deployment, want string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		cur, ok := env.LookupCurrentReplicaSet(t, d.Namespace, d.Name)
		return ok && cur == want, nil
	})
	if err != nil {
		t.Fatalf("%s did not return to ReplicaSet %s", d.Name, want)
	}
}

// runningPod waits for a Running, Ready pod of ReplicaSet rs and returns its
// name and when this poll (every 100 ms) first saw it Ready: the Ready
// condition's own time has only whole seconds.
func runningPod(t *testing.T, ns, rs string) (string, time.Time) {
	t.Helper()
	var name string
	var readyAt time.Time
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := podsOf(ctx, ns, rs)
		for _, p := range pods {
			if runningReady(p) {
				name, readyAt = p.Name, time.Now()
				return true, nil
			}
		}
		return false, err
	})
	if err != nil {
		t.Fatalf("no Running, Ready pod of ReplicaSet %s: %v", rs, err)
	}
	return name, readyAt
}

// podLog reads a pod's log through the API server and the kubelet, as
// `kubectl logs` does for a user. The app prints once at start, so the log
// is polled until it has the expected number of lines.
func podLog(t *testing.T, ns, pod string, lines int) []string {
	t.Helper()
	var got []string
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		out, err := env.Run(ctx, "", "logs", "-n", ns, pod)
		if err != nil {
			return false, nil //nolint:nilerr // the container may be starting
		}
		got = strings.Split(strings.TrimSpace(out), "\n")
		return len(got) >= lines, nil
	})
	if err != nil {
		t.Fatalf("log of %s: want %d lines, have %q", pod, lines, got)
	}
	return got
}

// expectPrints checks the sample app's log shows these values, read through
// the environment and the mounted files alike.
func expectPrints(t *testing.T, ns, pod, greeting, password string) {
	t.Helper()
	want := []string{
		"env:GREETING=" + greeting,
		"env:PASSWORD=" + password,
		"file:/config/greeting=" + greeting,
		"file:/secret/password=" + password,
	}
	got := podLog(t, ns, pod, len(want))
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("pod %s printed %q, want %q", pod, got, want)
	}
	t.Logf("kubectl logs %s: %q", pod, got)
}

// leader returns the holder of confighash's leader Lease, a pod name.
func leader(ctx context.Context) (string, error) {
	l := &coordinationv1.Lease{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: framework.Namespace, Name: "confighash.dev"}, l); err != nil {
		return "", err
	}
	// controller-runtime's identity is the hostname (the pod name), "_", a UUID.
	holder, _, _ := strings.Cut(ptr.Deref(l.Spec.HolderIdentity, ""), "_")
	return holder, nil
}

// confighashPods lists the confighash pods that are not terminating.
func confighashPods(t *testing.T) []corev1.Pod {
	t.Helper()
	l := &corev1.PodList{}
	if err := env.Client.List(env.SpecContext(t), l, client.InNamespace(framework.Namespace),
		client.MatchingLabels{"app.kubernetes.io/name": "confighash"}); err != nil {
		t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// podsOf lists the pods of ReplicaSet rs in ns that are not being
// deleted.
func podsOf(ctx context.Context, ns, rs string) ([]corev1.Pod, error) {
	l := &corev1.PodList{}
	if err := env.Client.List(ctx, l, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(l.Items, func(p corev1.Pod) bool {
		c := metav1.GetControllerOf(&p)
		return c == nil || c.Name != rs || p.DeletionTimestamp != nil
	}), nil
}

// runningReady reports whether pod p runs and is Ready.
func runningReady(p corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && ready(p)
}

// ready reports whether a pod's Ready condition is true.
func ready(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
