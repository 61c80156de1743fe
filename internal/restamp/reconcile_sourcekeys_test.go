package restamp

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/sources"
)

// TestReconcileSourceNotHeld: the hook never re-stamps from a source the
// cache does not hold. Over the key bound it keeps the stamp, says so in a
// SourceTooLarge Event and is done; a placeholder of a namespace not
// served when it was cached fails the reconcile, which is retried (once
// its namespace is filled, see sources.Fills). Before the bound, the
// 120,000-key source of issue 13 was re-stamped like any other.
func TestReconcileSourceNotHeld(t *testing.T) {
	keys := map[string]string{}
	for i := range sources.DefaultMaxKeys + 1 {
		keys[fmt.Sprint("k", i)] = ""
	}
	tests := map[string]struct {
		slimmer   sources.Slimmer
		wantErr   bool
		wantEvent string
	}{
		"over the key bound":     {wantEvent: "Warning SourceTooLarge"},
		"not served when cached": {slimmer: sources.Slimmer{Serves: func(string) bool { return false }}, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := quietCtx()
			ns := servedNS()
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}
			d.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: "v2:old"}
			d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c",
				EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "big"}}}}}}
			slim, err := tc.slimmer.Slim(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: "ns"}, Data: keys})
			if err != nil {
				t.Fatal(err)
			}
			var writes int
			c := interceptor.NewClient(fake.NewClientBuilder().WithObjects(ns, d, slim.(client.Object)).Build(), interceptor.Funcs{
				Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
					writes++
					return nil
				},
			})
			r, rec := testReconciler(t, c, nil, time.Now)
			req := req("web")
			r.changes.add(req, "configmap/big")
			_, err = r.Reconcile(ctx, req)
			var notHeld *sources.NotHeldError
			if tc.wantErr != (err != nil) || (err != nil && !errors.As(err, &notHeld)) {
				t.Errorf("Reconcile err = %v, want error %v (a NotHeldError)", err, tc.wantErr)
			}
			if writes != 0 {
				t.Errorf("%d writes, want none", writes)
			}
			expectOneEvent(t, rec, tc.wantEvent)
		})
	}
}
