//go:build e2e

package incluster

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/confighash/confighash/cmd/confighash/app"
	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/e2e/images"
	"github.com/confighash/confighash/internal/preview"
)

// keyReader is a one-replica Deployment of the sample app that prints env
// var K, read from key key of configmap/shared; with key "" it reads the
// whole ConfigMap through envFrom and prints K, key k's value.
func keyReader(ns, name, key string) *appsv1.Deployment {
	c := corev1.Container{Name: "app", Image: images.SampleApp().Ref, Args: []string{"-env", "K"}}
	if key == "" {
		c.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "shared"}}}}
	} else {
		c.Env = []corev1.EnvVar{{Name: "K", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "shared"}, Key: key}}}}
	}
	return deployment(ns, name, 1, corev1.PodSpec{Containers: []corev1.Container{c}})
}

// TestPreviewThenApplyOnTheNode: confighash preview on a changed
// ConfigMap, then the same file applied. Four readers with running pods:
// of key a, of key b, of key c, and of the whole ConfigMap. The file
// changes a and adds K: preview lists exactly the reader of a and the
// whole-ConfigMap reader as rolling, the others as unchanged; applied, the
// change rolls exactly those two (one new ReplicaSet each, their pods
// printing the new value) and leaves the others on their pods.
func TestPreviewThenApplyOnTheNode(t *testing.T) {
	ctx := env.SpecContext(t)
	ns := env.NewNamespace(t, true)
	sharedConfig(t, ns, map[string]string{"a": "a1", "b": "b1", "c": "c1"})
	ds := []*appsv1.Deployment{keyReader(ns, "reads-a", "a"), keyReader(ns, "reads-b", "b"),
		keyReader(ns, "reads-c", "c"), keyReader(ns, "whole", "")}
	for _, d := range ds {
		env.Create(t, d)
	}
	first := map[string]string{}
	for _, d := range ds {
		if err := env.WaitRollout(ctx, ns, d.Name, 3*time.Minute); err != nil {
			t.Fatal(err)
		}
		first[d.Name] = env.CurrentReplicaSet(t, ns, d.Name)
	}

	file := filepath.Join(t.TempDir(), "shared.yaml")
	text := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n  namespace: " + ns +
		"\ndata:\n  a: a2\n  b: b1\n  c: c1\n  K: k2\n"
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := app.Run(ctx, []string{"preview", "-f", file, "-o", "json", "--kubeconfig", env.Kubeconfig,
		"--namespace-of-confighash", framework.Namespace}, &stdout, &stderr); err != nil {
		t.Fatalf("preview: %v\n%s", err, stderr.String())
	}
	var rep preview.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("decoding the json: %v\n%s", err, stdout.String())
	}
	var listed, unchanged []string
	for _, r := range rep.Rolling {
		listed = append(listed, r.Ref)
	}
	for _, r := range rep.NotRolling {
		if r.Why == preview.WhyUnchanged {
			unchanged = append(unchanged, r.Ref)
		}
	}
	sort.Strings(listed)
	sort.Strings(unchanged)
	if want := []string{"deployment/reads-a", "deployment/whole"}; !slices.Equal(listed, want) {
		t.Fatalf("preview lists %v as rolling, want %v", listed, want)
	}
	if want := []string{"deployment/reads-b", "deployment/reads-c"}; !slices.Equal(unchanged, want) {
		t.Errorf("preview lists %v as unchanged, want %v", unchanged, want)
	}

	env.Kubectl(t, "", "apply", "-f", file)
	rolled := map[string]string{"reads-a": "env:K=a2", "whole": "env:K=k2"}
	for _, d := range ds {
		if _, ok := rolled[d.Name]; !ok {
			continue
		}
		rs := waitNewReplicaSet(t, d, first[d.Name])
		if err := env.WaitRollout(ctx, ns, d.Name, 3*time.Minute); err != nil {
			t.Fatal(err)
		}
		pod, _ := runningPod(t, ns, rs)
		if got := podLog(t, ns, pod, 1); !slices.Contains(got, rolled[d.Name]) {
			t.Errorf("%s's new pod printed %q, want %s", d.Name, got, rolled[d.Name])
		}
	}
	time.Sleep(settle)
	for _, d := range ds {
		want := 1
		if _, ok := rolled[d.Name]; ok {
			want = 2
		}
		if rs := env.ReplicaSets(t, ns, d.Name); len(rs) != want {
			t.Errorf("%s has %d ReplicaSets after the apply, want %d, as preview said", d.Name, len(rs), want)
		}
	}
}
