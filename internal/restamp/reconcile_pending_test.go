package restamp

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
)

// recordChange records for r what a live change to configmap/app does: its
// name, its content from before and its window.
func recordChange(c *changes, r Request, now time.Time) {
	c.add(r, "configmap/app")
	c.addBefore(r, hasher.Source{Kind: hasher.ConfigMap, Name: "app"}, prior{known: true})
	c.touch(r, now, time.Second, 10*time.Second)
}

// checkPending checks that the change recordChange made for r is all still
// pending when kept, and that nothing at all is pending otherwise.
func checkPending(t *testing.T, c *changes, r Request, kept bool) {
	t.Helper()
	if !kept {
		if len(c.entries) != 0 {
			t.Errorf("pending after the reconcile: %v, want nothing", c.entries)
		}
		return
	}
	p, ok := c.entries[r]
	if !ok || len(c.entries) != 1 {
		t.Fatalf("pending after the reconcile: %v, want the change to %s only", c.entries, r)
	}
	if !slices.Equal(p.names(), []string{"configmap/app"}) || len(p.before) != 1 || p.due == nil {
		t.Errorf("pending = %+v, want the whole change kept: its name, its content before, its window", *p)
	}
}

// TestReconcileKeepsPendingOnlyForARetry: the ways out with an error keep
// the change for the retry, but for those whose retry does not need it (the
// workload could not be read, nor its namespace).
func TestReconcileKeepsPendingOnlyForARetry(t *testing.T) {
	ns := servedNS()
	cm := slimCM(t, "ns", "app", map[string]string{"k": "v2"})
	web := stampedWeb(envFromCM("app"), "v1:stale")
	boom := errors.New("boom")

	tests := map[string]struct {
		funcs    interceptor.Funcs
		wantKept bool
	}{
		"the workload cannot be read": {
			funcs: interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if _, ok := obj.(*appsv1.Deployment); ok {
					return boom
				}
				return c.Get(ctx, key, obj, opts...)
			}},
		},
		"its namespace cannot be read": {
			funcs: interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if _, ok := obj.(*corev1.Namespace); ok {
					return boom
				}
				return c.Get(ctx, key, obj, opts...)
			}},
		},
		"a source cannot be read": {
			funcs: interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if _, ok := obj.(*corev1.ConfigMap); ok {
					return boom
				}
				return c.Get(ctx, key, obj, opts...)
			}},
			wantKept: true,
		},
		"the re-stamp cannot be written": {
			funcs: interceptor.Funcs{Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
				return boom
			}},
			wantKept: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := quietCtx()
			c := fake.NewClientBuilder().WithObjects(ns, cm, web.DeepCopy()).WithInterceptorFuncs(tc.funcs).Build()
			r, _ := testReconciler(t, c, newFlapGuard(testFlapOptions(), 100), func() time.Time { return t0 })
			recordChange(r.changes, webReq, t0)
			if _, err := r.Reconcile(ctx, webReq); !errors.Is(err, boom) {
				t.Fatalf("Reconcile = %v, want the injected error", err)
			}
			checkPending(t, r.changes, webReq, tc.wantKept)
		})
	}
}

// TestReconcileNamesChangesRecordedWhileItRuns: the informer updates the
// cache before the handler records a change, so a reconcile can hash a
// change recorded after its take. Its ConfigChanged Event names that change
// too: the reconcile the change queued finds the stamp current and says
// nothing, so no Event would name it otherwise.
func TestReconcileNamesChangesRecordedWhileItRuns(t *testing.T) {
	ns := servedNS()
	var objs []client.Object
	for _, name := range []string{"app", "app2"} {
		cm := slimCM(t, "ns", name, map[string]string{"k": "v2"})
		objs = append(objs, cm)
	}
	web := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}
	web.Spec.Template.Spec = envFromCM("app")
	web.Spec.Template.Spec.Containers[0].EnvFrom = append(web.Spec.Template.Spec.Containers[0].EnvFrom, envFromCM("app2").Containers[0].EnvFrom...)
	web.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: "v1:stale"}

	var r *reconciler
	c := fake.NewClientBuilder().WithObjects(append(objs, ns, web)...).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok && key.Name == "app2" {
				// configmap/app2's change lands while the reconcile runs.
				r.changes.add(webReq, "configmap/app2")
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
	r, rec := testReconciler(t, c, newFlapGuard(testFlapOptions(), 100), func() time.Time { return t0 })
	recordChange(r.changes, webReq, t0)
	ctx := quietCtx()
	if _, err := r.Reconcile(ctx, webReq); err != nil {
		t.Fatal(err)
	}
	expectOneEvent(t, rec, "Normal ConfigChanged config changed (configmap/app, configmap/app2)")
	if got := r.changes.since(webReq); !slices.Equal(got, []string{"configmap/app2"}) {
		t.Errorf("pending after the reconcile: %v, want configmap/app2 for the reconcile it queued", got)
	}
}

// TestReconcilePanicKeepsPending: a reconcile that panics (controller-runtime
// recovers it and retries) keeps the change for the retry, as an error does.
func TestReconcilePanicKeepsPending(t *testing.T) {
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			panic("boom")
		},
	}).Build()
	r, _ := testReconciler(t, c, newFlapGuard(testFlapOptions(), 100), func() time.Time { return t0 })
	recordChange(r.changes, webReq, t0)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("Reconcile did not panic")
			}
		}()
		_, _ = r.Reconcile(quietCtx(), webReq)
	}()
	checkPending(t, r.changes, webReq, true)
}
