package restamp

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/workload"
)

// The hook honours the webhook's source limit: a template reading more is
// never re-stamped, and none of its sources is even looked up.
func TestReconcileSourceLimit(t *testing.T) {
	ctx := quietCtx()
	ns := servedNS()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}
	d.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: "v1:old"}
	objs := []client.Object{ns}
	for i := range workload.MaxSources + 1 {
		name := fmt.Sprint("cm-", i)
		d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: name,
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}}})
		cm := slimCM(t, "ns", name, map[string]string{"k": "v"})
		objs = append(objs, cm)
	}
	objs = append(objs, d)
	var sourceGets, writes int
	c := interceptor.NewClient(fake.NewClientBuilder().WithObjects(objs...).Build(), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok {
				sourceGets++
			}
			return c.Get(ctx, key, obj, opts...)
		},
		Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
			writes++
			return nil
		},
	})
	kinds := newWatched(workload.Kinds().Mutable()...)
	// Only what the limit path needs: past it, a nil field would panic.
	r := &reconciler{client: c, key: hookKey, kinds: kinds, changes: newChanges()}
	req := req("web")
	r.changes.add(req, "configmap/cm-0")

	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	if sourceGets != 0 || writes != 0 {
		t.Errorf("%d source lookups and %d writes for a template over the limit, want none", sourceGets, writes)
	}
	if len(r.changes.entries) != 0 {
		t.Errorf("the change is still pending")
	}
}
