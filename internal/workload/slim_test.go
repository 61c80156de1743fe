package workload

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
)

const mib = 1 << 20

// bulky1MiB is a Deployment of about 1 MiB, all of it where confighash
// reads nothing (values, commands, labels, foreign annotations, status
// messages) or more than it keeps (its own annotations, each 64 KiB).
func bulky1MiB() *appsv1.Deployment {
	chunk := strings.Repeat("x", 64<<10)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: "idle", UID: "u", ResourceVersion: "9", Generation: 2,
		Labels:        map[string]string{"app": "big"},
		Annotations:   map[string]string{"kubectl.kubernetes.io/last-applied-configuration": chunk, "note": chunk},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", FieldsV1: metav1.NewFieldsV1(`{"f:x":"` + chunk + `"}`)}}}}
	for _, a := range []string{contract.RolloutAnnotation, contract.HaltAnnotation, contract.HoldAnnotation, contract.CoalesceWindowAnnotation,
		contract.RolloutOrderAnnotation, contract.WavesAnnotation, contract.InjectionAnnotation, "confighash.dev/other"} {
		d.Annotations[a] = chunk
	}
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "big"}}
	c := corev1.Container{Name: "app", Image: "img", Command: []string{chunk}, Args: []string{chunk}}
	for i := range 4 {
		c.Env = append(c.Env, corev1.EnvVar{Name: fmt.Sprintf("V%d", i), Value: chunk})
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: "LEVEL", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "app"}, Key: "level"}}})
	d.Spec.Template.Labels = map[string]string{"app": "big"}
	d.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: "v2:0123456789abcdef:00", "big": chunk}
	d.Spec.Template.Spec.Containers = []corev1.Container{c}
	d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable", Message: chunk}}
	return d
}

// TestSlimObjectOfA1MiBDeployment: the cache's copy of a 1 MiB Deployment
// is a few hundred bytes, whatever the bulk is, confighash's own
// annotations included; and it still reads what the Deployment reads.
func TestSlimObjectOfA1MiBDeployment(t *testing.T) {
	d := bulky1MiB()
	full := encodedSize(t, d)
	if full < mib {
		t.Fatalf("the fixture is %d bytes, want at least 1 MiB", full)
	}
	k := kindNamed(t, "Deployment")
	slim := k.SlimObject(d)
	if got := encodedSize(t, slim); got > 2<<10 {
		t.Errorf("the slimmed copy of a %d-byte Deployment is %d bytes, want at most 2 KiB:\n%s", full, got, mustJSON(t, slim))
	}
	if encodedSize(t, d) != full {
		t.Error("SlimObject changed its input")
	}
	if got, want := ReadsOf(k, slim), ReadsOf(k, d); got.Skip != want.Skip || !reflect.DeepEqual(got.Refs, want.Refs) {
		t.Errorf("slim reads %+v, whole %+v", got, want)
	}
}

// worstCase fills d to keep the most: every kept annotation at its bound,
// and one ConfigMap read by env, key by key (the most structure per byte
// of references), up to MaxReferenceBytes.
func worstCase(d *appsv1.Deployment) *appsv1.Deployment {
	return worstCaseReading(d, "app")
}

// worstCaseReading is worstCase, its keys read from ConfigMap name, of
// three letters.
func worstCaseReading(d *appsv1.Deployment, name string) *appsv1.Deployment {
	for a, limit := range keptAnnotations {
		if a != contract.IncludeAnnotation && a != contract.ExcludeAnnotation {
			d.Annotations[a] = strings.Repeat("v", limit)
		}
	}
	c := &d.Spec.Template.Spec.Containers[0]
	c.Env = nil
	n := entryCost + len("app")
	for i := 0; ; i++ {
		key := fmt.Sprintf("k%d", i)
		if n+entryCost+len(key) > MaxReferenceBytes {
			break
		}
		n += entryCost + len(key)
		c.Env = append(c.Env, corev1.EnvVar{Name: "E", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}}})
	}
	return d
}

// TestSlimObjectWorstCase: an object built to keep the most (references
// just within MaxReferenceBytes, every kept annotation at its bound) stays
// within the bound docs/security.md gives; one byte more of references
// leaves none kept, and a mark that ReadsOf reads as over the limit, as it
// reads the whole object.
func TestSlimObjectWorstCase(t *testing.T) {
	k := kindNamed(t, "Deployment")
	within := worstCase(bulky1MiB())
	slim := k.SlimObject(within)
	if r := ReadsOf(k, slim); r.Skip != NotSkipped || len(r.Refs) != 1 {
		t.Fatalf("at the bound: slim reads %+v, want one reference, not skipped", r)
	}
	// The bound docs/security.md states for one cached workload.
	const docBound = 96 << 10
	t.Logf("worst-case slim copy: %d bytes encoded", encodedSize(t, slim))
	if got := encodedSize(t, slim); got > docBound {
		t.Errorf("worst-case slim copy is %d bytes encoded, over %d", got, docBound)
	}
	over := within.DeepCopy()
	over.Spec.Template.Spec.Containers[0].Env = append(over.Spec.Template.Spec.Containers[0].Env, corev1.EnvVar{ValueFrom: &corev1.EnvVarSource{
		ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}, Key: "one-more"}}})
	if r := ReadsOf(k, over); r.Skip != SkipOverLimit {
		t.Fatalf("one key over the bound: whole object Skip = %q, want %q", r.Skip, SkipOverLimit)
	}
	slimOver := k.SlimObject(over)
	if r := ReadsOf(k, slimOver); r.Skip != SkipOverLimit || r.Template.Checksum() != over.Spec.Template.Annotations[contract.ChecksumAnnotation] {
		t.Errorf("over the bound: slim Skip = %q, stamp %q; want %q and the stamp", r.Skip, r.Template.Checksum(), SkipOverLimit)
	}
	if got := encodedSize(t, slimOver); got > 3*recordValueBytes+4<<10 {
		t.Errorf("over the bound, the slim copy keeps %d bytes: its references should be gone", got)
	}
}

// TestSlimObjectAnnotations: the kept annotations are those the hook
// reads, each within its bound; a longer value becomes a value no parser
// takes, which still differs when the value does; the rest go.
func TestSlimObjectAnnotations(t *testing.T) {
	k := kindNamed(t, "Deployment")
	d := deploymentReading(1, map[string]string{
		contract.HaltAnnotation:           contract.HaltReleased,
		contract.CoalesceWindowAnnotation: strings.Repeat("1", shortValueBytes+1),
		"confighash.dev/other":            "x",
		"other":                           "y",
	})
	a := k.SlimObject(d).GetAnnotations()
	if a[contract.HaltAnnotation] != contract.HaltReleased {
		t.Errorf("halt = %q", a[contract.HaltAnnotation])
	}
	w := a[contract.CoalesceWindowAnnotation]
	if !strings.HasPrefix(w, "!over-limit:") {
		t.Errorf("an over-long window is kept as %q", w)
	}
	d.Annotations[contract.CoalesceWindowAnnotation] = strings.Repeat("2", shortValueBytes+1)
	if k.SlimObject(d).GetAnnotations()[contract.CoalesceWindowAnnotation] == w {
		t.Error("two over-long values slim to one")
	}
	d.Annotations[contract.RolloutAnnotation] = strings.Repeat("r", recordValueBytes)
	if got := k.SlimObject(d).GetAnnotations()[contract.RolloutAnnotation]; got != d.Annotations[contract.RolloutAnnotation] {
		t.Errorf("a record as long as internal/contract reads is not kept whole (%d bytes kept)", len(got))
	}
	if _, ok := a["confighash.dev/other"]; ok {
		t.Error("an annotation the hook does not read was kept")
	}
	if _, ok := a["other"]; ok {
		t.Error("a foreign annotation was kept")
	}
}

// TestSlimObjectTemplateChange: two slimmed copies hold the same template
// exactly when the whole templates are the same but for the stamp, so the
// hook re-checks an image change or a restart as it did on whole objects.
func TestSlimObjectTemplateChange(t *testing.T) {
	k := kindNamed(t, "Deployment")
	base := deploymentReading(1, nil)
	base.Spec.Template.Spec.Containers[0].Image = "img:1"
	tmplOf := func(d *appsv1.Deployment) Template {
		tm, _ := k.PodTemplate(k.SlimObject(d))
		return tm
	}
	restamped := base.DeepCopy()
	restamped.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: "v2:k:new"}
	image := base.DeepCopy()
	image.Spec.Template.Spec.Containers[0].Image = "img:2"
	restart := base.DeepCopy()
	restart.Spec.Template.Annotations = map[string]string{"kubectl.kubernetes.io/restartedAt": "now"}
	if !SameTemplate(tmplOf(base), tmplOf(restamped)) {
		t.Error("a re-stamp changes the slimmed template")
	}
	if SameTemplate(tmplOf(base), tmplOf(image)) {
		t.Error("an image change is lost in the slimmed template")
	}
	if SameTemplate(tmplOf(base), tmplOf(restart)) {
		t.Error("a restart annotation is lost in the slimmed template")
	}
}

// TestSlimObjectPatchKeepsOthers: the hook's writes are merge patches
// diffed from the cached copy. Dropping the last confighash annotation it
// holds, or setting the stamp, must name only that key: a diff to
// "annotations": null would delete every annotation the copy left out.
func TestSlimObjectPatchKeepsOthers(t *testing.T) {
	for _, k := range []Kind{kindNamed(t, "Deployment"), kindNamed(t, "Rollout")} {
		full := objectOf(t, k, slimCase{name: "p", spec: specReading(1), annotations: map[string]string{contract.HoldAnnotation: "h"}})
		obj := k.SlimObject(full)
		base := client.MergeFrom(obj.DeepCopyObject().(client.Object))
		a := obj.GetAnnotations()
		delete(a, contract.HoldAnnotation)
		obj.SetAnnotations(a)
		tm, _ := k.PodTemplate(obj)
		tm.SetChecksum("")
		patch, err := base.Data(obj)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(patch, &doc); err != nil {
			t.Fatal(err)
		}
		if got := nullPaths(doc, ""); !reflect.DeepEqual(got, []string{
			"metadata.annotations.confighash.dev/hold", templatePath(k) + ".metadata.annotations.confighash.dev/checksum",
		}) {
			t.Errorf("%s: patch %s deletes %v, want the hold and the stamp only", k.Name(), patch, got)
		}
	}
}

func templatePath(k Kind) string {
	if k.Unstructured() {
		return strings.Join(k.TemplatePath, ".")
	}
	return "spec.template"
}

// nullPaths lists, sorted, the dotted paths doc sets to null.
func nullPaths(doc map[string]any, prefix string) []string {
	var out []string
	for key, v := range doc {
		p := prefix + key
		switch v := v.(type) {
		case nil:
			out = append(out, p)
		case map[string]any:
			out = append(out, nullPaths(v, p+".")...)
		}
	}
	slices.Sort(out)
	return out
}

// TestSlimObjectIdempotent: client-go may hand a transform its own output.
func TestSlimObjectIdempotent(t *testing.T) {
	for _, k := range Kinds().Mutable() {
		once := k.SlimObject(objectOf(t, k, slimCase{name: "i", spec: specReading(2)}))
		if twice := k.SlimObject(once.DeepCopyObject().(client.Object)); !reflect.DeepEqual(once, twice) {
			t.Errorf("%s: slimming twice changes the copy", k.Name())
		}
	}
}

// TestRegistryTransform: the cache transform slims the mutable kinds'
// objects, typed and unstructured, and hands the rest on.
func TestRegistryTransform(t *testing.T) {
	var handed []any
	tr := Kinds().Transform(nil, func(o any) (any, error) { handed = append(handed, o); return o, nil })
	for _, k := range Kinds().Mutable() {
		out, err := tr(objectOf(t, k, slimCase{name: "t", spec: specReading(1)}))
		if err != nil || !IsSlim(out.(client.Object)) {
			t.Errorf("%s: transform gave %T, %v; not slimmed", k.Name(), out, err)
		}
	}
	pod := podReading(nil)
	other := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "x.io/v1", "kind": "Other"}}
	for _, o := range []any{pod, other, &corev1.ConfigMap{}} {
		if _, err := tr(o); err != nil {
			t.Fatal(err)
		}
	}
	if len(handed) != 3 {
		t.Errorf("handed on %d objects, want the Pod, the other kind and the ConfigMap", len(handed))
	}
}

func encodedSize(t *testing.T, obj any) int {
	t.Helper()
	return len(mustJSON(t, obj))
}

func mustJSON(t *testing.T, obj any) []byte {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
