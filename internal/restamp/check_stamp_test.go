package restamp

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
)

// legacyV1 is the v1 stamp (releases before v2) of a workload reading
// configmap/app whole with {k: v2} under hookKey, as LegacyChecksumV1 of
// 35034ec computed it: a v1 stamp that still matches the content.
const legacyV1 = "v1:6d2d36fc613261017f61949728d8dc07b9c2e6fc0a80f091d33ee2f2852dfeb0"

// TestReconcileKeepsStampsOnlyConfighashChanged: a new HMAC key changes the
// stamp the content gives, but no pod would read anything new, so nothing
// may roll; a real change still does. A legacy v1 stamp is not compared at
// all, even when it matches the content (it may have been copied from
// another namespace, and the keep-or-re-stamp answer would test a guess of
// that namespace's Secrets): it is re-stamped, once.
func TestReconcileKeepsStampsOnlyConfighashChanged(t *testing.T) {
	data := map[string]string{"k": "v2"}
	otherKey := []byte("another-key-another-key-another!")
	current := wantSum(t, data)
	otherKeyStamp := stampOf(t, otherKey, "ns", envFromCM("app"), nil, holding(data))
	live := req("web")
	replay := live
	replay.Recheck = true

	tests := map[string]struct {
		stamp     string
		req       Request
		wantStamp string
		// before, when set, is the ConfigMap's data before the change
		// that queued req, as the source handler records it.
		before    map[string]string
		wantEvent string // prefix; "" means none
		wantKept  map[string]float64
	}{
		"legacy v1 stamp of the current content, start-up replay: re-stamped in v2": {
			stamp: legacyV1, req: replay, wantStamp: current,
			wantEvent: "Normal ConfigChanged",
		},
		"legacy v1 stamp of the current content, a source event: re-stamped in v2": {
			// An edit that left what the pods read as it was.
			stamp: legacyV1, req: live, before: data, wantStamp: current,
			wantEvent: "Normal ConfigChanged",
		},
		"some other legacy v1 stamp is re-stamped in v2": {
			stamp: "v1:" + strings.Repeat("0", 64), req: live, wantStamp: current,
			wantEvent: "Normal ConfigChanged",
		},
		"stamp under another key, start-up replay: kept, and said so": {
			stamp: otherKeyStamp, req: replay, wantStamp: otherKeyStamp,
			wantEvent: "Warning KeyChanged stamped under HMAC key " + hasher.KeyID(otherKey) +
				", but confighash now uses key " + hasher.KeyID(hookKey) + ": not rolling",
			wantKept: map[string]float64{keptOtherKey: 1},
		},
		"stamp under another key, a source changed: re-stamped under the current key": {
			stamp: otherKeyStamp, req: live, before: map[string]string{"k": "v1"}, wantStamp: current,
			wantEvent: "Normal ConfigChanged",
		},
		"stamp under another key, a source changed, content before unknown: re-stamped": {
			stamp: otherKeyStamp, req: live, wantStamp: current,
			wantEvent: "Normal ConfigChanged",
		},
		"stamp under another key, a change that left what it reads as it was: kept": {
			stamp: otherKeyStamp, req: live, before: data, wantStamp: otherKeyStamp,
			wantEvent: "Warning KeyChanged", wantKept: map[string]float64{keptOtherKey: 1},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := quietCtx()
			cm := slimCM(t, "ns", "app", data)
			d := stampedWeb(envFromCM("app"), tc.stamp)
			ns := servedNS()
			var patches int
			c := interceptor.NewClient(fake.NewClientBuilder().WithObjects(ns, cm, d).Build(), interceptor.Funcs{
				Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
					patches++
					return c.Patch(ctx, obj, p, opts...)
				},
			})
			r, rec := testReconciler(t, c, newFlapGuard(Options{FlapLimit: 100, FlapWindow: time.Hour, FlapQuiet: time.Minute, FlapMaxQuiet: time.Minute}, 1), time.Now)
			metrics := r.metrics
			r.changes.add(tc.req, "configmap/app")
			if tc.before != nil {
				old := slimCM(t, "ns", "app", tc.before)
				r.changes.addBefore(tc.req, hasher.Source{Kind: hasher.ConfigMap, Name: "app"}, priorOf(old))
			}
			if _, err := r.Reconcile(ctx, tc.req); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}

			got := &appsv1.Deployment{}
			if err := c.Get(ctx, tc.req.NamespacedName, got); err != nil {
				t.Fatal(err)
			}
			if s := got.Spec.Template.Annotations[contract.ChecksumAnnotation]; s != tc.wantStamp {
				t.Errorf("stamp = %q, want %q", s, tc.wantStamp)
			}
			if wantPatches := map[bool]int{true: 0, false: 1}[tc.wantStamp == tc.stamp]; patches != wantPatches {
				t.Errorf("%d patches, want %d", patches, wantPatches)
			}
			expectOneEvent(t, rec, tc.wantEvent)
			for _, reason := range []string{"legacy-v1", keptOtherKey} {
				if got := counterValue(t, metrics.Kept.WithLabelValues("Deployment", reason)); got != tc.wantKept[reason] {
					t.Errorf("kept{reason=%s} = %v, want %v", reason, got, tc.wantKept[reason])
				}
			}
		})
	}
}
