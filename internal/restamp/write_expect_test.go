package restamp

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestExpectations(t *testing.T) {
	a := req("a")
	b := req("b")
	var now time.Time
	clock := func() time.Time { return now }
	t.Run("the copy written from lags, until another is seen", func(t *testing.T) {
		now = t0
		e := newExpectations(10, clock)
		e.wrote(a, "5")
		if !e.lagging(a, "5") {
			t.Error("the copy the re-stamp was patched from is not taken for lag")
		}
		now = t0.Add(cacheLagMax)
		if !e.lagging(a, "5") {
			t.Error("the expectation ended before cacheLagMax")
		}
		if e.lagging(b, "5") {
			t.Error("another workload lags")
		}
		if e.lagging(a, "6") {
			t.Error("a newer copy lags")
		}
		if e.lagging(a, "5") {
			t.Error("the expectation outlived the newer copy")
		}
	})
	t.Run("an expectation past cacheLagMax ends", func(t *testing.T) {
		now = t0
		e := newExpectations(10, clock)
		e.wrote(a, "5")
		now = t0.Add(cacheLagMax + time.Millisecond)
		if e.lagging(a, "5") {
			t.Error("an old expectation still holds the workload back")
		}
		if len(e.old) != 0 {
			t.Errorf("%d entries left", len(e.old))
		}
	})
	t.Run("full: expired entries go, else nothing is recorded", func(t *testing.T) {
		now = t0
		e := newExpectations(1, clock)
		e.wrote(a, "5")
		now = t0.Add(time.Second)
		e.wrote(b, "7")
		if e.lagging(b, "7") || !e.lagging(a, "5") {
			t.Error("a full set dropped a live entry or took a new one")
		}
		now = t0.Add(cacheLagMax + time.Second)
		e.wrote(b, "7")
		if !e.lagging(b, "7") {
			t.Error("the expired entry did not make room")
		}
	})
	t.Run("nil expects nothing", func(t *testing.T) {
		var e *expectations
		e.wrote(a, "5")
		if e.lagging(a, "5") {
			t.Error("a nil set lags")
		}
	})
}

// TestReconcileSkipsTheCopyItsOwnWriteReplaced: after a re-stamp, a
// reconcile that reads the copy from before the write (the cache has not
// delivered it) patches nothing and looks again shortly, keeping its
// changes. Without expectations that reconcile patches again, from a
// resourceVersion the write has moved past.
func TestReconcileSkipsTheCopyItsOwnWriteReplaced(t *testing.T) {
	ctx := quietCtx()
	data := map[string]string{"k": "v2"}
	cm := slimCM(t, "ns", "app", data)
	ns := servedNS()
	web := stampedWeb(envFromCM("app"), "v1:stale")
	req := req("web")

	var stale *appsv1.Deployment // what the lagging cache serves; nil: the current copy
	patches := 0
	c := fake.NewClientBuilder().WithObjects(ns, cm, web).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if d, ok := obj.(*appsv1.Deployment); ok && stale != nil {
				stale.DeepCopyInto(d)
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			patches++
			return c.Patch(ctx, obj, p, opts...)
		},
	}).Build()
	before := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(web), before); err != nil {
		t.Fatal(err)
	}
	now := t0
	r, _ := testReconciler(t, c, newFlapGuard(testFlapOptions(), 100), func() time.Time { return now })
	r.written = newExpectations(10, r.now)

	recordChange(r.changes, req, now)
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatalf("first Reconcile: %v", err)
	}
	if patches != 1 {
		t.Fatalf("first reconcile made %d patches, want 1", patches)
	}

	stale = before
	recordChange(r.changes, req, now)
	res, err := r.Reconcile(ctx, req)
	if err != nil {
		t.Fatalf("Reconcile on the lagging copy: %v", err)
	}
	if patches != 1 {
		t.Errorf("the reconcile on the copy its own write replaced patched (%d patches)", patches)
	}
	if res.RequeueAfter != cacheLagRetry {
		t.Errorf("RequeueAfter = %v, want %v", res.RequeueAfter, cacheLagRetry)
	}
	checkPending(t, r.changes, req, true)

	stale = nil
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatalf("Reconcile once the cache caught up: %v", err)
	}
	if patches != 1 {
		t.Errorf("the current copy was patched again (%d patches)", patches)
	}
	if len(r.written.old) != 0 {
		t.Errorf("the expectation outlived the current copy")
	}
}
