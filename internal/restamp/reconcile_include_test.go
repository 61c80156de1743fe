package restamp

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
)

// TestReconcileIncludedSourceMissing: a source the include annotation names
// and that does not exist is not mounted by the pods, so it cannot stop
// them starting: it must not freeze the re-stamp when the ConfigMap they do
// read changes (issue 13 section 10). It is hashed as absent.
func TestReconcileIncludedSourceMissing(t *testing.T) {
	ctx := quietCtx()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns"}, Data: map[string]string{"k": "v2"}}
	slim := slimmed(t, cm)
	include := map[string]string{contract.IncludeAnnotation: "secret/missing"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Annotations: include}}
	d.Spec.Template.Spec = envFromCM("app")
	d.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: "v2:stale"}
	ns := servedNS()
	c := fake.NewClientBuilder().WithObjects(ns, slim, d).Build()
	r, rec := testReconciler(t, c, newFlapGuard(testFlapOptions(), 100), func() time.Time { return t0 })
	req := req("web")
	r.changes.add(req, "configmap/app")

	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	want := stampOf(t, hookKey, "ns", d.Spec.Template.Spec, include, func(src hasher.Source) (hasher.Content, bool) {
		if src.Kind == hasher.ConfigMap {
			return hasher.ConfigMapContent(cm), true
		}
		return hasher.Content{}, false
	})
	got := &appsv1.Deployment{}
	if err := c.Get(ctx, req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if stamp := got.Spec.Template.Annotations[contract.ChecksumAnnotation]; stamp != want {
		t.Errorf("stamp = %q, want %q: the missing included Secret froze the re-stamp", stamp, want)
	}
	expectOneEvent(t, rec, "Normal ConfigChanged")
	if got := counterValue(t, r.metrics.Missing.WithLabelValues("Deployment")); got != 0 {
		t.Errorf("missing = %v, want 0", got)
	}
}
