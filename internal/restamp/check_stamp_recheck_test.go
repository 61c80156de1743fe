package restamp

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/internal/contract"
)

// TestRecheckConfirmsLive: a re-check that would re-stamp first reads the
// sources live, and writes only when they give the stamp the cache gave. A
// leader whose cache is behind the apiserver (it has not yet seen the
// ConfigMap write the webhook stamped from, live) would otherwise re-stamp
// the old content: a rollout for nothing, and another when the event
// arrives. A re-stamp for a change seen in the cache is not held up: its
// event came from that cache, which is current for the source.
func TestRecheckConfirmsLive(t *testing.T) {
	oldData, newData := map[string]string{"k": "old"}, map[string]string{"k": "new"}
	oldSum, newSum := wantSum(t, oldData), wantSum(t, newData)
	name := types.NamespacedName{Namespace: "ns", Name: "web"}
	ns := func() client.Object {
		return servedNS()
	}
	app := func(data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns"}, Data: data}
	}
	slim := func(data map[string]string) client.Object {
		return slimmed(t, app(data))
	}
	web := func(stamp string) client.Object {
		return stampedWeb(envFromCM("app"), stamp)
	}

	tests := map[string]struct {
		stored       string
		cached, live map[string]string
		recheck      bool
		wantStamp    string
		wantKept     float64
	}{
		// The webhook stamped the new content live; the leader's cache
		// still has the old.
		"re-check, cache behind": {stored: newSum, cached: oldData, live: newData, recheck: true, wantStamp: newSum, wantKept: 1},
		// A lagging replica stamped the old content; the leader sees the
		// new, and so does the apiserver.
		"re-check, stamp behind": {stored: oldSum, cached: newData, live: newData, recheck: true, wantStamp: newSum},
		// The cache's event is what the hook acts on; the apiserver may
		// be further on still, with an event of its own to come.
		"config change seen in the cache": {stored: oldSum, cached: newData, live: map[string]string{"k": "newer"}, wantStamp: newSum},
	}
	for tname, tc := range tests {
		t.Run(tname, func(t *testing.T) {
			ctx := quietCtx()
			c := fake.NewClientBuilder().WithObjects(ns(), slim(tc.cached), web(tc.stored)).Build()
			r, _ := testReconciler(t, c, newFlapGuard(testFlapOptions(), 100), func() time.Time { return t0 })
			r.live = fake.NewClientBuilder().WithObjects(app(tc.live)).Build()
			req := Request{KindName: "Deployment", NamespacedName: name, Recheck: tc.recheck}
			if !tc.recheck {
				r.changes.add(req, "configmap/app")
			}
			if _, err := r.Reconcile(ctx, req); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			d := &appsv1.Deployment{}
			if err := c.Get(ctx, name, d); err != nil {
				t.Fatal(err)
			}
			if got := d.Spec.Template.Annotations[contract.ChecksumAnnotation]; got != tc.wantStamp {
				t.Errorf("stamp = %q, want %q (old content %q, new %q)", got, tc.wantStamp, oldSum, newSum)
			}
			if got := counterValue(t, r.metrics.Kept.WithLabelValues("Deployment", keptCacheBehind)); got != tc.wantKept {
				t.Errorf("kept{reason=cache_behind} = %v, want %v", got, tc.wantKept)
			}
			if len(r.changes.entries) > 0 {
				t.Errorf("changes left pending: %v", r.changes.entries)
			}
		})
	}
}
