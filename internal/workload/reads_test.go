package workload

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
)

// TestReadsOf is the table of which workloads confighash reads, and why it
// reads nothing for the others: the webhook, the hook, its index and the
// status command all take their answer from ReadsOf.
func TestReadsOf(t *testing.T) {
	optOut := map[string]string{contract.InjectionAnnotation: contract.InjectionDisabled}
	owner := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u", Controller: new(true)}}
	tests := map[string]struct {
		kind     string
		obj      client.Object
		want     Skip
		template bool // Reads.Template is set
		refs     int  // len(Reads.Refs)
		refErr   bool
	}{
		"reads":                  {kind: "Deployment", obj: deploymentReading(2, nil), template: true, refs: 2},
		"reads nothing":          {kind: "Deployment", obj: deploymentReading(0, nil), template: true},
		"at the limit":           {kind: "Deployment", obj: deploymentReading(MaxSources, nil), template: true, refs: MaxSources},
		"over the limit":         {kind: "Deployment", obj: deploymentReading(MaxSources+1, nil), want: SkipOverLimit, template: true, refs: MaxSources + 1},
		"opted out":              {kind: "Deployment", obj: deploymentReading(2, optOut), want: SkipOptedOut, template: true, refs: 2},
		"opted out, over limit":  {kind: "Deployment", obj: deploymentReading(MaxSources+1, optOut), want: SkipOptedOut, template: true, refs: MaxSources + 1},
		"malformed include":      {kind: "Deployment", obj: deploymentReading(1, map[string]string{contract.IncludeAnnotation: "configmap/a,nonsense"}), template: true, refs: 2, refErr: true},
		"owned, mutable kind":    {kind: "Deployment", obj: owned(deploymentReading(1, nil), owner), template: true, refs: 1},
		"owned Pod":              {kind: "Pod", obj: owned(podReading(nil), owner), want: SkipOwned},
		"owned Pod, opted out":   {kind: "Pod", obj: owned(podReading(optOut), owner), want: SkipOptedOut, template: true, refs: 1},
		"Pod of no controller":   {kind: "Pod", obj: owned(podReading(nil), []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "n", UID: "u"}}), template: true, refs: 1},
		"bare Pod":               {kind: "Pod", obj: podReading(nil), template: true, refs: 1},
		"no template":            {kind: "Rollout", obj: rolloutWithWorkloadRef(nil), want: SkipNoTemplate},
		"no template, opted out": {kind: "Rollout", obj: rolloutWithWorkloadRef(optOut), want: SkipOptedOut},
		"another kind's object":  {kind: "StatefulSet", obj: deploymentReading(1, nil), want: SkipNoTemplate},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			k := kindNamed(t, tc.kind)
			r := ReadsOf(k, tc.obj)
			if r.Skip != tc.want {
				t.Errorf("Skip = %q, want %q", r.Skip, tc.want)
			}
			if got := r.Template.Spec != nil; got != tc.template {
				t.Errorf("Template set = %v, want %v", got, tc.template)
			}
			if len(r.Refs) != tc.refs {
				t.Errorf("%d Refs, want %d", len(r.Refs), tc.refs)
			}
			if (r.RefErr != nil) != tc.refErr {
				t.Errorf("RefErr = %v, want an error: %v", r.RefErr, tc.refErr)
			}
			if !tc.template {
				return
			}
			// The Template aliases the object, as Kind.PodTemplate's does.
			want, _ := k.PodTemplate(tc.obj)
			if r.Template.Spec != want.Spec && !k.Unstructured() {
				t.Error("Template does not alias the object's pod template")
			}
			// The references are hasher.References of that template.
			refs, _ := hasher.References(want.Spec, tc.obj.GetAnnotations())
			if fmt.Sprint(refs) != fmt.Sprint(r.Refs) {
				t.Errorf("Refs = %v, want hasher.References' %v", r.Refs, refs)
			}
		})
	}
}

func kindNamed(t *testing.T, name string) Kind {
	t.Helper()
	for _, k := range Kinds() {
		if k.GVK.Kind == name {
			return k
		}
	}
	t.Fatalf("no kind %s", name)
	return Kind{}
}

// specReading is a pod spec reading n ConfigMaps through envFrom.
func specReading(n int) corev1.PodSpec {
	c := corev1.Container{Name: "app"}
	for i := range n {
		c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: fmt.Sprintf("cm-%d", i)}}})
	}
	return corev1.PodSpec{Containers: []corev1.Container{c}}
}

func deploymentReading(n int, annotations map[string]string) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "app", Annotations: annotations}}
	d.Spec.Template.Spec = specReading(n)
	return d
}

// podReading is a Pod that reads one ConfigMap.
func podReading(annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app", Annotations: annotations}, Spec: specReading(1)}
}

func owned[T client.Object](obj T, refs []metav1.OwnerReference) T {
	obj.SetOwnerReferences(refs)
	return obj
}

// rolloutWithWorkloadRef is a Rollout that reads a Deployment's template.
func rolloutWithWorkloadRef(annotations map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"workloadRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "app"}},
	}}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Rollout"})
	u.SetName("app")
	u.SetAnnotations(annotations)
	return u
}
