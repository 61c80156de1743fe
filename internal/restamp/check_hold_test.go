package restamp

import (
	"context"
	"fmt"
	"strings"
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

const flapQuiet = time.Minute

func testFlapOptions() Options {
	return Options{FlapLimit: 3, FlapWindow: 10 * time.Minute, FlapQuiet: flapQuiet, FlapMaxQuiet: 8 * time.Minute}
}

// withHold makes a test Deployment carry a hold annotation.
func withHold(v string) func(*appsv1.Deployment) {
	return func(d *appsv1.Deployment) { metav1.SetMetaDataAnnotation(&d.ObjectMeta, contract.HoldAnnotation, v) }
}

// A hold a former leader left on the workload ends once the sources have
// been quiet, with one write that re-stamps (if needed) and drops it; the
// only write during the hold is to the workload's own metadata.
func TestReconcileHoldEnds(t *testing.T) {
	data := map[string]string{"k": "v2"}
	current := wantSum(t, data)
	stored := sealedOn(t, "v1 since=2030-01-02T02:00:00Z level=0 quiet=1m0s")
	tests := map[string]struct {
		stamp      string
		wantEvent  string // prefix of the one event at the release; "" means none
		wantWrites []string
	}{
		"stale: re-stamped, hold dropped in the same write": {
			stamp:     "v1:stale",
			wantEvent: "Normal ConfigChanged config changed (configmap/app)",
			wantWrites: []string{`{"metadata":{"annotations":{"confighash.dev/hold":null},"resourceVersion":"999"},` +
				`"spec":{"template":{"metadata":{"annotations":{"confighash.dev/checksum":"` + current + `"}}}}}`},
		},
		"sources settled on the stamp: only the hold dropped": {
			stamp:      current,
			wantWrites: []string{`{"metadata":{"annotations":{"confighash.dev/hold":null}}}`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := quietCtx()
			ns := servedNS()
			cm := slimCM(t, "ns", "app", data)
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", ResourceVersion: "999",
				Annotations: map[string]string{contract.HoldAnnotation: stored, "deployment.kubernetes.io/revision": "7"}}}
			d.Spec.Template.Spec = envFromCM("app")
			d.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: tc.stamp}
			var writes []string
			c := fake.NewClientBuilder().WithObjects(ns, cm, d).
				WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
					b, err := p.Data(obj)
					if err != nil {
						return err
					}
					writes = append(writes, string(b))
					return c.Patch(ctx, obj, p, opts...)
				}}).Build()
			now := t0
			// A new leader: its flap guard remembers nothing.
			r, rec := testReconciler(t, c, newFlapGuard(testFlapOptions(), 100), func() time.Time { return now })
			r.changes.add(webReq, "configmap/app")

			// First look: held, counting the quiet time from now.
			res, err := r.Reconcile(ctx, webReq)
			if err != nil || res.RequeueAfter != flapQuiet {
				t.Fatalf("first look: %+v, %v; want held for %v", res, err, flapQuiet)
			}
			now = now.Add(flapQuiet - time.Second)
			if res, err := r.Reconcile(ctx, webReq); err != nil || res.RequeueAfter != time.Second {
				t.Fatalf("just before the quiet time is up: %+v, %v; want held for 1s more", res, err)
			}
			if len(writes) != 0 {
				t.Fatalf("writes during the hold: %q", writes)
			}
			now = now.Add(time.Second)
			if res, err := r.Reconcile(ctx, webReq); err != nil || res.RequeueAfter != 0 {
				t.Fatalf("after the quiet time: %+v, %v", res, err)
			}

			if strings.Join(writes, "\n") != strings.Join(tc.wantWrites, "\n") {
				t.Errorf("writes:\n%s\nwant:\n%s", strings.Join(writes, "\n"), strings.Join(tc.wantWrites, "\n"))
			}
			got := &appsv1.Deployment{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(d), got); err != nil {
				t.Fatal(err)
			}
			if _, held := got.Annotations[contract.HoldAnnotation]; held || got.Spec.Template.Annotations[contract.ChecksumAnnotation] != current {
				t.Errorf("after the release: annotations %v, stamp %q; want no hold and %q",
					got.Annotations, got.Spec.Template.Annotations[contract.ChecksumAnnotation], current)
			}
			if r.flaps.holding(keyOf(webReq)) {
				t.Error("guard still holds the workload")
			}
			if len(r.changes.entries) != 0 {
				t.Errorf("changes still pending: %v", r.changes.entries)
			}
			expectOneEvent(t, rec, tc.wantEvent)
		})
	}
}

// A held workload whose stamp differs is held without asking why the stamp
// differs: telling an ignore toggle costs far more than the checksum, and
// ran before the hold was asked about. Each source is read once, by the
// checksum.
func TestReconcileHeldSkipsTheToggleCheck(t *testing.T) {
	ctx := quietCtx()
	const n = 8
	ns := servedNS()
	objs := []client.Object{ns}
	var spec corev1.PodSpec
	for i := range n {
		name := fmt.Sprint("cm-", i)
		cm := slimCM(t, "ns", name, map[string]string{"k": "v"})
		objs = append(objs, cm)
		spec.Containers = append(spec.Containers, envFromCM(name).Containers...)
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns",
		Annotations: map[string]string{contract.HoldAnnotation: sealedOn(t, "v1 since=2030-01-02T02:00:00Z level=0 quiet=1m0s")}}}
	d.Spec.Template.Spec = spec
	// A stamp of this version and key that no toggle explains.
	d.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: hasher.Version + ":" + hasher.KeyID(hookKey) + ":" + strings.Repeat("0", 64)}
	objs = append(objs, d)
	reads := 0
	c := fake.NewClientBuilder().WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok {
				reads++
			}
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	r, _ := testReconciler(t, c, newFlapGuard(testFlapOptions(), 100), func() time.Time { return t0 })
	res, err := r.Reconcile(ctx, req("web"))
	if err != nil || res.RequeueAfter != flapQuiet {
		t.Fatalf("Reconcile = %+v, %v; want held for %v", res, err, flapQuiet)
	}
	if reads != n {
		t.Errorf("%d ConfigMap reads for %d sources, want one each", reads, n)
	}
}
