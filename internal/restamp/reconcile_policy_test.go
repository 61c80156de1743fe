package restamp

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/injection"
)

// TestReconcileHonoursNamespacePolicy: a reader whose config changed, with
// a stale stamp, in a namespace labelled for injection that confighash
// nevertheless does not serve, is left alone. Without the policy a labelled
// kube-system would have CoreDNS rolled on its next ConfigMap change.
func TestReconcileHonoursNamespacePolicy(t *testing.T) {
	const own = "confighash-system"
	labelled := map[string]string{contract.InjectionLabel: contract.InjectionEnabled}
	tests := map[string]struct {
		ns      string
		labels  map[string]string
		restamp bool
	}{
		"labelled kube-system":      {ns: "kube-system", labels: labelled},
		"labelled confighash's own": {ns: own, labels: labelled},
		"unlabelled":                {ns: "shop"},
		"labelled":                  {ns: "shop", labels: labelled, restamp: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := quietCtx()
			cm := slimCM(t, tc.ns, "app", map[string]string{"k": "v2"})
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: tc.ns}}
			d.Spec.Template.Spec = envFromCM("app")
			d.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: "v1:stale"}
			c := fake.NewClientBuilder().WithObjects(
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tc.ns, Labels: tc.labels}}, cm, d).Build()
			r := policyTestReconciler(t, c, injection.New(own))
			req := reqIn(tc.ns, "coredns")
			r.changes.add(req, "configmap/app")

			panicked := reconcilePastPolicy(ctx, t, r, req)
			if err := c.Get(ctx, req.NamespacedName, d); err != nil {
				t.Fatal(err)
			}
			stamp := d.Spec.Template.Annotations[contract.ChecksumAnnotation]
			if wentOn := panicked || stamp != "v1:stale"; wentOn != tc.restamp {
				t.Fatalf("went past the namespace policy: %v (stamp %q), want %v", wentOn, stamp, tc.restamp)
			}
			if !tc.restamp && len(r.changes.entries) > 0 {
				t.Errorf("change still pending for a workload that is never re-stamped")
			}
		})
	}
}

// policyTestReconciler sets up only what a reconcile needs up to and
// including the namespace policy. What comes after it (the flap guard) is
// left out on purpose, so that this test does not follow its changes:
// reconcilePastPolicy tells from the panic that the reconcile went on.
func policyTestReconciler(t *testing.T, c client.Client, p injection.Policy) *reconciler {
	t.Helper()
	r, _ := testReconciler(t, c, nil, time.Now)
	r.policy = p
	return r
}

// reconcilePastPolicy runs one reconcile and reports whether it panicked
// on the missing flap guard, which only a reconcile past the policy reaches.
func reconcilePastPolicy(ctx context.Context, t *testing.T, r *reconciler, req Request) (wentOn bool) {
	t.Helper()
	defer func() {
		if recover() != nil {
			wentOn = true
		}
	}()
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	return false
}
