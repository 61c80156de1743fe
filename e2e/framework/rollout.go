package framework

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/confighash/confighash/e2e/controlplane"
)

// RolloutGVK is Argo Rollouts' Rollout, which the specs build as
// unstructured objects: the product does not import Argo Rollouts' types,
// and neither do its specs.
var RolloutGVK = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Rollout"}

// RolloutHashLabel is the label Argo Rollouts puts on each ReplicaSet it
// makes: the hash of the pod template it runs.
const RolloutHashLabel = "rollouts-pod-template-hash"

// RolloutReplicaSets lists, sorted, the template hashes of the
// ReplicaSets that Rollout ns/name controls.
func (e *Env) RolloutReplicaSets(t testing.TB, ns, name string) []string {
	t.Helper()
	var out []string
	for _, rs := range e.ControlledReplicaSets(t, ns, RolloutGVK.Kind, name) {
		out = append(out, rs.Labels[RolloutHashLabel])
	}
	slices.Sort(out)
	return out
}

// CanaryRollout is a canary Rollout of replicas pods of spec, labelled
// app=name, as a manifest declares it (no stamp), with the canary steps
// given (none: a new template replaces the old one at once).
func CanaryRollout(ns, name string, replicas int64, spec corev1.PodSpec, steps ...map[string]any) *unstructured.Unstructured {
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}}, Spec: spec}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&tmpl)
	if err != nil {
		panic(err) // a typed PodTemplateSpec always converts
	}
	canary := map[string]any{}
	if len(steps) > 0 {
		s := make([]any, len(steps))
		for i, step := range steps {
			s[i] = step
		}
		canary["steps"] = s
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(RolloutGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	u.Object["spec"] = map[string]any{
		"replicas": replicas,
		"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
		"template": m,
		"strategy": map[string]any{"canary": canary},
	}
	return u
}

// StartRollouts runs the Argo Rollouts controller against e for the rest
// of t, its CRDs installed and dir its state directory (its log under
// dir/logs, whose tail t logs if it fails). The first run builds the
// controller: about 5 minutes on 2 cores, more when its modules and Go
// 1.27 are not cached, which is longer than a spec's context.
func (e *Env) StartRollouts(t *testing.T, dir string) {
	t.Helper()
	buildCtx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	r, err := controlplane.EnsureRollouts(buildCtx, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	ctx := e.SpecContext(t)
	if err := r.InstallCRDs(ctx, e.KubectlPath, e.Kubeconfig); err != nil {
		t.Fatal(err)
	}
	stop, err := controlplane.StartRollouts(ctx, r, e.Kubeconfig, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			log, err := controlplane.TailFile(filepath.Join(dir, "logs", "argo-rollouts.log"), 40)
			t.Logf("argo-rollouts log (tail, %v):\n%s", err, log)
		}
		if err := stop(); err != nil {
			t.Errorf("stopping the Rollouts controller: %v", err)
		}
	})
}
