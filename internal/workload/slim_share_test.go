package workload

import (
	"reflect"
	"testing"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/confighash/confighash/internal/contract"
)

// readerOf is a Deployment reading Secret secret's key "password" by env,
// with the decoded strings a cached one has.
func readerOf(name, secret string, annotations map[string]string) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: "u-" + "1", ResourceVersion: "42", Annotations: annotations,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "App", Name: "owner", UID: "o-1", Controller: ptr.To(true)}}}}
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": name},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}}}}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "app", Env: []corev1.EnvVar{{Name: "P", ValueFrom: &corev1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: "password"}}}}}}
	d.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: "stamp-of-" + name}
	d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: string([]byte("MinimumReplicasAvailable"))}}
	return d
}

// TestSlimmedWorkloadsShareTheirMark: the workloads that keep none of the
// annotations the hook reads share one read-only annotations map, rather
// than a map of about 300 bytes each; one that keeps one has its own.
func TestSlimmedWorkloadsShareTheirMark(t *testing.T) {
	k := kindNamed(t, "Deployment")
	slim := func(d *appsv1.Deployment) *appsv1.Deployment { return k.SlimObject(d).(*appsv1.Deployment) }
	same := func(a, b map[string]string) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}

	a, b := slim(readerOf("a", "s", map[string]string{"other": "x"})), slim(readerOf("b", "s", nil))
	if !same(a.Annotations, b.Annotations) {
		t.Error("two slimmed workloads without annotations the hook reads hold a map each")
	}
	if !IsSlim(a) || slimmedOverLimit(a.Annotations) {
		t.Errorf("shared mark %v: not a held slim copy", a.Annotations)
	}
	ordered := slim(readerOf("c", "s", map[string]string{contract.RolloutOrderAnnotation: "2"}))
	if same(ordered.Annotations, a.Annotations) || ordered.Annotations[contract.RolloutOrderAnnotation] != "2" || !IsSlim(ordered) {
		t.Errorf("a workload's kept annotations %v are the shared mark's", ordered.Annotations)
	}
}

// TestSlimmedWorkloadKeepsNoDecodedString: the strings a slimmed copy keeps
// are its own, not the decoded object's, so that it pins none of the
// decoder's garbage in the heap (see keep).
func TestSlimmedWorkloadKeepsNoDecodedString(t *testing.T) {
	in := readerOf("web", "db", map[string]string{contract.RolloutOrderAnnotation: "2"})
	out := kindNamed(t, "Deployment").SlimObject(in).(*appsv1.Deployment)
	aliases := func(a, b string) bool { return len(a) > 0 && unsafe.StringData(a) == unsafe.StringData(b) }
	owner, gotOwner := in.OwnerReferences[0], out.OwnerReferences[0]
	pairs := []struct{ name, got, in string }{
		{"name", out.Name, in.Name}, {"namespace", out.Namespace, in.Namespace},
		{"uid", string(out.UID), string(in.UID)}, {"resourceVersion", out.ResourceVersion, in.ResourceVersion},
		{"annotation", out.Annotations[contract.RolloutOrderAnnotation], in.Annotations[contract.RolloutOrderAnnotation]},
		{"owner name", gotOwner.Name, owner.Name}, {"owner uid", string(gotOwner.UID), string(owner.UID)},
		{"owner kind", gotOwner.Kind, owner.Kind}, {"owner apiVersion", gotOwner.APIVersion, owner.APIVersion},
		{"selector value", out.Spec.Selector.MatchLabels["app"], in.Spec.Selector.MatchLabels["app"]},
		{"selector expression", out.Spec.Selector.MatchExpressions[0].Values[0], in.Spec.Selector.MatchExpressions[0].Values[0]},
		{"stamp", out.Spec.Template.Annotations[contract.ChecksumAnnotation], in.Spec.Template.Annotations[contract.ChecksumAnnotation]},
		{"condition reason", out.Status.Conditions[0].Reason, in.Status.Conditions[0].Reason},
	}
	for _, p := range pairs {
		if p.got != p.in {
			t.Errorf("%s %q, want %q", p.name, p.got, p.in)
		}
		if aliases(p.got, p.in) {
			t.Errorf("%s is the decoded object's string", p.name)
		}
	}
	ref := in.Spec.Template.Spec.Containers[0].Env[0].ValueFrom.SecretKeyRef
	for _, v := range out.Spec.Template.Spec.Volumes {
		for _, p := range v.Projected.Sources {
			if aliases(p.Secret.Name, ref.Name) {
				t.Error("the source's name is the decoded object's string")
			}
			for _, it := range p.Secret.Items {
				if aliases(it.Key, ref.Key) {
					t.Error("the source's key is the decoded object's string")
				}
			}
		}
	}
	if gotOwner.Controller == owner.Controller {
		t.Error("the controller flag is the decoded object's")
	}
}
