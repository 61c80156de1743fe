package pinner

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestForbiddenIsItsOwnReason: a refused write (no RoleBinding of
// confighash-pinner, or the admission policy) or read says forbidden, not
// write-failed or read-failed, so the operator looks at the binding; a
// create refused by a ResourceQuota, also a 403, says quota-exceeded, so
// the operator looks at the quota instead; any other failure keeps its
// reason.
func TestForbiddenIsItsOwnReason(t *testing.T) {
	forbidden := apierrors.NewForbidden(corev1.Resource("configmaps"), "", errors.New("no RoleBinding"))
	for name, tc := range map[string]struct {
		funcs interceptor.Funcs
		want  Reason
	}{
		"create refused": {interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
			return forbidden
		}}, Forbidden},
		"revision read refused": {interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.ConfigMap); !ok {
				return forbidden
			}
			return c.Get(ctx, key, obj, opts...)
		}}, Forbidden},
		"create over a quota": {interceptor.Funcs{Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
			// The ResourceQuota admission plugin's refusal, a 403 too.
			return apierrors.NewForbidden(corev1.Resource("configmaps"), obj.GetName(),
				errors.New("exceeded quota: configmaps, requested: count/configmaps=1, used: count/configmaps=3, limited: count/configmaps=3"))
		}}, QuotaExceeded},
		"create failed otherwise": {interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
			return apierrors.NewServiceUnavailable("etcd is away")
		}}, WriteFailed},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			pod := w.revision("web-1", template())
			w.p.Client = interceptor.NewClient(w.c.(client.WithWatch), tc.funcs)
			if r := w.p.Pin(context.Background(), pod, false); r.Reason != tc.want {
				t.Fatalf("%+v, want %s", r, tc.want)
			}
		})
	}
}
